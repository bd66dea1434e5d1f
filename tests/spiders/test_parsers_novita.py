"""Novita AI parser: the recorded product list (PPIO's schema in USD), stock flags, spot
plans, the platform fee, broken products."""

from __future__ import annotations

from decimal import Decimal

from parser_registry import parse
from spider_fixture_cases import OBSERVED_AT, RUN_ID, Case, cases

from gpurent_core.billing_facts import platform_fees
from gpurent_core.model import OfferRecord, PriceKind, QuarantineRecord, StockStatus
from spiders.parsers.common import PageResult, ParseContext, load_json
from spiders.parsers.ppio_products import ProductList
from spiders.providers.novita import parser as novita
from spiders.providers.novita.parser import parse_products
from spiders.providers.ppio import parser as ppio

CTX = ParseContext("novita", RUN_ID, OBSERVED_AT)


def case_named(name: str) -> Case:
    return next(c for c in cases("novita") if c.name == name)


def offers_of(page: PageResult) -> dict[str, OfferRecord]:
    return {r.offer_key: r for r in page.records if isinstance(r, OfferRecord)}


def reasons_of(page: PageResult) -> dict[str | None, str]:
    return {r.offer_key: r.reason for r in page.records if isinstance(r, QuarantineRecord)}


def test_one_reader_for_ppio_and_novita() -> None:
    # The schema is PPIO's: both parsers are the shared reader with their own terms.
    assert isinstance(novita.PRODUCTS, ProductList) and isinstance(ppio.PRODUCTS, ProductList)
    assert (novita.PRODUCTS.currency, ppio.PRODUCTS.currency) == ("USD", "CNY")
    assert novita.PRODUCTS.endpoint_url.startswith("https://api.novita.ai/")


def test_price_is_per_card_hour_in_hundred_thousandths_of_a_dollar() -> None:
    offers = offers_of(parse(case_named("recorded_products")))
    h200 = offers["c3e8a1f0-0008"]
    assert (h200.price, h200.currency, h200.billing_unit.value) == (Decimal("3.5"), "USD", "hour")
    assert (h200.gpu_model, h200.gpu_vram_gb, h200.price_basis.value) == ("H200", 141, "gpu")
    assert offers["c3e8a1f0-0001"].price == Decimal("0.69")
    assert offers["c3e8a1f0-0001"].region == "US-CA-01, EU-DE-01, AS-SGP-01"
    assert (offers["c3e8a1f0-0009"].gpu_vendor, offers["c3e8a1f0-0009"].gpu_model) == (
        "AMD",
        "MI300X",
    )


def test_spot_price_is_a_plan_when_above_zero() -> None:
    offers = offers_of(parse(case_named("recorded_products")))
    [spot] = offers["c3e8a1f0-0001"].plans
    assert (spot.price, spot.currency, spot.price_kind) == (Decimal("0.35"), "USD", PriceKind.SPOT)
    # spotPrice "" (L40S, MI300X) and "0" (A100): no spot plan.
    for key in ("c3e8a1f0-0004", "c3e8a1f0-0006", "c3e8a1f0-0009"):
        assert offers[key].plans == ()


def test_every_offer_carries_the_container_disk_fee_from_the_billing_facts() -> None:
    [fee] = platform_fees("novita")
    assert (fee.fee_type.value, fee.amount, fee.unit.value if fee.unit else None) == (
        "system_disk",
        Decimal("0.005"),
        "day",
    )
    assert fee.included_quantity == Decimal(60) and fee.charged_while_stopped is None
    offers = offers_of(parse(case_named("recorded_products")))
    assert all(offer.fees == (fee,) for offer in offers.values())


def test_stock_from_available_deploy() -> None:
    offers = offers_of(parse(case_named("recorded_products")))
    assert offers["c3e8a1f0-0001"].status is StockStatus.IN_STOCK
    assert {k for k, o in offers.items() if o.status is StockStatus.SOLD_OUT} == {
        "c3e8a1f0-0003",
        "c3e8a1f0-0005",
        "c3e8a1f0-0007",
    }


