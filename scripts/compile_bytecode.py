"""Compile the bytecode of gpurent's own packages (those pyproject.toml installs).

pip compiles what it installs into site-packages, but an editable install leaves the
sources in the checkout, and where PYTHONDONTWRITEBYTECODE is set Python never writes their
bytecode: every command would compile gpurent again (about 60 ms of a 0.4 s `gpurent
cheapest` on the 2-core machine). Python checks each file against its source, so a module
edited later is simply compiled in memory until this runs again. `scripts/setup.sh` runs
it, and the benchmark runner before it times anything.

    .venv/bin/python scripts/compile_bytecode.py
"""

from __future__ import annotations

import compileall
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def project_packages(root: Path = ROOT) -> list[Path]:
    """The top-level package folders that pyproject.toml's package search includes."""
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["packages"]["find"]["include"]
    names = {pattern.split(".")[0].rstrip("*") for pattern in patterns}
    return sorted(root / name for name in names if (root / name / "__init__.py").is_file())


def compile_project(root: Path = ROOT) -> bool:
    """Compile every package's modules that lack up-to-date bytecode; True when all compiled."""
    return all(compileall.compile_dir(str(package), quiet=1) for package in project_packages(root))


if __name__ == "__main__":
    sys.exit(0 if compile_project() else 1)
