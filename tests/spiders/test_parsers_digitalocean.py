"""DigitalOcean parser: the recorded size pages (USD per Droplet-hour, the monthly cap as a
month plan, one offer per region listed), what `available` and the region list say, CPU
sizes skipped, drift, unreadable sizes and cells, spot sizes."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from parser_registry import parse
from spider_fixture_cases import OBSERVED_AT, RUN_ID, Case, cases

from gpurent_core.cost.engine import true_cost
from gpurent_core.cost.offer import CostInput
from gpurent_core.cost.usage import UsageProfile
from gpurent_core.defaults import DEFAULT_HOURS_PER_MONTH
from gpurent_core.model import OfferRecord, QuarantineRecord, SkipRecord, StockStatus
from spiders.parsers.common import PageResult, ParseContext, load_json
from spiders.providers.digitalocean.parser import parse_sizes

CTX = ParseContext("digitalocean", RUN_ID, OBSERVED_AT)
H100 = "gpu-h100x1-80gb"
H100X8 = "gpu-h100x8-640gb"
L40S = "gpu-l40sx1-48gb"
MI300X = "gpu-mi300x1-192gb"
ADA = "gpu-6000adax1-48gb"
GPU_SIZES_PAGE1 = [H100, H100X8, L40S, MI300X, ADA]


def case_named(name: str) -> Case:
    return next(c for c in cases("digitalocean") if c.name == name)


def offers_of(page: PageResult) -> dict[str, OfferRecord]:
    return {r.offer_key: r for r in page.records if isinstance(r, OfferRecord)}


def reasons_of(page: PageResult) -> dict[str | None, list[str]]:
    reasons: dict[str | None, list[str]] = {}
    for r in page.records:
        if isinstance(r, QuarantineRecord):
            reasons.setdefault(r.offer_key, []).append(r.reason)
    return reasons


def skips_of(page: PageResult) -> dict[str | None, str]:
    return {r.offer_key: r.skip_kind.value for r in page.records if isinstance(r, SkipRecord)}


def prefixes(*slugs: str) -> list[str]:
    return [f"{slug}/" for slug in slugs]


def recorded_size(slug: str) -> dict[str, Any]:
    doc = load_json(case_named("recorded_sizes_page1").input_bytes())
    size: dict[str, Any] = next(s for s in doc["sizes"] if s["slug"] == slug)
    return size


def test_one_offer_per_region_priced_per_droplet_hour_with_the_monthly_cap() -> None:
    offers = offers_of(parse(case_named("recorded_sizes_page1")))
    assert set(offers) == {
        f"{H100}/atl1", f"{H100}/nyc2", f"{H100}/tor1", f"{H100X8}/nyc2", f"{H100X8}/tor1",
        f"{L40S}/atl1", f"{L40S}/tor1", f"{MI300X}/atl1", f"{ADA}/tor1",
    }  # fmt: skip
    one = offers[f"{H100}/nyc2"]
    assert (one.price, one.currency, one.billing_unit.value, one.price_basis.value) == (
        Decimal("3.39"),
        "USD",
        "hour",
        "instance",
    )
    assert (one.gpu_model, one.gpu_vram_gb, one.gpu_count, one.region) == ("H100", 80, 1, "nyc2")
    [cap] = one.plans
    assert (cap.price, cap.billing_unit.value, cap.price_kind.value, cap.price_basis.value) == (
        Decimal("2278.08"),
        "month",
        "on_demand",
        "instance",
    )
    [egress] = one.fees
    assert (egress.fee_type.value, egress.amount, egress.basis.value, egress.unit) == (
        "egress",
        Decimal("0.01"),
        "gb",
        None,
    )
    # The declared fee as it is: the size's allowance accrues and is pooled, not fixed.
    assert egress.included_quantity is None and not egress.mandatory
    assert (one.vcpus_per_gpu, one.ram_gb_per_gpu, one.disk_gb_per_gpu) == (
        Decimal(20),
        Decimal(240),
        Decimal(720),
    )
    # Eight cards: the price is the whole Droplet's, the VRAM and host per card.
    eight = offers[f"{H100X8}/tor1"]
    assert (eight.price, eight.gpu_count, eight.gpu_vram_gb) == (Decimal("23.92"), 8, 80)
    assert (eight.vcpus_per_gpu, eight.ram_gb_per_gpu) == (Decimal(20), Decimal(240))
    amd = offers[f"{MI300X}/atl1"]
    assert (amd.gpu_vendor, amd.gpu_model, amd.gpu_vram_gb, amd.gpu_form_factor) == (
        "AMD",
        "MI300X",
        192,
        "OAM",
    )


def test_available_says_in_stock_or_sold_out_and_every_read_size_declares_its_regions() -> None:
    page = parse(case_named("recorded_sizes_page1"))
    offers = offers_of(page)
    assert offers[f"{ADA}/tor1"].status is StockStatus.SOLD_OUT  # available: false
    assert {o.status for k, o in offers.items() if not k.startswith(ADA)} == {StockStatus.IN_STOCK}
    # A region no longer listed for a size still listed is sold out there.
    assert page.sold_out_unlisted == prefixes(*GPU_SIZES_PAGE1)
    assert page.unread_prefixes == [] and reasons_of(page) == {}


def test_cpu_sizes_are_skipped_and_the_pages_say_how_many_sizes_there_are() -> None:
    first, second = (
        parse(case_named("recorded_sizes_page1")),
        parse(case_named("recorded_sizes_page2")),
    )
    assert skips_of(first) == {"s-1vcpu-1gb": "not_a_gpu_offer", "g-4vcpu-16gb": "not_a_gpu_offer"}
    assert skips_of(second) == {"m-2vcpu-16gb": "not_a_gpu_offer"}
    assert (first.total, first.has_next) == (203, True)
    assert (second.total, second.has_next) == (203, False)
    assert set(offers_of(second)) == {
        "gpu-h200x1-141gb/atl1", "gpu-h200x1-141gb/nyc2", "gpu-mi300x8-1536gb/atl1",
    }  # fmt: skip


def test_the_cost_engine_caps_a_full_month_at_price_monthly() -> None:
    offer = offers_of(parse(case_named("recorded_sizes_page1")))[f"{H100}/nyc2"]
    always_on = true_cost(CostInput.from_offer(offer), UsageProfile(storage_gb=Decimal(0)))
    assert always_on.profile.hours_per_month == DEFAULT_HOURS_PER_MONTH
    assert (always_on.plan.source, always_on.plan.billing_unit.value) == ("plan", "month")
    assert always_on.plan.cost == Decimal("2278.08")
    short = true_cost(
        CostInput.from_offer(offer),
        UsageProfile(hours_per_month=Decimal(100), storage_gb=Decimal(0)),
    )
    assert short.plan.source == "headline" and short.plan.cost < Decimal("2278.08")


def test_stock_renamed_everywhere_is_a_layout_change_never_sold_out() -> None:
    page = parse(case_named("drift_stock_renamed_everywhere"))
    assert offers_of(page) == {}
    assert reasons_of(page) == {s: ["missing_field: key gone: available"] for s in GPU_SIZES_PAGE1}
    assert page.layout_error == "no GPU size carries available (stock): field renamed or removed"
    assert page.unread_prefixes == prefixes(*GPU_SIZES_PAGE1) and page.sold_out_unlisted == []


def test_stock_renamed_in_one_size_costs_that_size_only() -> None:
    before = offers_of(parse(case_named("recorded_sizes_page1")))
    page = parse(case_named("drift_stock_renamed_in_one"))
    after = offers_of(page)
    assert set(before) - set(after) == {f"{H100}/atl1", f"{H100}/nyc2", f"{H100}/tor1"}
    assert all(after[key] == before[key] for key in after)
    assert reasons_of(page) == {H100: ["missing_field: key gone: available"]}
    assert page.layout_error is None and page.missing_fields == ["available"]
    # Its regions are unread (kept stale), never sold out.
    assert page.unread_prefixes == prefixes(H100)
    assert f"{H100}/" not in page.sold_out_unlisted


def test_gpu_info_renamed_is_drift_not_a_market_of_cpu_sizes() -> None:
    page = parse(case_named("layout_gpu_info_renamed"))
    assert offers_of(page) == {} and set(reasons_of(page)) == set(GPU_SIZES_PAGE1)
    assert set(skips_of(page)) == {"s-1vcpu-1gb", "g-4vcpu-16gb"}
    assert page.layout_error is not None and "gpu_info.model (identity)" in page.layout_error


def test_unreadable_sizes_are_quarantined_under_their_slug_and_their_regions_unread() -> None:
    page = parse(case_named("bad_items"))
    reasons = reasons_of(page)
    assert set(offers_of(page)) == {f"{MI300X}/atl1"}
    assert reasons[H100] == ["missing_field: regions is null: says nothing of any region"]
    assert reasons[L40S] == ["invalid_value: regions is not a list: 'tor1'"]
    assert reasons[ADA] == ["invalid_value: negative card count: -1"]
    [unknown_card] = reasons["gpu-mi350x1-288gb-spot"]
    assert unknown_card.startswith("gpu_unresolved: 'amd_mi350x'")
    assert sorted(reasons[None]) == ["missing_field: key gone: slug", "not_an_offer: not an object"]
    assert page.unread_prefixes == prefixes(H100, L40S, ADA, "gpu-mi350x1-288gb-spot")
    assert page.sold_out_unlisted == prefixes(MI300X) and page.layout_error is None


def test_one_bad_cell_costs_its_size_or_only_its_side_field() -> None:
    page = parse(case_named("bad_cells"))
    offers, reasons = offers_of(page), reasons_of(page)
    # A bad hourly price costs the size.
    assert not [k for k in offers if k.startswith(H100 + "/")]
    assert reasons[H100] == ["price_unparsed: price_hourly is not a number: 'n/a'"]
    # A bad monthly cap costs the plan; the offers stand and the size was read whole.
    assert all(offers[k].plans == () for k in (f"{H100X8}/nyc2", f"{H100X8}/tor1"))
    assert reasons[H100X8] == ["price_unparsed: price_monthly is not a number: 'ask sales'"]
    # A stock flag that says nothing: unknown, said per offer, the regions unread.
    for key in (f"{L40S}/atl1", f"{L40S}/tor1", f"{MI300X}/atl1"):
        assert offers[key].status is StockStatus.UNKNOWN
        assert reasons[key][0].startswith("invalid_value: available is ")
    assert page.unread_prefixes == prefixes(H100, L40S, MI300X)
    assert page.sold_out_unlisted == prefixes(H100X8, ADA, "gpu-h200x1-141gb")
    # A host figure that is no number is left unknown; it costs nothing else.
    ada = offers[f"{ADA}/tor1"]
    assert (ada.ram_gb_per_gpu, ada.vcpus_per_gpu, ada.status) == (
        None,
        Decimal(8),
        StockStatus.SOLD_OUT,
    )
    assert ADA not in reasons
    # VRAM as text: the name alone says the card.
    assert offers["gpu-h200x1-141gb/atl1"].gpu_vram_gb == 141


def test_spot_sizes_sizes_without_regions_and_sizes_without_price() -> None:
    page = parse(case_named("spot_and_edges"))
    offers = offers_of(page)
    spot = "gpu-b300x1-288gb-spot"
    assert set(offers) == {f"{spot}/ric1", f"{spot}/atl1"}  # ric1 listed twice: one offer
    assert {(o.price_kind.value, o.plans[0].price_kind.value) for o in offers.values()} == {
        ("spot", "spot")
    }
    assert skips_of(page) == {"gpu-4000adax1-20gb": "no_public_price", "c-8": "not_a_gpu_offer"}
    # Listed in no region: no offer, and its earlier offers turn sold out.
    assert page.sold_out_unlisted == prefixes(spot, "gpu-mi325x1-256gb")


def test_error_bodies_and_a_missing_list() -> None:
    assert parse(case_named("recorded_unauthorized")).auth_rejected
    api_error = parse(case_named("api_error"))
    assert api_error.api_error == "too_many_requests: Rate limit reached: slow down."
    assert api_error.records == [] and not api_error.auth_rejected
    no_list = parse(case_named("layout_no_list"))
    assert no_list.layout_error is not None and "'sizes'" in no_list.layout_error


@pytest.mark.parametrize("available", [True, False, None, "maybe"])
def test_offer_key_does_not_follow_the_stock_answer(available: Any) -> None:
    """Rule of truth 11: whatever `available` says, the same offers under the same keys."""
    size = {**recorded_size(L40S), "available": available}
    page = parse_sizes({"sizes": [size], "links": {}, "meta": {"total": 1}}, CTX)
    assert set(offers_of(page)) == {f"{L40S}/atl1", f"{L40S}/tor1"}
    expected = {True: "in_stock", False: "sold_out"}.get(available, "unknown")
    assert {o.status.value for o in offers_of(page).values()} == {expected}
