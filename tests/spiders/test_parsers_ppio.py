"""PPIO parser: the recorded product list, stock flags, broken products."""

from __future__ import annotations

from decimal import Decimal

from parser_registry import parse
from spider_fixture_cases import OBSERVED_AT, RUN_ID, Case, cases

from gpurent_core.model import OfferRecord, QuarantineRecord, StockStatus
from gpurent_core.normalize.price import PPIO_PRICE_SCALE
from spiders.parsers.common import PageResult, ParseContext, load_json
from spiders.providers.ppio.parser import parse_products

CTX = ParseContext("ppio", RUN_ID, OBSERVED_AT)


def case_named(name: str) -> Case:
    return next(c for c in cases("ppio") if c.name == name)


def offers_of(page: PageResult) -> dict[str, OfferRecord]:
    return {r.offer_key: r for r in page.records if isinstance(r, OfferRecord)}


def test_price_is_per_card_hour_in_hundred_thousandths() -> None:
    offers = offers_of(parse(case_named("recorded_products")))
    h200 = offers["a9f0c1d2-0008"]
    assert PPIO_PRICE_SCALE == 100_000
    assert (h200.price, h200.currency, h200.billing_unit.value) == (Decimal("18.9"), "CNY", "hour")
    assert (h200.gpu_model, h200.gpu_vram_gb, h200.price_basis.value) == ("H200", 141, "gpu")
    assert offers["a9f0c1d2-0001"].region == "华东-上海一区, 华南-广州一区"


def test_stock_from_available_deploy_and_can_buy() -> None:
    offers = offers_of(parse(case_named("recorded_products")))
    assert offers["a9f0c1d2-0001"].status is StockStatus.IN_STOCK
    assert offers["a9f0c1d2-0003"].status is StockStatus.SOLD_OUT  # availableDeploy false
    assert offers["a9f0c1d2-0005"].status is StockStatus.SOLD_OUT  # canBuy false

    bad = parse(case_named("bad_products"))
    # p-002 has no availableDeploy key at all: drift, neither sold out nor unknown stock.
    assert "p-002" not in offers_of(bad)
    assert reasons_of(bad)["p-002"] == "missing_field: key gone: availableDeploy"


def reasons_of(page: PageResult) -> dict[str | None, str]:
    return {r.offer_key: r.reason for r in page.records if isinstance(r, QuarantineRecord)}


def test_a_null_flag_is_unknown_stock_and_says_why() -> None:
    # The key is there (no drift) but says nothing: neither state, and a line beside the
    # offer names the flag.
    page = parse(case_named("bad_cells"))
    assert offers_of(page)["a9f0c1d2-0005"].status is StockStatus.UNKNOWN
    assert reasons_of(page)["a9f0c1d2-0005"] == (
        "missing_field: availableDeploy is not true or false: None"
    )


def test_stock_flag_renamed_everywhere_is_a_layout_change_with_no_state() -> None:
    page = parse(case_named("drift_stock_renamed_everywhere"))
    assert offers_of(page) == {} and len(reasons_of(page)) == 8
    assert set(reasons_of(page).values()) == {"missing_field: key gone: availableDeploy"}
    assert page.layout_error is not None and "availableDeploy (stock)" in page.layout_error


def test_stock_flag_renamed_in_one_product_costs_that_product_only() -> None:
    # The drift cases are the recorded products without the RTX 3080 (a name whose reading
    # is the GPU catalog's business, not this test's).
    before = offers_of(parse(case_named("recorded_products")))
    before.pop("a9f0c1d2-0009", None)
    page = parse(case_named("drift_stock_renamed_in_one"))
    after = offers_of(page)
    assert set(before) - set(after) == {"a9f0c1d2-0001"}
    assert all(after[key] == before[key] for key in after)
    assert page.layout_error is None and page.missing_fields == ["availableDeploy"]


def test_one_bad_cell_costs_one_product_or_one_side_field() -> None:
    page = parse(case_named("bad_cells"))
    offers, reasons = offers_of(page), reasons_of(page)
    for key in ("a9f0c1d2-0001", "a9f0c1d2-0002"):  # price 1e400, price {}
        assert key not in offers and reasons[key].startswith("price_unparsed: ")
    # A retyped flag is not read as either state: stock unknown, the flag set aside.
    assert offers["a9f0c1d2-0003"].status is StockStatus.UNKNOWN
    assert reasons["a9f0c1d2-0003"].startswith("invalid_value: availableDeploy")
    assert offers["a9f0c1d2-0004"].status is StockStatus.UNKNOWN
    assert reasons["a9f0c1d2-0004"].startswith("invalid_value: canBuy")
    assert offers["a9f0c1d2-0006"].status is StockStatus.IN_STOCK


def test_rtx_3080_without_its_size_is_kept_with_vram_unknown() -> None:
    # "RTX 3080" is 10 or 12 GB (20 GB modded): the model is known, its memory is not.
    page = parse(case_named("recorded_products"))
    assert [r for r in page.records if r.kind == "quarantine"] == []
    rtx = offers_of(page)["a9f0c1d2-0009"]
    assert (rtx.gpu_model, rtx.gpu_vram_gb) == ("RTX 3080", None)


def test_renamed_name_field_is_a_layout_error() -> None:
    page = parse(case_named("layout_renamed_name"))
    assert page.layout_error == "no product carries name (identity): field renamed or removed"
    assert page.missing_fields == ["name"]


def test_offer_key_does_not_follow_the_stock_flags() -> None:
    """Rule of truth 11: deployable, not deployable, not buyable or a flag that says
    neither, one product is one key (its id)."""
    [product] = [
        p
        for p in load_json(case_named("recorded_products").input_bytes())["data"]
        if p["id"] == "a9f0c1d2-0001"
    ]
    seen = {}
    for deploy, buy in ((True, True), (False, True), (True, False), (None, True)):
        page = parse_products(
            {"data": [{**product, "availableDeploy": deploy, "canBuy": buy}]}, CTX
        )
        [offer] = page.offers
        seen[(deploy, buy)] = (offer.offer_key, offer.status)
    assert {key for key, _ in seen.values()} == {"a9f0c1d2-0001"}
    assert [status for _, status in seen.values()] == [
        StockStatus.IN_STOCK,
        StockStatus.SOLD_OUT,
        StockStatus.SOLD_OUT,
        StockStatus.UNKNOWN,
    ]
