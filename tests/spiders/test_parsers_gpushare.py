"""GPUShare parser: recorded machine-list pages, package plans, broken machines."""

from __future__ import annotations

from decimal import Decimal

import pytest
from parser_registry import ctx, parse
from spider_fixture_cases import Case, cases

from gpurent_core.model import BillingUnit, OfferRecord, PriceKind, QuarantineRecord, StockStatus
from spiders.parsers.common import load_json
from spiders.providers.gpushare.parser import MachineListPage, list_query, parse_machine_list


def case_named(name: str) -> Case:
    return next(c for c in cases("gpushare") if c.name == name)


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
    assert len(offers) == len(machines)
    for machine in machines:
        offer = offers[str(machine["id"])]
        if not machine["isOnline"]:
            # Sold out: no card of a host that is down is free, whatever its counts say.
            assert (offer.status, offer.available_count) == (StockStatus.SOLD_OUT, 0)
            continue
        free = machine["gpuNum"] - machine["gpuUsed"]
        assert offer.available_count == free
        assert offer.status is (StockStatus.SOLD_OUT if free == 0 else StockStatus.IN_STOCK)
    offline = [m for m in machines if not m["isOnline"]]
    assert offline and any(m["gpuUsed"] < m["gpuNum"] for m in offline)


def test_v100_without_its_size_is_kept_with_vram_unknown_not_guessed() -> None:
    # "Tesla V100" is 16 or 32 GB: the model is known, its memory is not.
    page = parse(case_named("recorded_machine_list_page1"))
    assert [r for r in page.records if isinstance(r, QuarantineRecord)] == []
    v100 = offers_of(page)["36336"]
    assert (v100.gpu_model, v100.gpu_vram_gb, v100.raw_gpu_name) == ("V100", None, "Tesla V100")


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
    page = parse(case_named("bad_machines"))
    offers = offers_of(page)
    assert offers["40003"].status is StockStatus.UNKNOWN  # gpuUsed 6 of 4
    # 40004 carries neither isOnline nor counts: drift, not a state of any kind.
    assert "40004" not in offers
    assert reasons_of(page)["40004"] == "missing_field: key gone: isOnline, gpuNum, gpuUsed"


def reasons_of(page: MachineListPage) -> dict[str | None, str]:
    return {r.offer_key: r.reason for r in page.records if isinstance(r, QuarantineRecord)}


def test_online_flag_renamed_everywhere_flips_nothing() -> None:
    # page 2 read with `isOnline` renamed: read from the counts alone, hosts the platform
    # holds offline would come back in stock. Every host is drift instead.
    page = parse(case_named("drift_online_renamed_everywhere"))
    assert offers_of(page) == {}
    assert set(reasons_of(page).values()) == {"missing_field: key gone: isOnline"}
    assert len(reasons_of(page)) == 7 and page.missing_fields == ["isOnline"]
    assert page.layout_error == "no machine carries isOnline (stock): field renamed or removed"


def test_count_renamed_in_one_machine_costs_that_machine_only() -> None:
    before = offers_of(parse(case_named("recorded_machine_list_page2")))
    page = parse(case_named("drift_used_renamed_in_one"))
    after = offers_of(page)
    assert set(before) - set(after) == {"36447"}
    assert all(after[key] == before[key] for key in after)
    assert reasons_of(page) == {"36447": "missing_field: key gone: gpuUsed"}
    assert page.layout_error is None and page.missing_fields == ["gpuUsed"]


def test_one_bad_cell_costs_one_machine_or_one_side_field() -> None:
    page = parse(case_named("bad_cells"))
    offers, reasons = offers_of(page), reasons_of(page)
    assert "36447" not in offers and "out of range" in reasons["36447"]  # payg 1e400
    assert "31932" not in offers and "not a number" in reasons["31932"]  # payg {}
    assert offers["34600"].status is StockStatus.UNKNOWN  # gpuUsed -1: set aside
    assert reasons["34600"].startswith("invalid_value: gpuUsed -1")
    assert offers["31209"].status is StockStatus.UNKNOWN  # isOnline "false": not a flag
    assert reasons["31209"].startswith("invalid_value: isOnline")
    assert offers["33570"].status is StockStatus.IN_STOCK


def test_query_asks_for_every_model_cheapest_first() -> None:
    assert list_query(page=3, page_size=50) == {
        "models": "-1", "gpuName": "", "priceOrder": "asc", "pn": "3", "ps": "50",
    }  # fmt: skip


@pytest.mark.parametrize(
    "state",
    [
        {"isOnline": True, "gpuUsed": 2},
        {"isOnline": True, "gpuUsed": 8},
        {"isOnline": False, "gpuUsed": 2},
        {"isOnline": None, "gpuUsed": 2},
        {"isOnline": True, "gpuUsed": 9},
    ],
)
def test_the_stock_answer_never_changes_an_offers_key(state: dict[str, object]) -> None:
    # In stock, sold out, offline or unknown: one host, one key (its id), and a flag or count
    # set aside beside the offer carries that key too.
    machine = {
        "id": 35889,
        "machineName": "V100-32G-01",
        "gpuNum": 8,
        "baseInfo": {"gpuName": "V100 32G"},
        "skuList": [{"skuName": "payg", "price": Decimal("1.98")}],
        **state,
    }
    page = parse_machine_list({"data": {"list": [machine], "total": 1}}, ctx("gpushare"))
    assert [o.offer_key for o in page.offers] == ["35889"]
    assert {r.offer_key for r in page.records} == {"35889"}
