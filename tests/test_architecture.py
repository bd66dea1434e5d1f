"""The house plan's import direction (ARCHITECTURE section 1), checked on the source."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LAYERS = ("gpurent", "spiders", "flows", "warehouse", "sizing", "dashboards", "replay")

# package -> top-level packages it must never import
FORBIDDEN: dict[str, set[str]] = {
    "spiders": {"warehouse", "flows", "sizing", "dashboards"},
    "warehouse": {"spiders", "flows", "sizing", "dashboards"},
    "sizing": {"spiders", "flows", "dashboards"},
    "dashboards": {"spiders", "flows"},
    "replay": {"spiders", "flows", "warehouse", "sizing", "dashboards"},
    # the shared core, except its front door (gpurent.cli), is below everything
    "gpurent": {"spiders", "flows", "warehouse", "sizing", "dashboards", "replay"},
}


def imported_top_levels(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names & set(LAYERS)


def sources() -> list[Path]:
    files = []
    for layer in FORBIDDEN:
        for path in sorted((REPO / layer).rglob("*.py")):
            if layer == "gpurent" and "cli" in path.relative_to(REPO / "gpurent").parts:
                continue
            if layer == "gpurent" and path.name == "__main__.py":
                continue
            files.append(path)
    return files


@pytest.mark.parametrize("path", sources(), ids=lambda p: str(p.relative_to(REPO)))
def test_imports_point_down_the_house_plan(path: Path) -> None:
    layer = path.relative_to(REPO).parts[0]
    bad = imported_top_levels(path) & FORBIDDEN[layer]
    assert not bad, f"{path.relative_to(REPO)} imports {sorted(bad)} against the house plan"


def test_the_check_sees_the_layers() -> None:
    assert len(sources()) > 40
