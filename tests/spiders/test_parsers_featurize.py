"""Featurize parser: the recorded instance list, statuses, broken records."""

from __future__ import annotations

from decimal import Decimal

import pytest
from parser_registry import parse
from spider_fixture_cases import OBSERVED_AT, RUN_ID, Case, cases

from gpurent_core.model import OfferRecord, QuarantineRecord, StockStatus
from spiders.parsers.common import ParseContext, feed_dicts
from spiders.providers.featurize.parser import InstancesPage, parse_instances

CTX = ParseContext("featurize", RUN_ID, OBSERVED_AT)


def case_named(name: str) -> Case:
    return next(c for c in cases("featurize") if c.name == name)


def offers_of(page: InstancesPage) -> dict[str, OfferRecord]:
    return {r.offer_key: r for r in page.records if isinstance(r, OfferRecord)}


def test_online_is_in_stock_taken_is_sold_out_and_unknown_words_stay_unknown() -> None:
    page = parse(case_named("recorded_available_instances"))
    statuses = {k: o.status for k, o in offers_of(page).items()}
    assert statuses["f3a19c02"] is StockStatus.IN_STOCK  # online
    assert statuses["f3a19c11"] is StockStatus.SOLD_OUT  # busy
    assert statuses["f3a1a0f3"] is StockStatus.SOLD_OUT  # offline
    assert statuses["f3a1a2d0"] is StockStatus.UNKNOWN  # maintaining
    assert page.notes == ["unrecognised instance status 'maintaining': stock unknown"]


def test_card_is_read_before_the_first_comma_and_priced_per_instance() -> None:
    offer = offers_of(parse(case_named("recorded_available_instances")))["f3a1a0f3"]
    assert (offer.gpu_model, offer.gpu_vram_gb) == ("A100", 80)
    assert offer.raw_gpu_name.startswith("A100-SXM4-80GB, ")
    assert (offer.price, offer.currency, offer.price_basis.value) == (
        Decimal("6.50"),
        "CNY",
        "instance",
    )


def test_memory_part_after_the_card_settles_its_vram() -> None:
    page = parse(case_named("recorded_available_instances"))
    # "GeForce RTX 3080, 10GB, ...": the RTX 3080 comes in 10 and 12 GB; the 10GB part says which.
    rtx3080 = offers_of(page)["f3a1a2c8"]
    assert (rtx3080.gpu_model, rtx3080.gpu_vram_gb, rtx3080.status) == (
        "RTX 3080",
        10,
        StockStatus.IN_STOCK,
    )
    # the one line set aside is the status word we do not know, beside its (unknown) offer
    assert quarantine_reasons(page) == {
        "f3a1a2d0": "invalid_value: status 'maintaining': stock unknown"
    }


def _one(gpu: str) -> list[dict[str, object]]:
    item = {"id": "x1", "gpu": gpu, "unit_price": 1, "status": "online"}
    return [
        {k: v for k, v in r.items() if k in ("kind", "gpu_model", "gpu_vram_gb", "reason")}
        for r in feed_dicts(
            parse_instances({"status": 0, "data": {"records": [item]}}, CTX).records
        )
    ]


@pytest.mark.parametrize(
    ("gpu", "expected"),
    [
        ("GeForce RTX 3080, 12 GB, EPYC 7543", {"gpu_model": "RTX 3080", "gpu_vram_gb": 12}),
        # no size given: the model is known, its VRAM stays unknown (never guessed)
        ("GeForce RTX 3080", {"gpu_model": "RTX 3080", "gpu_vram_gb": None}),
        # the part is only read when it is nothing but a size, and only on one-card machines:
        # on "x2" it may be the machine's total (2 x 24 GB), which would read as a modded 48 GB card
        ("GeForce RTX 3080, Xeon 10GB cache", {"gpu_model": "RTX 3080", "gpu_vram_gb": None}),
        ("GeForce RTX 4090 x2, 48GB", {"gpu_model": "RTX 4090", "gpu_vram_gb": 24}),
        ("GeForce RTX 4090, 48GB", {"gpu_model": "RTX 4090", "gpu_vram_gb": 48}),
        ("GeForce RTX 4090, 16GB", {"reason": "matches no variant"}),
        ("A100-SXM4-80GB, 40GB", {"reason": "VRAM sizes disagree"}),
        (
            "GeForce RTX 3080, 10GB, 12GB",
            {"reason": "gpu gives several memory sizes (10 GB, 12 GB)"},
        ),
    ],
)
def test_memory_part_is_a_hint_never_a_guess(gpu: str, expected: dict[str, object]) -> None:
    [record] = _one(gpu)
    if "reason" in expected:
        assert record["kind"] == "quarantine"
        assert str(expected["reason"]) in str(record["reason"])
    else:
        assert record == {"kind": "offer", **expected}


