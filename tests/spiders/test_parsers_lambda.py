"""Lambda parser: the recorded instance types, the refused-key envelope, broken inputs."""

from __future__ import annotations

from decimal import Decimal

from parser_registry import parse
from spider_fixture_cases import cases

from gpurent_core.model import OfferRecord, QuarantineRecord, StockStatus


def offers_of(case_name: str) -> dict[str, OfferRecord]:
    case = next(c for c in cases("lambda") if c.name == case_name)
    return {r.offer_key: r for r in parse(case).records if isinstance(r, OfferRecord)}


def test_one_offer_per_region_with_capacity_and_one_sold_out_offer_without() -> None:
    offers = offers_of("recorded_instance_types")
    a10 = [k for k in offers if k.startswith("gpu_1x_a10/")]
    assert a10 == ["gpu_1x_a10/us-east-1", "gpu_1x_a10/us-west-1", "gpu_1x_a10/europe-central-1"]
    assert all(offers[k].status is StockStatus.IN_STOCK for k in a10)
    sold = offers["gpu_8x_h100_sxm5"]
    assert (sold.status, sold.region) == (StockStatus.SOLD_OUT, None)
    assert not sold.available_count  # Lambda gives no counts (sold out may say 0 free)


def test_price_is_cents_per_instance_hour() -> None:
    offers = offers_of("recorded_instance_types")
    h100 = offers["gpu_8x_h100_sxm5"]
    assert (h100.price, h100.price_basis.value, h100.gpu_count) == (Decimal("31.92"), "instance", 8)
    assert (h100.gpu_model, h100.gpu_vram_gb, h100.gpu_form_factor) == ("H100", 80, "SXM")
    assert offers["gpu_1x_a10/us-east-1"].price == Decimal("1.29")
    # "RTX 6000 (24 GB)" is the Turing Quadro card, not the RTX 6000 Ada.
    assert offers["gpu_1x_rtx6000"].gpu_model == "Quadro RTX 6000"


def test_cpu_only_type_is_quarantined_not_dropped() -> None:
    case = next(c for c in cases("lambda") if c.name == "recorded_instance_types")
    quarantined = [r for r in parse(case).records if not isinstance(r, OfferRecord)]
    assert [(q.offer_key, q.reason) for q in quarantined] == [
        ("cpu_4x_general", "not_an_offer: CPU-only instance type (no GPU)")
    ]


def quarantine_of(case_name: str) -> dict[str | None, QuarantineRecord]:
    case = next(c for c in cases("lambda") if c.name == case_name)
    return {r.offer_key: r for r in parse(case).records if isinstance(r, QuarantineRecord)}


def test_capacity_list_gone_is_drift_null_is_unknown() -> None:
    # Key gone from one entry: that entry alone is quarantined, never read as sold out.
    gone = quarantine_of("bad_fields")["gpu_1x_h100_pcie"]
    assert gone.reason == "missing_field: key gone: regions_with_capacity_available"
    assert "gpu_1x_h100_pcie" not in offers_of("bad_fields")
    # specs.gpus missing: the count written in the description stands in for it.
    assert offers_of("bad_fields")["gpu_8x_v100"].gpu_count == 8
    # Present but null: nothing can be read from it, so unknown.
    assert offers_of("bad_cells")["gpu_1x_gh200"].status is StockStatus.UNKNOWN


def test_capacity_list_renamed_everywhere_is_a_layout_error() -> None:
    case = next(c for c in cases("lambda") if c.name == "stock_renamed_everywhere")
    page = parse(case)
    assert page.offers == [] and len(page.records) == 2
    assert page.layout_error is not None
    assert "regions_with_capacity_available" in page.layout_error
    assert page.missing_fields == ["regions_with_capacity_available"]


def test_capacity_list_renamed_in_one_entry_costs_that_entry() -> None:
    offers = offers_of("stock_renamed_in_one")
    assert sorted(offers) == ["gpu_1x_a10/us-east-1", "gpu_1x_a100_sxm4"]
    assert offers["gpu_1x_a100_sxm4"].status is StockStatus.SOLD_OUT
    assert list(quarantine_of("stock_renamed_in_one")) == ["gpu_8x_h100_sxm5"]


def test_one_bad_cell_costs_only_its_entry() -> None:
    reasons = {k: q.reason for k, q in quarantine_of("bad_cells").items()}
    # 1e400 cents: refused by the minor-units reader, in its own words (only the code here).
    assert reasons.pop("gpu_1x_a10").startswith("price_unparsed: ")
    assert reasons == {
        "gpu_1x_a100_sxm4": "price_unparsed: price_cents_per_hour is not a number: {}",
        "gpu_2x_a6000": "invalid_value: negative card count: -1",
        "gpu_1x_h100_pcie": "invalid_value: not a list of regions",
        "gpu_1x_gh200": "missing_field: regions_with_capacity_available is null",
    }
    assert offers_of("bad_cells")["gpu_8x_h100_sxm5/us-west-1"].price == Decimal("31.92")


def test_refused_key_and_other_api_errors() -> None:
    refused = parse(next(c for c in cases("lambda") if c.name == "recorded_invalid_api_key"))
    assert refused.auth_rejected and refused.records == []
    failed = parse(next(c for c in cases("lambda") if c.name == "api_error"))
    assert not failed.auth_rejected and failed.api_error is not None
    assert failed.layout_error is None
