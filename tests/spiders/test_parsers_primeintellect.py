"""Prime Intellect parser: the recorded availability (an hourly price for the whole
configuration, the schema's stock words, secure and community clouds, spot and prepaid offers,
disk fees), an empty answer that is unread rather than an empty market, drift and broken
offers."""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

import pytest
from parser_registry import parse
from spider_fixture_cases import OBSERVED_AT, RUN_ID, Case, cases

from gpurent_core.model import OfferRecord, QuarantineRecord, SkipKind, StockStatus
from spiders.parsers.common import ParseContext, load_json
from spiders.providers.primeintellect.parser import (
    EMPTY_ANSWER,
    AvailabilityPage,
    parse_gpu_availability,
)

CTX = ParseContext("primeintellect", RUN_ID, OBSERVED_AT)
H100_SXM = "datacrunch/FIN-02/1H100.80S.32V/1/secure_cloud"
H100_BOX = "runpod/US-TX-4/NVIDIA H100 80GB HBM3/8/secure_cloud"
H100_PCIE = "runpod/EU-SE-2/NVIDIA H100 PCIe/1/secure_cloud"
H100_PCIE_COMMUNITY = "runpod/EU-SE-2/NVIDIA H100 PCIe/1/community_cloud"
A100_BOX = "lambdalabs/us-south-2/gpu_8x_a100_80gb_sxm4/8/secure_cloud"
A100_PCIE = "massedcompute/US-MO-2/A100-80GB-PCIe-1x/1/secure_cloud"
B200_PREPAID = "dc_roan/us-central-5/b200-8x-72h/8/secure_cloud"
A6000_PAIR = "tensordock/us-dallas-2/rtxa6000-pcie-48gb-x2/2/community_cloud"
RTX_PRO = "dc_eland/us-east-7/rtx-pro-6000-blackwell-1x/1/secure_cloud"
RTX_3090_SPOT = "runpod/CA-MTL-2/NVIDIA GeForce RTX 3090/1/community_cloud/spot"
CPU_NODE = "primecompute/us-west-4/cpu-32c-128g/0/secure_cloud"


def case_named(name: str) -> Case:
    return next(c for c in cases("primeintellect") if c.name == name)


def offers_of(page: AvailabilityPage) -> dict[str, OfferRecord]:
    return {r.offer_key: r for r in page.records if isinstance(r, OfferRecord)}


def reasons_of(page: AvailabilityPage) -> dict[str | None, list[str]]:
    reasons: dict[str | None, list[str]] = {}
    for r in page.records:
        if isinstance(r, QuarantineRecord):
            reasons.setdefault(r.offer_key, []).append(r.reason)
    return reasons


def recorded() -> dict[str, Any]:
    data: dict[str, Any] = load_json(case_named("recorded_availability").input_bytes())
    return data


def test_the_price_is_the_whole_configurations_hour_with_its_host() -> None:
    offers = offers_of(parse(case_named("recorded_availability")))
    box = offers[H100_BOX]
    assert (box.price, box.currency, box.billing_unit.value, box.price_basis.value) == (
        Decimal("21.84"),
        "USD",
        "hour",
        "instance",
    )
    assert (box.gpu_model, box.gpu_vram_gb, box.gpu_form_factor, box.gpu_count) == (
        "H100",
        80,
        "SXM",
        8,
    )
    assert (box.region, box.interconnect, box.hosting) == ("US-TX-4", "sxm", "secure")
    assert (box.vcpus_per_gpu, box.ram_gb_per_gpu, box.disk_gb_per_gpu) == (
        16,
        Decimal("187.5"),
        25,
    )
    # The socket is the card's form factor: the same GPU type on PCIe is another card.
    pcie = offers[H100_PCIE]
    assert (pcie.gpu_form_factor, pcie.interconnect) == ("PCIe", "pcie")
    # Prime Intellect's token for the RTX PRO 6000 Blackwell is read as that card.
    pro = offers[RTX_PRO]
    assert (pro.gpu_model, pro.gpu_vram_gb, pro.raw_gpu_name) == (
        "RTX PRO 6000",
        96,
        "RTX_PRO_6000B_96GB",
    )


