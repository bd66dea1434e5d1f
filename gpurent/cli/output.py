"""Rendering of query results: Rich tables for people, JSON or CSV for programs.

Every query command takes ``--format table|json|csv``; rows are plain dicts so the three
formats show the same data. Values are shown as text (never markup), because provider
strings are untrusted.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from gpurent_core.csvsafe import neutralise_cell

# Width for output that is not a terminal (a pipe, a file): wide enough that no table is
# squeezed, so a line is never wrapped in the middle of a word for a program to stitch.
PIPE_WIDTH = 10_000


class OutputFormat(StrEnum):
    """How a query command prints its rows."""

    TABLE = "table"
    """A Rich table for people."""
    JSON = "json"
    """A JSON array of objects (decimals as strings, times ISO 8601 UTC)."""
    CSV = "csv"
    """CSV with a header row (UTF-8); text cells that a spreadsheet would run as a formula
    get a leading ``'`` (``gpurent_core.csvsafe``), numbers never do."""


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
    if isinstance(value, Mapping | list | tuple):
        # Nested values (an offer's fees and plans) as JSON, so a CSV reader can parse them.
        return json.dumps(to_jsonable(value), ensure_ascii=False)
    return str(value)


# A cell that is a number (with an optional " *" marker), and the words that never fold: one
# holding a digit, or a hyphen between letters or digits (an offer id, "us-east").
_WHOLE_NUMBER = re.compile(r"^[-+]?\d[\d,]*(?:\.\d+)?%?(?: \*)?$")
_UNBROKEN = re.compile(r"\d|[A-Za-z0-9]-[A-Za-z0-9]")


def _unbroken_width(cells: Sequence[str]) -> int | None:
    """The narrowest a text column may get without splitting a word that holds a number (a
    price beside its unit, "5090") or an offer id ("gp-abcdefg") across lines; other words
    may fold."""
    words = (word for cell in cells for word in cell.split() if _UNBROKEN.search(word))
    return max(map(len, words), default=0) or None


def _fitted_widths(columns: Sequence[tuple[bool, int, int]], width: int) -> list[int] | None:
    """Each column's width so that the table fits ``width`` (None: it fits as it is, or
    cannot fit at all, and Rich lays it out).

    ``columns``: (a number column, narrowest, widest). Numbers keep their width; the text
    columns start at their narrowest and share what is left in proportion to what they
    would use beyond it. Rich's own reduction shrinks the widest text columns first and can
    leave a table wider than the terminal once no column may go below its minimum (an
    offer id, a price): the right-hand columns are then cut off."""
    frame = 3 * len(columns) + 1  # a border and a space each side of every cell
    room = width - frame
    if sum(widest for _, _, widest in columns) <= room:
        return None
    fixed = [widest if number else narrowest for number, narrowest, widest in columns]
    spare = room - sum(fixed)
    if spare < 0:
        return None
    wants = [0 if number else widest - narrowest for number, narrowest, widest in columns]
    total = sum(wants)
    shares = [spare * want // total if total else 0 for want in wants]
    left = spare - sum(shares)
    # What integer division left over goes to the columns that want the most.
    for i in sorted(range(len(columns)), key=lambda i: -wants[i]):
        if left <= 0:
            break
        if wants[i] > shares[i]:
            shares[i] += 1
            left -= 1
    return [f + min(share, want) for f, share, want in zip(fixed, shares, wants, strict=True)]


def _csv_cell(value: Any) -> str:
    """A CSV cell: text neutralised against formulas (``gpurent_core.csvsafe``), numbers as is;
    times and truth values as JSON gives them (ISO 8601 to the microsecond, true/false): a
    program joining the two must not meet "2026-12-04 22:44 UTC" beside its full time."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime | date):
        return value.isoformat()
    return _cell(neutralise_cell(value))


def output_console(max_width: int | None = None) -> Console:
    """A console for a command's output: the terminal's width on a terminal (at most
    ``max_width``), else ``PIPE_WIDTH`` unless COLUMNS says otherwise."""
    out = Console(highlight=False)
    if not out.is_terminal and "COLUMNS" not in os.environ:
        out = Console(highlight=False, width=PIPE_WIDTH)
    if max_width is not None and out.width > max_width:
        out = Console(highlight=False, width=max_width)
    return out


def render(
    rows: Sequence[Mapping[str, Any]],
    fmt: OutputFormat,
    *,
    columns: Sequence[str] | None = None,
    title: str | None = None,
    empty_message: str = "nothing to show",
    console: Console | None = None,
    max_width: int | None = None,
    footnote: str | None = None,
) -> None:
    """Print ``rows`` as ``fmt``; a table goes to ``console`` (default: ``output_console(max_width)``),
    followed by ``footnote`` when there is one."""
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
            writer.writerow([_csv_cell(r.get(c)) for c in cols])
        sys.stdout.write(buf.getvalue())
        return
    out = console or output_console(max_width)
    if not rows:
        out.print(Text(empty_message, style="yellow"))
        return
    table = Table(title=title, header_style="bold")
    specs: list[tuple[bool, int, int]] = []
    for c in cols:
        cells = [_cell(r.get(c)) for r in rows]
        # (A column with no value at all is text: its header may fold.)
        number = isinstance(rows[0].get(c), int | float | Decimal) or (
            any(cells) and all(_WHOLE_NUMBER.match(cell) for cell in cells if cell)
        )
        # A number column never wraps (its header words go one to a line instead); the
        # text columns fold to make room, never inside a word that holds a number.
        heading = c.split() if number else [c]
        widest = max(cell_len(line) for text in (*cells, *heading) for line in text.split("\n"))
        narrowest = widest if number else min(widest, max(_unbroken_width(cells) or 0, 3))
        specs.append((number, narrowest, widest))
    widths = _fitted_widths(specs, out.width)
    for i, (c, (number, _, _)) in enumerate(zip(cols, specs, strict=True)):
        width = widths[i] if widths is not None else None
        if number:
            table.add_column(Text("\n".join(c.split())), justify="right", no_wrap=True)
        else:
            cells = [_cell(r.get(c)) for r in rows]
            table.add_column(c, overflow="fold", min_width=_unbroken_width(cells), width=width)
    for r in rows:
        table.add_row(*(Text(_cell(r.get(c))) for c in cols))
    out.print(table)
    if footnote:
        out.print(Text(footnote, style="dim"))
