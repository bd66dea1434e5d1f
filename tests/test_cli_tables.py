"""Tables for people: a number is never split across lines, at 80 columns too; text columns
fold to make room, and nothing is cut off at the right edge."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from gpurent.cli.output import OutputFormat, render


def rows_like_cheapest(monthly: list[str]) -> list[dict[str, Any]]:
    return [
        {
            "provider": "gpushare", "offer": f"gs-{n:04d}", "gpu": "RTX 5090 32G", "n": 1,
            "status": "in_stock 12 free", "price": "2.98 CNY/h/gpu", "true/h CNY": "3.02",
            "true/month CNY": m, "region": "北京A区 (Beijing zone A)", "age": "stale 2h",
        }
        for n, m in enumerate(monthly)
    ]  # fmt: skip


def rendered(rows: list[dict[str, Any]], width: int) -> list[str]:
    console = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    render(rows, OutputFormat.TABLE, console=console, title="cheapest in-stock, >= 32 GB x 1")
    return console.export_text().splitlines()


def numbers_in(rows: list[dict[str, Any]]) -> set[str]:
    found: set[str] = set()
    for row in rows:
        for value in row.values():
            found.update(re.findall(r"\d[\d,]*(?:\.\d+)?", str(value)))
    return found


@settings(max_examples=40, deadline=None)
@given(
    monthly=st.lists(
        st.decimals(min_value=0, max_value=10**7, places=2).map(lambda d: f"{d:,.2f}"),
        min_size=1,
        max_size=5,
    ),
    marked=st.booleans(),
)
def test_no_number_is_split_at_80_columns(monthly: list[str], marked: bool) -> None:
    rows = rows_like_cheapest([m + (" *" if marked else "") for m in monthly])
    lines = rendered(rows, 80)
    assert all(len(line) <= 80 for line in lines)
    text = "\n".join(lines)
    for number in numbers_in(rows):
        assert re.search(rf"(?<![\d,.]){re.escape(number)}(?![\d,.])", text), number
    assert "age" in lines[2] or any("age" in line for line in lines[:5]), "no column cut off"
