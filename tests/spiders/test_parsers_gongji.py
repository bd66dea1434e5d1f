"""共绩算力 pricing-table parser: the page as Chromium rendered it, before JavaScript, bad rows."""

from __future__ import annotations

from decimal import Decimal

from parser_registry import parse
from spider_fixture_cases import OBSERVED_AT, RUN_ID, cases

from gpurent_core.model import (
    BillingUnit,
    FeeType,
    OfferRecord,
    PriceKind,
    QuarantineRecord,
    SkipKind,
    SkipRecord,
    StockStatus,
)
from spiders.parsers.common import PageResult, ParseContext
from spiders.providers.gongji.parser import parse_pricing

CTX = ParseContext("gongji", RUN_ID, OBSERVED_AT)


def _page(*rows: dict[str, str]) -> PageResult:
    """A rendered table of `rows` ({cell label: text}; a label left out is a cell gone)."""
    body = "".join(
        '<tr class="gpu-row">'
        + "".join(f'<td class="{name}">{text}</td>' for name, text in row.items())
        + "</tr>"
        for row in rows
    )
    html = f'<table id="gpu-pricing"><tbody>{body}</tbody></table>'
    return parse_pricing(html, CTX)


def _row(**cells: str) -> dict[str, str]:
    row = {
        "gpu-model": "RTX 4090",
        "gpu-vram": "24GB",
        "price-on-demand": "¥1.98/时",
        "price-spot": "抢占式 ¥1.19/时",
        "stock": "空闲 12/64",
    }
    row.update(cells)
    return {k: v for k, v in row.items() if v != "GONE"}


def _parsed(name: str) -> PageResult:
    return parse(next(c for c in cases("gongji") if c.name == name))


def offers_of(page: PageResult) -> dict[str, OfferRecord]:
    return {r.offer_key: r for r in page.records if isinstance(r, OfferRecord)}


def test_rendered_page_reads_on_demand_spot_plan_free_cards_and_storage() -> None:
    page = _parsed("pricing_rendered")
    offers = offers_of(page)
    assert len(offers) == 6
    rtx = offers["RTX 4090"]
    assert (rtx.price, rtx.currency, rtx.billing_unit) == (
        Decimal("1.98"),
        "CNY",
        BillingUnit.HOUR,
    )
    assert (rtx.price_basis.value, rtx.price_kind) == ("gpu", PriceKind.ON_DEMAND)
    assert [(p.price, p.price_kind, p.billing_unit) for p in rtx.plans] == [
        (Decimal("1.19"), PriceKind.SPOT, BillingUnit.HOUR)
    ]
    assert (rtx.status, rtx.available_count) == (StockStatus.IN_STOCK, 12)  # 空闲 12/64
    assert (offers["RTX 5090"].status, offers["RTX 5090"].available_count) == (
        StockStatus.SOLD_OUT,
        0,
    )
    assert offers["L40"].plans == () and offers["L40"].gpu_vram_gb == 48
    assert offers["A800"].gpu_vram_gb == 80
    (fee,) = rtx.fees
    assert (fee.fee_type, fee.amount, fee.unit, fee.basis.value) == (
        FeeType.DATA_DISK,
        Decimal("0.2"),
        BillingUnit.MONTH,
        "gb",
    )
    # "询价" (price on request): no public price, skipped and counted, no quarantine line.
    assert not [r for r in page.records if isinstance(r, QuarantineRecord)]
    [skipped] = [r for r in page.records if isinstance(r, SkipRecord)]
    assert (skipped.offer_key, skipped.skip_kind) == ("H20", SkipKind.NO_PUBLIC_PRICE)
    assert "询价" in skipped.detail


def test_recorded_page_before_javascript_is_a_layout_error() -> None:
    case = next(c for c in cases("gongji") if c.name == "recorded_pricing_unrendered")
    assert "<tbody></tbody>" in case.input_bytes().decode("utf-8")
    page = parse(case)
    assert page.layout_error is not None and page.records == []


def test_bad_rows() -> None:
    page = _parsed("bad_rows")
    offers = offers_of(page)
    # A spot price without a unit spoils the plan, not the on-demand offer.
    assert offers["RTX 4090"].plans == () and offers["RTX 4090"].price == Decimal("1.98")
    side = [r for r in page.records if isinstance(r, QuarantineRecord)]
    by_key = {r.offer_key: r for r in side}
    assert by_key["RTX 4090"].field == "price-spot"
    assert by_key["RTX 4090"].raw == {"price-spot": "抢占式 ¥1.19"}
    assert (offers["RTX 4090D"].status, offers["RTX 4090D"].available_count) == (
        StockStatus.SOLD_OUT,
        0,
    )  # 已用 64/64
    assert offers["RTX 3090"].status is StockStatus.UNKNOWN  # "3/40": free or used? unknown
    assert by_key["RTX 5090"].reason.startswith("gpu_unresolved")  # no 48 GB 5090
    assert by_key[None].reason.startswith("missing_field")


