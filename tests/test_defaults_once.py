"""Each default is declared once (issue 14): the usage a cost is for (730 hours a month,
50 GB kept) lives in ``gpurent_core.defaults``; no module restates it as a literal."""

from __future__ import annotations

import ast
from decimal import Decimal
from pathlib import Path

import pytest

from gpurent import api
from gpurent_core import defaults
from gpurent_core.cost.usage import UsageProfile

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("gpurent", "gpurent_core", "spiders", "warehouse", "sizing", "flows", "dashboards")
RESTATED = {730, 50}
# Where the numbers are the facts themselves, not a copy of the default.
HOMES = {Path("gpurent_core/defaults.py"), Path("gpurent_core/units.py")}


# Names of the usage numbers; a `limit=50` elsewhere is another fact.
USAGE_WORDS = ("hour", "storage", "_gb", "egress")


def about_usage(name: str) -> bool:
    return any(word in name.lower() for word in USAGE_WORDS)


def restatements(path: Path) -> list[str]:
    """Literal 730 or 50 as the default of a usage parameter or field, or any
    Decimal(730) / Decimal(50)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []

    def literal(node: ast.AST | None) -> bool:
        if isinstance(node, ast.Constant) and node.value in RESTATED:
            return type(node.value) is int
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Decimal":
            return bool(node.args) and literal(node.args[0])
        return False

    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = node.args
            positional = [*args.posonlyargs, *args.args][-len(args.defaults) or len(args.args) :]
            pairs = [*zip(positional, args.defaults, strict=False)]
            pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)]
            for arg, default in pairs:
                if about_usage(arg.arg) and literal(default):
                    found.append(f"{path.relative_to(REPO)}:{node.lineno} {arg.arg} default")
        elif (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and about_usage(node.target.id)
            and literal(node.value)
        ):
            found.append(f"{path.relative_to(REPO)}:{node.lineno} {node.target.id} default")
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "id", None) == "Decimal"
            and literal(node)
        ):
            found.append(f"{path.relative_to(REPO)}:{node.lineno} Decimal literal")
    return found


def sources() -> list[Path]:
    return [
        p
        for package in PACKAGES
        for p in sorted((REPO / package).rglob("*.py"))
        if p.relative_to(REPO) not in HOMES
    ]


def test_no_module_restates_the_usage_defaults() -> None:
    found = [hit for path in sources() for hit in restatements(path)]
    assert not found, "declare these once in gpurent_core/defaults.py:\n" + "\n".join(found)


def test_the_check_sees_a_restatement(tmp_path: Path) -> None:
    probe = REPO / "gpurent" / "_probe_for_test.py"
    probe.write_text("def f(storage_gb=50, limit=50):\n    pass\n")
    try:
        assert [hit.split()[-2] for hit in restatements(probe)] == ["storage_gb"]
    finally:
        probe.unlink()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("hours_per_month", defaults.DEFAULT_HOURS_PER_MONTH),
        ("storage_gb", defaults.DEFAULT_STORAGE_GB),
        ("egress_gb_per_month", defaults.DEFAULT_EGRESS_GB),
        ("boot_minutes", defaults.DEFAULT_BOOT_MINUTES),
    ],
)
def test_every_surface_takes_the_one_default(field: str, value: Decimal) -> None:
    assert getattr(UsageProfile(), field) == value
    assert getattr(api.usage(), field) == value
