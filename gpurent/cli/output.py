"""Rendering of query results: Rich tables for people, JSON or CSV for programs.

Every query command takes ``--format table|json|csv``; rows are plain dicts so the three
formats show the same data. Values are shown as text (never markup), because provider
strings are untrusted.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text


class OutputFormat(StrEnum):
    """How a query command prints its rows."""

    TABLE = "table"
    """A Rich table for people."""
    JSON = "json"
    """A JSON array of objects (decimals as strings, times ISO 8601 UTC)."""
    CSV = "csv"
    """CSV with a header row (UTF-8)."""


def to_jsonable(value: Any) -> Any:
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    if isinstance(value, StrEnum):
        return value.value
    return value


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M UTC")
    return str(value)


def render(
    rows: Sequence[Mapping[str, Any]],
    fmt: OutputFormat,
    *,
    columns: Sequence[str] | None = None,
    title: str | None = None,
    empty_message: str = "nothing to show",
    console: Console | None = None,
) -> None:
    cols = list(columns or (rows[0].keys() if rows else []))
    if fmt is OutputFormat.JSON:
        sys.stdout.write(
            json.dumps([to_jsonable(dict(r)) for r in rows], ensure_ascii=False, indent=2)
        )
        sys.stdout.write("\n")
        return
    if fmt is OutputFormat.CSV:
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(cols)
        for r in rows:
            writer.writerow([_cell(r.get(c)) for c in cols])
        sys.stdout.write(buf.getvalue())
        return
    out = console or Console()
    if not rows:
        out.print(Text(empty_message, style="yellow"))
        return
    table = Table(title=title, header_style="bold")
    for c in cols:
        numeric = isinstance(rows[0].get(c), int | float | Decimal)
        table.add_column(c, justify="right" if numeric else "left", overflow="fold")
    for r in rows:
        table.add_row(*(Text(_cell(r.get(c))) for c in cols))
    out.print(table)
