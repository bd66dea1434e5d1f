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
from spiders.parsers.common import ParseContext, load_json
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


def test_card_count_in_the_name_and_a_missing_status() -> None:
    offers = offers_of(parse(case_named("bad_records")))
    assert (offers["b001"].gpu_count, offers["b001"].gpu_model) == (2, "RTX 4090")
    assert offers["b003"].status is StockStatus.UNKNOWN  # no status field
    assert offers["b004"].status is StockStatus.IN_STOCK  # "Online"


def test_error_envelope_is_an_api_error_not_a_layout_change() -> None:
    page = parse(case_named("api_error"))
    assert page.api_error == "status 1: 内部错误"
    assert page.layout_error is None and page.records == []
