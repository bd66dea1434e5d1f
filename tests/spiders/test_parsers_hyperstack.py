"""Hyperstack parser: the recorded price book and flavors, their join, broken inputs."""

from __future__ import annotations

from decimal import Decimal

import pytest
from parser_registry import parse, recorded_hyperstack_prices
from spider_fixture_cases import OBSERVED_AT, RUN_ID, Case, cases, recordings_of

from gpurent_core.model import (
    FeeType,
    OfferRecord,
    PriceBasis,
    PriceKind,
    QuarantineRecord,
    SkipKind,
    StockStatus,
)
from spiders.parsers.common import ParseContext, load_json
from spiders.providers.hyperstack.parser import BookPrice, parse_flavors

CTX = ParseContext("hyperstack", RUN_ID, OBSERVED_AT)


def recorded_offers() -> dict[str, OfferRecord]:
    case = next(c for c in cases("hyperstack") if c.name == "recorded_flavors")
    page = parse_flavors(load_json(case.input_bytes()), recorded_hyperstack_prices(), CTX)
    return {r.offer_key: r for r in page.records if isinstance(r, OfferRecord)}


def test_flavor_is_priced_per_gpu_with_spot_and_discount_plans() -> None:
    offers = recorded_offers()
    a100 = offers["CANADA-1/n3-A100x2"]
    assert (a100.gpu_model, a100.gpu_vram_gb, a100.gpu_count) == ("A100", 80, 2)
    assert (a100.price, a100.price_basis) == (Decimal("1.350000000"), PriceBasis.GPU)
    assert [(p.price, p.price_kind) for p in a100.plans] == [
        (Decimal("1.080000000"), PriceKind.SPOT)
    ]
    sxm = offers["NORWAY-1/n3-H100-SXM5x8"]
    # The list price is the headline; this account's discount is a member plan.
    assert sxm.price == Decimal("2.400000000")
    assert [(p.price, p.price_kind) for p in sxm.plans] == [
        (Decimal("2.160000000"), PriceKind.MEMBER)
    ]
    assert offers["CANADA-1/n3-A100x4"].status is StockStatus.SOLD_OUT
    volume = next(f for f in a100.fees if f.fee_type is FeeType.DATA_DISK)
    assert not volume.mandatory and volume.charged_while_stopped


def test_non_zero_component_rates_become_mandatory_fees() -> None:
    prices = {**recorded_hyperstack_prices(), "vCPU": BookPrice(Decimal("0.004"))}
    data = load_json((recordings_of("hyperstack") / "flavors.json").read_bytes())
    page = parse_flavors(data, prices, CTX)
    l40 = next(r for r in page.offers if r.offer_key == "NORWAY-1/n3-L40x1")
    vcpu = next(f for f in l40.fees if f.fee_type is FeeType.VCPU)
    assert (vcpu.amount, vcpu.quantity, vcpu.mandatory) == (Decimal("0.004"), 28, True)
    assert not any(f.fee_type is FeeType.MEMORY for f in l40.fees)  # RAM stays at 0


def test_flavor_without_a_price_is_quarantined_not_free() -> None:
    data = load_json((recordings_of("hyperstack") / "flavors.json").read_bytes())
    page = parse_flavors(data, {}, CTX)
    assert page.offers == []
    # every GPU flavor held back; the CPU-only flavor is skipped whatever the price book says
    assert {r.kind for r in page.records} == {"quarantine", "skip"}
    assert [r.offer_key for r in page.skipped] == ["CANADA-1/n1-cpu-large"]


def case_named(name: str) -> Case:
    return next(c for c in cases("hyperstack") if c.name == name)


def quarantined(name: str) -> list[tuple[str | None, str]]:
    return [(r.offer_key, r.reason) for r in parse(case_named(name)).records
            if isinstance(r, QuarantineRecord)]  # fmt: skip


def test_stock_flag_renamed_everywhere_is_a_layout_error() -> None:
    page = parse(case_named("flavors_stock_renamed_everywhere"))
    assert page.offers == [] and page.missing_fields == ["stock_available"]
    assert page.layout_error is not None and "stock_available" in page.layout_error
    assert len(quarantined("flavors_stock_renamed_everywhere")) == 2


def test_stock_flag_renamed_in_one_flavor_costs_that_flavor() -> None:
    page = parse(case_named("flavors_stock_renamed_in_one"))
    assert {o.offer_key: o.status for o in page.offers} == {
        "NORWAY-1/n3-L40x1": StockStatus.IN_STOCK,
        "NORWAY-1/n3-L40x4": StockStatus.SOLD_OUT,
    }
    assert quarantined("flavors_stock_renamed_in_one") == [
        ("NORWAY-1/n3-L40x2", "missing_field: key gone: stock_available")
    ]


