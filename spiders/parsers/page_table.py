"""Reading a price table out of an HTML page: rows of named cells, price cells as FieldProblems.

Shared by the page-reading parsers (仙宫云, 算家云, 共绩算力): each names its row selector and
its cell classes (`td.<name>`), and reads prices through `gpurent.normalize.price`.
"""

from __future__ import annotations

from parsel import Selector

from gpurent.model import PriceBasis
from gpurent.normalize.price import ParsedPrice, PriceParseError, parse_price
from spiders.parsers.common import MISSING_FIELD, PRICE_UNPARSED, FieldProblem

Cells = dict[str, str]

# Cells that say "nothing here" rather than holding a value.
EMPTY_MARKS = frozenset({"", "-", "—", "--", "/"})


def table_rows(html: str, row_selector: str, cell_names: tuple[str, ...]) -> list[Cells]:
    """Each matching row as {cell class: its whitespace-joined text} ("" when absent)."""
    rows = Selector(text=html).css(row_selector)
    return [
        {
            name: " ".join(" ".join(row.css(f"td.{name} ::text").getall()).split())
            for name in cell_names
        }
        for row in rows
    ]


def empty_columns(rows: list[Cells], names: tuple[str, ...]) -> list[str]:
    """Cells that no row fills: a renamed column, not one odd row."""
    return [name for name in names if rows and not any(row[name] for row in rows)]


def read_price(text: str, field: str) -> ParsedPrice:
    if text in EMPTY_MARKS:
        raise FieldProblem(MISSING_FIELD, field, f"{field} is empty")
    try:
        return parse_price(text)
    except PriceParseError as exc:
        raise FieldProblem(PRICE_UNPARSED, field, f"{text!r}: {exc.reason}") from None


def card_basis(written: str | None) -> PriceBasis:
    """A price column of a card market is per card unless the text says otherwise ("整机")."""
    return PriceBasis(written) if written in ("gpu", "instance") else PriceBasis.GPU
