"""CloudRift parser: the recorded instance types (US cents per variant-hour, one offer per
variant and data centre), what the free-node counts say, variants hosted nowhere, drift in
either per-data-centre map, unreadable items and cells."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from parser_registry import parse
from spider_fixture_cases import OBSERVED_AT, RUN_ID, Case, cases

from gpurent_core.model import OfferRecord, QuarantineRecord, SkipRecord, StockStatus
from spiders.parsers.common import PageResult, ParseContext, load_json
from spiders.providers.cloudrift.parser import parse_instance_types

CTX = ParseContext("cloudrift", RUN_ID, OBSERVED_AT)
RTX4090 = "rtx49-8c-nr/rtx49-8c-nr"
RTX5090 = "rtx59-16c-tx/rtx59-16c-tx"
PRO6000 = "rtxpro6000-12c-ny/rtxpro6000-12c-ny"
V100 = "v100-6c-tx/v100-6c-tx"
US_EAST, EU, TX, NY, TW = (
    "us-east-nc-nr-1",
    "eu-central-it-gv-1",
    "ustx1a_a01",
    "usny01_a01",
    "ap-east-tw-kn-2",
)


def case_named(name: str) -> Case:
    return next(c for c in cases("cloudrift") if c.name == name)


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


def recorded() -> dict[str, Any]:
    doc: dict[str, Any] = load_json(case_named("recorded_instance_types").input_bytes())
    return doc


def parsed(doc: Any) -> PageResult:
    return parse_instance_types(load_json(json.dumps(doc, default=str)), CTX)


def test_one_offer_per_variant_and_data_centre_priced_in_cents_per_variant_hour() -> None:
    page = parse(case_named("recorded_instance_types"))
    offers = offers_of(page)
    assert len(offers) == 16 and reasons_of(page) == {}
    assert {k for k in offers if k.startswith(f"{RTX4090}.")} == {
        f"{RTX4090}.1/{US_EAST}", f"{RTX4090}.1/{EU}", f"{RTX4090}.2/{US_EAST}", f"{RTX4090}.2/{EU}",
    }  # fmt: skip
    one = offers[f"{RTX4090}.1/{US_EAST}"]
    assert (one.price, one.currency, one.billing_unit.value, one.price_basis.value) == (
        Decimal("0.39"),
        "USD",
        "hour",
        "instance",
    )
    assert (one.gpu_model, one.gpu_vram_gb, one.gpu_count, one.region) == (
        "RTX 4090",
        24,
        1,
        US_EAST,
    )
    # The host in bytes, per card: 16 logical CPUs, 64 GiB RAM, 500 GiB disk.
    assert (one.vcpus_per_gpu, one.ram_gb_per_gpu, one.disk_gb_per_gpu) == (16, 64, 500)
    # A fraction of a cent is a price (139.36 cents), and the whole variant pays 8 cards.
    single, eight = offers[f"{PRO6000}.1/{NY}"], offers[f"{PRO6000}.8/{TW}"]
    assert (single.price, eight.price, eight.gpu_count) == (
        Decimal("1.3936"),
        Decimal("11.1488"),
        8,
    )
    assert (eight.gpu_model, eight.gpu_vram_gb, eight.gpu_form_factor, eight.interconnect) == (
        "RTX PRO 6000",
        96,
        "PCIe",
        "pcie",
    )
    volta = offers[f"{V100}.4/{TX}"]
    assert (volta.gpu_model, volta.gpu_vram_gb, volta.gpu_form_factor, volta.interconnect) == (
        "V100",
        32,
        "SXM",
        "sxm",
    )
    assert volta.hosting is None  # CloudRift classes no hosting: unknown, never guessed


def test_free_nodes_say_in_stock_without_a_card_count_or_sold_out() -> None:
    page = parse(case_named("recorded_instance_types"))
    offers = offers_of(page)
    in_stock = {k for k, o in offers.items() if o.status is StockStatus.IN_STOCK}
    assert in_stock == {
        f"{RTX4090}.1/{US_EAST}", f"{RTX4090}.2/{US_EAST}", f"{RTX5090}.1/{TX}",
        f"{PRO6000}.1/{NY}", "l40s-8c-gv/l40s-8c-gv.1/eu-central-it-gv-1",
        f"{V100}.1/{TX}", f"{V100}.1/{NY}",
    }  # fmt: skip
    # Free nodes are machines, not cards: no card count is claimed.
    assert {offers[k].available_count for k in in_stock} == {None}
    assert {(o.status, o.available_count) for k, o in offers.items() if k not in in_stock} == {
        (StockStatus.SOLD_OUT, 0)
    }
    # A type hosted in no data centre offers nothing: skipped, counted, never sold out.
    assert skips_of(page) == {
        "a100-sxm4-14c-nr/a100-sxm4-14c-nr.1": "not_offered",
        "a100-sxm4-14c-nr/a100-sxm4-14c-nr.8": "not_offered",
    }
    assert page.sold_out_unlisted == [] and page.unread_prefixes == []


def test_the_same_offer_in_stock_and_sold_out_keeps_its_key() -> None:
    doc = recorded()
    for item in doc["data"]["instance_types"]:
        for variant in item["variants"]:
            free = variant["available_nodes_per_dc"]
            variant["available_nodes_per_dc"] = {dc: 0 if n else 4 for dc, n in free.items()}
    before, after = offers_of(parse(case_named("recorded_instance_types"))), offers_of(parsed(doc))
    assert set(after) == set(before)
    assert all(after[k].status != before[k].status for k in before)


def test_a_data_centre_no_longer_listed_is_gone_not_sold_out() -> None:
    doc = recorded()
    variant = doc["data"]["instance_types"][0]["variants"][0]
    del variant["nodes_per_dc"][EU], variant["available_nodes_per_dc"][EU]
    page = parsed(doc)
    assert f"{RTX4090}.1/{EU}" not in offers_of(page) and reasons_of(page) == {}
    assert page.layout_error is None and page.unread_prefixes == []


def test_stock_renamed_everywhere_is_a_layout_change_never_sold_out() -> None:
    page = parse(case_named("drift_stock_renamed_everywhere"))
    assert offers_of(page) == {}
    assert page.layout_error == (
        "no instance variant carries available_nodes_per_dc (stock): field renamed or removed"
    )
    variants = [
        f"{RTX4090}.1",
        f"{RTX4090}.2",
        f"{RTX5090}.1",
        f"{RTX5090}.2",
        f"{V100}.1",
        f"{V100}.4",
    ]
    assert reasons_of(page) == {
        v: ["missing_field: key gone: available_nodes_per_dc"] for v in variants
    }
    assert page.unread_prefixes == [f"{v}/" for v in variants]


def test_stock_renamed_in_one_variant_costs_that_variant_only() -> None:
    page = parse(case_named("drift_stock_renamed_in_one"))
    assert page.layout_error is None and page.missing_fields == ["available_nodes_per_dc"]
    assert reasons_of(page) == {f"{RTX4090}.2": ["missing_field: key gone: available_nodes_per_dc"]}
    assert page.unread_prefixes == [f"{RTX4090}.2/"]
    assert not [k for k in offers_of(page) if k.startswith(f"{RTX4090}.2/")]
    assert len(offers_of(page)) == 8


def test_maps_that_disagree_on_a_data_centre_leave_that_offer_unread() -> None:
    page = parse(case_named("drift_maps_disagree"))
    assert reasons_of(page) == {
        f"{RTX4090}.1/{EU}": ["missing_field: available_nodes_per_dc has no entry for " + EU],
        f"{RTX5090}.1/{NY}": [
            f"invalid_value: {NY} has a free-node count but nodes_per_dc does not list it"
        ],
    }
    offers = offers_of(page)
    assert f"{RTX4090}.1/{EU}" not in offers and f"{RTX5090}.1/{NY}" not in offers
    # The same variant's other data centre is read as before.
    assert offers[f"{RTX4090}.1/{US_EAST}"].status is StockStatus.IN_STOCK


def test_unreadable_counts_are_unknown_stock_with_a_reason_and_bad_cells_cost_their_variant() -> (
    None
):
    page = parse(case_named("bad_cells"))
    offers = offers_of(page)
    unknown = {k for k, o in offers.items() if o.status is StockStatus.UNKNOWN}
    assert unknown == {
        f"{RTX4090}.2/{US_EAST}",
        f"{RTX5090}.1/{TX}",
        f"{V100}.1/{TX}",
        f"{V100}.1/{NY}",
    }
    reasons = reasons_of(page)
    assert all(len(reasons[k]) == 1 for k in unknown), "each unknown stock says why"
    assert offers[f"{RTX4090}.2/{EU}"].status is StockStatus.SOLD_OUT  # its own count still reads
    assert page.unread_prefixes == [f"{RTX4090}.1/", f"{RTX5090}.2/", f"{V100}.4/"]
    assert reasons[f"{RTX4090}.1"] == ["price_unparsed: cost_per_hour is not a number: '0.39 USD'"]
    assert reasons[f"{V100}.4"] == ["invalid_value: no card count: 300"]


def test_items_that_are_no_offer_are_skipped_and_unreadable_ones_quarantined() -> None:
    page = parse(case_named("bad_items"))
    assert skips_of(page) == {
        "mix-8c-gv/mix-8c-gv.0": "not_a_gpu_offer",
        "mix-8c-gv/mix-8c-gv.4": "no_public_price",
        "mix-8c-gv/mix-8c-gv.8": "no_public_price",
        "mix-8c-gv/mix-8c-gv.16": "not_offered",
        "b200-30c-ny": "not_offered",
    }
    reasons = reasons_of(page)
    assert reasons["mi350x-16c-tw/mi350x-16c-tw.1"][0].startswith("gpu_unresolved: 'MI350X'")
    assert reasons["h100-24c-ny"] == ["invalid_value: variants is not a list"]
    # A type without a name: one unkeyed line per offer it lists.
    assert len([r for r in reasons[None] if r.startswith("missing_field: name is missing")]) == 3
    # Listed twice: the first stands (its price, not the copy's).
    assert offers_of(page)[f"{RTX4090}.1/{US_EAST}"].price == Decimal("0.39")
    assert offers_of(page)["mix-8c-gv/mix-8c-gv.1/eu-central-it-gv-1"].price == Decimal("1.39")
    assert page.notes == [
        "rtx49-8c-nr: listed twice, first kept",
        "mix-8c-gv/mix-8c-gv.1: listed twice, first kept",
    ]
    assert page.unread_prefixes == ["mix-8c-gv/", "mi350x-16c-tw/mi350x-16c-tw.1/", "h100-24c-ny/"]


def test_a_bare_string_answer_is_an_api_error_and_a_wrong_envelope_a_layout_error() -> None:
    assert parse(case_named("api_error")).api_error == "Internal server error: database unavailable"
    for name, error in (
        ("layout_no_data", "no 'data' object in the answer (got ['instance_types'])"),
        ("layout_no_list", "no 'instance_types' list in the answer (got ['types'])"),
        ("layout_empty_list", "'instance_types' is empty"),
    ):
        page = parse(case_named(name))
        assert (page.layout_error, page.records, page.api_error) == (error, [], None), name


def test_the_vram_hint_and_the_host_figures_are_read_per_card_and_never_guessed() -> None:
    offers = offers_of(parse(case_named("stock_and_edges")))
    assert offers[f"{RTX4090}.2/{US_EAST}"].gpu_vram_gb == 48  # a 48 GB board, told apart
    assert offers[f"{V100}.1/{TX}"].gpu_vram_gb == 16
    assert offers[f"{V100}.1/{TX}"].vcpus_per_gpu is None  # logical_cpu_count unsaid
    assert offers[f"{V100}.4/{TX}"].disk_gb_per_gpu is None  # disk null
    assert offers[f"{RTX5090}.1/{TX}"].price == Decimal("0.645")  # 64.5 cents
