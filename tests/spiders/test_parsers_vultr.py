"""Vultr parser: the recorded plan lists (USD per server-hour, the monthly cap as a month
plan, one offer per rate and region listed), what `locations` and the deploy flags say, vGPU
slices skipped, card counts, drift, unreadable plans and cells, error bodies."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from parser_registry import parse
from spider_fixture_cases import OBSERVED_AT, RUN_ID, Case, cases

from gpurent_core.cost.engine import true_cost
from gpurent_core.cost.offer import CostInput
from gpurent_core.cost.usage import UsageProfile
from gpurent_core.model import OfferRecord, QuarantineRecord, SkipRecord, StockStatus
from spiders.parsers.common import PageResult, ParseContext, load_json
from spiders.providers.vultr.parser import parse_metal_plans, parse_plans

CTX = ParseContext("vultr", RUN_ID, OBSERVED_AT)
A100 = "cloud-gpu/vcg-a100-12c-120g-80vram"
A100X2 = "cloud-gpu/vcg-a100-24c-240g-160vram"
A16 = "cloud-gpu/vcg-a16-6c-64g-16vram"
L40S = "cloud-gpu/vcg-l40s-16c-180g-48vram"
L40SX2 = "cloud-gpu/vcg-l40s-32c-375g-96vram"
A40 = "cloud-gpu/vcg-a40-24c-120g-48vram"
H100X8 = "bare-metal/vbm-112c-2048gb-8-h100-gpu"
MI300X = "bare-metal/vbm-256c-2048gb-8-mi300x-gpu"
GH200 = "bare-metal/vbm-72c-480gb-gh200-gpu"
SLICES = {
    "cloud-gpu/vcg-a100-1c-6g-4vram": "NVIDIA_A100 with 4 GB: a vGPU slice of a 80 GB card",
    "cloud-gpu/vcg-a100-6c-60g-40vram": "NVIDIA_A100 with 40 GB: a vGPU slice of a 80 GB card",
    "cloud-gpu/vcg-a16-2c-16g-4vram": "NVIDIA_A16 with 4 GB: a vGPU slice of a 16 GB card",
}


def case_named(name: str) -> Case:
    return next(c for c in cases("vultr") if c.name == name)


def offers_of(page: PageResult) -> dict[str, OfferRecord]:
    return {r.offer_key: r for r in page.records if isinstance(r, OfferRecord)}


def reasons_of(page: PageResult) -> dict[str | None, list[str]]:
    reasons: dict[str | None, list[str]] = {}
    for r in page.records:
        if isinstance(r, QuarantineRecord):
            reasons.setdefault(r.offer_key, []).append(r.reason)
    return reasons


def skips_of(page: PageResult) -> dict[str | None, tuple[str, str]]:
    return {
        r.offer_key: (r.skip_kind.value, r.detail)
        for r in page.records
        if isinstance(r, SkipRecord)
    }


def on_demand(plan: str, *regions: str) -> set[str]:
    return {f"{plan}/on_demand/{region}" for region in regions}


def recorded_plan(name: str, plan_id: str) -> dict[str, Any]:
    doc = load_json(case_named(name).input_bytes())
    plans = doc.get("plans") or doc["plans_metal"]
    plan: dict[str, Any] = next(p for p in plans if p["id"] == plan_id)
    return plan


def test_one_offer_per_region_priced_per_server_hour_with_the_monthly_cap() -> None:
    page = parse(case_named("recorded_plans_page1"))
    offers = offers_of(page)
    assert set(offers) == (
        on_demand(A100, "ewr", "ord", "sea")
        | on_demand(A16, "ewr", "fra", "nrt")
        | on_demand(L40S, "ewr", "lax", "bom", "fra")
    )
    one = offers[f"{A100}/on_demand/ord"]
    assert (one.price, one.currency, one.billing_unit.value, one.price_basis.value) == (
        Decimal("2.349"),
        "USD",
        "hour",
        "instance",
    )
    assert (one.gpu_model, one.gpu_vram_gb, one.gpu_count, one.region, one.status) == (
        "A100",
        80,
        1,
        "ord",
        StockStatus.IN_STOCK,
    )
    [cap] = one.plans
    assert (cap.price, cap.billing_unit.value, cap.price_kind.value) == (
        Decimal(1715),
        "month",
        "on_demand",
    )
    [egress] = one.fees
    assert (egress.fee_type.value, egress.amount, egress.basis.value, egress.mandatory) == (
        "egress",
        Decimal("0.01"),
        "gb",
        False,
    )
    assert (one.vcpus_per_gpu, one.ram_gb_per_gpu, one.disk_gb_per_gpu) == (
        Decimal(12),
        Decimal(120),
        Decimal(1400),
    )
    # A region with its own `location_cost` has its own price and cap.
    bom, ewr = offers[f"{L40S}/on_demand/bom"], offers[f"{L40S}/on_demand/ewr"]
    assert (bom.price, bom.plans[0].price) == (Decimal("1.815"), Decimal(1325))
    assert (ewr.price, ewr.plans[0].price) == (Decimal("1.651"), Decimal(1205))
    assert (page.total, page.next_cursor) == (10, "bmV4dF9fdmNnLWw0MHMtMzJjLTM3NWctOTZ2cmFt")


def test_vgpu_slices_are_skipped_never_ranked_as_a_whole_card() -> None:
    first, second = (
        parse(case_named("recorded_plans_page1")),
        parse(case_named("recorded_plans_page2")),
    )
    slices = {k: d for k, (kind, d) in skips_of(first).items() if kind == "outside_catalog"}
    assert slices == SLICES
    assert skips_of(second)["cloud-gpu/vcg-a40-1c-5g-2vram"] == (
        "outside_catalog",
        "NVIDIA_A40 with 2 GB: a vGPU slice of a 48 GB card",
    )
    # The 40 GB plan is half of Vultr's 80 GB A100: never an "A100 40GB" offer.
    for page in (first, second):
        assert not [o for o in offers_of(page).values() if o.gpu_vram_gb in (2, 4, 40)]


def test_a_plan_listed_in_no_region_makes_no_offer_and_turns_its_earlier_ones_sold_out() -> None:
    page = parse(case_named("recorded_plans_page1"))
    assert skips_of(page)[A100X2] == ("not_offered", "listed in no region: deployable nowhere now")
    assert not [k for k in offers_of(page) if k.startswith(A100X2)]
    # Every plan read whole declares its rate's regions: one no longer listed is sold out.
    assert page.sold_out_unlisted == [f"{p}/on_demand/" for p in (A100, A100X2, A16, L40S)]
    assert page.unread_prefixes == [] and reasons_of(page) == {}


def test_deploy_ondemand_false_is_sold_out_in_vultrs_words() -> None:
    page = parse(case_named("recorded_plans_page2"))
    offers = offers_of(page)
    assert {k: o.status for k, o in offers.items() if k.startswith(L40SX2)} == {
        f"{L40SX2}/on_demand/ewr": StockStatus.SOLD_OUT,
        f"{L40SX2}/on_demand/lax": StockStatus.SOLD_OUT,
    }
    two = offers[f"{L40SX2}/on_demand/ewr"]
    assert (two.gpu_count, two.gpu_vram_gb, two.price, two.ram_gb_per_gpu) == (
        2,
        48,
        Decimal("3.301"),
        Decimal("187.5"),
    )
    assert offers[f"{A40}/on_demand/sjc"].status is StockStatus.IN_STOCK
    assert (page.total, page.next_cursor) == (10, None)


def test_bare_metal_on_demand_and_preemptible_rates_are_separate_offers() -> None:
    page = parse(case_named("recorded_plans_metal"))
    offers = offers_of(page)
    assert skips_of(page) == {"bare-metal/vbm-4c-32gb": ("not_a_gpu_offer", "plan without GPU")}
    spot = offers[f"{H100X8}/spot/sea"]
    assert (spot.price_kind.value, spot.price, spot.gpu_count, spot.gpu_vram_gb) == (
        "spot",
        Decimal("17.60"),
        8,
        80,
    )
    assert [(p.price, p.price_kind.value) for p in spot.plans] == [(Decimal("11827.20"), "spot")]
    # Eight cards on two disks: the disk per card is left unknown, never guessed.
    assert (spot.vcpus_per_gpu, spot.ram_gb_per_gpu, spot.disk_gb_per_gpu) == (
        Decimal(28),
        Decimal(256),
        None,
    )
    # MI300X: on demand not deployable (sold out), preemptible deployable.
    assert offers[f"{MI300X}/on_demand/ord"].status is StockStatus.SOLD_OUT
    assert offers[f"{MI300X}/spot/ord"].status is StockStatus.IN_STOCK
    assert (
        offers[f"{GH200}/on_demand/ewr"].gpu_model,
        offers[f"{GH200}/on_demand/ewr"].gpu_vram_gb,
    ) == (
        "GH200",
        96,
    )
    assert page.sold_out_unlisted == [
        f"{H100X8}/on_demand/",
        f"{H100X8}/spot/",
        f"{MI300X}/on_demand/",
        f"{MI300X}/spot/",
        f"{GH200}/on_demand/",
    ]


def test_the_cost_engine_caps_a_bare_metal_month_at_672_hours() -> None:
    offer = offers_of(parse(case_named("recorded_plans_metal")))[f"{H100X8}/on_demand/ewr"]
    always_on = true_cost(CostInput.from_offer(offer), UsageProfile(storage_gb=Decimal(0)))
    assert (always_on.plan.source, always_on.plan.billing_unit.value) == ("plan", "month")
    assert always_on.plan.cost == Decimal("14999.04")  # 672 h, below 730 h of 22.32
    short = true_cost(
        CostInput.from_offer(offer),
        UsageProfile(hours_per_month=Decimal(100), storage_gb=Decimal(0)),
    )
    assert short.plan.source == "headline" and short.plan.cost < Decimal("14999.04")


def test_stock_renamed_everywhere_is_a_layout_change_never_sold_out() -> None:
    page = parse(case_named("drift_stock_renamed_everywhere"))
    assert offers_of(page) == {} and skips_of(page) == {}
    assert set(reasons_of(page)) == {
        *SLICES,
        A100,
        A100X2,
        A16,
        L40S,
    }
    assert {r for rs in reasons_of(page).values() for r in rs} == {
        "missing_field: key gone: locations"
    }
    assert page.layout_error == "no GPU plan carries locations (stock): field renamed or removed"
    assert page.sold_out_unlisted == [] and len(page.unread_prefixes) == 7


def test_stock_renamed_in_one_plan_costs_that_plan_only() -> None:
    before = offers_of(parse(case_named("recorded_plans_page1")))
    page = parse(case_named("drift_stock_renamed_in_one"))
    after = offers_of(page)
    assert set(before) - set(after) == on_demand(A100, "ewr", "ord", "sea")
    assert all(after[key] == before[key] for key in after)
    assert reasons_of(page) == {A100: ["missing_field: key gone: locations"]}
    assert page.layout_error is None and page.missing_fields == ["locations"]
    # Its regions are unread (kept stale), never sold out.
    assert page.unread_prefixes == [f"{A100}/"]
    assert not [p for p in page.sold_out_unlisted if p.startswith(A100 + "/")]


@pytest.mark.parametrize("name", ["layout_gpu_type_renamed", "layout_metal_gpu_type_renamed"])
def test_the_card_renamed_is_drift_not_a_list_of_cpu_plans(name: str) -> None:
    page = parse(case_named(name))
    assert offers_of(page) == {}
    assert page.layout_error == "no GPU plan carries gpu_type (identity): field renamed or removed"
    assert len(reasons_of(page)) == 3 and len(page.unread_prefixes) == 3
    assert not [k for k, (kind, _) in skips_of(page).items() if kind != "not_a_gpu_offer"]


def test_unreadable_plans_are_quarantined_under_their_key_and_their_regions_unread() -> None:
    page = parse(case_named("bad_items"))
    reasons = reasons_of(page)
    assert offers_of(page) == {}
    assert reasons[A100] == ["missing_field: locations is null: says nothing of any region"]
    assert reasons[A16] == ["invalid_value: locations is not a list: 'ewr'"]
    assert reasons[L40S] == ["invalid_value: location_cost is not an object: 'bom:1.815'"]
    [unknown_card] = reasons["cloud-gpu/vcg-x9-8c-64g-48vram"]
    assert unknown_card.startswith("gpu_unresolved: 'NVIDIA_X9000'")
    assert reasons["cloud-gpu/vcg-a40-48c-240g-96vram"] == [
        "invalid_value: gpu_count is not a number: 'two'"
    ]
    # No id: one unkeyed line per offer it would have made (two regions); a string item.
    assert sorted(reasons[None]) == [
        "missing_field: key gone: id",
        "missing_field: key gone: id",
        "not_an_offer: not an object",
    ]
    assert page.unread_prefixes == [
        f"{A100}/",
        f"{A16}/",
        f"{L40S}/",
        "cloud-gpu/vcg-x9-8c-64g-48vram/",
        "cloud-gpu/vcg-a40-48c-240g-96vram/",
    ]
    assert page.sold_out_unlisted == [f"{A100X2}/on_demand/"] and page.layout_error is None


def test_one_bad_cell_costs_its_plan_its_rate_its_region_or_only_its_side_field() -> None:
    page = parse(case_named("bad_cells_metal"))
    offers, reasons = offers_of(page), reasons_of(page)
    # A bad monthly cap costs the plan of the offer; a bad preemptible price its spot rate.
    assert set(k for k in offers if k.startswith(H100X8)) == on_demand(H100X8, "sea", "ewr")
    assert all(offers[k].plans == () for k in on_demand(H100X8, "sea", "ewr"))
    assert reasons[H100X8] == [
        "price_unparsed: monthly_cost is not a number: 'n/a'",
        "price_unparsed: hourly_cost_preemptible is not a number: 'ask sales'",
    ]
    # A deploy flag that says nothing: unknown, said under the offer's key, its rate unread.
    assert offers[f"{MI300X}/spot/ord"].status is StockStatus.UNKNOWN
    assert reasons[f"{MI300X}/spot/ord"] == [
        "invalid_value: deploy_preemptible is None: stock unknown"
    ]
    assert offers[f"{MI300X}/on_demand/ord"].status is StockStatus.SOLD_OUT
    # A host figure that is no number is left unknown; it costs nothing else.
    assert offers[f"{MI300X}/on_demand/ord"].vcpus_per_gpu is None
    # One region's own price unreadable: that offer only (kept stale); a region listed twice
    # is one offer.
    assert set(k for k in offers if k.startswith(GH200)) == on_demand(GH200, "ewr")
    assert reasons[f"{GH200}/on_demand/sea"] == [
        "price_unparsed: location_cost.sea.hourly_cost is not a number: '3,49'"
    ]
    # A bad on-demand price costs the whole plan.
    assert reasons["bare-metal/vbm-256c-2048gb-8-b200-gpu"] == [
        "price_unparsed: hourly_cost is not a number: 'none'"
    ]
    assert page.unread_prefixes == [
        f"{H100X8}/spot/",
        f"{MI300X}/spot/",
        "bare-metal/vbm-256c-2048gb-8-b200-gpu/",
    ]
    assert page.sold_out_unlisted == [
        f"{H100X8}/on_demand/",
        f"{MI300X}/on_demand/",
        f"{GH200}/on_demand/",
    ]


def test_card_counts_fractions_free_rates_and_flags() -> None:
    page = parse(case_named("slices_counts_and_rates"))
    offers, reasons, skips = offers_of(page), reasons_of(page), skips_of(page)
    base = "cloud-gpu/vcg-a100-12c-120g-80vram"
    # A count below one card, written either way, is a slice.
    assert skips["cloud-gpu/vcg-a100-3c-30g-20vram"] == (
        "outside_catalog",
        "NVIDIA_A100 x 1/4: a vGPU slice of a card",
    )
    assert skips["cloud-gpu/vcg-a100-1c-12g-8vram"][0] == "outside_catalog"
    assert skips["cloud-gpu/vcg-a100-6c-60g-40vram-nocount"][0] == "outside_catalog"
    # Without gpu_count, 80 GB of an A100 is one card or two: never guessed.
    assert reasons[f"{base}-nocount"] == [
        "invalid_value: no gpu_count, and 80 GB of NVIDIA_A100 makes 1 or 2 cards"
    ]
    # ... while 96 GB of an L40S (48 GB only) is two.
    nocount = offers["cloud-gpu/vcg-l40s-32c-375g-96vram-nocount/on_demand/ewr"]
    assert (nocount.gpu_count, nocount.gpu_vram_gb) == (2, 48)
    assert reasons[f"{base}-x3"] == ["invalid_value: gpu_vram_gb 80 does not split over 3 cards"]
    four = offers["cloud-gpu/vcg-a100-48c-480g-320vram/on_demand/ewr"]
    assert (four.gpu_count, four.gpu_vram_gb) == (4, 80)
    assert {k for k in offers if "320vram" in k} == on_demand(
        "cloud-gpu/vcg-a100-48c-480g-320vram", "ewr", "ord"
    )
    # The name says SXM: the form factor and its interconnect.
    sxm = offers[f"{base}-sxm/on_demand/ewr"]
    assert (sxm.gpu_form_factor, sxm.interconnect) == ("SXM", "sxm")
    # A free on-demand rate is no price: skipped; its preemptible rate still offers.
    assert skips[f"{base}-free"] == (
        "no_public_price",
        "vcg-a100-12c-120g-80vram-free: hourly_cost 0",
    )
    assert {k for k in offers if k.startswith(f"{base}-free/")} == {
        f"{base}-free/spot/{r}" for r in ("ewr", "ord", "sea")
    }
    # A flag that is no flag: unknown, with a line per offer; a flag gone: drift.
    flagged = [offers[k] for k in on_demand(f"{base}-noflags", "ewr", "ord", "sea")]
    assert {o.status for o in flagged} == {StockStatus.UNKNOWN}
    assert reasons["cloud-gpu/vcg-a40-24c-120g-48vram-noflag"] == [
        "missing_field: key gone: deploy_ondemand"
    ]
    assert page.missing_fields == ["deploy_ondemand"]
    assert f"{base}-noflags/on_demand/" in page.unread_prefixes
    assert skips["cloud-gpu/vc2-2c-4gb"] == ("not_a_gpu_offer", "plan without GPU")


def test_error_bodies_missing_and_empty_lists() -> None:
    api_error = parse(case_named("api_error"))
    assert api_error.api_error == "429: Rate limit exceeded. Please slow down your requests."
    assert api_error.records == [] and not api_error.auth_rejected
    no_list = parse(case_named("layout_no_list"))
    assert no_list.layout_error is not None and "'plans'" in no_list.layout_error
    empty = parse(case_named("layout_empty_list"))
    assert empty.layout_error == "empty 'plans' list: says nothing of any Cloud GPU plan"
    # The other list's key is a layout change of this one, never its plans.
    metal = parse_metal_plans(load_json(case_named("recorded_plans_page1").input_bytes()), CTX)
    assert metal.records == [] and "'plans_metal'" in (metal.layout_error or "")


@pytest.mark.parametrize("deploy", [True, False, None, "maybe"])
def test_offer_key_does_not_follow_the_stock_answer(deploy: Any) -> None:
    """Rule of truth 11: whatever the deploy flag says, the same offers under the same keys."""
    plan = {
        **recorded_plan("recorded_plans_page2", "vcg-a40-24c-120g-48vram"),
        "deploy_ondemand": deploy,
    }
    page = parse_plans({"plans": [plan], "meta": {"total": 1, "links": {"next": ""}}}, CTX)
    assert set(offers_of(page)) == on_demand(A40, "ewr", "sjc")
    expected = {True: "in_stock", False: "sold_out"}.get(deploy, "unknown")
    assert {o.status.value for o in offers_of(page).values()} == {expected}
