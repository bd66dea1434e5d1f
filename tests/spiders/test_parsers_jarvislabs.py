"""JarvisLabs parser: the recorded server meta, a documented-shape answer, broken inputs."""

from __future__ import annotations

from decimal import Decimal

import pytest
from parser_registry import ctx, parse
from spider_fixture_cases import cases

from gpurent_core.model import OfferRecord, PriceKind, QuarantineRecord, StockStatus
from spiders.providers.jarvislabs.parser import parse_server_meta

CTX = ctx("jarvislabs")


def offers_of(case_name: str) -> dict[str, OfferRecord]:
    case = next(c for c in cases("jarvislabs") if c.name == case_name)
    return {r.offer_key: r for r in parse(case).records if isinstance(r, OfferRecord)}


def test_one_card_per_region_type_and_workload_with_free_counts() -> None:
    offers = offers_of("recorded_server_meta")
    l4 = offers["india-noida-01/L4/vm"]
    assert (l4.status, l4.available_count) == (StockStatus.IN_STOCK, 3)
    assert (l4.price, l4.price_basis.value, l4.gpu_count) == (Decimal("0.44"), "gpu", 1)
    assert "india-noida-01/L4/container" in offers
    a100 = offers["india-noida-01/A100-80GB/vm"]
    assert (a100.gpu_model, a100.gpu_vram_gb) == ("A100", 80)
    assert (a100.status, a100.available_count) == (StockStatus.SOLD_OUT, 0)
    # workload_type null (older VM rows): "any" in the key
    assert offers["europe-01/H200/any"].status is StockStatus.SOLD_OUT
    assert offers["india-01/A100/container"].gpu_vram_gb == 40


def test_spot_plan_on_containers_unless_no_spot_card_is_free() -> None:
    offers = offers_of("recorded_server_meta")
    assert [(p.price_kind, p.price) for p in offers["india-noida-01/L4/container"].plans] == [
        (PriceKind.SPOT, Decimal("0.29"))
    ]
    assert offers["india-01/A6000/container"].plans == ()  # spot_num_free_devices 0


def test_a_vm_row_gets_no_spot_plan_whatever_its_spot_price() -> None:
    """JarvisLabs sells spot for containers only (gpuhunt dropped its spot offers for that
    reason): the L4 VM row's spot_price 0.29 is no price the VM rents at (its own: 0.44)."""
    offers = offers_of("recorded_server_meta")
    assert offers["india-noida-01/L4/vm"].plans == ()
    assert offers["india-chennai-01/RTX-PRO6000/vm"].plans == ()


def test_unknown_type_is_quarantined() -> None:
    case = next(c for c in cases("jarvislabs") if c.name == "recorded_server_meta")
    quarantined = [r for r in parse(case).records if not isinstance(r, OfferRecord)]
    assert [q.offer_key for q in quarantined] == ["india-01/A5000Pro/container"]
    # JarvisLabs' SDK lists "A5000Pro" beside "A5000" as its own type and no public source
    # says which card it is (the row's vram "24" fits RTX A5000 and RTX A5500): not guessed.
    assert quarantined[0].reason == (
        "gpu_unresolved: 'A5000Pro': unknown GPU model 'a5000pro': not in the catalog"
    )


def quarantined(case_name: str) -> list[tuple[str | None, str]]:
    case = next(c for c in cases("jarvislabs") if c.name == case_name)
    return [(r.offer_key, r.reason) for r in parse(case).records if isinstance(r, QuarantineRecord)]


def test_free_count_gone_is_drift_bad_or_null_is_unknown_not_sold_out() -> None:
    offers = offers_of("bad_fields")
    # num_free_devices key gone: drift, the row is quarantined (never unknown, never sold out)
    assert "europe-01/H100/any" not in offers
    assert ("europe-01/H100/any", "missing_field: key gone: num_free_devices") in quarantined(
        "bad_fields"
    )
    assert offers["india-01/A100/container"].status is StockStatus.UNKNOWN  # -1, set aside
    assert offers_of("bad_cells")["europe-01/H200/any"].status is StockStatus.UNKNOWN  # null
    # "RTX5000" with 16 GB is the Turing Quadro RTX 5000, not the 32 GB RTX 5000 Ada.
    assert offers["india-01/RTX5000/container"].gpu_model == "Quadro RTX 5000"


