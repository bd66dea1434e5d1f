"""Chenyu parser: the recorded GPU list (price per card-hour in CNY, day/week/month/year
packages as plans), stock never read from the undocumented `status`, drift and broken items."""

from __future__ import annotations

from decimal import Decimal

from parser_registry import parse
from spider_fixture_cases import OBSERVED_AT, RUN_ID, Case, cases

from gpurent_core.model import OfferRecord, QuarantineRecord, StockStatus
from spiders.parsers.common import PageResult, ParseContext, load_json
from spiders.providers.chenyu.parser import parse_gpu_list

CTX = ParseContext("chenyu", RUN_ID, OBSERVED_AT)
RTX_4090D = "gpu_5f0c2a91-3b7e-4d21-9a6e-1c4f8d2e7b03"
RTX_3090 = "gpu_8a41d7c2-6e19-4f3b-b2d5-7e0a93c1f456"
A6000 = "gpu_2c9e6b13-84d0-47aa-8f61-3d5b0e2a9c78"
L40 = "gpu_b7d35e80-1fa2-4c69-a0e4-95c2d8f1a3b6"
A800 = "gpu_4e1a9f27-c3b8-4d05-96e2-0b7d5a3c8f19"
H20 = "gpu_c05b7d4e-92f1-4a38-bd67-e8a1c3f0d524"


def case_named(name: str) -> Case:
    return next(c for c in cases("chenyu") if c.name == name)


def offers_of(page: PageResult) -> dict[str, OfferRecord]:
    return {r.offer_key: r for r in page.records if isinstance(r, OfferRecord)}


def reasons_of(page: PageResult) -> dict[str | None, str]:
    return {r.offer_key: r.reason for r in page.records if isinstance(r, QuarantineRecord)}


def test_price_per_card_hour_in_cny_and_package_plans() -> None:
    offers = offers_of(parse(case_named("recorded_gpu_list")))
    rtx = offers[RTX_4090D]
    assert (rtx.price, rtx.currency, rtx.billing_unit.value, rtx.price_basis.value) == (
        Decimal("1.88"),
        "CNY",
        "hour",
        "gpu",
    )
    assert (rtx.gpu_model, rtx.gpu_vram_gb, rtx.gpu_count, rtx.region) == ("RTX 4090D", 24, 1, None)
    plans = [(p.billing_unit.value, p.price, p.price_kind.value, p.price_basis.value)
             for p in rtx.plans]  # fmt: skip
    assert plans == [
        ("day", Decimal("40.00"), "commitment", "gpu"),
        ("week", Decimal("252.00"), "commitment", "gpu"),
        ("month", Decimal("980.00"), "commitment", "gpu"),
        ("year", Decimal("10800.00"), "commitment", "gpu"),
    ]
    # No year price listed: no year plan.
    assert [p.billing_unit.value for p in offers[H20].plans] == ["day", "week", "month"]
    assert (offers[A800].gpu_model, offers[A800].gpu_vram_gb) == ("A800", 80)
    assert offers[H20].gpu_vram_gb is None  # the name does not say it: never guessed


def test_stock_is_unknown_whatever_the_undocumented_status_says() -> None:
    page = parse(case_named("recorded_gpu_list"))
    offers = offers_of(page)
    assert len(offers) == 6 and reasons_of(page) == {} and page.skipped == []
    assert {(o.status, o.available_count) for o in offers.values()} == {(StockStatus.UNKNOWN, None)}


def test_status_renamed_everywhere_is_a_layout_change_never_sold_out() -> None:
    page = parse(case_named("drift_stock_renamed_everywhere"))
    assert offers_of(page) == {} and page.skipped == []
    assert set(reasons_of(page).values()) == {"missing_field: key gone: status"}
    assert page.layout_error is not None and "status (stock)" in page.layout_error


def test_status_renamed_in_one_item_costs_that_item_only() -> None:
    before = offers_of(parse(case_named("recorded_gpu_list")))
    page = parse(case_named("drift_stock_renamed_in_one"))
    after = offers_of(page)
    assert set(before) - set(after) == {RTX_4090D}
    assert all(after[key] == before[key] for key in after)
    assert reasons_of(page) == {RTX_4090D: "missing_field: key gone: status"}
    assert page.layout_error is None and page.missing_fields == ["status"]


def test_renamed_gpu_name_is_a_layout_error() -> None:
    page = parse(case_named("layout_renamed_gpu_name"))
    assert page.layout_error == "no GPU carries gpu_name (identity): field renamed or removed"


def test_one_bad_cell_costs_one_offer_or_one_plan() -> None:
    page = parse(case_named("bad_cells"))
    offers, reasons = offers_of(page), reasons_of(page)
    for key in (RTX_4090D, RTX_3090):  # price.hour "面议", price.hour {}
        assert key not in offers and reasons[key].startswith("price_unparsed: price.hour")
    # A bad package price costs that plan, not the offer.
    assert [p.billing_unit.value for p in offers[A6000].plans] == ["week", "month", "year"]
    assert reasons[A6000].startswith("price_unparsed: price.day")
    assert [p.billing_unit.value for p in offers[L40].plans] == ["day", "month", "year"]
    assert reasons[L40].startswith("price_unparsed: price.week")
    # A status of another type changes nothing: it is read for no stock.
    assert offers[A800].status is StockStatus.UNKNOWN and A800 not in reasons
    # Numeric text is a price; no packages listed, no plans.
    assert (offers[H20].price, offers[H20].plans) == (Decimal("6.80"), ())


def test_unreadable_items_are_quarantined_and_the_rest_kept() -> None:
    page = parse(case_named("bad_items"))
    reasons = reasons_of(page)
    assert set(offers_of(page)) == {RTX_4090D, RTX_3090, A6000}
    assert reasons["gpu_x99"].startswith("gpu_unresolved: ")
    assert reasons["gpu_no_price"] == "missing_field: key gone: price.hour"
    assert reasons[None].startswith(("missing_field", "not_an_offer"))
    assert page.layout_error is None


def test_envelope_errors() -> None:
    assert parse(case_named("api_error")).api_error == "code 10001: 系统繁忙,请稍后再试"
    assert parse(case_named("layout_no_list")).layout_error is not None
    assert parse(case_named("envelope_code_retyped")).layout_error is not None
    unauthorized = parse(case_named("recorded_unauthorized"))
    assert unauthorized.records == [] and unauthorized.api_error is not None


def test_offer_key_does_not_follow_the_status() -> None:
    """Rule of truth 11: whatever the status says, one key and the same unknown stock."""
    [item] = [
        i
        for i in load_json(case_named("recorded_gpu_list").input_bytes())["data"]["gpu_list"]
        if i["gpu_uuid"] == RTX_3090
    ]
    seen = set()
    for status in (1, 0, 2, None, "sold out"):
        answer = {"code": 0, "msg": "", "data": {"gpu_list": [{**item, "status": status}]}}
        [offer] = parse_gpu_list(answer, CTX).offers
        seen.add((offer.offer_key, offer.status, offer.available_count))
    assert seen == {(RTX_3090, StockStatus.UNKNOWN, None)}
