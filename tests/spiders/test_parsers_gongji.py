"""共绩算力 pricing-table parser: the page as Chromium rendered it, before JavaScript, bad rows."""

from __future__ import annotations

from decimal import Decimal

from parser_registry import parse
from spider_fixture_cases import cases

from gpurent_core.model import (
    BillingUnit,
    FeeType,
    OfferRecord,
    PriceKind,
    QuarantineRecord,
    StockStatus,
)
from spiders.parsers.common import PageResult


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
    [quarantined] = [r for r in page.records if isinstance(r, QuarantineRecord)]
    assert quarantined.offer_key == "H20" and "询价" in quarantined.reason


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
    from spiders.parsers import gongji

    assert gongji.CONTRACTS == (gongji.ROW,)
    assert gongji.ROW.stock == ("stock",) and "price-spot" not in gongji.ROW.paths
