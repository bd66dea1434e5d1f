"""算家云 market-table parser: the page as Chromium rendered it, before JavaScript, broken rows."""

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

from gpurent.model import OfferRecord, QuarantineRecord, StockStatus
from spiders.parsers.common import PageResult, ParseContext
from spiders.parsers.suanjia import parse_market

CTX = ParseContext("suanjia", RUN_ID, OBSERVED_AT)


def parse(case: Case) -> PageResult:
    return parse_market(case.input_bytes().decode("utf-8"), CTX)


@pytest.mark.parametrize("case", cases("suanjia"), ids=lambda c: c.name)
def test_page_parses_to_expected_records(case: Case) -> None:
    assert_matches_case(parse(case), case)


def test_every_recorded_page_has_a_parse_case() -> None:
    assert recorded_bodies("suanjia") <= covered_recordings("suanjia")


def _parsed(name: str) -> PageResult:
    return parse(next(c for c in cases("suanjia") if c.name == name))


def offers_of(page: PageResult) -> dict[str, OfferRecord]:
    return {r.offer_key: r for r in page.records if isinstance(r, OfferRecord)}


def test_rendered_market_reads_free_cards_and_prices_per_card() -> None:
    page = _parsed("pricing_rendered")
    offers = offers_of(page)
    assert len(offers) == 6
    rtx = offers["华东一区/RTX 4090 24G"]
    assert (rtx.gpu_model, rtx.gpu_vram_gb, rtx.raw_gpu_name) == ("RTX 4090", 24, "RTX 4090 24G")
    assert (rtx.price, rtx.currency, rtx.billing_unit.value) == (Decimal("1.88"), "CNY", "hour")
    assert (rtx.price_basis.value, rtx.region) == ("gpu", "华东一区")
    assert (rtx.status, rtx.available_count) == (StockStatus.IN_STOCK, 3)  # 剩余3卡
    assert offers["华北一区/RTX 4090 24G"].available_count == 12
    full = offers["华东一区/RTX 3090 24G"]
    assert (full.status, full.available_count) == (StockStatus.SOLD_OUT, None)  # 已租满
    assert offers["华北一区/A100 80G"].gpu_vram_gb == 80
    assert offers["华东一区/L40 48G"].status is StockStatus.SOLD_OUT
    [quarantined] = [r for r in page.records if isinstance(r, QuarantineRecord)]
    assert quarantined.offer_key == "华东一区/vGPU-32G"
    assert quarantined.reason.startswith("gpu_unresolved") and "virtual" in quarantined.reason


def test_recorded_page_before_javascript_is_a_layout_error() -> None:
    case = next(c for c in cases("suanjia") if c.name == "recorded_pricing_unrendered")
    html = case.input_bytes().decode("utf-8")
    assert "<tbody></tbody>" in html  # the recorded page really is empty
    page = parse(case)
    assert page.layout_error is not None and page.records == []


def test_broken_rows_are_quarantined_one_by_one() -> None:
    page = _parsed("bad_rows")
    offers = offers_of(page)
    modded = offers["华东一区/RTX 4090 48G"]
    assert (modded.gpu_vram_gb, modded.status, modded.available_count) == (
        48,
        StockStatus.SOLD_OUT,
        0,
    )
    assert offers["华东一区/RTX 3090 24G"].price == Decimal("1.20")  # 现价, not 原价
    assert offers["华东一区/RTX 3090 24G"].status is StockStatus.LOW  # 即将售罄
    assert offers["华东一区/A100 40G"].status is StockStatus.UNKNOWN  # 维护中
    reasons = {r.offer_key: r.reason for r in page.records if isinstance(r, QuarantineRecord)}
    assert reasons["华东一区/RTX 4090 24G"].startswith("price_unparsed")  # a range
    assert reasons["华北一区/A800 40G / 80G"].startswith("gpu_unresolved")
    assert reasons[None].startswith("missing_field")


def test_renamed_cells_are_a_layout_error() -> None:
    page = _parsed("layout_cells_renamed")
    assert page.layout_error == "no row has a gpu cell"
    assert all(isinstance(r, QuarantineRecord) for r in page.records)
