"""Cudo parser: the recorded machine types, component fees, broken inputs."""

from __future__ import annotations

from decimal import Decimal

import pytest
from parser_registry import parse
from spider_fixture_cases import OBSERVED_AT, RUN_ID, cases

from gpurent_core.model import FeeType, OfferRecord, StockStatus
from spiders.parsers.common import ParseContext
from spiders.providers.cudo.parser import parse_machine_types

CTX = ParseContext("cudo", RUN_ID, OBSERVED_AT)


def test_one_card_offer_with_the_smallest_vm_as_mandatory_fees() -> None:
    case = next(c for c in cases("cudo") if c.name == "recorded_machine_types")
    offers = {r.offer_key: r for r in parse(case).records if isinstance(r, OfferRecord)}
    a100 = offers["gb-bournemouth-1/epyc-milan-a100-pcie/nvidia-a100-80gb-pcie"]
    assert (a100.gpu_model, a100.gpu_vram_gb, a100.gpu_form_factor) == ("A100", 80, "PCIe")
    assert (a100.price, a100.price_basis.value, a100.gpu_count) == (Decimal("1.350000"), "gpu", 1)
    assert (a100.status, a100.available_count) == (StockStatus.IN_STOCK, 6)
    fees = {f.fee_type: f for f in a100.fees}
    # minVcpuPerGpu 2; maxVcpuPerMemoryGib 0.5 -> at least 2 / 0.5 = 4 GiB of RAM.
    assert fees[FeeType.VCPU].quantity == 2 and fees[FeeType.VCPU].mandatory
    assert fees[FeeType.MEMORY].quantity == 4 and fees[FeeType.MEMORY].mandatory
    assert fees[FeeType.DATA_DISK].mandatory
    assert not fees[FeeType.PUBLIC_IP].mandatory
    h100 = offers["se-smedjebacken-1/epyc-genoa-h100-sxm/nvidia-h100-sxm"]
    assert (h100.status, h100.available_count) == (StockStatus.SOLD_OUT, 0)


@pytest.mark.parametrize(
    ("vcpus", "vcpu_per_gib", "gib"),
    [(1, "1.036437", 1), (2, "0.5", 4), (3, "0.75", 4), (1, "0.25", 4)],
)
def test_minimum_memory_rounds_up_to_whole_gib(vcpus: int, vcpu_per_gib: str, gib: int) -> None:
    item = {
        "dataCenterId": "dc",
        "machineType": "mt",
        "gpuModel": "L40S",
        "gpuModelId": "nvidia-l40s",
        "minVcpuPerGpu": vcpus,
        "maxVcpuPerMemoryGib": Decimal(vcpu_per_gib),
        "gpuPriceHr": {"value": "1"},
        "vcpuPriceHr": {"value": "0.002"},
        "memoryGibPriceHr": {"value": "0.003"},
        "minStorageGibPriceHr": {"value": "0.0001"},
        "totalGpuFree": 1,
        "maxGpuFree": 1,
    }
    record = parse_machine_types({"machineTypes": [item]}, CTX).records[0]
    assert isinstance(record, OfferRecord)
    memory = next(f for f in record.fees if f.fee_type is FeeType.MEMORY)
    assert memory.quantity == gib


def test_an_unknown_ipv4_price_keeps_the_offer_and_is_noted() -> None:
    """IPv4 is optional: without its price the offer stands without that fee (its cost with
    an IPv4 unknown, said in a page note); a price that is no price is set aside beside it."""
    case = next(c for c in cases("cudo") if c.name == "bad_cell_in_one")
    page = parse(case)
    offers = {r.offer_key: r for r in page.records if isinstance(r, OfferRecord)}
    lines = [r for r in page.records if not isinstance(r, OfferRecord)]
    for key in (
        "us-santaclara-1/epyc-milan-a40/nvidia-a40",
        "ca-montreal-3/epyc-genoa-l40s/nvidia-l40s",
    ):
        assert FeeType.PUBLIC_IP not in {f.fee_type for f in offers[key].fees}
        assert key in page.notes[0]
    assert page.notes[0].startswith("public IPv4 price unknown for 2 machine types")
    set_aside = [r for r in lines if r.field == "ipv4PriceHr"]
    assert [r.offer_key for r in set_aside] == ["us-santaclara-1/epyc-milan-a40/nvidia-a40"]
    # One bad cell costs its machine type only: the other types keep their offers.
    assert len(offers) == 5 and page.layout_error is None


def _machine_type(**fields: object) -> dict[str, object]:
    item: dict[str, object] = {
        "dataCenterId": "gb-bournemouth-1",
        "machineType": "epyc-milan-a100-pcie",
        "gpuModel": "A100 80GB PCIe",
        "gpuModelId": "nvidia-a100-80gb-pcie",
        "minVcpuPerGpu": 1,
        "maxVcpuPerMemoryGib": Decimal("0.25"),
        "gpuPriceHr": {"value": "1.50"},
        "vcpuPriceHr": {"value": "0.002"},
        "memoryGibPriceHr": {"value": "0.003"},
        "minStorageGibPriceHr": {"value": "0.0001"},
        "totalGpuFree": 6,
        "maxGpuFree": 4,
    }
    item.update(fields)
    return {k: v for k, v in item.items() if v != "GONE"}


KEY = "gb-bournemouth-1/epyc-milan-a100-pcie/nvidia-a100-80gb-pcie"


@pytest.mark.parametrize(
    "counts",
    [{}, {"totalGpuFree": 0}, {"maxGpuFree": 0}, {"totalGpuFree": None}, {"totalGpuFree": -1}],
)
def test_the_stock_answer_never_changes_an_offers_key(counts: dict[str, object]) -> None:
    # In stock, sold out or unknown: the same key, and a count set aside carries it too.
    page = parse_machine_types({"machineTypes": [_machine_type(**counts)]}, CTX)
    assert [o.offer_key for o in page.offers] == [KEY]
    assert {r.offer_key for r in page.records} == {KEY}


def test_a_machine_type_without_gpu_model_is_read_from_its_model_id() -> None:
    # gpuModelId names the card as well as gpuModel: its absence is no drift (contract).
    both = parse_machine_types({"machineTypes": [_machine_type()]}, CTX)
    page = parse_machine_types({"machineTypes": [_machine_type(gpuModel="GONE")]}, CTX)
    assert page.missing_fields == [] and page.layout_error is None
    [offer] = page.offers
    assert (offer.offer_key, offer.gpu_model, offer.gpu_vram_gb, offer.gpu_form_factor) == (
        KEY,
        "A100",
        80,
        "PCIe",
    )
    assert offer.raw_gpu_name == "nvidia-a100-80gb-pcie"
    assert offer.price == both.offers[0].price
    # the model id itself stays required: it is the offer's identity
    gone = parse_machine_types({"machineTypes": [_machine_type(gpuModelId="GONE")]}, CTX)
    assert gone.offers == [] and gone.missing_fields == ["gpuModelId"]
