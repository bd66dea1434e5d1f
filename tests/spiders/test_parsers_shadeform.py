"""Shadeform parser: one offer per instance type, underlying cloud and region, priced per
instance-hour in US cents; each region's `available` flag is its stock; drift, bad cells and
broken items cost what they touch and no more."""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

from parser_registry import parse
from spider_fixture_cases import OBSERVED_AT, RUN_ID, Case, cases

from gpurent_core.enums import Hosting, Interconnect
from gpurent_core.model import OfferRecord, QuarantineRecord, SkipKind, StockStatus
from spiders.parsers.common import PageResult, ParseContext, load_json
from spiders.providers.shadeform.parser import parse_instance_types

CTX = ParseContext("shadeform", RUN_ID, OBSERVED_AT)
MC_A6000 = "massedcompute/A6000/kansascity-usa-1"
HS_A6000 = "hyperstack/A6000/canada-1"
LAMBDA_H100 = "lambdalabs/H100_sxm5x8/us-east-1"
RUNPOD_A100 = "runpod/A100_80G/any"
DC_H200 = "datacrunch/H200x8/FIN-01"
NVLINK_PAIR = "massedcompute/A6000x2/kansascity-usa-1"


def case_named(name: str) -> Case:
    return next(c for c in cases("shadeform") if c.name == name)


def offers_of(page: PageResult) -> dict[str, OfferRecord]:
    return {r.offer_key: r for r in page.records if isinstance(r, OfferRecord)}


def reasons_of(page: PageResult) -> dict[str | None, list[str]]:
    found: dict[str | None, list[str]] = {}
    for record in page.records:
        if isinstance(record, QuarantineRecord):
            found.setdefault(record.offer_key, []).append(record.reason)
    return found


def recorded_answer() -> dict[str, Any]:
    data: dict[str, Any] = load_json(case_named("recorded_instance_types").input_bytes())
    return data


def test_price_is_cents_per_instance_hour_and_the_count_is_num_gpus() -> None:
    offers = offers_of(parse(case_named("recorded_instance_types")))
    h100 = offers[LAMBDA_H100]
    assert (h100.price, h100.currency, h100.billing_unit.value, h100.price_basis.value) == (
        Decimal("23.92"),
        "USD",
        "hour",
        "instance",
    )
    assert (h100.gpu_model, h100.gpu_vram_gb, h100.gpu_form_factor, h100.gpu_count) == (
        "H100",
        80,
        "SXM",
        8,
    )
    assert (h100.region, h100.raw_gpu_name) == ("us-east-1", "H100 sxm5")
    assert (offers[RUNPOD_A100].price, offers[RUNPOD_A100].gpu_form_factor) == (
        Decimal("1.76"),
        "PCIe",
    )


def test_the_same_card_at_two_clouds_is_two_offers() -> None:
    offers = offers_of(parse(case_named("recorded_instance_types")))
    a6000s = {k: o for k, o in offers.items() if o.gpu_model == "RTX A6000" and o.gpu_count == 1}
    assert set(a6000s) == {
        MC_A6000,
        "massedcompute/A6000/desmoines-usa-1",
        HS_A6000,
        "hyperstack/A6000/norway-1",
    }
    assert (a6000s[MC_A6000].price, a6000s[HS_A6000].price) == (Decimal("0.62"), Decimal("0.55"))


def test_each_region_flag_is_that_offers_stock() -> None:
    page = parse(case_named("recorded_instance_types"))
    offers = offers_of(page)
    assert len(offers) == 14 and reasons_of(page) == {} and page.skipped == []
    sold_out = {k for k, o in offers.items() if o.status is StockStatus.SOLD_OUT}
    assert sold_out == {
        "massedcompute/A6000/desmoines-usa-1",
        "hyperstack/A6000/norway-1",
        "lambdalabs/H100_sxm5x8/us-west-1",
        "crusoe/H100_sxm5x8/us-east1-a",
        "datacrunch/H200x8/FIN-02",
    }
    rest = {(o.status, o.available_count) for k, o in offers.items() if k not in sold_out}
    assert rest == {(StockStatus.IN_STOCK, None)}
    # Sold-out regions are listed: nothing is declared sold out by its absence.
    assert page.sold_out_unlisted == [] and page.unread_prefixes == []


def test_host_attributes_per_card_and_interconnect_as_stated() -> None:
    offers = offers_of(parse(case_named("recorded_instance_types")))
    h100 = offers[LAMBDA_H100]
    assert (h100.vcpus_per_gpu, h100.ram_gb_per_gpu, h100.disk_gb_per_gpu) == (
        Decimal(26),
        Decimal(225),
        Decimal(2750),
    )
    assert (h100.interconnect, h100.nvlink_gbps, h100.hosting) == (
        Interconnect.SXM,
        None,
        Hosting.SECURE,
    )
    assert offers[NVLINK_PAIR].interconnect is Interconnect.NVLINK  # pcie with nvlink true
    assert offers[MC_A6000].interconnect is Interconnect.PCIE
    assert offers[DC_H200].ram_gb_per_gpu == Decimal("181.2")  # 1450 GB over 8 cards


