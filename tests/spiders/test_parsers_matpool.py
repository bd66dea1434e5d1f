"""Matpool parser: recorded market pages, a documented-shape answer, units, discounts."""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

from parser_registry import parse
from spider_fixture_cases import OBSERVED_AT, RUN_ID, Case, cases

from gpurent_core.model import OfferRecord, PriceKind, QuarantineRecord, StockStatus
from gpurent_core.normalize.price import MATPOOL_PRICE_SCALE
from spiders.parsers.common import ParseContext, load_json
from spiders.providers.matpool.parser import MachinesPage, machines_query, parse_machines

CTX = ParseContext("matpool", RUN_ID, OBSERVED_AT)


def case_named(name: str) -> Case:
    return next(c for c in cases("matpool") if c.name == name)


def offers_of(page: MachinesPage) -> dict[str, OfferRecord]:
    return {r.offer_key: r for r in page.records if isinstance(r, OfferRecord)}


def test_millicent_price_discount_plan_and_no_unknown_fee() -> None:
    case = case_named("recorded_machines_page1")
    machines = load_json(case.input_bytes())["machines"]
    raw = next(m for m in machines if m["hardware"]["gpu"]["gpuName"] == "RTX 4090")
    offer = offers_of(parse(case))[f"{raw['agentId']}/{raw['resourceID']}"]
    assert MATPOOL_PRICE_SCALE == 100_000
    assert offer.price == Decimal("2.2")  # priceMillicent 220000
    assert [(p.price, p.price_kind) for p in offer.plans] == [(Decimal("1.98"), PriceKind.MEMBER)]
    # The network-disk rate beyond the free 5 GB is unknown: a fact to read, not a fee
    # (a zero-amount fee would price unknown storage as free).
    assert offer.fees == ()


def test_no_discount_means_no_plan() -> None:
    offers = offers_of(parse(case_named("recorded_machines_page1")))
    l40s = [o for o in offers.values() if o.gpu_model == "L40S"]
    assert l40s and all(o.plans == () for o in l40s)


def test_two_card_units_price_the_unit_and_one_free_card_is_low() -> None:
    offers = offers_of(parse(case_named("recorded_machines_page2")))
    a6000 = [o for o in offers.values() if o.gpu_model == "RTX A6000"]
    assert a6000 and all(o.gpu_count == 2 and o.price_basis.value == "instance" for o in a6000)
    assert [(o.status, o.available_count) for o in a6000] == [(StockStatus.LOW, 1)]


def test_sold_out_and_the_ambiguous_a100() -> None:
    page = parse(case_named("recorded_machines_page1"))
    offers = offers_of(page)
    assert any(o.status is StockStatus.SOLD_OUT for o in offers.values())
    # "A100-PCIE" is an A100 PCIe whose size (40 or 80 GB) Matpool does not say: kept, with
    # VRAM unknown (never guessed, never counted as fitting a VRAM floor).
    a100 = offers["1714/313"]
    assert (a100.gpu_model, a100.gpu_form_factor, a100.gpu_vram_gb) == ("A100", "PCIe", None)
    assert not [r for r in page.records if r.kind == "quarantine"]


def test_documented_shape_parses_but_its_placeholder_gpu_is_quarantined() -> None:
    page = parse(case_named("doc_shape_placeholder_gpu_name"))
    assert page.layout_error is None and page.num_pages == 1
    (record,) = page.records
    assert record.kind == "quarantine" and record.offer_key == "3/57"
    assert "Sample Card" in record.reason


def test_auth_code_and_api_errors_yield_nothing() -> None:
    refused = parse(case_named("auth_code_176"))
    assert refused.auth_rejected and refused.records == [] and refused.layout_error is None
    failed = parse(case_named("api_error"))
    assert failed.api_error is not None and failed.records == [] and not failed.auth_rejected


def test_query_asks_for_gpu_machines() -> None:
    assert machines_query(page=2, per_page=20) == {
        "page": "2", "per_page": "20", "machine_category": "0",
    }  # fmt: skip


def recorded_page1() -> dict[str, Any]:
    data: dict[str, Any] = load_json(case_named("recorded_machines_page1").input_bytes())
    return data


def test_offer_key_does_not_follow_the_free_counts() -> None:
    """Rule of truth 11: all free, some free, none free or a count that cannot be read, one
    machine is one key (`<agentId>/<resourceID>`)."""
    data = recorded_page1()
    machine = data["machines"][0]
    seen = {}
    for free in (8, 1, 0, None):
        changed = copy.deepcopy(machine)
        changed["gpu"]["available"] = free
        page = parse_machines({**data, "machines": [changed]}, CTX)
        [offer] = page.offers
        seen[free] = (offer.offer_key, offer.status)
    assert {key for key, _ in seen.values()} == {"1820/300"}
    assert [status for _, status in seen.values()] == [
        StockStatus.IN_STOCK,
        StockStatus.IN_STOCK,
        StockStatus.SOLD_OUT,
        StockStatus.UNKNOWN,
    ]


def test_a_machine_that_lost_its_resource_id_keeps_its_host_offers_unread() -> None:
    """Without `resourceID` the machine cannot say which of its host's offers it is: its line
    has no key, and `<agentId>/` is unread, so the host's offers stay (stale), not close."""
    data = recorded_page1()
    del data["machines"][0]["resourceID"]
    page = parse_machines(data, CTX)
    lines = [r for r in page.records if isinstance(r, QuarantineRecord)]
    assert [(r.offer_key, r.reason) for r in lines] == [
        (None, "missing_field: key gone: resourceID")
    ]
    assert page.unread_prefixes == ["1820/"]
    assert "1820/300" not in offers_of(page)
    # Any other drift keeps the machine's own key on its line: nothing is unread by prefix.
    data = recorded_page1()
    del data["machines"][0]["gpu"]["available"]
    page = parse_machines(data, CTX)
    assert [r.offer_key for r in page.records if isinstance(r, QuarantineRecord)] == ["1820/300"]
    assert page.unread_prefixes == []