def test_undocumented_can_buy_is_not_read() -> None:
    # Novita's reference documents no canBuy (PPIO's second flag): whatever it says, the
    # documented availableDeploy alone decides, so its vanishing can never change a state.
    page = parse(case_named("undocumented_can_buy_not_read"))
    assert page.missing_fields == [] and reasons_of(page) == {}
    assert {k: o.status for k, o in offers_of(page).items()} == {
        "c3e8a1f0-0001": StockStatus.IN_STOCK,  # canBuy false
        "c3e8a1f0-0002": StockStatus.IN_STOCK,  # canBuy null
        "c3e8a1f0-0003": StockStatus.SOLD_OUT,  # canBuy true, availableDeploy false
    }


def test_stock_flag_renamed_everywhere_is_a_layout_change_with_no_state() -> None:
    page = parse(case_named("drift_stock_renamed_everywhere"))
    assert offers_of(page) == {} and len(reasons_of(page)) == 9
    assert set(reasons_of(page).values()) == {"missing_field: key gone: availableDeploy"}
    assert page.layout_error is not None and "availableDeploy (stock)" in page.layout_error


def test_stock_flag_renamed_in_one_product_costs_that_product_only() -> None:
    before = offers_of(parse(case_named("recorded_products")))
    page = parse(case_named("drift_stock_renamed_in_one"))
    after = offers_of(page)
    assert set(before) - set(after) == {"c3e8a1f0-0001"}
    assert all(after[key] == before[key] for key in after)
    assert page.layout_error is None and page.missing_fields == ["availableDeploy"]


def test_renamed_name_field_is_a_layout_error() -> None:
    page = parse(case_named("layout_renamed_name"))
    assert page.layout_error == "no product carries name (identity): field renamed or removed"
    assert page.missing_fields == ["name"]


def test_one_bad_cell_costs_one_product_or_one_side_field() -> None:
    page = parse(case_named("bad_cells"))
    offers, reasons = offers_of(page), reasons_of(page)
    for key in ("c3e8a1f0-0001", "c3e8a1f0-0002"):  # price 1e400, price {}
        assert key not in offers and reasons[key].startswith("price_unparsed: price")
    # A retyped or null flag is read as neither state: stock unknown, the flag set aside.
    assert offers["c3e8a1f0-0003"].status is StockStatus.UNKNOWN
    assert reasons["c3e8a1f0-0003"].startswith("invalid_value: availableDeploy")
    assert offers["c3e8a1f0-0004"].status is StockStatus.UNKNOWN
    assert reasons["c3e8a1f0-0004"].startswith("missing_field: availableDeploy")
    assert offers["c3e8a1f0-0005"].status is StockStatus.UNKNOWN
    assert reasons["c3e8a1f0-0005"].startswith("invalid_value: availableDeploy")
    # A bad spot price costs the plan, not the offer.
    for key in ("c3e8a1f0-0006", "c3e8a1f0-0008"):  # spotPrice "cheap", "-5"
        assert offers[key].plans == () and reasons[key].startswith("price_unparsed: spotPrice")
    # A price written as a string (as a live reading saw it) is read.
    assert offers["c3e8a1f0-0007"].price == Decimal("2.56")


def test_unreadable_products_are_quarantined_and_the_rest_kept() -> None:
    page = parse(case_named("bad_products"))
    reasons = reasons_of(page)
    assert set(offers_of(page)) == {"c3e8a1f0-0001"}
    assert reasons["c3e8a1f0-0002"] == "missing_field: key gone: availableDeploy"
    assert reasons["c3e8a1f0-0004"].startswith("gpu_unresolved: ")
    assert reasons[None].startswith(("missing_field: id", "not_an_offer"))
    assert page.layout_error is None


def test_unauthorized_answer_is_no_product_list() -> None:
    page = parse(case_named("recorded_unauthorized"))
    assert page.records == [] and page.layout_error is not None


def test_offer_key_does_not_follow_the_stock_flags() -> None:
    """Rule of truth 11: deployable, not deployable or a flag that says neither, one
    product is one key (its id)."""
    [product] = [
        p
        for p in load_json(case_named("recorded_products").input_bytes())["data"]
        if p["id"] == "c3e8a1f0-0001"
    ]
    seen = []
    for deploy in (True, False, None, "yes"):
        [offer] = parse_products({"data": [{**product, "availableDeploy": deploy}]}, CTX).offers
        seen.append((offer.offer_key, offer.status))
    assert {key for key, _ in seen} == {"c3e8a1f0-0001"}
    assert [status for _, status in seen] == [
        StockStatus.IN_STOCK,
        StockStatus.SOLD_OUT,
        StockStatus.UNKNOWN,
        StockStatus.UNKNOWN,
    ]