def test_interconnect_cases() -> None:
    offers = offers_of(parse(case_named("interconnect_cases")))
    assert offers["massedcompute/A6000x2/kansascity-usa-1"].interconnect is Interconnect.NVLINK
    nonvlink = offers["massedcompute/A6000x2_nonvlink/kansascity-usa-1"]
    assert nonvlink.interconnect is Interconnect.PCIE
    # An interconnect word we do not know: the card's own form factor says (RTX A6000: PCIe).
    bare = offers["massedcompute/A6000x2_bare/kansascity-usa-1"]
    assert (bare.raw_gpu_name, bare.interconnect) == ("A6000", Interconnect.PCIE)
    # SXM modules are SXM whatever `nvlink` says.
    assert offers[DC_H200].interconnect is Interconnect.SXM


def test_available_renamed_everywhere_is_a_layout_change_never_sold_out() -> None:
    page = parse(case_named("drift_stock_renamed_everywhere"))
    assert offers_of(page) == {} and page.skipped == []
    reasons = reasons_of(page)
    assert len(reasons) == 14 and MC_A6000 in reasons
    assert {r for rs in reasons.values() for r in rs} == {"missing_field: key gone: available"}
    assert page.layout_error is not None and "available (stock)" in page.layout_error


def test_available_renamed_in_one_entry_costs_that_region_only() -> None:
    before = offers_of(parse(case_named("recorded_instance_types")))
    page = parse(case_named("drift_stock_renamed_in_one"))
    after = offers_of(page)
    assert set(before) - set(after) == {LAMBDA_H100}
    assert all(after[key] == before[key] for key in after)
    assert reasons_of(page) == {LAMBDA_H100: ["missing_field: key gone: available"]}
    assert page.layout_error is None and page.missing_fields == ["available"]
    assert page.unread_prefixes == []  # the region is quarantined under its own key


def test_availability_gone_from_one_type_leaves_its_regions_unread() -> None:
    page = parse(case_named("drift_availability_renamed_in_one"))
    assert not any(key.startswith("crusoe/") for key in offers_of(page))
    assert reasons_of(page) == {"crusoe/H100_sxm5x8": ["missing_field: key gone: availability"]}
    assert page.unread_prefixes == ["crusoe/H100_sxm5x8/"]
    assert page.layout_error is None and page.missing_fields == ["availability"]


def test_layout_errors() -> None:
    renamed = parse(case_named("layout_renamed_gpu_type"))
    assert renamed.layout_error == (
        "no instance type carries configuration.gpu_type (identity): field renamed or removed"
    )
    assert offers_of(renamed) == {}
    assert parse(case_named("layout_no_list")).layout_error is not None
    assert parse(case_named("layout_empty_list")).layout_error == "'instance_types' is empty"


def test_error_answers_are_api_errors_not_layout_changes() -> None:
    unauthorized = parse(case_named("recorded_unauthorized"))
    assert unauthorized.records == [] and unauthorized.api_error == "Invalid API key"
    failed = parse(case_named("api_error"))
    assert failed.api_error is not None and failed.layout_error is None


def test_one_bad_cell_costs_its_type_or_its_region() -> None:
    page = parse(case_named("bad_cells"))
    offers, reasons = offers_of(page), reasons_of(page)
    assert reasons["massedcompute/A6000"][0].startswith("price_unparsed: not a whole number")
    assert reasons["hyperstack/A6000"][0].startswith("price_unparsed: hourly_price")
    assert reasons["crusoe/H100_sxm5x8"][0].startswith("gpu_unresolved: 'H100 sxm5'")
    assert reasons["datacrunch/H200x8"] == ["invalid_value: availability is not a list"]
    assert reasons["massedcompute/A6000x2"][0].startswith("gpu_unresolved: 'A6000 sxm4'")
    assert reasons["tensordock/A100_80G"] == ["invalid_value: no card count: -1"]
    # A type that cannot be read keeps every region it had: unread, stale.
    assert set(page.unread_prefixes) == {
        "massedcompute/A6000/",
        "hyperstack/A6000/",
        "crusoe/H100_sxm5x8/",
        "datacrunch/H200x8/",
        "massedcompute/A6000x2/",
        "tensordock/A100_80G/",
    }
    # A flag that is no flag: the offer stands with its stock unknown, a line says why.
    west = offers["lambdalabs/H100_sxm5x8/us-west-1"]
    south = offers["lambdalabs/H100_sxm5x8/us-south-1"]
    assert (west.status, south.status) == (StockStatus.UNKNOWN, StockStatus.UNKNOWN)
    assert reasons["lambdalabs/H100_sxm5x8/us-south-1"][0].startswith("invalid_value: available")
    assert offers[LAMBDA_H100].status is StockStatus.IN_STOCK
    # Numeric text reads as cents; a size that is no number is left unknown.
    vultr = offers["vultr/A100_80G/any"]
    assert (vultr.price, vultr.vcpus_per_gpu, vultr.ram_gb_per_gpu) == (
        Decimal("1.99"),
        None,
        Decimal(117),
    )
    skipped = {(s.offer_key, s.skip_kind) for s in page.skipped}
    assert skipped == {
        ("runpod/A100_80G", SkipKind.NO_PUBLIC_PRICE),  # hourly_price 0
        ("nebius/L40S", SkipKind.NOT_A_GPU_OFFER),  # num_gpus 0
        ("hyperstack/A6000_retired", SkipKind.NOT_OFFERED),  # availability []
    }


