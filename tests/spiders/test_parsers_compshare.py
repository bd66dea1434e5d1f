"""Compshare parsers: instance types, GPU inventory, price answers, and the offer built from them.

Compshare's answers are not offers one by one (an offer needs all three actions), so a case
folder here holds `case.json` (which parser: types / inventory / inventory_map / price, and
its argument) and `output.json` is the page summary `parser_registry.compshare_summary()`
writes: records as feed lines, listings, free counts or the quote, notes and the page flags.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from parser_registry import compshare_summary, parse
from spider_fixture_cases import OBSERVED_AT, RUN_ID, Case, cases

from gpurent_core.model import (
    BillingUnit,
    FeeType,
    OfferRecord,
    PriceKind,
    QuarantineRecord,
    StockStatus,
    parse_feed_line,
)
from spiders.parsers.common import FieldProblem, PageResult, ParseContext, load_json
from spiders.providers.compshare.parser import (
    BOOT_DISK_GB,
    CLOUD_DISK_FEE,
    GpuListing,
    InventoryPage,
    PriceQuote,
    QuotePage,
    TypesPage,
    offer_records,
    parse_instance_types,
    parse_price_answer,
    price_params,
)

CTX = ParseContext("compshare", RUN_ID, OBSERVED_AT)


def summarize(case: Case) -> dict[str, Any]:
    return compshare_summary(parse(case))


def _case(name: str) -> Case:
    return next(c for c in cases("compshare") if c.name == name)


def test_recorded_types_list_on_sale_gpus_and_skip_the_rest() -> None:
    summary = summarize(_case("recorded_instance_types"))
    keys = [f"{item['zone']}/{item['gpu_type']}" for item in summary["listings"]]
    assert keys == [
        "cn-wlcb-01/4090",
        "cn-wlcb-01/3090",
        "cn-wlcb-01/A800",
        "cn-wlcb-01/910B",
        "cn-wlcb-02/4090",
        "cn-wlcb-02/L20",
    ]
    assert summary["zones"] == ["cn-wlcb-01", "cn-wlcb-02"]
    # The Hidden 5090 is not on sale: skipped and counted, not quarantined (rule of truth 9).
    [skipped] = summary["records"]
    assert (skipped["kind"], skipped["offer_key"], skipped["skip_kind"]) == (
        "skip",
        "cn-wlcb-01/5090",
        "not_offered",
    )
    assert any("spot" in note for note in summary["notes"])


def test_a_bare_910b_is_the_ascend_910b_family_at_the_memory_compshare_gives() -> None:
    listing = GpuListing("cn-wlcb-01", "910B", "Normal", 64, 1, "CLOUD_SSD")
    [offer] = offer_records(CTX, listing, 16, recorded_quotes("910B")).records
    assert isinstance(offer, OfferRecord)
    assert (offer.gpu_vendor, offer.gpu_model, offer.gpu_vram_gb) == ("Huawei", "Ascend 910B", 64)
    assert (offer.status, offer.available_count) == (StockStatus.IN_STOCK, 16)


@pytest.mark.parametrize("status", ["Normal", "Beta", "Soldout", "Maintain"])
def test_the_stock_answer_never_changes_an_offers_key(status: str) -> None:
    # In stock, sold out or an unknown word: the same zone and GPU type, the same key, and
    # every line set aside beside it carries that key too.
    for free in (6, 0, None):
        listing = GpuListing("cn-wlcb-01", "4090", status, 24, 1, "CLOUD_SSD")
        records = offer_records(CTX, listing, free, recorded_quotes("4090")).records
        assert {r.offer_key for r in records} == {"cn-wlcb-01/4090"}, (status, free)


def test_signature_error_is_an_auth_refusal_not_a_layout_change() -> None:
    summary = summarize(_case("recorded_signature_error"))
    assert summary["auth_rejected"] is True
    assert summary["layout_error"] is None and summary["listings"] == []


def test_inventory_reads_the_exclusive_pool_of_the_zone() -> None:
    summary = summarize(_case("recorded_gpu_inventory_cn-wlcb-01"))
    assert summary["zone_id"] == "10061"
    assert summary["free"]["4090"] == 6 and summary["free"]["3090"] == 0
    assert "12" not in json.dumps(summary["free"])  # the Spot pool's 4090 count is not read


def test_the_documented_map_shape_reads() -> None:
    summary = summarize(_case("doc_shape_inventory_map_one_zone"))
    assert (summary["zone_id"], summary["free"]) == ("10033", {"3080": 7})


def test_inventory_without_one_zone_is_unknown_not_empty() -> None:
    for name in ("inventory_several_zones", "doc_shape_inventory_empty_map"):
        summary = summarize(_case(name))
        assert summary["free"] is None and summary["layout_error"] is None, name


def test_the_documented_price_shape_reads_price_detail() -> None:
    # The same ChargeType in all three lists: only PriceDetail is the price.
    summary = summarize(_case("doc_shape_price_three_detail_lists"))
    assert summary["quote"]["instance"] == "2.38"  # not ListPriceDetail nor OriginalPriceDetail
    assert summary["quote"]["disks"] == "0.02"


# -- the offer -------------------------------------------------------------------------

LISTING = GpuListing(
    zone="cn-wlcb-01",
    gpu_type="4090",
    status="Normal",
    vram_gb=24,
    gpu_count=1,
    boot_disk_type="CLOUD_SSD",
)


def _quote(case_name: str, charge_type: str) -> PriceQuote:
    page = parse_price_answer(load_json(_case(case_name).input_bytes()), charge_type)
    assert page.quote is not None
    return page.quote


def recorded_quotes(gpu: str) -> dict[str, PriceQuote | FieldProblem]:
    return {
        charge: _quote(f"recorded_price_{gpu}_{charge.lower()}", charge)
        for charge in ("Dynamic", "Day", "Month")
    }


def test_offer_is_the_whole_machine_hourly_with_day_and_month_plans() -> None:
    result = offer_records(CTX, LISTING, 6, recorded_quotes("4090"))
    [offer] = result.records
    assert isinstance(offer, OfferRecord)
    assert (offer.offer_key, offer.gpu_model, offer.gpu_vram_gb) == (
        "cn-wlcb-01/4090",
        "RTX 4090",
        24,
    )
    assert (offer.price, offer.currency, offer.billing_unit) == (
        Decimal("1.92"),
        "CNY",
        BillingUnit.HOUR,
    )
    assert offer.price_basis.value == "instance" and offer.gpu_count == 1
    assert (offer.status, offer.available_count) == (StockStatus.IN_STOCK, 6)
    assert [(p.price, p.billing_unit, p.price_kind) for p in offer.plans] == [
        (Decimal("42.24"), BillingUnit.DAY, PriceKind.COMMITMENT),
        (Decimal("1154.64"), BillingUnit.MONTH, PriceKind.COMMITMENT),
    ]
    assert offer.fees == (CLOUD_DISK_FEE,)  # Disks 0: the 100 GB disk is free
    assert CLOUD_DISK_FEE.included_quantity == BOOT_DISK_GB
    parse_feed_line(offer.model_dump(mode="json"))


@pytest.mark.parametrize(
    ("status", "free", "expected"),
    [
        ("Normal", 6, (StockStatus.IN_STOCK, 6)),
        ("Beta", None, (StockStatus.IN_STOCK, None)),
        ("Soldout", 0, (StockStatus.SOLD_OUT, 0)),
        ("Soldout", None, (StockStatus.SOLD_OUT, 0)),  # sold out: none free
        # The flag and the count disagree: one is stale, we cannot tell which.
        ("Soldout", 4, (StockStatus.UNKNOWN, 4)),
        ("Normal", 0, (StockStatus.UNKNOWN, 0)),
    ],
)
def test_stock_from_status_and_free_count(
    status: str, free: int | None, expected: tuple[StockStatus, int | None]
) -> None:
    listing = GpuListing("cn-wlcb-01", "4090", status, 24, 1, "CLOUD_SSD")
    offer = offer_records(CTX, listing, free, recorded_quotes("4090")).records[0]
    assert isinstance(offer, OfferRecord)
    assert offer.status == expected[0]
    if expected[0] is not StockStatus.UNKNOWN:
        assert offer.available_count == expected[1]


def test_unknown_status_is_unknown_stock_with_its_field_quarantined() -> None:
    listing = GpuListing("cn-wlcb-01", "4090D", "Maintain", 24, 1, "CLOUD_SSD")
    offer, side = offer_records(CTX, listing, None, recorded_quotes("4090")).records
    assert isinstance(offer, OfferRecord) and offer.status is StockStatus.UNKNOWN
    assert isinstance(side, QuarantineRecord) and side.field == "Status"


def test_quoted_disk_and_image_prices_become_fees() -> None:
    quote = _quote("price_disks_and_image", "Dynamic")
    result = offer_records(CTX, LISTING, 2, {"Dynamic": quote})
    offer = result.records[0]
    assert isinstance(offer, OfferRecord) and offer.plans == ()
    fees = {fee.fee_type: fee for fee in offer.fees}
    assert fees[FeeType.SYSTEM_DISK].amount == Decimal("0.05")
    assert (
        fees[FeeType.SYSTEM_DISK].mandatory and fees[FeeType.SYSTEM_DISK].unit is BillingUnit.HOUR
    )
    assert fees[FeeType.IMAGE].amount == Decimal("0.2") and not fees[FeeType.IMAGE].mandatory
    assert any("holiday discount" in note for note in result.notes)


def test_no_trustworthy_hourly_price_quarantines_the_offer() -> None:
    page = parse_price_answer(load_json(_case("price_wrong_charge_type").input_bytes()), "Dynamic")
    assert page.problem is not None
    [record] = offer_records(CTX, LISTING, 6, {"Dynamic": page.problem}).records
    assert isinstance(record, QuarantineRecord) and record.offer_key == "cn-wlcb-01/4090"
    assert record.reason.startswith("price_unparsed")


def test_a_bad_plan_price_is_quarantined_beside_the_offer() -> None:
    bad_day = parse_price_answer(load_json(_case("price_negative").input_bytes()), "Day").problem
    assert bad_day is not None
    quotes = recorded_quotes("4090") | {"Day": bad_day}
    offer, side = offer_records(CTX, LISTING, 6, quotes).records
    assert isinstance(offer, OfferRecord)
    assert [p.billing_unit for p in offer.plans] == [BillingUnit.MONTH]
    assert isinstance(side, QuarantineRecord) and "negative" in side.reason


def test_price_request_asks_for_the_free_system_disk() -> None:
    params = price_params(LISTING, "cn-wlcb", "Month")
    assert params["Action"] == "GetCompShareInstancePrice"
    assert (params["GpuType"], params["Gpu"], params["ChargeType"]) == ("4090", 1, "Month")
    assert (params["Disks.0.IsBoot"], params["Disks.0.Size"]) == (True, BOOT_DISK_GB)
    assert "Cpu" not in params and "Memory" not in params  # the API's documented defaults


# -- drift and bad cells -----------------------------------------------------------------


def lines(page: PageResult) -> list[QuarantineRecord]:
    return [r for r in page.records if isinstance(r, QuarantineRecord)]


def test_instance_type_renamed_everywhere_lists_nothing() -> None:
    # Without InstanceType the spot 4090's Status could not be told from the on-demand one's.
    page = parse(_case("types_instance_type_renamed_everywhere"))
    assert isinstance(page, TypesPage) and page.listings == []
    assert {r.reason for r in lines(page)} == {"missing_field: key gone: InstanceType"}
    assert len(page.records) == 7 and page.missing_fields == ["InstanceType"]
    assert page.layout_error is not None and "InstanceType (stock)" in page.layout_error


def test_status_renamed_in_one_type_costs_that_type_only() -> None:
    page = parse(_case("types_status_renamed_in_one"))
    assert isinstance(page, TypesPage) and page.layout_error is None
    assert [(r.offer_key, r.reason) for r in lines(page)] == [
        ("cn-wlcb-01/3090", "missing_field: key gone: Status")
    ]
    assert [item.offer_key for item in page.listings] == [
        "cn-wlcb-01/4090",
        "cn-wlcb-01/A800",
        "cn-wlcb-02/4090",
        "cn-wlcb-02/L20",
    ]
    assert page.missing_fields == ["Status"]


def test_one_bad_cell_costs_one_type_and_bad_side_lists_are_ignored() -> None:
    page = parse(_case("types_bad_cells"))
    assert isinstance(page, TypesPage)
    assert [r.reason.split(":")[0] for r in lines(page)] == ["invalid_value"] * 3
    l20 = next(item for item in page.listings if item.gpu_type == "L20")
    # Disks 5 and MachineSizes {...} describe nothing: the defaults, the listing stands.
    assert (l20.boot_disk_type, l20.gpu_count) == ("CLOUD_SSD", 1)


@pytest.mark.parametrize("code", [[], {}, "0", True, None, [171]])
def test_a_retcode_that_is_not_a_number_is_a_layout_error_never_a_refusal(code: Any) -> None:
    page = parse_instance_types({"RetCode": code, "AvailableInstanceTypes": []}, CTX)
    assert page.layout_error is not None and "RetCode is not a number" in page.layout_error
    assert not page.auth_rejected and page.api_error is None and page.listings == []


def test_renamed_instance_price_quarantines_the_offer_as_drift() -> None:
    page = parse(_case("price_instance_renamed"))
    assert isinstance(page, QuotePage) and page.problem is not None
    assert page.missing_fields == ["Instance"] and page.layout_error is not None
    [record] = offer_records(CTX, LISTING, 6, {"Dynamic": page.problem}).records
    assert isinstance(record, QuarantineRecord)
    assert record.reason == "missing_field: key gone: Instance"


def test_bad_fee_cells_are_set_aside_and_the_offer_stands() -> None:
    quote = _quote("price_side_fields_bad", "Dynamic")
    result = offer_records(CTX, LISTING, 6, {"Dynamic": quote})
    offer, *side = result.records
    assert isinstance(offer, OfferRecord) and offer.price == Decimal("1.92")
    assert offer.fees == (CLOUD_DISK_FEE,)  # neither unreadable fee is guessed
    assert all(isinstance(q, QuarantineRecord) for q in side)
    assert [(q.field, q.reason.split(":")[0]) for q in lines(result)] == [
        ("Disks", "price_unparsed"),
        ("CompShareImage", "price_unparsed"),
        ("InstanceDiscountType", "invalid_value"),
    ]
    assert result.notes == [
        "cn-wlcb-01/4090: Disks, CompShareImage not quoted (Dynamic): that fee unknown"
    ]


def test_fees_not_quoted_keep_the_offer_with_the_fee_unknown() -> None:
    quote = _quote("price_fees_not_quoted", "Dynamic")
    assert (quote.disks, quote.image) == (None, None)
    result = offer_records(CTX, LISTING, 6, {"Dynamic": quote})
    [offer] = result.records
    assert isinstance(offer, OfferRecord) and offer.fees == (CLOUD_DISK_FEE,)
    assert result.notes and "Disks, CompShareImage" in result.notes[0]


def test_inventory_renamed_is_a_layout_error_not_zero_free() -> None:
    page = parse(_case("inventory_map_renamed"))
    assert isinstance(page, InventoryPage) and page.free is None
    assert page.missing_fields == ["GpuInventoryByZone"]


def test_counts_that_are_not_counts_are_unknown_not_stock() -> None:
    page = parse(_case("inventory_bad_counts"))
    assert isinstance(page, InventoryPage) and page.free is not None
    assert set(page.free) == {"910B", "5090"}  # 1e400, -1 and {} dropped, noted
    assert len(page.notes) == 3
