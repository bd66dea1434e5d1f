"""GPUShare parser: recorded machine-list pages, package plans, broken machines."""

from __future__ import annotations

from decimal import Decimal

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

from gpurent.model import (
    BillingUnit,
    OfferRecord,
    PriceKind,
    QuarantineRecord,
    StockStatus,
)
from spiders.parsers.common import ParseContext, load_json
from spiders.parsers.gpushare import MachineListPage, list_query, parse_machine_list

CTX = ParseContext("gpushare", RUN_ID, OBSERVED_AT)


def parse(case: Case) -> MachineListPage:
    return parse_machine_list(load_json(case.input_bytes()), CTX)


def case_named(name: str) -> Case:
    return next(c for c in cases("gpushare") if c.name == name)


@pytest.mark.parametrize("case", cases("gpushare"), ids=lambda c: c.name)
def test_page_parses_to_expected_records(case: Case) -> None:
    assert_matches_case(parse(case), case)


def test_every_recorded_page_has_a_parse_case() -> None:
    assert recorded_bodies("gpushare") <= covered_recordings("gpushare")


def offers_of(page: MachineListPage) -> dict[str, OfferRecord]:
    return {r.offer_key: r for r in page.records if isinstance(r, OfferRecord)}


def test_payg_is_the_headline_and_packages_are_commitment_plans() -> None:
    page = parse(case_named("recorded_machine_list_page1"))
    raw = next(m for m in load_json(case_named("recorded_machine_list_page1").input_bytes())
               ["data"]["list"] if len(m["skuList"]) == 4)  # fmt: skip
    offer = offers_of(page)[str(raw["id"])]
    payg = next(s["price"] for s in raw["skuList"] if s["skuName"] == "payg")
    assert (offer.price, offer.currency, offer.billing_unit) == (payg, "CNY", BillingUnit.HOUR)
    assert (offer.price_basis.value, offer.gpu_count) == ("gpu", 1)
    assert [(p.billing_unit, p.price_kind) for p in offer.plans] == [
        (BillingUnit.DAY, PriceKind.COMMITMENT),
        (BillingUnit.WEEK, PriceKind.COMMITMENT),
        (BillingUnit.MONTH, PriceKind.COMMITMENT),
    ]
    assert offer.url == (
        f"https://www.gpushare.com/store/hire/create?id={raw['id']}&models=-1&skuName=payg"
    )


def test_free_cards_are_gpunum_minus_gpuused_and_offline_hosts_are_sold_out() -> None:
    case = case_named("recorded_machine_list_page1")
    machines = load_json(case.input_bytes())["data"]["list"]
    offers = offers_of(parse(case))
    for machine in machines:
        offer = offers.get(str(machine["id"]))
        if offer is None:
            continue  # the quarantined Tesla V100
        if not machine["isOnline"]:
            assert (offer.status, offer.available_count) == (StockStatus.SOLD_OUT, None)
            continue
        free = machine["gpuNum"] - machine["gpuUsed"]
        assert offer.available_count == free
        assert offer.status is (StockStatus.SOLD_OUT if free == 0 else StockStatus.IN_STOCK)
    offline = [m for m in machines if not m["isOnline"]]
    assert offline and any(m["gpuUsed"] < m["gpuNum"] for m in offline)


def test_ambiguous_v100_is_quarantined_not_guessed() -> None:
    page = parse(case_named("recorded_machine_list_page1"))
    quarantined = [r for r in page.records if isinstance(r, QuarantineRecord)]
    assert [(q.field, q.reason.split(":")[0]) for q in quarantined] == [
        ("baseInfo.gpuName", "gpu_unresolved")
    ]
    assert "Tesla V100" in quarantined[0].reason


def test_bad_package_is_set_aside_and_the_offer_stands() -> None:
    page = parse(case_named("bad_machines"))
    offer = offers_of(page)["40002"]
    assert offer.price == Decimal("2.18")
    assert [(p.price, p.billing_unit) for p in offer.plans] == [
        (Decimal("1149.5"), BillingUnit.MONTH)
    ]
    side = [r.reason for r in page.records if r.offer_key == "40002" and r.kind == "quarantine"]
    assert side == [
        "invalid_value: unknown skuName 'halfMonth'",
        "price_unparsed: skuList.week.price is not a number: 'n/a'",
    ]


def test_contradicting_counts_are_unknown_not_sold_out() -> None:
    offers = offers_of(parse(case_named("bad_machines")))
    assert offers["40003"].status is StockStatus.UNKNOWN  # gpuUsed 6 of 4
    assert offers["40004"].status is StockStatus.UNKNOWN  # no counts at all


def test_query_asks_for_every_model_cheapest_first() -> None:
    assert list_query(page=3, page_size=50) == {
        "models": "-1", "gpuName": "", "priceOrder": "asc", "pn": "3", "ps": "50",
    }  # fmt: skip
