"""UCloud UHost parser: instance types and prices to offers, pure (no Scrapy, no server)."""

from __future__ import annotations

import copy
import dataclasses
import json
from decimal import Decimal
from typing import Any

import pytest
from spider_fixture_cases import OBSERVED_AT, RUN_ID

from gpurent_core.providers import provider
from spiders.parsers.common import PRICE_UNPARSED, FieldProblem, ParseContext, feed_dicts
from spiders.providers.ucloud import parser as ucloud

CTX = ParseContext("ucloud", RUN_ID, OBSERVED_AT)


def recording(name: str) -> Any:
    path = provider("ucloud").recordings / name
    return json.loads(path.read_text(encoding="utf-8"))


def listings() -> dict[str, ucloud.GpuListing]:
    page = ucloud.parse_instance_types(recording("instance_types.json"), CTX)
    return {listing.offer_key: listing for listing in page.listings}


def quote(price: str, charge_type: str = ucloud.DYNAMIC) -> ucloud.PriceQuote:
    return ucloud.PriceQuote(charge_type=charge_type, price=Decimal(price))


def offer_lines(listing: ucloud.GpuListing, quotes: dict[str, Any]) -> list[dict[str, Any]]:
    return feed_dicts(ucloud.offer_records(CTX, listing, quotes).records)


def test_the_recorded_types_give_four_gpu_listings_of_their_smallest_machine() -> None:
    found = listings()
    assert sorted(found) == ["cn-bj2-02/T4", "cn-bj2-02/V100S", "cn-bj2-05/4090", "cn-bj2-05/A100"]
    t4 = found["cn-bj2-02/T4"]
    assert (t4.machine_type, t4.gpu_count, t4.cpu, t4.memory_mb, t4.boot_disk_type) == (
        "G",
        1,
        4,
        16384,
        "CLOUD_SSD",
    )
    assert found["cn-bj2-05/A100"].boot_disk_type == "CLOUD_RSSD"


def test_the_price_request_names_the_machine_gpu_and_system_disk() -> None:
    params = ucloud.price_params(listings()["cn-bj2-05/A100"], "cn-bj2", "Month")
    assert params == {
        "Action": "GetUHostInstancePrice",
        "Region": "cn-bj2",
        "Zone": "cn-bj2-05",
        "MachineType": "G",
        "GpuType": "A100",
        "GPU": 1,
        "CPU": 16,
        "Memory": 131072,
        "Count": 1,
        "ChargeType": "Month",
        "Disks.0.IsBoot": "True",
        "Disks.0.Type": "CLOUD_RSSD",
        "Disks.0.Size": 20,
    }


def test_the_same_type_in_stock_and_sold_out_keeps_its_key() -> None:
    t4 = listings()["cn-bj2-02/T4"]
    sold_out = dataclasses.replace(t4, status="Soldout")
    [on_sale] = offer_lines(t4, {"Dynamic": quote("3.46")})
    [gone] = offer_lines(sold_out, {"Dynamic": quote("3.46")})
    assert on_sale["offer_key"] == gone["offer_key"] == "cn-bj2-02/T4"
    assert (on_sale["status"], gone["status"]) == ("in_stock", "sold_out")


def test_an_undocumented_status_is_quarantined_and_the_stock_unknown() -> None:
    odd = dataclasses.replace(listings()["cn-bj2-02/T4"], status="Limited")
    offer, line = offer_lines(odd, {"Dynamic": quote("3.46")})
    assert (offer["kind"], offer["status"]) == ("offer", "unknown")
    assert (line["kind"], line["offer_key"], line["field"]) == (
        "quarantine",
        "cn-bj2-02/T4",
        "Status",
    )


def test_without_an_hourly_price_the_offer_is_quarantined_under_its_key() -> None:
    problem = FieldProblem(PRICE_UNPARSED, "Price", "Price is negative: -1")
    [line] = offer_lines(listings()["cn-bj2-05/4090"], {"Dynamic": problem})
    assert (line["kind"], line["offer_key"], line["field"]) == (
        "quarantine",
        "cn-bj2-05/4090",
        "Price",
    )


def test_a_bad_month_price_sets_the_plan_aside_and_the_offer_stands() -> None:
    problem = FieldProblem(PRICE_UNPARSED, "Price", "Price is not a number")
    offer, line = offer_lines(
        listings()["cn-bj2-05/4090"], {"Dynamic": quote("4.05"), "Month": problem}
    )
    assert (offer["kind"], offer["price"], offer["plans"]) == ("offer", "4.05", [])
    assert (line["kind"], line["offer_key"]) == ("quarantine", "cn-bj2-05/4090")


@pytest.mark.parametrize(
    ("machine_class", "status", "skip_kind"),
    [("Normal", "Normal", "not_a_gpu_offer"), ("GPU", "Hidden", "not_offered")],
)
def test_non_gpu_and_hidden_types_are_skipped_never_quarantined(
    machine_class: str, status: str, skip_kind: str
) -> None:
    data = recording("instance_types.json")
    item = copy.deepcopy(data["AvailableInstanceTypes"][1])
    item.update(MachineClass=machine_class, Status=status)
    page = ucloud.parse_instance_types({**data, "AvailableInstanceTypes": [item]}, CTX)
    [line] = feed_dicts(page.records)
    assert (line["kind"], line["skip_kind"]) == ("skip", skip_kind)
    assert page.listings == [] and page.layout_error is None


def test_a_type_without_machine_sizes_with_gpus_is_quarantined() -> None:
    data = recording("instance_types.json")
    item = copy.deepcopy(data["AvailableInstanceTypes"][1])
    item["MachineSizes"] = [{"Gpu": 0, "Collection": []}]
    page = ucloud.parse_instance_types({**data, "AvailableInstanceTypes": [item]}, CTX)
    [line] = feed_dicts(page.records)
    assert (line["kind"], line["offer_key"], line["field"]) == (
        "quarantine",
        "cn-bj2-02/T4",
        "MachineSizes",
    )


def test_every_offer_carries_the_data_disk_fee_of_the_billing_facts() -> None:
    [offer] = offer_lines(listings()["cn-bj2-02/V100S"], {"Dynamic": quote("12.75")})
    [fee] = offer["fees"]
    assert (fee["fee_type"], fee["amount"], fee["currency"], fee["unit"]) == (
        "data_disk",
        "0.6",
        "CNY",
        "month",
    )


def test_the_contracts_are_declared() -> None:
    assert {c.noun for c in ucloud.CONTRACTS} == {"instance type", "price entry"}
