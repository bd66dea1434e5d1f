"""Reading a price table out of an HTML page: rows of named cells, price cells as FieldProblems.

Shared by the page-reading parsers (仙宫云, 算家云, 共绩算力, and AutoDL's homepage): each
names its row selector and its cell classes (`td.<name>`), reads prices through
`gpurent.normalize.price`, and turns a row into one offer of one card (`card_offer`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence, Set
from functools import partial

from parsel import Selector

from gpurent.model import AddonFee, PriceBasis, PricePlan
from gpurent.normalize.availability import Availability
from gpurent.normalize.gpu import GpuIdentity
from gpurent.normalize.price import ParsedPrice, PriceParseError, parse_price
from spiders.parsers.common import (
    MISSING_FIELD,
    PRICE_UNPARSED,
    FieldProblem,
    PageResult,
    ParseContext,
    Record,
    gpu_offer,
    guarded,
)

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


def table_page(
    html: str,
    ctx: ParseContext,
    *,
    row_selector: str,
    cell_names: tuple[str, ...],
    required: tuple[str, ...],
    no_rows: str,
    offer_key: Callable[[Cells], str | None],
    build: Callable[[Cells, ParseContext], list[Record]],
) -> PageResult:
    """The records of every row (`build`; a row it refuses is that row's quarantine line).

    No row at all is the layout error `no_rows`; a `required` column that no row fills is a
    renamed column, also a layout error (never "sold out").
    """
    rows = table_rows(html, row_selector, cell_names)
    if not rows:
        return PageResult(layout_error=no_rows)
    page = PageResult()
    for cells in rows:
        row_build = partial(build, cells, ctx)
        page.records.extend(guarded(ctx, offer_key=offer_key(cells), raw=cells, build=row_build))
    empty = empty_columns(rows, required)
    if empty:
        page.layout_error = f"no row has a {', '.join(empty)} cell"
    return page


def read_price(text: str, field: str, *, empty_marks: Set[str] = EMPTY_MARKS) -> ParsedPrice:
    """A price cell ("¥1.98/时"); a cell in `empty_marks` is missing, other text that is not a
    price is unparsed."""
    if text in empty_marks:
        raise FieldProblem(MISSING_FIELD, field, f"{field} is empty")
    try:
        return parse_price(text)
    except PriceParseError as exc:
        raise FieldProblem(PRICE_UNPARSED, field, f"{text!r}: {exc.reason}") from None


def card_basis(written: str | None) -> PriceBasis:
    """A price column of a card market is per card unless the text says otherwise ("整机")."""
    return PriceBasis(written) if written in ("gpu", "instance") else PriceBasis.GPU


def card_offer(
    ctx: ParseContext,
    *,
    offer_key: str,
    cells: Cells,
    gpu: GpuIdentity,
    raw_gpu_name: str,
    stock: Availability,
    price: ParsedPrice,
    url: str,
    region: str | None = None,
    fees: Sequence[AddonFee] = (),
    plans: Sequence[PricePlan] = (),
) -> Record:
    """The offer of one row: one card at the row's price, as the price text says it."""
    return gpu_offer(
        ctx,
        offer_key=offer_key,
        raw=cells,
        gpu=gpu,
        raw_gpu_name=raw_gpu_name,
        gpu_count=1,
        stock=stock,
        price=price.amount,
        currency=price.currency,
        billing_unit=price.unit,
        price_basis=card_basis(price.basis),
        price_kind=price.kind,
        region=region,
        url=url,
        fees=fees,
        plans=plans,
    )
