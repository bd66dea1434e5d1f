"""scripts/compile_bytecode.py: the packages it compiles are the ones pyproject installs."""

from __future__ import annotations

import importlib.metadata
import importlib.util
from pathlib import Path

from scripts.compile_bytecode import compile_project, project_packages


def test_it_compiles_exactly_the_top_level_packages_the_install_holds() -> None:
    # What setuptools installed, as the installed distribution records it.
    top_level = importlib.metadata.distribution("gpurent").read_text("top_level.txt") or ""
    installed = set(top_level.split())
    assert {p.name for p in project_packages()} == installed
    assert {"gpurent", "warehouse", "gpurent_core"} <= installed


def test_it_writes_bytecode_python_then_uses(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.setuptools.packages.find]\ninclude = ["pkg*", "missing*"]\n', encoding="utf-8"
    )
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    for folder in ("pkg", "pkg/sub"):
        (tmp_path / folder / "__init__.py").write_text("VALUE = 1\n", encoding="utf-8")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "__init__.py").write_text("", encoding="utf-8")
    assert compile_project(tmp_path)
    for folder in ("pkg", "pkg/sub"):
        source = str(tmp_path / folder / "__init__.py")
        assert Path(importlib.util.cache_from_source(source)).is_file(), folder
    # Only what the package search includes, and nothing for a pattern with no folder.
    assert not (tmp_path / "other" / "__pycache__").exists()
