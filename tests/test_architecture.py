"""The house plan's import direction (ARCHITECTURE section 1), checked on the source.

Every top-level folder is a layer and says which layers below it it may import; nothing is
exempt. ``gpurent`` is the top of the house (the library API and, above it, the command
line); ``gpurent_core`` is the ground floor every layer stands on.
"""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# layer -> the layers it may import (besides itself)
ALLOWED: dict[str, set[str]] = {
    "gpurent_core": set(),
    # the one list of providers: the default scene is composed from their folders
    "replay": {"gpurent_core"},
    "spiders": {"gpurent_core"},
    "warehouse": {"gpurent_core"},
    "sizing": {"gpurent_core", "warehouse"},
    "flows": {"gpurent_core", "warehouse", "replay"},
    "gpurent": {"gpurent_core", "warehouse", "sizing", "flows", "replay"},
    "dashboards": {"gpurent_core", "gpurent"},
    "benchmarks": {"gpurent_core", "warehouse", "sizing", "flows", "replay", "gpurent"},
}
# Inside the top floor the library API is below the command line: programs and the
# dashboards import ``gpurent.api``, never the commands.
API_MUST_NOT_IMPORT = ("gpurent.cli",)
DASHBOARDS_MAY_IMPORT_FROM_GPURENT = ("gpurent.api",)


def imports_of(path: Path) -> set[str]:
    """Every absolute module name ``path`` imports, at any depth (lazy imports count too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from gpurent import api` imports gpurent.api, not all of gpurent.
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def layer_of(module: str) -> str | None:
    top = module.split(".")[0]
    return top if top in ALLOWED else None


def sources() -> list[Path]:
    return [path for layer in ALLOWED for path in sorted((REPO / layer).rglob("*.py"))]


@pytest.mark.parametrize("path", sources(), ids=lambda p: str(p.relative_to(REPO)))
def test_imports_point_down_the_house_plan(path: Path) -> None:
    layer = path.relative_to(REPO).parts[0]
    modules = imports_of(path)
    bad = {
        m for m in modules if (lay := layer_of(m)) and lay != layer and lay not in ALLOWED[layer]
    }
    assert not bad, f"{path.relative_to(REPO)} imports {sorted(bad)} against the house plan"
    if path.is_relative_to(REPO / "gpurent" / "api"):
        up = {m for m in modules if m.startswith(API_MUST_NOT_IMPORT)}
        assert not up, f"the library API imports the command line: {sorted(up)}"
    if layer == "dashboards":
        up = {
            m
            for m in modules
            if layer_of(m) == "gpurent" and not m.startswith(DASHBOARDS_MAY_IMPORT_FROM_GPURENT)
        }
        assert not up, f"the dashboards read through gpurent.api only, not {sorted(up)}"


def test_the_layers_form_a_house_not_a_loop() -> None:
    try:
        order = list(TopologicalSorter(ALLOWED).static_order())
    except CycleError as exc:  # pragma: no cover - the failure message is the point
        pytest.fail(f"the allowed imports loop: {exc.args[1]}")
    assert order[0] in {"gpurent_core", "replay"}
    assert order.index("gpurent") > order.index("sizing") > order.index("warehouse")


def test_the_check_sees_every_layer() -> None:
    seen = {path.relative_to(REPO).parts[0] for path in sources()}
    assert seen == set(ALLOWED)
    folders = {p.name for p in REPO.iterdir() if p.is_dir() and (p / "__init__.py").is_file()} - {
        "tests"
    }
    assert folders <= set(ALLOWED), f"packages outside the house plan: {folders - set(ALLOWED)}"


def test_a_lazy_import_inside_a_function_counts(tmp_path: Path) -> None:
    source = tmp_path / "page.py"
    source.write_text(
        "def render():\n    from warehouse.db import connect\n    from gpurent import api\n",
        encoding="utf-8",
    )
    found = imports_of(source)
    assert "warehouse.db.connect" in found and "gpurent.api" in found
    assert layer_of("warehouse.db.connect") not in ALLOWED["dashboards"]


def module_files() -> dict[str, Path]:
    """Every module of the house by its dotted name (a package by its ``__init__``)."""
    found: dict[str, Path] = {}
    for path in sources():
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def module_graph(files: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the modules of ``files`` it imports (lazy and type-checking imports too: a
    circle of files is one however it is imported)."""
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        targets = set()
        for imported in imports_of(path):
            parts = imported.split(".")
            # `from a.b import c`: module a.b.c if there is one, else a.b.
            while parts and ".".join(parts) not in files:
                parts.pop()
            target = ".".join(parts)
            if target and target != name:
                targets.add(target)
        graph[name] = targets
    return graph


def test_no_circle_of_files() -> None:
    try:
        list(TopologicalSorter(module_graph(module_files())).static_order())
    except CycleError as exc:
        pytest.fail(f"modules import each other in a circle: {' -> '.join(exc.args[1])}")


def test_a_circle_through_a_lazy_or_type_checking_import_is_caught(tmp_path: Path) -> None:
    server, handler = tmp_path / "server.py", tmp_path / "handler.py"
    server.write_text("def start():\n    from pkg.handler import Handler\n", encoding="utf-8")
    handler.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.server import start\n",
        encoding="utf-8",
    )
    graph = module_graph({"pkg.server": server, "pkg.handler": handler})
    assert graph == {"pkg.server": {"pkg.handler"}, "pkg.handler": {"pkg.server"}}
    with pytest.raises(CycleError):
        list(TopologicalSorter(graph).static_order())
