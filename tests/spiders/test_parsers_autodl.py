"""AutoDL parsers: machine-list pages (token), the rendered homepage table (no token)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from spider_fixture_cases import (
    OBSERVED_AT,
    RUN_ID,
    Case,
    assert_matches_case,
    cases,
    covered_recordings,
    recorded_bodies,
)

from gpurent.model import OfferRecord, PriceKind, StockStatus
from spiders.parsers.autodl import (
    ADDON_FEES,
    machine_list_body,
    parse_home,
    parse_machine_list,
)
from spiders.parsers.common import PageResult, ParseContext, load_json

CTX = ParseContext("autodl", RUN_ID, OBSERVED_AT)


def parse(case: Case) -> PageResult:
    if case.is_html:
        return parse_home(case.input_bytes().decode("utf-8"), CTX)
    return parse_machine_list(load_json(case.input_bytes()), CTX)


@pytest.mark.parametrize("case", cases("autodl"), ids=lambda c: c.name)
def test_page_parses_to_expected_records(case: Case) -> None:
    assert_matches_case(parse(case), case)


def test_every_recorded_page_has_a_parse_case() -> None:
    assert recorded_bodies("autodl") <= covered_recordings("autodl")


def offers_of(page: PageResult) -> dict[str, OfferRecord]:
    return {r.offer_key: r for r in page.records if isinstance(r, OfferRecord)}


def test_machine_list_reads_price_per_card_and_stock() -> None:
    case = next(c for c in cases("autodl") if c.name == "recorded_machine_list_page1")
    offers = offers_of(parse(case))
    free = offers["3f8a2c91d0"]
    assert free.price == Decimal("1.98")  # payg_price 1980 / 1000
    assert (free.currency, free.price_basis.value, free.gpu_count) == ("CNY", "gpu", 1)
    assert (free.status, free.available_count) == (StockStatus.IN_STOCK, 3)
    assert free.region == "西北B区"
    full = offers["5b1e7d44a2"]  # gpu_idle_num 0
    assert (full.status, full.available_count) == (StockStatus.SOLD_OUT, 0)
    assert full.fees == ADDON_FEES


def test_idle_cards_that_cannot_be_ordered_are_not_rentable() -> None:
    case = next(c for c in cases("autodl") if c.name == "recorded_machine_list_page2")
    raw = load_json(case.input_bytes())
    machine = next(m for m in raw["data"]["list"] if m["machine_id"] == "1c2e3f4a5b")
    assert (machine["gpu_idle_num"], machine["gpu_order_num"]) == (2, 0)
    assert offers_of(parse(case))["1c2e3f4a5b"].status is StockStatus.SOLD_OUT


def test_real_partial_sample_without_idle_count_is_unknown_not_sold_out() -> None:
    case = next(c for c in cases("autodl") if c.name == "shared_machine_list_partial")
    offer = offers_of(parse(case))["2dd949a4cf"]
    assert offer.status is StockStatus.UNKNOWN
    assert offer.price == Decimal("2.72")  # the sample's payg_price 2720


@pytest.mark.parametrize("body", [{"code": "AuthorizeFailed", "data": None, "msg": "x"}])
def test_authorize_failed_yields_nothing(body: dict[str, Any]) -> None:
    page = parse_machine_list(body, CTX)
    assert page.auth_rejected and page.records == [] and page.layout_error is None


def test_homepage_rows_are_unknown_with_member_plans() -> None:
    case = next(c for c in cases("autodl") if c.name == "home_rendered")
    page = parse(case)
    offers = offers_of(page)
    assert len(offers) == 15
    assert all(
        o.status is StockStatus.UNKNOWN and o.available_count is None for o in offers.values()
    )
    rtx = offers["home:RTX 4090"]
    assert (rtx.price, rtx.currency, rtx.billing_unit.value) == (Decimal("1.98"), "CNY", "hour")
    assert [(p.price, p.price_kind) for p in rtx.plans] == [(Decimal("1.88"), PriceKind.MEMBER)]
    assert offers["home:A800-80G"].gpu_vram_gb == 80
    assert offers["home:RTX 4090D"].plans == ()


def test_homepage_before_javascript_is_a_layout_error() -> None:
    case = next(c for c in cases("autodl") if c.name == "recorded_home_unrendered")
    html = case.input_bytes().decode("utf-8")
    assert 'id="gpu-price-body"></tbody>' in html  # the recorded page really is empty
    page = parse(case)
    assert page.layout_error is not None and page.records == []


def test_request_body_lists_sold_out_hosts_too() -> None:
    body = machine_list_body(page_index=3, page_size=20)
    assert body["gpu_idle_num"] == 0
    assert (body["charge_type"], body["page_index"], body["page_size"]) == ("payg", 3, 20)