def test_the_schema_stock_words_and_the_skipped_cpu_node() -> None:
    page = parse(case_named("recorded_availability"))
    offers = offers_of(page)
    assert len(offers) == 12 and reasons_of(page) == {}
    assert offers[H100_SXM].status is StockStatus.IN_STOCK  # High
    assert offers[H100_BOX].status is StockStatus.IN_STOCK  # Medium
    assert offers[H100_PCIE].status is StockStatus.LOW  # Low
    assert offers[H100_PCIE_COMMUNITY].status is StockStatus.IN_STOCK  # Available
    assert (offers[A100_BOX].status, offers[A100_BOX].available_count) == (
        StockStatus.SOLD_OUT,
        0,
    )  # Unavailable
    [skip] = page.skipped
    assert (skip.offer_key, skip.skip_kind) == (CPU_NODE, SkipKind.NOT_A_GPU_OFFER)


def test_each_cloud_its_price_and_hosting_spot_and_prepaid_kinds() -> None:
    offers = offers_of(parse(case_named("recorded_availability")))
    secure, community = offers[H100_PCIE], offers[H100_PCIE_COMMUNITY]
    assert (secure.price, secure.hosting) == (Decimal("2.45"), "secure")  # onDemand
    assert (community.price, community.hosting) == (Decimal("1.95"), "community")  # communityPrice
    assert offers[RTX_3090_SPOT].price_kind.value == "spot"
    assert offers[B200_PREPAID].price_kind.value == "commitment"  # prepaidTime 72
    assert offers[H100_SXM].price_kind.value == "on_demand"


def test_disk_fees_per_gb_hour_included_or_not() -> None:
    offers = offers_of(parse(case_named("recorded_availability")))
    [paid] = offers[H100_BOX].fees
    assert (paid.fee_type.value, paid.amount, paid.unit, paid.basis.value) == (
        "data_disk",
        Decimal("0.00012"),
        "hour",
        "gb",
    )
    assert (paid.mandatory, paid.included_quantity) == (True, None)
    [past] = offers[A100_PCIE].fees  # the default 200 GB come with the price
    assert (past.amount, past.mandatory, past.included_quantity) == (
        Decimal("0.00008"),
        False,
        Decimal(200),
    )
    assert offers[H100_SXM].fees == ()  # no pricePerUnit: no fee


@pytest.mark.parametrize("name", ["empty_answer", "empty_lists"])
def test_an_empty_answer_is_unread_never_an_empty_market(name: str) -> None:
    """The flaky replica's empty 200: a failed request (every offer kept, stale), not a
    listing read whole that lists nothing (every offer closed)."""
    page = parse(case_named(name))
    assert page.api_error == EMPTY_ANSWER
    assert page.records == [] and page.layout_error is None and page.listed == 0


def test_one_empty_type_beside_others_is_read_whole() -> None:
    data = recorded()
    data["RTX_PRO_6000B_96GB"] = []
    page = parse_gpu_availability(data, CTX)
    assert page.api_error is None and page.listed == 12
    assert RTX_PRO not in offers_of(page) and len(offers_of(page)) == 11


def test_error_bodies_and_layouts() -> None:
    assert parse(case_named("recorded_unauthorized")).api_error == (
        "detail: Invalid or missing API key"
    )
    assert parse(case_named("api_error")).api_error == (
        "errors: gpu_type: value is not a valid GPUType"
    )
    for name in ("layout_not_an_object", "layout_wrapped_in_data"):
        page = parse(case_named(name))
        assert page.layout_error is not None and page.records == [] and page.api_error is None


def test_stock_renamed_everywhere_is_a_layout_change_never_sold_out() -> None:
    page = parse(case_named("drift_stock_renamed_everywhere"))
    assert offers_of(page) == {} and page.skipped == []
    assert {r for rs in reasons_of(page).values() for r in rs} == {
        "missing_field: key gone: stockStatus"
    }
    assert page.layout_error == "no offer carries stockStatus (stock): field renamed or removed"


