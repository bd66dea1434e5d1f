"""PPIO parser: the recorded product list, stock flags, broken products."""

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
from gpurent.normalize.price import PPIO_PRICE_SCALE
from spiders.parsers.common import PageResult, ParseContext, load_json
from spiders.parsers.ppio import parse_products

CTX = ParseContext("ppio", RUN_ID, OBSERVED_AT)


def parse(case: Case) -> PageResult:
    return parse_products(load_json(case.input_bytes()), CTX)


def case_named(name: str) -> Case:
    return next(c for c in cases("ppio") if c.name == name)


@pytest.mark.parametrize("case", cases("ppio"), ids=lambda c: c.name)
def test_page_parses_to_expected_records(case: Case) -> None:
    assert_matches_case(parse(case), case)


def test_every_recorded_page_has_a_parse_case() -> None:
    assert recorded_bodies("ppio") <= covered_recordings("ppio")


def offers_of(page: PageResult) -> dict[str, OfferRecord]:
    return {r.offer_key: r for r in page.records if isinstance(r, OfferRecord)}


def test_price_is_per_card_hour_in_hundred_thousandths() -> None:
    offers = offers_of(parse(case_named("recorded_products")))
    h200 = offers["a9f0c1d2-0008"]
    assert PPIO_PRICE_SCALE == 100_000
    assert (h200.price, h200.currency, h200.billing_unit.value) == (Decimal("18.9"), "CNY", "hour")
    assert (h200.gpu_model, h200.gpu_vram_gb, h200.price_basis.value) == ("H200", 141, "gpu")
    assert offers["a9f0c1d2-0001"].region == "华东-上海一区, 华南-广州一区"


def test_stock_from_available_deploy_and_can_buy() -> None:
    offers = offers_of(parse(case_named("recorded_products")))
    assert offers["a9f0c1d2-0001"].status is StockStatus.IN_STOCK
    assert offers["a9f0c1d2-0003"].status is StockStatus.SOLD_OUT  # availableDeploy false
    assert offers["a9f0c1d2-0005"].status is StockStatus.SOLD_OUT  # canBuy false
    bad = offers_of(parse(case_named("bad_products")))
    assert bad["p-002"].status is StockStatus.UNKNOWN  # no availableDeploy


def test_ambiguous_rtx_3080_is_quarantined() -> None:
    page = parse(case_named("recorded_products"))
    quarantined = [r for r in page.records if r.kind == "quarantine"]
    assert [q.offer_key for q in quarantined] == ["a9f0c1d2-0009"]
    assert "VRAM unknown" in quarantined[0].reason


def test_renamed_name_field_is_a_layout_error() -> None:
    page = parse(case_named("layout_renamed_name"))
    assert page.layout_error == "no product carries name"
