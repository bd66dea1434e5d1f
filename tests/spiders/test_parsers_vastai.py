"""Vast.ai parser: every recorded page, the real RTX 5090 capture, and broken inputs."""

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

from gpurent.model import OfferRecord, PriceKind, StockStatus
from spiders.parsers.common import ParseContext, load_json
from spiders.parsers.vastai import BundlesPage, parse_bundles, search_body

CTX = ParseContext("vastai", RUN_ID, OBSERVED_AT)


def parse(case: Case) -> BundlesPage:
    return parse_bundles(load_json(case.input_bytes()), CTX)


@pytest.mark.parametrize("case", cases("vastai"), ids=lambda c: c.name)
def test_page_parses_to_expected_records(case: Case) -> None:
    assert_matches_case(parse(case), case)


def test_every_recorded_page_has_a_parse_case() -> None:
    assert recorded_bodies("vastai") <= covered_recordings("vastai")


def test_real_capture_without_dph_total_gives_sold_out_offers() -> None:
    case = next(c for c in cases("vastai") if c.name == "shared_rtx5090_no_dph_total")
    raw = load_json(case.input_bytes())
    assert all("dph_total" not in o for o in raw["offers"])  # the point of this sample
    page = parse(case)
    offers = [r for r in page.records if isinstance(r, OfferRecord)]
    assert [o.offer_key for o in offers] == ["21348645", "21348670"]
    first = offers[0]
    assert first.status is StockStatus.SOLD_OUT  # rentable: false, no "rented" key
    assert first.price == Decimal("0.10533333333333333")  # dph_base, exactly as published
    assert first.gpu_vram_gb == 32 and first.gpu_model == "RTX 5090"
    assert first.plans[0].price_kind is PriceKind.SPOT
    assert first.plans[0].price == Decimal("0.1053333")
    storage = first.fees[0]
    assert storage.amount == Decimal("0.9333333333333335") and storage.mandatory
    assert {f.fee_type.value: f.basis.value for f in first.fees[1:]} == {
        "egress": "tb",
        "ingress": "tb",
    }


def test_renamed_offers_key_is_a_layout_error_with_no_rows() -> None:
    page = parse_bundles({"results": []}, CTX)
    assert page.layout_error is not None and "offers" in page.layout_error
    assert page.records == []


def test_no_float_reaches_a_price() -> None:
    page = parse_bundles(load_json(b'{"offers": [{"id": 1, "gpu_name": "RTX 4090", '
                                   b'"num_gpus": 1, "gpu_ram": 24564, "dph_base": 0.1, '
                                   b'"rentable": true}]}'), CTX)  # fmt: skip
    offer = page.records[0]
    assert isinstance(offer, OfferRecord) and offer.price == Decimal("0.1")
    assert parse_bundles({"offers": [{"id": 1, "dph_base": 0.1}]}, CTX).records[0].kind == (
        "quarantine"
    )


@pytest.mark.parametrize(
    ("rentable", "rented", "status"),
    [
        (True, False, StockStatus.IN_STOCK),
        (True, None, StockStatus.IN_STOCK),
        (True, True, StockStatus.SOLD_OUT),
        (False, False, StockStatus.SOLD_OUT),
        (None, False, StockStatus.UNKNOWN),
    ],
)
def test_status_from_rentable_and_rented(
    rentable: bool | None, rented: bool | None, status: StockStatus
) -> None:
    offer: dict[str, object] = {"id": 7, "gpu_name": "L40S", "num_gpus": 2, "dph_base": "1.2"}
    if rentable is not None:
        offer["rentable"] = rentable
    if rented is not None:
        offer["rented"] = rented
    record = parse_bundles({"offers": [offer]}, CTX).records[0]
    assert isinstance(record, OfferRecord)
    assert record.status is status
    assert record.available_count == (2 if status is StockStatus.IN_STOCK else None)


def test_search_body_pages_by_id_and_keeps_sold_out_offers() -> None:
    body = search_body(limit=64, after_id=123)
    assert body["id"] == {"gt": 123}
    assert body["order"] == [["id", "asc"]]
    assert body["limit"] == 64
    assert "rentable" not in body and "rented" not in body