def test_one_bad_cell_costs_only_its_flavor() -> None:
    page = parse(case_named("flavors_bad_cells"))
    assert [k for k, _ in quarantined("flavors_bad_cells")] == [
        "NORWAY-1/n3-L40x1",
        "NORWAY-1/n3-L40x2",
        "NORWAY-1/n3-L40x4",  # null flag: unknown stock, and why
    ]
    statuses = {o.offer_key: o.status for o in page.offers}
    assert statuses == {
        "NORWAY-1/n3-L40x4": StockStatus.UNKNOWN,
        "NORWAY-1/n3-L40x8": StockStatus.IN_STOCK,
    }


def test_missing_volume_rate_keeps_the_offer_and_says_the_fee_is_unknown() -> None:
    prices = {k: v for k, v in recorded_hyperstack_prices().items() if k != "Cloud-SSD"}
    data = load_json((recordings_of("hyperstack") / "flavors.json").read_bytes())
    page = parse_flavors(data, prices, CTX)
    l40 = next(r for r in page.offers if r.offer_key == "NORWAY-1/n3-L40x1")
    assert not any(f.fee_type is FeeType.DATA_DISK for f in l40.fees)
    assert "price book has no 'Cloud-SSD' rate: volume fee unknown" in page.notes


def test_a_garbled_group_holds_its_flavors_and_only_them() -> None:
    page = parse(case_named("flavors_group_gpu_garbled"))
    held = {k for k, _ in quarantined("flavors_group_gpu_garbled")}
    # Group gpu {} or null: not read as CPU-only; "" beside flavors naming a GPU: held too.
    assert {"NORWAY-1/n3-L40x1", "NORWAY-1/n3-RTX-A6000x2", "CANADA-1/n3-H100x1"} <= held
    kept = {r.offer_key: r for r in page.records if isinstance(r, OfferRecord)}
    recorded = recorded_offers()
    assert kept == {k: o for k, o in recorded.items() if k not in held}
    # the recorded CPU flavor only is skipped (no GPU offer), counted, not quarantined
    assert [(r.offer_key, r.skip_kind) for r in page.skipped] == [
        ("CANADA-1/n1-cpu-large", SkipKind.NOT_A_GPU_OFFER)
    ]


def test_a_flavors_value_that_is_not_a_list_is_a_layout_error_beside_the_rest() -> None:
    page = parse(case_named("flavors_list_garbled"))
    assert page.layout_error == "flavor group 'L40': flavors is not a list"
    kept = {r.offer_key for r in page.records if isinstance(r, OfferRecord)}
    assert kept == {k for k in recorded_offers() if "L40" not in k}
    # which flavors the group held is unknown: its region's offers are unread (kept stale)
    assert page.unread_prefixes == ["NORWAY-1/"]


def test_a_flavor_without_its_own_gpu_reads_its_groups() -> None:
    data = load_json((recordings_of("hyperstack") / "flavors.json").read_bytes())
    for group in data["data"]:
        for flavor in group["flavors"]:
            del flavor["gpu"]
    page = parse_flavors(data, recorded_hyperstack_prices(), CTX)
    assert {o.offer_key: o for o in page.offers} == recorded_offers()
    assert page.missing_fields == [] and page.layout_error is None
    assert [r.offer_key for r in page.skipped] == ["CANADA-1/n1-cpu-large"]


@pytest.mark.parametrize("flag", [True, False, None, "yes"])
def test_the_stock_answer_never_changes_an_offers_key(flag: object) -> None:
    data = load_json((recordings_of("hyperstack") / "flavors.json").read_bytes())
    for group in data["data"]:
        for flavor in group["flavors"]:
            flavor["stock_available"] = flag
    page = parse_flavors(data, recorded_hyperstack_prices(), CTX)
    assert {o.offer_key for o in page.offers} == set(recorded_offers())
    # a flag set aside beside its offer carries the offer's key
    assert all(r.offer_key in recorded_offers() for r in page.records if r.kind == "quarantine"
               and r.field == "stock_available")  # fmt: skip


def test_no_flavor_group_at_all_is_a_layout_error() -> None:
    page = parse(case_named("flavors_empty_data"))
    assert page.records == [] and page.layout_error == "no flavor group in 'data' (0 entries)"
