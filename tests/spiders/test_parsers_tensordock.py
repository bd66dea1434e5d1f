"""TensorDock parser: the recorded host nodes, one node's specs (public shape), broken inputs."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from parser_registry import parse
from spider_fixture_cases import OBSERVED_AT, RUN_ID, cases

from gpurent_core.model import (
    FeeBasis,
    FeeType,
    OfferRecord,
    PriceBasis,
    QuarantineRecord,
    StockStatus,
)
from spiders.parsers.common import ParseContext, load_json
from spiders.providers.tensordock.parser import (
    GPU_CONTRACT,
    MIN_RAM_GB,
    MIN_VCPUS,
    hostnode_records,
    parse_hostnodes,
)

CTX = ParseContext("tensordock", RUN_ID, OBSERVED_AT)
# One host node's `specs` in the shape gpuhunt's TensorDock test fixture shows (our values),
# with the storage price written as a JSON exponent.
SPECS_JSON = b"""{
  "cpu": {"amount": 96, "price": 0.0025, "type": "AMD EPYC 7513"},
  "gpu": {
    "rtxa6000-pcie-48gb": {
      "amount": 3, "gtx": false, "pcie": true, "price": 0.47, "rtx": true, "vram": 48
    }
  },
  "ram": {"amount": 480, "price": 0.0015},
  "storage": {"amount": 6200, "price": 4e-05}
}"""


def offers(name: str) -> dict[str, OfferRecord]:
    case = next(c for c in cases("tensordock") if c.name == name)
    return {r.offer_key: r for r in parse(case).records if isinstance(r, OfferRecord)}


def test_one_node_specs_give_one_card_offer_with_component_fees() -> None:
    node = {"location": {"country": "Canada"}, "specs": load_json(SPECS_JSON)}
    [record] = hostnode_records("node-a", node, CTX)
    assert isinstance(record, OfferRecord)
    assert record.offer_key == "node-a/rtxa6000-pcie-48gb"
    assert (record.gpu_model, record.gpu_vram_gb, record.gpu_form_factor) == (
        "RTX A6000",
        48,
        "PCIe",
    )
    assert (record.price, record.price_basis, record.gpu_count) == (
        Decimal("0.47"),
        PriceBasis.GPU,
        1,
    )
    assert (record.status, record.available_count) == (StockStatus.IN_STOCK, 3)
    fees = {f.fee_type: f for f in record.fees}
    assert fees[FeeType.VCPU].amount == Decimal("0.0025")
    assert fees[FeeType.MEMORY].amount == Decimal("0.0015")
    assert fees[FeeType.DATA_DISK].amount == Decimal("0.00004")  # 4e-05 in the JSON
    assert fees[FeeType.DATA_DISK].basis is FeeBasis.GB and fees[FeeType.DATA_DISK].quantity is None
    # Exact decimals all the way to the feed line.
    assert json.loads(json.dumps(record.model_dump(mode="json")))["fees"][2]["amount"] == "0.00004"


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


def recorded_nodes() -> dict[str, Any]:
    case = next(c for c in cases("tensordock") if c.name == "recorded_hostnodes")
    nodes: dict[str, Any] = load_json(case.input_bytes())["hostnodes"]
    return nodes


def test_a_node_that_cannot_be_read_leaves_its_offers_unread_by_prefix() -> None:
    """A node makes one offer per card, and its one quarantine line carries the node's id,
    which is no offer's key: the page declares `<node>/` unread, so those offers stay."""
    nodes = recorded_nodes()
    node_id = "7b2e4a91-5c3d-4f60-8e12-a9f4d0c6b233"
    del nodes[node_id]["specs"]["cpu"]["amount"]  # drift in the node's own specs
    page = parse_hostnodes({"hostnodes": nodes}, CTX)
    [line] = [r for r in page.records if isinstance(r, QuarantineRecord)]
    assert line.offer_key == node_id and line.reason.startswith("missing_field: key gone: ")
    assert page.unread_prefixes == [f"{node_id}/"]
    assert not any(o.offer_key.startswith(f"{node_id}/") for o in page.offers)
    # One card's drift is that card's line, under its own key: nothing else unread.
    nodes = recorded_nodes()
    del nodes[node_id]["specs"]["gpu"]["h100-sxm5-80gb"]["amount"]
    page = parse_hostnodes({"hostnodes": nodes}, CTX)
    assert page.unread_prefixes == []
    lines = [r.offer_key for r in page.records if isinstance(r, QuarantineRecord)]
    assert lines == [f"{node_id}/h100-sxm5-80gb"]


def test_vram_is_a_hint_the_slug_can_stand_in_for() -> None:
    """The slug names the card's memory ("h100-sxm5-80gb"): an entry without `vram` is read
    from it, no drift; a slug that leaves the size open keeps VRAM unknown, never guessed."""
    assert "vram" not in GPU_CONTRACT.paths
    nodes = recorded_nodes()
    node_id = "7b2e4a91-5c3d-4f60-8e12-a9f4d0c6b233"
    gpus = nodes[node_id]["specs"]["gpu"]
    del gpus["h100-sxm5-80gb"]["vram"]
    gpus["a100-pcie"] = dict(gpus["h100-sxm5-80gb"])
    page = parse_hostnodes({"hostnodes": nodes}, CTX)
    assert page.layout_error is None and page.missing_fields == []
    offers = {o.offer_key: o for o in page.offers}
    recorded = offers_of_recorded()
    key = f"{node_id}/h100-sxm5-80gb"
    assert offers[key] == recorded[key]
    a100 = offers[f"{node_id}/a100-pcie"]
    assert (a100.gpu_model, a100.gpu_vram_gb) == ("A100", None)


def offers_of_recorded() -> dict[str, OfferRecord]:
    return offers("recorded_hostnodes")


def test_offer_key_does_not_follow_the_free_count() -> None:
    """Rule of truth 11: free cards, none free, no room for a VM, or a count that cannot be
    read: one card of one node is one key."""
    nodes = recorded_nodes()
    node_id = "7b2e4a91-5c3d-4f60-8e12-a9f4d0c6b233"
    seen = {}
    for amount, cpus in ((8, 16), (0, 16), (3, 0), (None, 16)):
        node = json.loads(json.dumps(nodes[node_id], default=str))
        node["specs"]["gpu"]["h100-sxm5-80gb"]["amount"] = amount
        node["specs"]["cpu"]["amount"] = cpus
        records = hostnode_records(node_id, node, CTX)
        [offer] = [r for r in records if isinstance(r, OfferRecord) and "h100" in r.offer_key]
        seen[(amount, cpus)] = (offer.offer_key, offer.status)
    assert {key for key, _ in seen.values()} == {f"{node_id}/h100-sxm5-80gb"}
    assert [status for _, status in seen.values()] == [
        StockStatus.IN_STOCK,
        StockStatus.SOLD_OUT,
        StockStatus.SOLD_OUT,
        StockStatus.UNKNOWN,
    ]
