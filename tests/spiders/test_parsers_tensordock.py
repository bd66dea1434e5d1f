"""TensorDock parser: the recorded host nodes, the real gpuhunt specs fixture, broken inputs."""

from __future__ import annotations

import json
from decimal import Decimal

from parser_registry import parse
from spider_fixture_cases import OBSERVED_AT, RUN_ID, SHARED_SAMPLES, cases

from gpurent_core.model import (
    FeeBasis,
    FeeType,
    OfferRecord,
    PriceBasis,
    QuarantineRecord,
    StockStatus,
)
from spiders.parsers.common import ParseContext, load_json
from spiders.parsers.tensordock import MIN_RAM_GB, MIN_VCPUS, hostnode_records

CTX = ParseContext("tensordock", RUN_ID, OBSERVED_AT)
SHARED_SPECS = SHARED_SAMPLES / "tensordock" / "hostnode_specs.gpuhunt_fixture.json"


def offers(name: str) -> dict[str, OfferRecord]:
    case = next(c for c in cases("tensordock") if c.name == name)
    return {r.offer_key: r for r in parse(case).records if isinstance(r, OfferRecord)}


def test_the_real_specs_fixture_gives_one_l40_card_offer_with_component_fees() -> None:
    # The sample is one host node's `specs` object, read in place (never copied).
    specs = load_json(SHARED_SPECS.read_bytes())
    node = {"location": {"country": "United States"}, "specs": specs}
    [record] = hostnode_records("fixture-node", node, CTX)
    assert isinstance(record, OfferRecord)
    assert record.offer_key == "fixture-node/l40-pcie-48gb"
    assert (record.gpu_model, record.gpu_vram_gb, record.gpu_form_factor) == ("L40", 48, "PCIe")
    assert (record.price, record.price_basis, record.gpu_count) == (
        Decimal("1.05"),
        PriceBasis.GPU,
        1,
    )
    assert (record.status, record.available_count) == (StockStatus.IN_STOCK, 8)
    fees = {f.fee_type: f for f in record.fees}
    assert fees[FeeType.VCPU].amount == Decimal("0.003")
    assert fees[FeeType.MEMORY].amount == Decimal("0.002")
    assert fees[FeeType.DATA_DISK].amount == Decimal("0.00005")  # 5e-05 in the JSON
    assert fees[FeeType.DATA_DISK].basis is FeeBasis.GB and fees[FeeType.DATA_DISK].quantity is None
    # Exact decimals all the way to the feed line.
    assert json.loads(json.dumps(record.model_dump(mode="json")))["fees"][2]["amount"] == "0.00005"


def test_smallest_vm_fees_are_mandatory_fixed_quantities() -> None:
    h100 = offers("recorded_hostnodes")["7b2e4a91-5c3d-4f60-8e12-a9f4d0c6b233/h100-sxm5-80gb"]
    fees = {f.fee_type: f for f in h100.fees}
    assert fees[FeeType.VCPU].quantity == MIN_VCPUS and fees[FeeType.VCPU].mandatory
    assert fees[FeeType.MEMORY].quantity == MIN_RAM_GB and fees[FeeType.MEMORY].mandatory
    assert fees[FeeType.DATA_DISK].mandatory
    assert (h100.status, h100.available_count, h100.gpu_form_factor) == (
        StockStatus.IN_STOCK,
        8,
        "SXM",
    )
    assert h100.region == "Chicago, Illinois, United States"


def test_cards_on_a_node_without_room_for_a_vm_are_sold_out() -> None:
    recorded = offers("recorded_hostnodes")
    rtx3090 = recorded["e49a7c26-0f18-4d3b-a5e7-b2c96d1f4e05/geforcertx3090-pcie-24gb"]
    assert (rtx3090.status, rtx3090.available_count) == (StockStatus.SOLD_OUT, 0)  # cpu 0
    a6000 = recorded["3f1c0d2e-8a47-4b1e-9c55-6d0e2a9b7f10/rtxa6000-pcie-48gb"]
    assert a6000.status is StockStatus.SOLD_OUT  # amount 0
    # No amount key at all is drift: that card is quarantined, never read as sold out.
    bad = next(c for c in cases("tensordock") if c.name == "bad_specs")
    lines = {r.offer_key: r for r in parse(bad).records if isinstance(r, QuarantineRecord)}
    assert "node-a/l40-pcie-48gb" not in offers("bad_specs")
    assert lines["node-a/l40-pcie-48gb"].reason == "missing_field: key gone: amount"
