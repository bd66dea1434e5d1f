"""GpuEZ parser: the recorded machine list (CNY week and month packages for the whole
machine, host attributes from its sizes and end date), stock never guessed, drift, broken
cells and unreadable machines."""

from __future__ import annotations

import copy
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pytest
from parser_registry import parse
from spider_fixture_cases import OBSERVED_AT, RUN_ID, Case, cases

from gpurent_core.model import OfferRecord, QuarantineRecord, SkipKind, StockStatus
from spiders.parsers.common import PageResult, ParseContext, load_json
from spiders.providers.gpuez.parser import parse_machine_list

CTX = ParseContext("gpuez", RUN_ID, OBSERVED_AT)
CHINA = timezone(timedelta(hours=8))
H100 = "20101"
A800 = "20107"
A100_SXM = "20113"
L40S_MONTH_ONLY = "20118"
RTX_4090D = "20121"
RTX_3090 = "20125"
CPU_ONLY = "20130"
A100_PCIE = "20133"
H800 = "20140"
RTX_4090D_NO_END = "20151"
L20_WEEK_ONLY = "20160"


def case_named(name: str) -> Case:
    return next(c for c in cases("gpuez") if c.name == name)


def offers_of(page: PageResult) -> dict[str, OfferRecord]:
    return {r.offer_key: r for r in page.records if isinstance(r, OfferRecord)}


def reasons_of(page: PageResult) -> dict[str | None, list[str]]:
    reasons: dict[str | None, list[str]] = {}
    for r in page.records:
        if isinstance(r, QuarantineRecord):
            reasons.setdefault(r.offer_key, []).append(r.reason)
    return reasons


