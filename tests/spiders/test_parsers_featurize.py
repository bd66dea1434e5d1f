"""Featurize parser: the recorded instance list, statuses, broken records."""

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

from gpurent.model import OfferRecord, StockStatus
from spiders.parsers.common import ParseContext, feed_dicts, load_json
from spiders.parsers.featurize import InstancesPage, parse_instances

CTX = ParseContext("featurize", RUN_ID, OBSERVED_AT)


def parse(case: Case) -> InstancesPage:
    return parse_instances(load_json(case.input_bytes()), CTX)


def case_named(name: str) -> Case:
    return next(c for c in cases("featurize") if c.name == name)


@pytest.mark.parametrize("case", cases("featurize"), ids=lambda c: c.name)
def test_page_parses_to_expected_records(case: Case) -> None:
    assert_matches_case(parse(case), case)


def test_every_recorded_page_has_a_parse_case() -> None:
    assert recorded_bodies("featurize") <= covered_recordings("featurize")


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
    assert [r for r in page.records if r.kind == "quarantine"] == []


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
        ("GeForce RTX 3080", {"reason": "gpu_unresolved: 'GeForce RTX 3080': VRAM unknown"}),
        # the part is only read when it is nothing but a size, and only on one-card machines:
        # on "x2" it may be the machine's total (2 x 24 GB), which would read as a modded 48 GB card
        (
            "GeForce RTX 3080, Xeon 10GB cache",
            {"reason": "gpu_unresolved: 'GeForce RTX 3080': VRAM unknown"},
        ),
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
    offers = offers_of(parse(case_named("bad_records")))
    assert (offers["b001"].gpu_count, offers["b001"].gpu_model) == (2, "RTX 4090")
    assert offers["b003"].status is StockStatus.UNKNOWN  # no status field
    assert offers["b004"].status is StockStatus.IN_STOCK  # "Online"


def test_error_envelope_is_an_api_error_not_a_layout_change() -> None:
    page = parse(case_named("api_error"))
    assert page.api_error == "status 1: 内部错误"
    assert page.layout_error is None and page.records == []
