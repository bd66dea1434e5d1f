"""Lambda parser: the recorded instance types, the refused-key envelope, broken inputs."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from parser_registry import ctx, parse
from spider_fixture_cases import cases

from gpurent_core.model import OfferRecord, QuarantineRecord, SkipKind, SkipRecord, StockStatus
from spiders.providers.lambdalabs.parser import InstanceTypesPage, parse_instance_types


def offers_of(case_name: str) -> dict[str, OfferRecord]:
    case = next(c for c in cases("lambda") if c.name == case_name)
    return {r.offer_key: r for r in parse(case).records if isinstance(r, OfferRecord)}


def page_of(case_name: str) -> InstanceTypesPage:
    page: InstanceTypesPage = parse(next(c for c in cases("lambda") if c.name == case_name))
    return page


def quarantine_of(case_name: str) -> dict[str | None, QuarantineRecord]:
    case = next(c for c in cases("lambda") if c.name == case_name)
    return {r.offer_key: r for r in parse(case).records if isinstance(r, QuarantineRecord)}


def _types_answer(regions: object, gpu_description: str = "H100 (80 GB SXM5)") -> dict[str, Any]:
    entry = {
        "instance_type": {
            "name": "gpu_1x_h100_sxm5",
            "description": "1x H100 (80 GB SXM5)",
            "gpu_description": gpu_description,
            "price_cents_per_hour": 429,
            "specs": {"vcpus": 26, "memory_gib": 225, "storage_gib": 2750, "gpus": 1},
        },
        "regions_with_capacity_available": regions,
    }
    return {"data": {"gpu_1x_h100_sxm5": entry}}


def test_one_offer_per_region_with_capacity_and_none_for_a_type_sold_out_everywhere() -> None:
    offers = offers_of("recorded_instance_types")
    a10 = [k for k in offers if k.startswith("gpu_1x_a10/")]
    assert a10 == ["gpu_1x_a10/us-east-1", "gpu_1x_a10/us-west-1", "gpu_1x_a10/europe-central-1"]
    assert all(offers[k].status is StockStatus.IN_STOCK for k in a10)
    assert all(offers[k].region == k.split("/", 1)[1] for k in offers)
    # Empty capacity list: no offer, no regionless key; the type's prefix says sold out.
    assert not any(k.startswith("gpu_8x_h100_sxm5") for k in offers)
    assert "gpu_8x_h100_sxm5/" in page_of("recorded_instance_types").sold_out_unlisted


def test_every_type_read_lists_only_regions_with_capacity() -> None:
    page = page_of("recorded_instance_types")
    types = {o.offer_key.split("/", 1)[0] + "/" for o in page.offers}
    assert types <= set(page.sold_out_unlisted)
    assert page.unread_prefixes == []


def _scope(regions: object) -> tuple[set[str], list[str], list[str]]:
    page = parse_instance_types(_types_answer(regions), ctx("lambda"))
    return {o.offer_key for o in page.offers}, page.sold_out_unlisted, page.unread_prefixes


def test_the_stock_answer_never_changes_an_offers_key() -> None:
    east = [{"name": "us-east-3", "description": "Washington DC, USA"}]
    in_stock, listed, unread = _scope(east)
    assert (in_stock, listed, unread) == ({"gpu_1x_h100_sxm5/us-east-3"}, ["gpu_1x_h100_sxm5/"], [])
    # Sold out: no offer under another key; the same key falls under the sold-out prefix.
    sold_keys, sold_prefixes, _ = _scope([])
    assert sold_keys == set()
    assert all(any(k.startswith(p) for p in sold_prefixes) for k in in_stock)
    # Unknown (null list): no offer under another key either; the same key is unread.
    unknown_keys, unknown_sold, unknown_unread = _scope(None)
    assert (unknown_keys, unknown_sold) == (set(), [])
    assert all(any(k.startswith(p) for p in unknown_unread) for k in in_stock)


def test_price_is_cents_per_instance_hour() -> None:
    offers = offers_of("recorded_instance_types")
    b200 = offers["gpu_8x_b200_sxm6/us-south-1"]
    assert (b200.price, b200.price_basis.value, b200.gpu_count) == (Decimal("53.52"), "instance", 8)
    assert (b200.gpu_model, b200.gpu_vram_gb, b200.gpu_form_factor) == ("B200", 180, "SXM")
    assert offers["gpu_1x_a10/us-east-1"].price == Decimal("1.29")
    # "RTX 6000 (24 GB)" is the Turing Quadro card, not the RTX 6000 Ada.
    answer = _types_answer([{"name": "us-west-1"}], gpu_description="RTX 6000 (24 GB)")
    [quadro] = parse_instance_types(answer, ctx("lambda")).offers
    assert quadro.gpu_model == "Quadro RTX 6000"


def test_cpu_only_type_is_skipped_not_quarantined() -> None:
    records = parse(next(c for c in cases("lambda") if c.name == "recorded_instance_types")).records
    assert not [r for r in records if isinstance(r, QuarantineRecord)]
    [skip] = [r for r in records if isinstance(r, SkipRecord)]
    assert (skip.offer_key, skip.skip_kind) == ("cpu_4x_general", SkipKind.NOT_A_GPU_OFFER)


def test_capacity_list_gone_is_drift_null_is_unread() -> None:
    # Key gone from one entry: that entry alone is quarantined, never read as sold out.
    gone = quarantine_of("bad_fields")["gpu_1x_h100_pcie"]
    assert gone.reason == "missing_field: key gone: regions_with_capacity_available"
    assert not any(k.startswith("gpu_1x_h100_pcie") for k in offers_of("bad_fields"))
    assert "gpu_1x_h100_pcie/" in page_of("bad_fields").unread_prefixes
    assert "gpu_1x_h100_pcie/" not in page_of("bad_fields").sold_out_unlisted
    # specs.gpus missing: the count written in the description stands in for it (an empty
    # capacity list: the type is read, sold out everywhere).
    assert "gpu_8x_v100/" in page_of("bad_fields").sold_out_unlisted
    # Present but null: nothing can be read about any region, so the regions are unread
    # (kept stale), never sold out and never a regionless unknown offer.
    page = page_of("bad_cells")
    assert "gpu_1x_gh200/" in page.unread_prefixes
    assert "gpu_1x_gh200/" not in page.sold_out_unlisted
    assert not any(k.startswith("gpu_1x_gh200") for k in offers_of("bad_cells"))


def test_capacity_list_renamed_everywhere_is_a_layout_error() -> None:
    case = next(c for c in cases("lambda") if c.name == "stock_renamed_everywhere")
    page = parse(case)
    assert page.offers == [] and len(page.records) == 2
    assert page.layout_error is not None
    assert "regions_with_capacity_available" in page.layout_error
    assert page.missing_fields == ["regions_with_capacity_available"]


def test_capacity_list_renamed_in_one_entry_costs_that_entry() -> None:
    offers = offers_of("stock_renamed_in_one")
    assert sorted(offers) == ["gpu_1x_a10/us-east-1"]
    page = page_of("stock_renamed_in_one")
    assert page.sold_out_unlisted == ["gpu_1x_a10/", "gpu_1x_a100_sxm4/"]
    assert list(quarantine_of("stock_renamed_in_one")) == ["gpu_8x_h100_sxm5"]
    assert page.unread_prefixes == ["gpu_8x_h100_sxm5/"]


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
    # Each quarantined type keeps its regions' offers (stale), and only those.
    assert sorted(page_of("bad_cells").unread_prefixes) == sorted(
        f"{key}/" for key in quarantine_of("bad_cells")
    )


def test_refused_key_and_other_api_errors() -> None:
    refused = parse(next(c for c in cases("lambda") if c.name == "recorded_invalid_api_key"))
    assert refused.auth_rejected and refused.records == []
    failed = parse(next(c for c in cases("lambda") if c.name == "api_error"))
    assert not failed.auth_rejected and failed.api_error is not None
    assert failed.layout_error is None
