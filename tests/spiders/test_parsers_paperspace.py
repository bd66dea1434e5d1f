"""Paperspace parser: the recorded machine types, a team account's staff rates, broken inputs."""

from __future__ import annotations

from decimal import Decimal

from parser_registry import parse
from spider_fixture_cases import OBSERVED_AT, RUN_ID, Case, cases

from gpurent_core.model import (
    BillingUnit,
    FeeType,
    OfferRecord,
    PriceBasis,
    PriceKind,
    QuarantineRecord,
    SkipKind,
    SkipRecord,
    StockStatus,
)
from spiders.parsers.common import ParseContext, load_json
from spiders.providers.paperspace.parser import parse_vm_types

CTX = ParseContext("paperspace", RUN_ID, OBSERVED_AT)


def case_named(name: str) -> Case:
    return next(c for c in cases("paperspace") if c.name == name)


def offers(case: Case) -> dict[str, OfferRecord]:
    return {r.offer_key: r for r in parse(case).records if isinstance(r, OfferRecord)}


def test_hourly_headline_with_the_monthly_rate_as_a_commitment_plan() -> None:
    a100 = offers(case_named("recorded_vm_types"))["31/A100-80G"]
    assert (a100.gpu_model, a100.gpu_vram_gb, a100.gpu_count) == ("A100", 80, 1)
    assert (a100.price, a100.billing_unit, a100.price_basis) == (
        Decimal("3.18"),
        BillingUnit.HOUR,
        PriceBasis.INSTANCE,
    )
    assert a100.price_kind is PriceKind.ON_DEMAND and a100.status is StockStatus.IN_STOCK
    [plan] = a100.plans
    assert (plan.price, plan.billing_unit, plan.price_kind) == (
        Decimal("2042.00"),
        BillingUnit.MONTH,
        PriceKind.COMMITMENT,
    )
    [disk] = a100.fees
    assert disk.fee_type is FeeType.SYSTEM_DISK and disk.mandatory and disk.charged_while_stopped


def test_unavailable_types_are_sold_out_and_preemptible_ones_are_spot() -> None:
    recorded = offers(case_named("recorded_vm_types"))
    assert recorded["31/A100-80Gx8"].status is StockStatus.SOLD_OUT
    assert recorded["31/A100-80Gx8"].gpu_count == 8
    spot = recorded["37/A6000/preemptible"]
    assert spot.price_kind is PriceKind.SPOT and spot.price == Decimal("0.85")
    assert not any(key.endswith(("C5", "Free-A4000")) for key in recorded)  # skipped


def test_recorded_page_sets_aside_only_what_is_no_offer() -> None:
    """Rule of truth 9: the CPU-only type, the free tier and the Maxwell card are no offers
    gpurent ranks, so they are skipped by kind and the page has no quarantine line."""
    page = parse(case_named("recorded_vm_types"))
    assert [(r.offer_key, r.skip_kind) for r in page.skipped] == [
        ("31/C5", SkipKind.NOT_A_GPU_OFFER),
        ("31/Free-A4000", SkipKind.NOT_A_GPU_OFFER),
        ("31/M4000", SkipKind.OUTSIDE_CATALOG),
    ]
    assert not any(isinstance(r, QuarantineRecord) for r in page.records)


def test_offer_key_does_not_follow_the_stock_flag() -> None:
    """Rule of truth 11: the same machine type is the same key available, not available or
    with a flag that says neither."""
    data = load_json(case_named("stock_renamed_in_one").input_bytes())
    entry = data["31"][0]
    statuses = {}
    for flag in (True, False, None):
        page = parse_vm_types({"31": [{**entry, "isAvailable": flag}]}, CTX)
        statuses[flag] = [(o.offer_key, o.status) for o in page.offers]
    assert statuses == {
        True: [("31/A4000", StockStatus.IN_STOCK)],
        False: [("31/A4000", StockStatus.SOLD_OUT)],
        None: [("31/A4000", StockStatus.UNKNOWN)],
    }


def test_staff_rates_are_not_prices() -> None:
    page = parse(case_named("doc_shape_team_account_staff_rates"))
    # A team account's answer: every GPU type carries only staff (isEmployeeOnly) or VIP
    # rates of 0.00, or is a K80 (outside the catalog). None of it may become a $0 offer,
    # and none of it is an offer we failed to read: every entry is skipped with its kind.
    assert page.records and all(isinstance(r, SkipRecord) for r in page.records)
    kinds = {r.offer_key: r.skip_kind for r in page.skipped}
    assert kinds["41/p3.8xlarge"] is SkipKind.NOT_OFFERED  # staff rates only
    assert kinds["41/p2.8xlarge"] is SkipKind.OUTSIDE_CATALOG  # Tesla K80
    assert kinds["41/c5.2xlarge"] is SkipKind.NOT_A_GPU_OFFER
    assert set(kinds.values()) == set(SkipKind) - {SkipKind.NO_PUBLIC_PRICE}
    bad = offers(case_named("bad_entries"))
    assert bad["7/A5000-staff"].price == Decimal("1.38")  # the public rate, not the staff one