def test_stock_renamed_in_one_offer_costs_that_offer_only() -> None:
    before = offers_of(parse(case_named("recorded_availability")))
    page = parse(case_named("drift_stock_renamed_in_one"))
    after = offers_of(page)
    assert set(after) == {H100_SXM, H100_BOX, H100_PCIE_COMMUNITY, A100_BOX, A100_PCIE, A6000_PAIR}
    assert all(after[key] == before[key] for key in after)
    assert reasons_of(page) == {H100_PCIE: ["missing_field: key gone: stockStatus"]}
    assert page.layout_error is None and page.missing_fields == ["stockStatus"]


def test_renamed_prices_is_a_layout_error() -> None:
    page = parse(case_named("layout_renamed_prices"))
    assert offers_of(page) == {} and page.layout_error is not None
    assert "prices.onDemand|prices.communityPrice (price)" in page.layout_error


def test_one_bad_cell_costs_one_offer_or_one_side_field() -> None:
    page = parse(case_named("bad_cells"))
    offers, reasons = offers_of(page), reasons_of(page)
    assert H100_SXM not in offers and reasons[H100_SXM][0].startswith("price_unparsed")
    # A price of 0 is never ranked as free.
    assert H100_BOX not in offers and reasons[H100_BOX] == [
        "price_unparsed: prices.onDemand is 0: no price"
    ]
    # A word outside the schema's, or none, is unknown, set aside beside the offer.
    assert offers[H100_PCIE].status is StockStatus.UNKNOWN
    assert offers[A100_BOX].status is StockStatus.UNKNOWN
    assert reasons[A100_BOX] == [
        "invalid_value: stockStatus is not a word Prime Intellect uses: None"
    ]
    # A bad disk fee is set aside; the offer stands without it.
    assert offers[H100_PCIE_COMMUNITY].fees == ()
    assert reasons[H100_PCIE_COMMUNITY][0].startswith("price_unparsed: disk.pricePerUnit")
    assert A100_PCIE not in offers and reasons[A100_PCIE][0].startswith(
        "invalid_value: prices.currency"
    )
    assert [(s.offer_key, s.skip_kind) for s in page.skipped] == [
        (A6000_PAIR, SkipKind.NO_PUBLIC_PRICE)
    ]
    # Numeric text is a price.
    assert offers["nebius/eu-north2/gpu-b200-sxm-8gpu/8/secure_cloud"].price == Decimal("43.60")


def test_unreadable_offers_are_quarantined_under_a_key_when_they_have_one() -> None:
    page = parse(case_named("bad_items"))
    reasons = reasons_of(page)
    assert len(offers_of(page)) == 7 and page.layout_error is None
    assert reasons["runpod/US-GA-1/NVIDIA H100 80GB HBM3/8/secure_cloud"] == [
        "invalid_value: gpuCount is no whole number: '8'"
    ]
    assert reasons["primecompute/us-west-4/gh200-480gb-1x/1/secure_cloud"][0].startswith(
        "gpu_unresolved: "
    )
    assert reasons["runpod/CA-MTL-2/t4-sxm2-1x/1/community_cloud"][0].startswith("gpu_unresolved")
    # No cloud id, no object: nothing names the offer (it is closed, counted as unreadable).
    assert sorted(r.split(":")[0] for r in reasons[None]) == ["missing_field", "not_an_offer"]
    assert page.notes == ["keys holding no offer list, not read: totalCount"]


def test_offer_key_never_follows_the_stock() -> None:
    """Rule of truth 11: in stock, low, sold out or unreadable, one key."""
    item = recorded()["H100_80GB"][2]
    seen = set()
    for word in ("Available", "High", "Medium", "Low", "Unavailable", "Plenty", None):
        page = parse_gpu_availability({"H100_80GB": [{**item, "stockStatus": word}]}, CTX)
        [offer] = page.offers
        seen.add(offer.offer_key)
    assert seen == {H100_PCIE}


def test_cloud_and_spot_are_part_of_the_identity() -> None:
    item = recorded()["H100_80GB"][2]
    spot = copy.deepcopy(item) | {"isSpot": True}
    community = copy.deepcopy(item) | {"security": "community_cloud"}
    page = parse_gpu_availability({"H100_80GB": [item, spot, community]}, CTX)
    assert [o.offer_key for o in page.offers] == [
        H100_PCIE,
        f"{H100_PCIE}/spot",
        H100_PCIE_COMMUNITY,
    ]
