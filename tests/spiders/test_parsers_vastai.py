"""Vast.ai parser: every recorded page, offers without dph_total, and broken inputs."""

from __future__ import annotations

from decimal import Decimal

import pytest
from parser_registry import parse
from spider_fixture_cases import OBSERVED_AT, RUN_ID, cases

from gpurent_core.model import OfferRecord, PriceKind, QuarantineRecord, StockStatus
from spiders.parsers.common import ParseContext, load_json
from spiders.providers.vastai.parser import parse_bundles, search_body

CTX = ParseContext("vastai", RUN_ID, OBSERVED_AT)


def test_offers_without_dph_total_give_sold_out_offers() -> None:
    # The offers' shape as Vast.ai publishes it: dph_base and its side fields, no dph_total.
    case = next(c for c in cases("vastai") if c.name == "doc_shape_offers_without_dph_total")
    raw = load_json(case.input_bytes())
    assert all("dph_total" not in o for o in raw["offers"])  # the point of this case
    page = parse(case)
    offers = [r for r in page.records if isinstance(r, OfferRecord)]
    assert [o.offer_key for o in offers] == ["31570412", "31570437"]
    first = offers[0]
    assert first.status is StockStatus.SOLD_OUT  # rentable: false, no "rented" key
    assert first.price == Decimal("0.08266666666666667")  # dph_base, exactly as published
    assert first.gpu_vram_gb == 16 and first.gpu_model == "RTX 5080"
    assert first.plans[0].price_kind is PriceKind.SPOT
    assert first.plans[0].price == Decimal("0.0826667")
    storage = first.fees[0]
    assert storage.amount == Decimal("0.7466666666666668") and storage.mandatory
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
                                   b'"rentable": true, "rented": false}]}'), CTX)  # fmt: skip
    offer = page.records[0]
    assert isinstance(offer, OfferRecord) and offer.price == Decimal("0.1")
    assert parse_bundles({"offers": [{"id": 1, "dph_base": 0.1}]}, CTX).records[0].kind == (
        "quarantine"
    )


GONE = object()
"""The key is absent from the offer (drift), not null."""


@pytest.mark.parametrize(
    ("rentable", "rented", "status"),
    [
        (True, False, StockStatus.IN_STOCK),
        (True, True, StockStatus.SOLD_OUT),
        (False, False, StockStatus.SOLD_OUT),
        (False, GONE, StockStatus.SOLD_OUT),  # a real capture's sold-out offers lack `rented`
        (True, None, StockStatus.UNKNOWN),  # null is not a yes/no: set aside
        (True, "no", StockStatus.UNKNOWN),
        ("yes", False, StockStatus.UNKNOWN),
    ],
)
def test_status_from_rentable_and_rented(
    rentable: object, rented: object, status: StockStatus
) -> None:
    offer = vast_offer(rentable=rentable, rented=rented)
    records = parse_bundles({"offers": [offer]}, CTX).records
    record = records[0]
    assert isinstance(record, OfferRecord)
    assert record.status is status
    expected_free = {StockStatus.IN_STOCK: 2, StockStatus.SOLD_OUT: 0}.get(status)
    assert record.available_count == expected_free  # sold out is 0 free
    # An unreadable flag leaves the offer `unknown` and says why on its own line.
    reasons = [r.reason for r in records if isinstance(r, QuarantineRecord)]
    assert len(reasons) == (1 if status is StockStatus.UNKNOWN else 0)
    assert all(r.startswith("invalid_value: rent") for r in reasons)


@pytest.mark.parametrize(("rentable", "gone"), [(True, "rented"), (GONE, "rentable")])
def test_a_gone_stock_key_is_drift_never_a_state(rentable: object, gone: str) -> None:
    """`rented` gone from a rentable offer is not "not rented" (that read flipped taken
    machines to in stock); `rentable` gone is not "unknown" either: both are drift."""
    offer = vast_offer(rentable=rentable, rented=GONE)
    page = parse_bundles({"offers": [offer, vast_offer(offer_id=8)]}, CTX)
    first, second = page.records
    assert isinstance(first, QuarantineRecord) and first.offer_key == "7"
    assert first.reason == f"missing_field: key gone: {gone}"
    assert isinstance(second, OfferRecord) and second.status is StockStatus.IN_STOCK
    assert page.layout_error is None and page.missing_fields == [gone]
    alone = parse_bundles({"offers": [offer]}, CTX)
    assert alone.layout_error is not None and gone in alone.layout_error


def vast_offer(
    *, offer_id: int = 7, rentable: object = True, rented: object = False
) -> dict[str, object]:
    offer: dict[str, object] = {
        "id": offer_id, "gpu_name": "L40S", "num_gpus": 2, "gpu_ram": 46068, "dph_base": "1.2"
    }  # fmt: skip
    for key, value in (("rentable", rentable), ("rented", rented)):
        if value is not GONE:
            offer[key] = value
    return offer


def test_search_body_pages_by_id_and_keeps_sold_out_offers() -> None:
    body = search_body(limit=64, after_id=123)
    assert body["id"] == {"gt": 123}
    assert body["order"] == [["id", "asc"]]
    assert body["limit"] == 64
    assert "rentable" not in body and "rented" not in body


def test_offer_key_does_not_follow_the_stock_flags() -> None:
    """Rule of truth 11: free, taken, off the market or a flag that says neither, one bundle
    is one key (its id)."""
    case = next(c for c in cases("vastai") if c.name == "recorded_page1")
    offer = load_json(case.input_bytes())["offers"][0]
    seen = {}
    for rentable, rented in ((True, False), (True, True), (False, None), ("yes", False)):
        changed = {**offer, "rentable": rentable, "rented": rented}
        [record] = parse_bundles({"offers": [changed]}, CTX).offers
        seen[(rentable, rented)] = (record.offer_key, record.status)
    assert {key for key, _ in seen.values()} == {str(offer["id"])}
    assert [status for _, status in seen.values()] == [
        StockStatus.IN_STOCK,
        StockStatus.SOLD_OUT,
        StockStatus.SOLD_OUT,
        StockStatus.UNKNOWN,
    ]