# -- drift and bad cells: the table's contract is its cell labels (rule of truth 9) ------


def reasons_of(page: PageResult) -> dict[str | None, str]:
    return {r.offer_key: r.reason for r in page.records if isinstance(r, QuarantineRecord)}


def test_stock_label_renamed_in_every_row_is_a_layout_error_naming_it() -> None:
    page = _parsed("drift_stock_renamed_everywhere")
    assert page.layout_error == "no GPU row carries stock (stock): field renamed or removed"
    assert offers_of(page) == {}  # not 6 cards of unknown stock
    assert set(reasons_of(page).values()) == {"missing_field: key gone: stock"}
    assert len(page.records) == 7 and page.missing_fields == ["stock"]


def test_stock_label_renamed_in_one_row_costs_that_row_only() -> None:
    rendered = offers_of(_parsed("pricing_rendered"))
    page = _parsed("drift_stock_renamed_in_one")
    assert reasons_of(page)["RTX 3090"] == "missing_field: key gone: stock"
    assert offers_of(page) == {k: o for k, o in rendered.items() if k != "RTX 3090"}
    assert page.layout_error is None and page.missing_fields == ["stock"]


def test_one_bad_number_costs_its_row_or_its_stock_only() -> None:
    rendered = offers_of(_parsed("pricing_rendered"))
    page = _parsed("bad_cells")
    reasons = reasons_of(page)
    assert reasons["L40"].startswith("price_unparsed: '¥1e400/时'")
    assert reasons["A800"].startswith("price_unparsed: '¥999999999999999999999/时'")
    # a negative free count: the price stands, the stock is unknown and the count set aside
    rtx3090 = offers_of(page)["RTX 3090"]
    assert (rtx3090.status, rtx3090.price) == (StockStatus.UNKNOWN, Decimal("1.30"))
    assert reasons["RTX 3090"].startswith("invalid_value: ") and "-1/40" in reasons["RTX 3090"]
    untouched = ("RTX 4090", "RTX 5090", "H800")
    assert {k: offers_of(page)[k] for k in untouched} == {k: rendered[k] for k in untouched}


def test_a_stock_column_left_empty_in_every_row_is_a_layout_error() -> None:
    page = _parsed("layout_stock_blank")
    assert page.layout_error == "no GPU row fills its stock (stock) cell"
    assert offers_of(page) == {}
    assert set(reasons_of(page).values()) == {"missing_field: empty in every row: stock"}


def test_the_contract_is_declared() -> None:
    from spiders.providers.gongji import parser as gongji

    assert gongji.CONTRACTS == (gongji.ROW,)
    assert gongji.ROW.stock == ("stock",) and "price-spot" not in gongji.ROW.paths


def test_the_stock_answer_never_changes_an_offers_key() -> None:
    for stock in ("空闲 12/64", "空闲 0/64", "", "空闲 -1/64"):
        page = _page(_row(stock=stock), _row(**{"gpu-model": "L40", "gpu-vram": "48GB"}))
        assert [o.offer_key for o in page.offers] == ["RTX 4090", "L40"], stock
        # a count set aside beside its offer carries the offer's key
        assert {r.offer_key for r in page.records} == {"RTX 4090", "L40"}, stock


def test_a_vram_cell_is_no_drift_where_the_name_states_the_memory() -> None:
    page = _page(
        _row(**{"gpu-model": "RTX 4090 48G", "gpu-vram": "GONE"}),
        _row(**{"gpu-model": "L40", "gpu-vram": "48GB"}),
    )
    [modded, l40] = page.offers
    assert (modded.gpu_model, modded.gpu_vram_gb) == ("RTX 4090", 48)
    assert l40.gpu_vram_gb == 48
    assert page.missing_fields == [] and page.layout_error is None
    # Without the memory in the name the cell is needed: a 4090 of 24 or 48 GB is two cards.
    page = _page(_row(**{"gpu-vram": "GONE"}), _row(**{"gpu-model": "L40", "gpu-vram": "48GB"}))
    assert [o.offer_key for o in page.offers] == ["L40"]
    assert reasons_of(page) == {"RTX 4090": "missing_field: key gone: gpu-vram"}
    assert page.missing_fields == ["gpu-vram"]


def test_only_an_ask_us_wording_is_a_skip_other_text_stays_unreadable() -> None:
    page = _page(
        _row(**{"price-on-demand": "联系客服"}),
        _row(**{"gpu-model": "L40", "gpu-vram": "48GB", "price-on-demand": "¥—/时"}),
        _row(**{"gpu-model": "A800", "gpu-vram": "80GB", "price-spot": "询价"}),
    )
    assert [(r.offer_key, r.skip_kind) for r in page.skipped] == [
        ("RTX 4090", SkipKind.NO_PUBLIC_PRICE)
    ]
    assert reasons_of(page)["L40"].startswith("price_unparsed")
    # an "ask us" preemptible price is no plan: the on-demand offer stands without one
    [a800] = page.offers
    assert (a800.offer_key, a800.plans) == ("A800", ())