def test_monthly_only_type_is_priced_per_month() -> None:
    monthly = offers(case_named("bad_entries"))["7/A6000-monthly"]
    assert (monthly.price, monthly.billing_unit, monthly.price_kind) == (
        Decimal("1189.00"),
        BillingUnit.MONTH,
        PriceKind.COMMITMENT,
    )


def quarantined(case: Case) -> list[tuple[str | None, str]]:
    return [(r.offer_key, r.reason) for r in parse(case).records if isinstance(r, QuarantineRecord)]


def test_stock_flag_renamed_everywhere_is_a_layout_error_with_every_entry_quarantined() -> None:
    page = parse(case_named("layout_renamed_flag"))
    assert page.offers == [] and page.records
    assert page.layout_error is not None and "isAvailable" in page.layout_error
    assert page.missing_fields == ["isAvailable"]


def test_stock_flag_renamed_in_one_entry_costs_that_entry() -> None:
    case = case_named("stock_renamed_in_one")
    kept = offers(case)
    assert {k: o.status for k, o in kept.items()} == {
        "31/A4000": StockStatus.IN_STOCK,
        "31/A100-80G": StockStatus.SOLD_OUT,
    }
    assert quarantined(case) == [("31/A6000", "missing_field: key gone: isAvailable")]
    assert parse(case).missing_fields == ["isAvailable"]


def test_one_bad_cell_costs_only_its_entry() -> None:
    case = case_named("bad_cells")
    assert [key for key, _ in quarantined(case)] == ["31/A4000", "31/A6000", "31/A5000", "31/H100"]
    kept = offers(case)
    # A flag that is not a yes/no (or null) is unknown stock, never in stock or sold out.
    assert kept["31/A5000"].status is StockStatus.UNKNOWN
    assert kept["31/H100"].status is StockStatus.UNKNOWN
    assert kept["31/A100-80G"].status is StockStatus.SOLD_OUT


def test_a_gpu_model_key_gone_is_not_a_cpu_only_type() -> None:
    data = load_json(case_named("stock_renamed_in_one").input_bytes())
    del data["31"][0]["vmType"]["gpuModel"]
    page = parse_vm_types(data, CTX)
    assert page.notes == [] and "vmType.gpuModel" in page.missing_fields
    quarantined_keys = [r.offer_key for r in page.records if isinstance(r, QuarantineRecord)]
    assert quarantined_keys == ["31/A4000", "31/A6000"]  # A6000: isAvailable gone


def test_a_null_gpu_model_or_empty_label_is_held_not_taken_for_cpu_only() -> None:
    page = parse(case_named("gpu_model_null"))
    lines = {r.offer_key: r.reason for r in page.records if isinstance(r, QuarantineRecord)}
    assert lines["31/P5000"] == "invalid_value: vmType.gpuModel is not an object: None"
    assert lines["37/A5000"].startswith("missing_field: ")
    # Only the recorded CPU-only type (labelled "None") is skipped as CPU-only.
    cpu_only = [r.offer_key for r in page.skipped if "CPU-only" in r.detail]
    assert cpu_only == ["31/C5"]


def test_an_entry_that_lost_is_preemptible_keeps_both_of_its_offers() -> None:
    """`isPreemptible` picks the key (`/preemptible`): without it the entry cannot say which
    offer it is, so its line carries the on-demand key and the preemptible one is unread."""
    data = load_json(case_named("recorded_vm_types").input_bytes())
    spot = next(e for e in data["37"] if e["isPreemptible"] and e["vmType"]["label"] == "A6000")
    del spot["isPreemptible"]
    page = parse_vm_types(data, CTX)
    assert "37/A6000/preemptible" not in {o.offer_key for o in page.offers}
    lines = [(r.offer_key, r.reason) for r in page.records if isinstance(r, QuarantineRecord)]
    assert lines == [("37/A6000", "missing_field: key gone: isPreemptible")]
    assert page.unread_prefixes == ["37/A6000/"]
    assert parse(case_named("recorded_vm_types")).unread_prefixes == []
