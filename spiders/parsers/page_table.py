"""Reading a price table out of an HTML page: rows of named cells, checked against a contract.

Shared by the page-reading parsers (仙宫云, 算家云, 共绩算力, and AutoDL's homepage): each
names its row selector and its cell classes (`td.<name>`), reads prices through
`gpurent_core.normalize.price`, and turns a row into one offer of one card (`card_offer`).
A reader that opts in with `listed_price` skips a row whose price cell only says "ask us"
(面议, 询价, "contact sales") as having no public price, rather than quarantining it.

The contract of a table is its column labels (rule of truth 9). A page reader finds a cell by
its label, so a label the site renamed leaves the row without that cell: the row's mapping
then lacks the key (drift), which is not the same as a cell that is there and empty (the page
saying nothing, read as the parser documents: an empty stock cell is `unknown`). Rows are
checked with `spiders.parsers.contract`: a declared cell gone from one row quarantines that
row; gone from every row, or left empty in every row, it is a layout error naming the
column, never a market of `unknown` or sold-out cards.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence, Set
from functools import partial

from parsel import Selector

from gpurent_core.model import AddonFee, PriceBasis, PricePlan, SkipKind
from gpurent_core.normalize.availability import Availability, parse_availability
from gpurent_core.normalize.gpu import GpuIdentity
from gpurent_core.normalize.price import ParsedPrice, PriceParseError, parse_price
from spiders.parsers.common import (
    MISSING_FIELD,
    PRICE_UNPARSED,
    FieldProblem,
    PageResult,
    ParseContext,
    Record,
    Skip,
    counted_stock,
    gpu_offer,
    make_quarantine,
)
from spiders.parsers.contract import Contract, apply_check, check_items, contracted

Cells = dict[str, str]
"""One row: {cell label: its whitespace-joined text}, for the cells the row has."""

# Cells that say "nothing here" rather than holding a value.
EMPTY_MARKS = frozenset({"", "-", "—", "--", "/"})


def cell(cells: Mapping[str, str], name: str) -> str:
    """The text of cell `name`; "" when the row has it empty or lacks it (a row that lacks a
    declared cell never reaches a builder: the contract quarantines it first)."""
    return cells.get(name, "")


def row_cells(row: Selector, cell_names: Sequence[str]) -> Cells:
    """The cells `td.<name>` that `row` has, with their text (an absent cell is no key)."""
    return {
        name: " ".join(" ".join(row.css(f"td.{name} ::text").getall()).split())
        for name in cell_names
        if row.css(f"td.{name}")
    }


def table_rows(html: str, row_selector: str, cell_names: Sequence[str]) -> list[Cells]:
    """Each matching row as its cells (`row_cells`)."""
    return [row_cells(row, cell_names) for row in Selector(text=html).css(row_selector)]


def empty_columns(rows: Sequence[Mapping[str, str]], names: Sequence[str]) -> list[str]:
    """Cells that some row has but no row fills: the column is there, its values are not
    (a script that stopped filling it); a column no row has is the contract's to name. One
    row alone cannot tell a blank column from one blank cell: its cells are read as they are.
    """
    if len(rows) < 2:
        return []
    return [
        name
        for name in names
        if any(name in row for row in rows) and not any(row.get(name) for row in rows)
    ]


def table_page(
    html: str,
    ctx: ParseContext,
    *,
    row_selector: str,
    cell_names: tuple[str, ...],
    contract: Contract,
    no_rows: str,
    offer_key: Callable[[Mapping[str, str]], str | None],
    build: Callable[[Cells, ParseContext], list[Record]],
    filled: Sequence[str] | None = None,
) -> PageResult:
    """The records of every row (`build`; a row it refuses is that row's quarantine line).

    No row at all is the layout error `no_rows`. A cell of `contract` that a row lacks
    quarantines that row (`missing_field: key gone`), and is a layout error when no row has
    it. A column of `filled` (by default every contract cell) that no row fills is a layout
    error too, and every row is quarantined: a column of blanks is no reading of the market.
    """
    rows = table_rows(html, row_selector, cell_names)
    if not rows:
        return PageResult(layout_error=no_rows)
    blank = empty_columns(rows, contract.paths if filled is None else filled)
    page = PageResult()
    for cells in rows:
        if blank:
            page.records.append(_blank_quarantine(ctx, cells, blank, offer_key(cells)))
        else:
            row_build = partial(build, cells, ctx)
            page.records.extend(
                contracted(ctx, cells, contract, offer_key=offer_key, build=row_build)
            )
    apply_check(page, check_items(rows, contract))
    if blank:
        _note_blank_columns(page, contract, blank)
    return page


def _note_blank_columns(page: PageResult, contract: Contract, blank: Sequence[str]) -> None:
    named = ", ".join(_labelled(contract, name) for name in blank)
    error = f"no {contract.noun} fills its {named} cell"
    page.layout_error = error if page.layout_error is None else f"{page.layout_error}; {error}"
    page.missing_fields.extend(name for name in blank if name not in page.missing_fields)


def _labelled(contract: Contract, name: str) -> str:
    # "stock (stock)": the column and what it is read for, as the contract's own errors say.
    return f"{name} ({contract.role_of(name)})" if name in contract.paths else name


def _blank_quarantine(
    ctx: ParseContext, cells: Cells, blank: Sequence[str], key: str | None
) -> Record:
    return make_quarantine(
        ctx,
        reason=f"{MISSING_FIELD}: empty in every row: {', '.join(blank)}",
        field=blank[0],
        raw=cells,
        offer_key=key,
    )


def read_stock(text: str, field: str) -> tuple[Availability, FieldProblem | None]:
    """The stock of a cell ("空闲 12/64", "剩余3卡", "售罄"); a count the availability rules
    refuse (negative, more free than the total) makes it `unknown`, with the problem returned
    to be set aside beside the offer (`counted_stock`): the row's price still stands."""
    return counted_stock(field, partial(parse_availability, text))


def read_price(text: str, field: str, *, empty_marks: Set[str] = EMPTY_MARKS) -> ParsedPrice:
    """A price cell ("¥1.98/时"); a cell in `empty_marks` is missing, other text that is not a
    price is unparsed."""
    if text in empty_marks:
        raise FieldProblem(MISSING_FIELD, field, f"{field} is empty")
    try:
        return parse_price(text)
    except PriceParseError as exc:
        raise FieldProblem(PRICE_UNPARSED, field, f"{text!r}: {exc.reason}") from None


# How a site writes "no public price, ask us" in a price cell (Chinese and English).
ON_REQUEST_WORDS = (
    "询价",
    "面议",
    "议价",
    "电询",
    "联系客服",
    "联系销售",
    "联系我们",
    "咨询",
    "contact sales",
    "contact us",
    "on request",
    "call for price",
    "enquire",
    "inquire",
)


def on_request(text: str) -> bool:
    """True when a price cell holds no number, only an "ask us" wording ("面议", "联系客服",
    "contact sales"): the item is listed without a public price."""
    folded = text.casefold()
    return not any(ch.isdigit() for ch in folded) and any(w in folded for w in ON_REQUEST_WORDS)


def listed_price(text: str, field: str, *, empty_marks: Set[str] = EMPTY_MARKS) -> ParsedPrice:
    """`read_price`, except that an "ask us" cell (`on_request`) skips the row as having no
    public price (rule of truth 9): nothing was misread, there is no rate to read. Any other
    text without a price stays an unreadable offer (`price_unparsed`)."""
    if on_request(text):
        raise Skip(SkipKind.NO_PUBLIC_PRICE, f"{field} {text!r}: no public price")
    return read_price(text, field, empty_marks=empty_marks)


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