def hours_until(text: str) -> int:
    """Whole hours from the fixtures' observation to a China-time `ended_at`."""
    until = datetime.fromisoformat(text).replace(tzinfo=CHINA)
    return int((until - OBSERVED_AT).total_seconds() // 3600)


def recorded_machine(machine_id: str) -> dict[str, Any]:
    data = load_json(case_named("recorded_machine_list_page1").input_bytes())
    machines: list[dict[str, Any]] = data["data"]["list"]
    return copy.deepcopy(next(m for m in machines if str(m["id"]) == machine_id))


def one_machine(machine: dict[str, Any]) -> PageResult:
    return parse_machine_list({"code": 0, "message": "", "data": {"list": [machine]}}, CTX)


def test_the_week_package_of_the_whole_machine_is_the_price_the_month_a_plan() -> None:
    offers = offers_of(parse(case_named("recorded_machine_list_page1")))
    box = offers[H100]
    assert (box.price, box.currency, box.billing_unit.value, box.price_basis.value) == (
        Decimal("19800.00"),
        "CNY",
        "week",
        "instance",
    )
    assert (box.price_kind.value, box.gpu_count, box.region) == ("commitment", 8, "华东一区")
    assert (box.gpu_model, box.gpu_vram_gb, box.gpu_form_factor) == ("H100", 80, "SXM")
    assert [(p.price, p.billing_unit.value, p.price_kind.value, p.price_basis.value)
            for p in box.plans] == [(Decimal("72000.00"), "month", "commitment", "instance")]  # fmt: skip
    assert (offers[A800].gpu_model, offers[A800].gpu_vram_gb) == ("A800", 80)
    assert (offers[A100_PCIE].gpu_model, offers[A100_PCIE].gpu_vram_gb) == ("A100", 40)


def test_host_attributes_per_card_from_the_machine_sizes_and_its_end_date() -> None:
    box = offers_of(parse(case_named("recorded_machine_list_page1")))[H100]
    # 192 cores, 2 TiB of RAM, 100 GiB system + 7680 GiB data disk, for 8 cards.
    assert (box.cuda_version, box.vcpus_per_gpu, box.ram_gb_per_gpu, box.disk_gb_per_gpu) == (
        "12.4",
        Decimal("24"),
        Decimal("256"),
        Decimal("972.5"),
    )
    assert box.max_rental_hours == hours_until("2030-06-30 23:59:59")
    assert box.interconnect is not None and box.interconnect.value == "sxm"
    assert (box.driver_version, box.hosting, box.host_reliability) == (None, None, None)
    h800 = offers_of(parse(case_named("recorded_machine_list_page1")))[H800]
    assert h800.max_rental_hours == hours_until("2027-09-30 23:59:59")


def test_a_machine_priced_by_one_term_only_has_that_price_and_no_plan() -> None:
    page_1 = offers_of(parse(case_named("recorded_machine_list_page1")))
    page_2 = offers_of(parse(case_named("recorded_machine_list_page2")))
    l40s, l20 = page_1[L40S_MONTH_ONLY], page_2[L20_WEEK_ONLY]
    assert (l40s.price, l40s.billing_unit.value, l40s.plans) == (Decimal("16800.00"), "month", ())
    assert (l20.price, l20.billing_unit.value, l20.plans) == (Decimal("2100.00"), "week", ())
    assert page_2[RTX_4090D_NO_END].max_rental_hours is None  # no end date: never guessed


def test_stock_is_unknown_everywhere_and_a_cpu_machine_is_skipped() -> None:
    page = parse(case_named("recorded_machine_list_page1"))
    offers = offers_of(page)
    assert len(offers) == 9 and reasons_of(page) == {} and page.layout_error is None
    assert {(o.status, o.available_count) for o in offers.values()} == {(StockStatus.UNKNOWN, None)}
    assert [(s.offer_key, s.skip_kind) for s in page.skipped] == [
        (CPU_ONLY, SkipKind.NOT_A_GPU_OFFER)
    ]


def test_the_page_counts_every_machine_listed_for_the_next_page() -> None:
    assert parse(case_named("recorded_machine_list_page1")).listed == 10
    assert parse(case_named("recorded_machine_list_page2")).listed == 4
    empty = parse(case_named("empty_list_null"))
    assert (empty.records, empty.listed, empty.layout_error) == ([], 0, None)


def test_ended_at_renamed_everywhere_is_a_layout_change_never_sold_out() -> None:
    page = parse(case_named("drift_stock_renamed_everywhere"))
    assert offers_of(page) == {} and page.skipped == []
    assert {r for rs in reasons_of(page).values() for r in rs} == {
        "missing_field: key gone: ended_at"
    }
    assert page.layout_error is not None and "ended_at (stock)" in page.layout_error


def test_ended_at_renamed_in_one_machine_costs_that_machine_only() -> None:
    page = parse(case_named("drift_stock_renamed_in_one"))
    assert set(offers_of(page)) == {H100, "20144"}
    assert reasons_of(page) == {RTX_4090D: ["missing_field: key gone: ended_at"]}
    assert page.layout_error is None and page.missing_fields == ["ended_at"]


def test_a_renamed_gpu_model_is_a_layout_error() -> None:
    page = parse(case_named("layout_renamed_gpu_model"))
    assert offers_of(page) == {}
    assert page.layout_error == (
        "no machine carries gpu_stat.model (identity): field renamed or removed"
    )


def test_a_bad_headline_price_costs_the_offer_a_bad_plan_price_only_the_plan() -> None:
    page = parse(case_named("bad_cells"))
    offers, reasons = offers_of(page), reasons_of(page)
    for key in (H100, "20102"):  # price_week "面议", price_week {}
        assert key not in offers and reasons[key][0].startswith("price_unparsed: price_week")
    assert (offers[A800].price, offers[A800].plans) == (Decimal("11800.00"), ())
    assert reasons[A800] == ["price_unparsed: price_month is not a number: 'n/a'"]
    # A week price of zero is no week package: the month price leads, no plan.
    zero_week = offers[A100_SXM]
    assert (zero_week.price, zero_week.billing_unit.value, zero_week.plans) == (
        Decimal("38800.00"),
        "month",
        (),
    )
    assert offers[H800].price == Decimal("18800")  # a number instead of text is still a price


def test_unreadable_host_cells_leave_their_attribute_unknown_and_the_offer_stands() -> None:
    offers = offers_of(parse(case_named("bad_cells")))
    garbled = offers[RTX_4090D]  # cuda "latest", ended_at "2030/06/30", mem_size "lots"
    assert (garbled.cuda_version, garbled.max_rental_hours, garbled.ram_gb_per_gpu) == (
        None,
        None,
        None,
    )
    assert garbled.price == Decimal("1980.00") and garbled.disk_gb_per_gpu == Decimal("492.5")
    assert offers[RTX_3090].max_rental_hours == 0  # its end has passed
    iso = offers[A100_PCIE]  # "2026-10-05T12:00:00+08:00", data_disk_size null
    assert (iso.max_rental_hours, iso.disk_gb_per_gpu) == (16, None)
    assert offers[H800].max_rental_hours is None  # a zero date says no end
    # VRAM in MiB (24576) and in bytes (40 GiB) read as GB.
    assert (offers[RTX_3090].gpu_vram_gb, iso.gpu_vram_gb) == (24, 40)


def test_unreadable_machines_are_quarantined_skipped_or_kept_one_by_one() -> None:
    page = parse(case_named("bad_items"))
    reasons = reasons_of(page)
    assert set(offers_of(page)) == {"20156", "20144", "20907"}
    assert offers_of(page)["20907"].gpu_model == "H20"  # mem_size 97871 MiB: 96 GB
    assert reasons["20901"][0].startswith("gpu_unresolved: 'X99 Turbo'")
    assert reasons["20902"] == ["invalid_value: gpu_count is negative: -1"]
    assert reasons["20903"] == ["missing_field: gpu_stat is not an object"]
    assert reasons["20905"] == ["missing_field: key gone: price_week|price_month"]
    assert sorted(reasons[None]) == [
        "invalid_value: id is no id: None",
        "not_an_offer: not an object",
    ]
    assert {(s.offer_key, s.skip_kind) for s in page.skipped} == {
        ("20904", SkipKind.NO_PUBLIC_PRICE),
        ("20906", SkipKind.NOT_A_GPU_OFFER),
    }
    assert page.layout_error is None and page.missing_fields == ["price_week|price_month"]


def test_envelope_errors_are_failed_requests_or_layout_changes() -> None:
    assert parse(case_named("api_error")).api_error == "code 10003: 参数错误: machine_type"
    unauthorized = parse(case_named("recorded_unauthorized"))
    assert unauthorized.records == [] and unauthorized.api_error == "code 401: 认证失败"
    assert parse(case_named("layout_no_list")).layout_error == "no 'data.list' in a code 0 answer"
    assert parse(case_named("envelope_code_retyped")).layout_error is not None


@pytest.mark.parametrize(
    ("mem_size", "vram"),
    [(40, 40), (80, 80), (40960, 40), (81920, 80), (80 * 1024**3, 80), (0, None), ("80", None)],
)
def test_gpu_memory_is_read_by_its_size(mem_size: Any, vram: int | None) -> None:
    machine = recorded_machine(A100_PCIE)
    machine["gpu_stat"].update(model="A100", mem_size=mem_size)
    [offer] = one_machine(machine).offers
    assert offer.gpu_vram_gb == vram  # a figure of no known unit never picks a size


def test_offer_key_does_not_follow_the_end_date_or_the_prices() -> None:
    """Rule of truth 11: whatever the list says around it, one key and the same unknown stock."""
    seen = set()
    for ended_at, week in (("2030-06-30 23:59:59", "5400.00"), ("2026-01-01 00:00:00", "1.00"),
                           (None, ""), ("", "9999.99")):  # fmt: skip
        machine = recorded_machine(A100_PCIE)
        machine.update(ended_at=ended_at, price_week=week)
        [offer] = one_machine(machine).offers
        seen.add((offer.offer_key, offer.status, offer.available_count))
    assert seen == {(A100_PCIE, StockStatus.UNKNOWN, None)}