def test_free_count_renamed_everywhere_is_a_layout_error() -> None:
    case = next(c for c in cases("jarvislabs") if c.name == "stock_renamed_everywhere")
    page = parse(case)
    assert page.offers == [] and page.missing_fields == ["num_free_devices"]
    assert page.layout_error is not None and "num_free_devices" in page.layout_error
    assert [key for key, _ in quarantined("stock_renamed_everywhere")] == [
        "india-noida-01/L4/vm",
        "india-noida-01/A100-80GB/vm",
    ]


def test_free_count_renamed_in_one_row_costs_that_row() -> None:
    offers = offers_of("stock_renamed_in_one")
    assert sorted(offers) == ["europe-01/H200/any", "india-noida-01/L4/vm"]
    assert offers["europe-01/H200/any"].status is StockStatus.SOLD_OUT
    assert quarantined("stock_renamed_in_one") == [
        ("india-noida-01/A100-80GB/vm", "missing_field: key gone: num_free_devices")
    ]


def test_one_bad_cell_costs_only_its_row() -> None:
    # The availability rules word their refusal themselves: only the code is checked there.
    lines = [
        (key, "invalid_value: free count" if "free count" in reason else reason)
        for key, reason in quarantined("bad_cells")
    ]
    assert lines == [
        ("india-noida-01/L4/vm", "price_unparsed: price_per_hour is negative: '-0.44'"),
        ("india-noida-01/L4/container", "price_unparsed: price_per_hour is not a number: {}"),
        ("india-noida-01/A100-80GB/vm", "invalid_value: free count"),
        ("india-01/A6000/container", "invalid_value: vram is not a number: {}"),
        ("europe-01/H200/any", "missing_field: num_free_devices is null"),
        ("india-01/A100/container", "price_unparsed: spot_price is not a number: '1..5'"),
    ]
    offers = offers_of("bad_cells")
    # A bad spot price or spot count is set aside: the on-demand offer stands, without a plan.
    assert offers["india-01/A100/container"].status is StockStatus.IN_STOCK
    assert offers["india-01/A100/container"].plans == ()


def test_no_row_at_all_is_a_layout_error_not_an_empty_market() -> None:
    case = next(c for c in cases("jarvislabs") if c.name == "empty_server_meta")
    page = parse(case)
    assert page.records == [] and page.layout_error is not None


@pytest.mark.parametrize("free", [3, 0, None, -1, "some"])
def test_the_stock_answer_never_changes_an_offers_key(free: object) -> None:
    # In stock, sold out or unknown: the same (region, type, workload) key, and a count set
    # aside beside the offer carries that key too.
    row = {
        "gpu_type": "L4",
        "region": "india-noida-01",
        "workload_type": "vm",
        "vram": "24",
        "price_per_hour": Decimal("0.44"),
        "num_free_devices": free,
    }
    page = parse_server_meta({"server_meta": [row]}, CTX)
    assert [o.offer_key for o in page.offers] == ["india-noida-01/L4/vm"]
    assert {r.offer_key for r in page.records} == {"india-noida-01/L4/vm"}


def test_the_fewer_of_the_free_and_the_effective_free_count_is_read() -> None:
    """gpuhunt reads effective_num_free_devices as the cards one can order: where it is
    fewer than num_free_devices, the larger is never taken as stock."""
    row = {
        "gpu_type": "L4", "region": "india-noida-01", "workload_type": "container",
        "vram": "24", "price_per_hour": "0.44", "num_free_devices": 3,
        "effective_num_free_devices": 1,
    }  # fmt: skip
    (offer,) = [
        r
        for r in parse_server_meta({"server_meta": [row]}, CTX).records
        if isinstance(r, OfferRecord)
    ]
    assert (offer.status, offer.available_count) == (StockStatus.IN_STOCK, 1)
    row["effective_num_free_devices"] = 5
    (offer,) = [
        r
        for r in parse_server_meta({"server_meta": [row]}, CTX).records
        if isinstance(r, OfferRecord)
    ]
    assert offer.available_count == 3
