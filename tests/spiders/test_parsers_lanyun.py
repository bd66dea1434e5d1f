"""蓝耘 Lanyun parser: regions, the recorded host lists (fen per card-hour), stock from
enableBuy and the free-card count, the CPU-suffixed card names, the data-disk fee, drift."""

from __future__ import annotations

from decimal import Decimal

from parser_registry import parse
from spider_fixture_cases import OBSERVED_AT, RUN_ID, Case, cases

from gpurent_core.model import OfferRecord, QuarantineRecord, SkipRecord, StockStatus
from spiders.parsers.common import PageResult, ParseContext
from spiders.providers.lanyun.parser import dev_list_body, host_records, parse_regions

CTX = ParseContext("lanyun", RUN_ID, OBSERVED_AT)


def case_named(name: str) -> Case:
    return next(c for c in cases("lanyun") if c.name == name)


def offers_of(page: PageResult) -> dict[str, OfferRecord]:
    return {r.offer_key: r for r in page.records if isinstance(r, OfferRecord)}


def test_regions_are_read() -> None:
    page = parse(case_named("recorded_region_list"))
    assert page.regions == [(14, "河北1区"), (16, "宿迁1区")]
    assert parse_regions({"code": 200, "data": [{"region": 1}]}, CTX).layout_error


def test_price_is_fen_per_card_hour_with_host_attributes() -> None:
    offers = offers_of(parse(case_named("recorded_dev_list_region14")))
    host = offers["0/847"]
    assert (host.gpu_model, host.gpu_vram_gb, host.price, host.currency) == (
        "RTX 4090",
        24,
        Decimal("2.3"),
        "CNY",
    )
    assert (host.price_basis.value, host.gpu_count, host.available_count) == ("gpu", 1, 5)
    assert (host.cuda_version, host.ram_gb_per_gpu) == ("13.1", Decimal("120"))
    sxm = offers["0/911"]
    assert (sxm.gpu_model, sxm.gpu_vram_gb, sxm.price) == ("A100", 80, Decimal("9.7"))
    assert sxm.interconnect is not None and sxm.interconnect.value == "sxm"


def test_sold_out_by_count_or_by_flag() -> None:
    offers = offers_of(parse(case_named("recorded_dev_list_region14")))
    assert offers["0/852"].status is StockStatus.SOLD_OUT  # 0 free
    assert offers["0/861"].status is StockStatus.SOLD_OUT  # enableBuy false, 3 free
    assert offers["0/847"].status is StockStatus.IN_STOCK


def test_cpu_only_host_is_skipped_never_quarantined() -> None:
    page = parse(case_named("recorded_dev_list_region14"))
    [skip] = [r for r in page.records if isinstance(r, SkipRecord)]
    assert skip.offer_key == "0/930"
    assert not any(isinstance(r, QuarantineRecord) for r in page.records)


def test_data_disk_fee_past_the_free_50_gb() -> None:
    offers = offers_of(parse(case_named("recorded_dev_list_region14")))
    [fee] = offers["0/903"].fees
    assert (fee.fee_type.value, fee.amount, fee.unit.value, fee.included_quantity) == (
        "data_disk",
        Decimal("0.02"),
        "day",
        Decimal("50"),
    )


def test_stock_renamed_everywhere_is_a_layout_error_never_sold_out() -> None:
    page = parse(case_named("drift_stock_renamed_everywhere"))
    assert page.layout_error and "unuseGpuNum" in page.layout_error
    assert offers_of(page) == {}


def test_same_host_in_stock_and_sold_out_keeps_its_key() -> None:
    host = {"id": 7, "gpuName": "RTX 4090 6152", "price": 230, "unuseGpuNum": 2, "enableBuy": True}
    sold = dict(host, unuseGpuNum=0)
    closed = dict(host, enableBuy=False)
    keys = {
        r.offer_key
        for item in (host, sold, closed)
        for r in host_records(item, CTX, region_id=14)
        if isinstance(r, OfferRecord)
    }
    assert keys == {"14/7"}


def test_request_form_asks_every_card_type_one_card_pay_as_you_go() -> None:
    assert dev_list_body(region_id=14, page=2, page_size=20) == {
        "chargeMode": 1,
        "regionId": 14,
        "gpuId": None,
        "gpuNum": 1,
        "pageNum": 2,
        "pageSize": 20,
    }
