"""算家云 market-table parser: the page as Chromium rendered it, before JavaScript, broken rows."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from parser_registry import parse
from spider_fixture_cases import cases

from gpurent_core.model import OfferRecord, QuarantineRecord, SkipKind, StockStatus
from spiders.parsers.common import PageResult, ParseContext
from spiders.providers.suanjia.parser import parse_market

CTX = ParseContext("suanjia", "test-run", datetime(2026, 10, 4, 12, 0, tzinfo=UTC))


def market(*rows: tuple[str, str, str, str]) -> str:
    """A rendered market table holding `rows` of (region, gpu, price, stock)."""
    cells = "".join(
        "<tr class='gpu-row'>"
        + "".join(f"<td class='{n}'>{v}</td>" for n, v in zip(CELLS, row, strict=True))
        + "</tr>"
        for row in rows
    )
    return f"<table id='gpu-market'><tbody>{cells}</tbody></table>"


CELLS = ("region", "gpu", "price", "stock")


def _parsed(name: str) -> PageResult:
    return parse(next(c for c in cases("suanjia") if c.name == name))


def offers_of(page: PageResult) -> dict[str, OfferRecord]:
    return {r.offer_key: r for r in page.records if isinstance(r, OfferRecord)}


def test_rendered_market_reads_free_cards_and_prices_per_card() -> None:
    page = _parsed("pricing_rendered")
    offers = offers_of(page)
    assert len(offers) == 6
    rtx = offers["华东一区/RTX 4090 24G"]
    assert (rtx.gpu_model, rtx.gpu_vram_gb, rtx.raw_gpu_name) == ("RTX 4090", 24, "RTX 4090 24G")
    assert (rtx.price, rtx.currency, rtx.billing_unit.value) == (Decimal("1.88"), "CNY", "hour")
    assert (rtx.price_basis.value, rtx.region) == ("gpu", "华东一区")
    assert (rtx.status, rtx.available_count) == (StockStatus.IN_STOCK, 3)  # 剩余3卡
    assert offers["华北一区/RTX 4090 24G"].available_count == 12
    full = offers["华东一区/RTX 3090 24G"]
    assert (full.status, full.available_count) == (StockStatus.SOLD_OUT, 0)  # 已租满: none free
    assert offers["华北一区/A100 80G"].gpu_vram_gb == 80
    assert offers["华东一区/L40 48G"].status is StockStatus.SOLD_OUT
    # The vGPU slice names no physical card: skipped as outside the catalog, no quarantine.
    assert not any(isinstance(r, QuarantineRecord) for r in page.records)
    [skipped] = page.skipped
    assert (skipped.offer_key, skipped.skip_kind) == ("华东一区/vGPU-32G", SkipKind.OUTSIDE_CATALOG)
    assert "virtual" in skipped.detail


def test_recorded_page_before_javascript_is_a_layout_error() -> None:
    case = next(c for c in cases("suanjia") if c.name == "recorded_pricing_unrendered")
    html = case.input_bytes().decode("utf-8")
    assert "<tbody></tbody>" in html  # the recorded page really is empty
    page = parse(case)
    assert page.layout_error is not None and page.records == []


def test_broken_rows_are_quarantined_one_by_one() -> None:
    page = _parsed("bad_rows")
    offers = offers_of(page)
    modded = offers["华东一区/RTX 4090 48G"]
    assert (modded.gpu_vram_gb, modded.status, modded.available_count) == (
        48,
        StockStatus.SOLD_OUT,
        0,
    )
    assert offers["华东一区/RTX 3090 24G"].price == Decimal("1.20")  # 现价, not 原价
    assert offers["华东一区/RTX 3090 24G"].status is StockStatus.LOW  # 即将售罄
    assert offers["华东一区/A100 40G"].status is StockStatus.UNKNOWN  # 维护中
    reasons = {r.offer_key: r.reason for r in page.records if isinstance(r, QuarantineRecord)}
    assert reasons["华东一区/RTX 4090 24G"].startswith("price_unparsed")  # a range
    assert reasons["华北一区/A800 40G / 80G"].startswith("gpu_unresolved")
    assert reasons[None].startswith("missing_field")


def test_renamed_cells_are_a_layout_error() -> None:
    page = _parsed("layout_cells_renamed")
    assert page.layout_error == "no market row carries gpu (identity): field renamed or removed"
    assert page.missing_fields == ["gpu"]
    assert all(isinstance(r, QuarantineRecord) for r in page.records)
    assert {r.reason for r in page.records if isinstance(r, QuarantineRecord)} == {
        "missing_field: key gone: gpu"
    }


# -- drift and bad cells: the table's contract is its cell labels (rule of truth 9) ------


def reasons_of(page: PageResult) -> dict[str | None, str]:
    return {r.offer_key: r.reason for r in page.records if isinstance(r, QuarantineRecord)}


def test_stock_label_renamed_in_every_row_is_a_layout_error_naming_it() -> None:
    page = _parsed("drift_stock_renamed_everywhere")
    assert page.layout_error == "no market row carries stock (stock): field renamed or removed"
    assert offers_of(page) == {}  # never a market of unknown or sold-out cards
    assert set(reasons_of(page).values()) == {"missing_field: key gone: stock"}
    assert len(page.records) == 7 and page.missing_fields == ["stock"]


def test_stock_label_renamed_in_one_row_costs_that_row_only() -> None:
    rendered = offers_of(_parsed("pricing_rendered"))
    page = _parsed("drift_stock_renamed_in_one")
    first = "华东一区/RTX 4090 24G"
    assert reasons_of(page)[first] == "missing_field: key gone: stock"
    assert offers_of(page) == {k: o for k, o in rendered.items() if k != first}
    assert page.layout_error is None and page.missing_fields == ["stock"]


def test_one_bad_number_costs_its_row_or_its_stock_only() -> None:
    rendered = offers_of(_parsed("pricing_rendered"))
    page = _parsed("bad_cells")
    reasons = reasons_of(page)
    assert reasons["华东一区/L40 48G"].startswith("price_unparsed: '¥1e400/小时'")
    north = offers_of(page)["华北一区/RTX 4090 24G"]
    assert (north.status, north.price) == (StockStatus.UNKNOWN, Decimal("1.88"))  # not 1 free
    assert reasons["华北一区/RTX 4090 24G"].startswith("invalid_value: ")
    bad = ("华东一区/L40 48G", "华北一区/RTX 4090 24G")
    assert {k: o for k, o in offers_of(page).items() if k not in bad} == {
        k: o for k, o in rendered.items() if k not in bad
    }


def test_the_contract_is_declared() -> None:
    from spiders.providers.suanjia import parser as suanjia

    assert suanjia.CONTRACTS == (suanjia.ROW,)
    assert suanjia.ROW.identity == ("region", "gpu") and suanjia.ROW.stock == ("stock",)


def test_a_price_that_only_says_ask_us_is_skipped_and_a_broken_one_is_not() -> None:
    page = parse_market(
        market(
            ("华东一区", "H100 80G", "询价", "剩余2卡"),
            ("华东一区", "H20 96G", "联系客服", "剩余1卡"),
            ("华北一区", "A800 80G", "¥六块/小时", "剩余1卡"),
        ),
        CTX,
    )
    assert [(r.offer_key, r.skip_kind) for r in page.skipped] == [
        ("华东一区/H100 80G", SkipKind.NO_PUBLIC_PRICE),
        ("华东一区/H20 96G", SkipKind.NO_PUBLIC_PRICE),
    ]
    # A price cell that is no number and no "ask us" wording is an offer we cannot read.
    assert reasons_of(page) == {
        "华北一区/A800 80G": "price_unparsed: '¥六块/小时': no number in price text"
    }


def test_offer_key_does_not_follow_the_stock_cell() -> None:
    """Rule of truth 11: free cards, none free, or an empty stock cell: one key."""
    seen = {}
    for stock in ("剩余3卡", "已租满", ""):
        [offer] = parse_market(
            market(("华东一区", "RTX 4090 24G", "¥1.88/小时", stock)), CTX
        ).offers
        seen[offer.status] = offer.offer_key
    assert seen == dict.fromkeys(
        (StockStatus.IN_STOCK, StockStatus.SOLD_OUT, StockStatus.UNKNOWN), "华东一区/RTX 4090 24G"
    )


def test_a_row_without_its_region_cell_names_no_offer() -> None:
    """The key is region/GPU: a row whose region cell is gone is quarantined without a key
    rather than under the GPU alone, which would name another offer."""
    html = market(("华东一区", "RTX 4090 24G", "¥1.88/小时", "剩余3卡")).replace(
        "<td class='region'>华东一区</td>", ""
    )
    page = parse_market(html, CTX)
    assert page.offers == []
    assert reasons_of(page) == {None: "missing_field: key gone: region"}
