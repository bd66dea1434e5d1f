"""AutoDL parsers: machine-list pages (token), the rendered homepage table (no token)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from parser_registry import parse
from spider_fixture_cases import OBSERVED_AT, RUN_ID, cases

from gpurent_core.model import OfferRecord, PriceKind, QuarantineRecord, SkipKind, StockStatus
from spiders.parsers.common import PageResult, ParseContext, load_json
from spiders.providers.autodl.parser import (
    ADDON_FEES,
    machine_list_body,
    parse_home,
    parse_machine_list,
)

CTX = ParseContext("autodl", RUN_ID, OBSERVED_AT)


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


def test_machine_without_idle_count_is_drift_not_a_state() -> None:
    # A machine in the documented shape but without gpu_idle_num (as public examples that
    # elide fields show it): read as "no count" it would have become an unknown offer
    # replacing the last good state; a gone key is drift (rule of truth 9).
    case = next(c for c in cases("autodl") if c.name == "doc_shape_machine_without_stock_counts")
    page = parse(case)
    assert offers_of(page) == {}
    assert page.layout_error is not None and "gpu_idle_num" in page.layout_error
    (line,) = quarantined(page)
    assert (line.offer_key, line.reason) == (
        "7e41b0c5d2",
        "missing_field: key gone: gpu_idle_num, gpu_all_num|gpu_number",
    )


def quarantined(page: PageResult) -> list[QuarantineRecord]:
    return [r for r in page.records if isinstance(r, QuarantineRecord)]


def test_idle_count_renamed_everywhere_is_a_layout_change_with_no_state() -> None:
    page = parse(next(c for c in cases("autodl") if c.name == "drift_idle_renamed_everywhere"))
    assert offers_of(page) == {} and len(quarantined(page)) == 5
    assert page.missing_fields == ["gpu_idle_num"]
    assert page.layout_error == (
        "no machine carries gpu_idle_num (stock): field renamed or removed"
    )


def test_idle_count_renamed_in_one_machine_costs_that_machine_only() -> None:
    before = offers_of(
        parse(next(c for c in cases("autodl") if c.name == "recorded_machine_list_page1"))
    )
    page = parse(next(c for c in cases("autodl") if c.name == "drift_idle_renamed_in_one"))
    after = offers_of(page)
    assert set(before) - set(after) == {"5b1e7d44a2"}
    assert all(after[key] == before[key] for key in after)
    assert [q.offer_key for q in quarantined(page)] == ["5b1e7d44a2"]
    assert page.layout_error is None and page.missing_fields == ["gpu_idle_num"]


def test_one_bad_cell_costs_one_machine_or_one_side_field() -> None:
    page = parse(next(c for c in cases("autodl") if c.name == "bad_cells"))
    reasons = {q.offer_key: q.reason for q in quarantined(page)}
    offers = offers_of(page)
    # Unreadable prices cost their machine; the free count and region are side fields.
    assert reasons["3f8a2c91d0"].startswith("price_unparsed") and "3f8a2c91d0" not in offers
    assert reasons["5b1e7d44a2"].startswith("price_unparsed") and "5b1e7d44a2" not in offers
    assert offers["8c27f1e6b3"].status is StockStatus.UNKNOWN
    assert "negative" in reasons["8c27f1e6b3"]
    assert offers["a41d9e02c4"].region is None and "region_name" in reasons["a41d9e02c4"]
    assert offers["c9e3b5a7f5"].status is StockStatus.SOLD_OUT


@pytest.mark.parametrize("code", [[], {}, True, None, ["AuthorizeFailed"], {"x": 1}])
def test_a_code_that_is_not_a_code_is_a_layout_error_not_a_refusal(code: Any) -> None:
    page = parse_machine_list({"code": code, "msg": [], "data": {"list": []}}, CTX)
    assert page.layout_error is not None
    assert page.layout_error.startswith("'code' of the envelope is not a code: ")
    assert not page.auth_rejected and page.api_error is None and page.records == []


@pytest.mark.parametrize(("code", "shown"), [("success", "'success'"), (0, "0")])
def test_another_code_is_an_api_error(code: Any, shown: str) -> None:
    page = parse_machine_list({"code": code, "msg": ["busy"], "data": None}, CTX)
    assert page.api_error == f"code {shown}: ['busy']"
    assert not page.auth_rejected and page.layout_error is None


@pytest.mark.parametrize("data", [[], "Success", None, 3, {"msg": "no code"}])
def test_an_answer_without_the_envelope_is_a_layout_error(data: Any) -> None:
    page = parse_machine_list(data, CTX)
    assert page.layout_error == "no 'code' envelope in the answer" and page.records == []


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


def test_an_empty_page_of_a_listing_with_machines_is_a_layout_error() -> None:
    data = load_json(next(c for c in cases("autodl") if c.name == "bad_cells").input_bytes())
    data["data"]["list"] = []  # page 1 of 10 machines (offset 0), yet nothing listed
    page = parse_machine_list(data, CTX)
    assert page.records == [] and page.layout_error is not None
    assert "result_total says 10" in page.layout_error
    data["data"]["offset"] = 10  # past the end: a real empty page
    assert parse_machine_list(data, CTX).layout_error is None


def _machine_page(**counts: Any) -> PageResult:
    machine = {
        "machine_id": "3f8a2c91d0",
        "region_name": "西北B区",
        "gpu_name": "RTX 4090",
        "gpu_all_num": 8,
        "gpu_idle_num": 3,
        "gpu_order_num": 3,
        "payg": True,
        "payg_price": 1980,
        **counts,
    }
    answer = {"code": "Success", "msg": "", "data": {"list": [machine], "max_page": 1}}
    return parse_machine_list(answer, CTX)


@pytest.mark.parametrize(
    "counts",
    [{}, {"gpu_idle_num": 0}, {"gpu_order_num": 0}, {"gpu_idle_num": None}, {"gpu_idle_num": 9}],
)
def test_the_stock_answer_never_changes_an_offers_key(counts: dict[str, Any]) -> None:
    # In stock, sold out, not orderable or unknown: one machine, one key (its id), and a
    # count set aside beside the offer carries that key too.
    page = _machine_page(**counts)
    assert [o.offer_key for o in page.offers] == ["3f8a2c91d0"]
    assert {r.offer_key for r in page.records} == {"3f8a2c91d0"}


def test_a_machine_not_rented_by_the_hour_is_skipped_not_quarantined() -> None:
    page = _machine_page(payg=False)
    assert page.offers == [] and not [r for r in page.records if r.kind == "quarantine"]
    [skip] = page.skipped
    assert (skip.offer_key, skip.skip_kind) == ("3f8a2c91d0", SkipKind.NOT_OFFERED)


def test_a_homepage_price_on_request_is_skipped_not_quarantined() -> None:
    row = (
        '<tr class="gpu-row"><td class="gpu-name">{name}</td><td class="gpu-memory">{mem}</td>'
        '<td class="gpu-price">{price}</td><td class="gpu-member-price">{member}</td></tr>'
    )
    rows = [
        row.format(name="H20", mem="96GB", price="询价", member="-"),
        row.format(name="RTX 4090", mem="24GB", price="¥1.98/时", member="询价"),
    ]
    html = f'<table><tbody id="gpu-price-body">{"".join(rows)}</tbody></table>'
    page = parse_home(html, CTX)
    assert [(s.offer_key, s.skip_kind) for s in page.skipped] == [
        ("home:H20", SkipKind.NO_PUBLIC_PRICE)
    ]
    [offer] = page.offers
    assert (offer.offer_key, offer.price, offer.plans) == ("home:RTX 4090", Decimal("1.98"), ())