def test_unreadable_items_are_quarantined_and_the_rest_kept() -> None:
    page = parse(case_named("bad_items"))
    reasons = reasons_of(page)
    assert set(offers_of(page)) == {"nebius/L40S/eu-north1", NVLINK_PAIR}
    # The first of two entries for one type at one cloud stands; a region listed twice with
    # one answer is one offer.
    assert offers_of(page)["nebius/L40S/eu-north1"].price == Decimal("1.58")
    assert offers_of(page)[NVLINK_PAIR].status is StockStatus.IN_STOCK
    assert page.notes == [
        "nebius/L40S: listed twice, first kept",
        "massedcompute/A6000x2: region kansascity-usa-1 listed 2 times",
    ]
    assert reasons["runpod/A100_80G"][0].startswith("gpu_unresolved: 'X99 pcie'")
    assert reasons["lambdalabs/H100_sxm5x8"] == ["missing_field: a region has no name"]
    assert reasons["crusoe/H100_sxm5x8"] == ["missing_field: a region has no name"]
    assert reasons["datacrunch/H200x8"] == ["invalid_value: configuration is not an object"]
    # Without a key, a type stands for one line per region it lists (none lost unnamed).
    assert sorted(reasons[None]) == [
        "missing_field: key gone: cloud (region desmoines-usa-1)",
        "missing_field: key gone: cloud (region kansascity-usa-1)",
        "missing_field: shade_instance_type is missing (region canada-1)",
        "missing_field: shade_instance_type is missing (region norway-1)",
        "not_an_offer: not an object",
    ]
    # A type whose name is unread but whose cloud is known keeps that cloud's offers stale;
    # one without even a cloud names nothing.
    assert page.unread_prefixes == [
        "hyperstack/",
        "runpod/A100_80G/",
        "lambdalabs/H100_sxm5x8/",
        "crusoe/H100_sxm5x8/",
        "datacrunch/H200x8/",
    ]
    assert page.layout_error is None and page.missing_fields == ["cloud", "region"]


def test_offer_key_does_not_follow_the_stock() -> None:
    """Rule of truth 11: in stock, sold out or unreadable, one region is one key."""
    seen = set()
    for flag in (True, False, None, "sold out"):
        answer = copy.deepcopy(recorded_answer())
        [h100] = [i for i in answer["instance_types"] if i["cloud"] == "lambdalabs"]
        h100["availability"][0]["available"] = flag
        offers = offers_of(parse_instance_types(answer, CTX))
        seen.add((LAMBDA_H100 in offers, offers[LAMBDA_H100].status))
    assert seen == {
        (True, StockStatus.IN_STOCK),
        (True, StockStatus.SOLD_OUT),
        (True, StockStatus.UNKNOWN),
    }


def test_the_underlying_cloud_is_part_of_the_key() -> None:
    answer = copy.deepcopy(recorded_answer())
    [runpod] = [i for i in answer["instance_types"] if i["cloud"] == "runpod"]
    twin = copy.deepcopy(runpod)
    twin["cloud"], twin["hourly_price"] = "vultr", 199
    answer["instance_types"].append(twin)
    offers = offers_of(parse_instance_types(answer, CTX))
    assert (offers[RUNPOD_A100].price, offers["vultr/A100_80G/any"].price) == (
        Decimal("1.76"),
        Decimal("1.99"),
    )


def test_a_region_listed_as_both_available_and_not_is_unknown() -> None:
    answer = copy.deepcopy(recorded_answer())
    [h100] = [i for i in answer["instance_types"] if i["cloud"] == "lambdalabs"]
    h100["availability"].append({**h100["availability"][0], "available": False})
    page = parse_instance_types(answer, CTX)
    offer = offers_of(page)[LAMBDA_H100]
    assert (offer.status, offer.available_count) == (StockStatus.UNKNOWN, None)
    assert reasons_of(page) == {
        LAMBDA_H100: ["invalid_value: the region is listed as available and as not available"]
    }
    assert page.notes == ["lambdalabs/H100_sxm5x8: region us-east-1 listed 2 times"]