def test_card_count_in_the_name_and_a_missing_status() -> None:
    page = parse(case_named("bad_records"))
    offers = offers_of(page)
    assert (offers["b001"].gpu_count, offers["b001"].gpu_model) == (2, "RTX 4090")
    assert offers["b004"].status is StockStatus.IN_STOCK  # "Online"
    # No status key is drift, not "unknown": that record alone is quarantined, and named.
    assert "b003" not in offers
    assert quarantine_reasons(page)["b003"] == "missing_field: key gone: status"
    assert page.layout_error is None and page.missing_fields == ["id", "status"]


def quarantine_reasons(page: InstancesPage) -> dict[str | None, str]:
    return {r.offer_key: r.reason for r in page.records if isinstance(r, QuarantineRecord)}


def test_error_envelope_is_an_api_error_not_a_layout_change() -> None:
    page = parse(case_named("api_error"))
    assert page.api_error == "status 1: 内部错误"
    assert page.layout_error is None and page.records == []


# -- drift and bad cells (rule of truth 9: never ok while blind) -----------------------


def test_status_renamed_in_every_record_is_a_layout_error_naming_it() -> None:
    page = parse(case_named("drift_status_renamed_everywhere"))
    assert page.layout_error == "no instance carries status (stock): field renamed or removed"
    assert offers_of(page) == {}  # never "all unknown", never "all sold out"
    assert set(quarantine_reasons(page).values()) == {"missing_field: key gone: status"}
    assert page.missing_fields == ["status"]


def test_status_renamed_in_one_record_costs_that_record_only() -> None:
    recorded = offers_of(parse(case_named("recorded_available_instances")))
    page = parse(case_named("drift_status_renamed_in_one"))
    assert quarantine_reasons(page)["f3a19c11"] == "missing_field: key gone: status"
    assert offers_of(page) == {k: o for k, o in recorded.items() if k != "f3a19c11"}
    assert page.layout_error is None and page.missing_fields == ["status"]


def test_one_bad_cell_costs_its_record_and_a_bad_status_only_its_stock() -> None:
    page = parse(case_named("bad_cells"))
    reasons = quarantine_reasons(page)
    assert reasons["f3a19c02"].startswith("price_unparsed: unit_price ")  # 1e400
    assert reasons["f3a19c11"] == "price_unparsed: unit_price is not a number: {}"
    assert reasons["f3a19d40"] == "price_unparsed: unit_price is negative: -1"
    offers = offers_of(page)
    assert sorted(offers) == ["f3a19d47", "f3a19d52"]
    # a status that is no word: unknown (never in stock or taken), and said why beside it
    assert offers["f3a19d47"].status is StockStatus.UNKNOWN
    assert reasons["f3a19d47"].startswith("invalid_value: status not a status word")
    assert offers["f3a19d52"].status is StockStatus.SOLD_OUT and page.layout_error is None


@pytest.mark.parametrize(
    "answer",
    [
        [],
        "x",
        None,
        {"status": []},
        {"status": 0, "data": []},
        {"status": 0, "data": {"records": {}}},
    ],
)
def test_any_answer_shape_is_a_page_verdict_not_an_exception(answer: object) -> None:
    page = parse_instances(answer, CTX)
    assert page.records == []
    assert (page.layout_error is None) != (page.api_error is None)


def test_a_null_status_is_unknown_with_its_reason() -> None:
    item = {"id": "n1", "gpu": "GeForce RTX 3090, 24GB", "unit_price": 1, "status": None}
    page = parse_instances({"status": 0, "data": {"records": [item]}}, CTX)
    assert offers_of(page)["n1"].status is StockStatus.UNKNOWN
    assert quarantine_reasons(page) == {"n1": "invalid_value: status is null: stock unknown"}


@pytest.mark.parametrize("status", ["online", "busy", "maintaining", None, 7])
def test_the_stock_answer_never_changes_an_offers_key(status: object) -> None:
    # In stock, sold out or unknown: one instance is one offer keyed by its id, and the line
    # set aside beside an unknown status carries that key (its offer stays visible).
    record = {
        "id": "f3a1a2d0",
        "name": "l40s-001",
        "gpu": "L40S, 48GB",
        "unit_price": Decimal("3.9"),
    }
    page = parse_instances({"status": 0, "data": {"records": [{**record, "status": status}]}}, CTX)
    assert {r.offer_key for r in page.records} == {"f3a1a2d0"}
    assert len(page.offers) == 1
