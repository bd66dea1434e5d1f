"""Cudo Compute machine types (`GET /v1/vms/machine-types` -> `{"machineTypes": [...]}`).

Cudo prices a VM by component (its public machine-types answer, no auth), each
`{"value": "<decimal string>"}` in USD per hour: `gpuPriceHr` per GPU, `vcpuPriceHr` per
vCPU, `memoryGibPriceHr` per GiB of RAM, `minStorageGibPriceHr` per GiB of disk,
`ipv4PriceHr` per public IPv4.

Our offer is one card of a (data center, machine type, GPU model): Cudo lets a VM take
1..`maxGpuFree` GPUs at the same per-GPU price, so the one-card VM is the comparable
unit, and `available_count` (`totalGpuFree`) says how many cards are free there.
The smallest VM that carries one card is priced through mandatory fees:

* vCPU: `minVcpuPerGpu` vCPUs at `vcpuPriceHr`;
* memory: Cudo bounds the ratio vCPU / GiB between `minVcpuPerMemoryGib` and
  `maxVcpuPerMemoryGib`, so `minVcpuPerGpu` vCPUs need at least
  `minVcpuPerGpu / maxVcpuPerMemoryGib` GiB, rounded up to a whole GiB;
* disk: `minStorageGibPriceHr` per GiB (size is the user's choice);
* public IPv4: optional. A machine type without a readable `ipv4PriceHr` keeps its offer,
  without that fee, and the page notes the price as unknown (a bad value is set aside).

Contract (`MACHINE_TYPE_CONTRACT`): every machine type carries its identity (`dataCenterId`,
`machineType`, `gpuModelId`), `gpuPriceHr` (its `value` when it is a money object) and both
free counts (`totalGpuFree`, and `maxGpuFree`, which says whether any host can start a VM).
A key gone is drift: that machine type is quarantined, never read as "no count"; gone from
every machine type it is the page's layout error. `gpuModel` ("A100 80GB PCIe") is not
required: `gpuModelId` ("nvidia-a100-80gb-pcie", part of the key) names the same card, and
the catalog reads either, so a machine type without `gpuModel` is read from its id.
"""

from __future__ import annotations

from decimal import ROUND_CEILING, Decimal
from typing import Any

from gpurent_core.model import AddonFee, BillingUnit, FeeType, PriceBasis
from gpurent_core.normalize.availability import Availability, availability_from_counts
from spiders.parsers.common import (
    INVALID_VALUE,
    MISSING_FIELD,
    FieldProblem,
    PageResult,
    ParseContext,
    Record,
    counted_stock,
    gpu_offer,
    hourly_price,
    identify_gpu,
    measure,
    optional_int,
    require,
    set_aside,
    to_decimal,
)
from spiders.parsers.contract import Contract, contracted
from spiders.parsers.envelope import list_page
from spiders.parsers.fees import per_gb_fee, per_instance_fee, vm_part_fee

CURRENCY = "USD"
ENDPOINT_URL = "https://rest.compute.cudo.org/v1/vms/machine-types"
# What every machine type carries (the free counts included: without them all stock is
# unknown, or cards no host can start read as free).
MACHINE_TYPE_CONTRACT = Contract(
    "machine type",
    identity=("dataCenterId", "machineType", "gpuModelId"),
    price=("gpuPriceHr.value",),
    stock=("totalGpuFree", "maxGpuFree"),
)
CONTRACTS: tuple[Contract, ...] = (MACHINE_TYPE_CONTRACT,)
IPV4_FIELD = "ipv4PriceHr"


def parse_machine_types(data: Any, ctx: ParseContext) -> PageResult:
    page = list_page(
        data, "machineTypes", ctx, records=machine_type_records, contract=MACHINE_TYPE_CONTRACT
    )
    _note_unknown_ipv4(page)
    return page


def _note_unknown_ipv4(page: PageResult) -> None:
    """Say which offers lack the (optional) public IPv4 price: their cost with an IPv4 is
    unknown, not free."""
    keys = [
        o.offer_key
        for o in page.offers
        if all(fee.fee_type is not FeeType.PUBLIC_IP for fee in o.fees)
    ]
    if keys:
        shown = ", ".join(keys[:5]) + (f" and {len(keys) - 5} more" if len(keys) > 5 else "")
        page.notes.append(f"public IPv4 price unknown for {len(keys)} machine types: {shown}")


def offer_key(item: Any) -> str | None:
    if not isinstance(item, dict):
        return None
    parts = [item.get("dataCenterId"), item.get("machineType"), item.get("gpuModelId")]
    if not all(isinstance(p, str) and p for p in parts):
        return None
    return "/".join(str(p) for p in parts)


def machine_type_records(item: Any, ctx: ParseContext) -> list[Record]:
    return contracted(
        ctx,
        item,
        MACHINE_TYPE_CONTRACT,
        offer_key=offer_key,
        build=lambda: _build(item, offer_key(item), ctx),
    )


def _build(item: dict[str, Any], key: str | None, ctx: ParseContext) -> list[Record]:
    if key is None:
        raise FieldProblem(
            MISSING_FIELD, "dataCenterId", "dataCenterId, machineType or gpuModelId missing"
        )
    # gpuModel as written, else the id slug naming the same card (not a contract field).
    named = "gpuModel" if "gpuModel" in item else "gpuModelId"
    raw_name = require(item, named)
    identity = identify_gpu(raw_name, field=named)
    price = _price(item, "gpuPriceHr")
    availability, problem = counted_stock("totalGpuFree", lambda: _availability(item))
    side = set_aside(ctx, problem, offer_key=key, item=item)
    fees = _fees(item)
    vcpus, ram_gib = _least_vm(item)
    ipv4, ipv4_problem = _ipv4_fee(item)
    side.extend(set_aside(ctx, ipv4_problem, offer_key=key, item=item))
    return [
        gpu_offer(
            ctx,
            offer_key=key,
            raw=item,
            gpu=identity,
            raw_gpu_name=raw_name,
            gpu_count=1,
            stock=availability,
            price=price,
            currency=CURRENCY,
            price_basis=PriceBasis.GPU,
            region=item["dataCenterId"],
            url=ENDPOINT_URL,
            fees=(*fees, *ipv4),
            host={
                "vcpus_per_gpu": measure(vcpus, 2),
                "ram_gb_per_gpu": measure(ram_gib, 1),
            },
        ),
        *side,
    ]


def _availability(item: dict[str, Any]) -> Availability:
    """Stock from the free counts: missing is `unknown` (rule of truth 1); a bad count is
    `unknown` too, with its field quarantined beside the offer (`counted_stock`)."""
    free = optional_int(item, "totalGpuFree")
    largest = optional_int(item, "maxGpuFree")
    if free is None:  # present (the contract holds) but null: no count to read
        raise FieldProblem(INVALID_VALUE, "totalGpuFree", "totalGpuFree is null")
    # maxGpuFree is the largest VM one host can start; cards counted free in the data
    # center but on no host that can start a VM are not rentable.
    return availability_from_counts(0 if largest == 0 else free)


def _least_vm(item: dict[str, Any]) -> tuple[Decimal, Decimal]:
    """The vCPUs and GiB of RAM one card's cheapest VM comes with: `minVcpuPerGpu`, and the
    least RAM that many vCPUs allow (`maxVcpuPerMemoryGib`). Both the fees and the host
    attributes count this VM, so the figures shown are the ones the cost includes."""
    vcpus = to_decimal(require(item, "minVcpuPerGpu"), "minVcpuPerGpu")
    vcpu_per_gib = to_decimal(require(item, "maxVcpuPerMemoryGib"), "maxVcpuPerMemoryGib")
    if vcpus <= 0 or vcpu_per_gib <= 0:
        raise FieldProblem(INVALID_VALUE, "minVcpuPerGpu", "vCPU or memory ratio not positive")
    return vcpus, (vcpus / vcpu_per_gib).to_integral_value(rounding=ROUND_CEILING)


def _fees(item: dict[str, Any]) -> tuple[AddonFee, ...]:
    vcpus, min_ram_gib = _least_vm(item)
    fees = [
        vm_part_fee(
            FeeType.VCPU,
            _price(item, "vcpuPriceHr"),
            CURRENCY,
            quantity=vcpus,
            note="minVcpuPerGpu vCPUs per card",
        ),
        vm_part_fee(
            FeeType.MEMORY,
            _price(item, "memoryGibPriceHr"),
            CURRENCY,
            quantity=min_ram_gib,
            note="least RAM for minVcpuPerGpu vCPUs: ceil(minVcpuPerGpu / maxVcpuPerMemoryGib)",
        ),
        per_gb_fee(
            _price(item, "minStorageGibPriceHr"),
            CURRENCY,
            BillingUnit.HOUR,
            mandatory=True,
            note="per GiB of the VM disk (size chosen when renting)",
        ),
    ]
    return tuple(fees)


def _ipv4_fee(item: dict[str, Any]) -> tuple[tuple[AddonFee, ...], FieldProblem | None]:
    """The optional public IPv4 fee: none when Cudo gives no price (the page notes it as
    unknown); a price that is no price is set aside, and the offer stands without the fee."""
    if _money(item, IPV4_FIELD) is None:
        return (), None
    try:
        amount = _price(item, IPV4_FIELD)
    except FieldProblem as problem:
        return (), problem
    fee = per_instance_fee(FeeType.PUBLIC_IP, amount, CURRENCY, BillingUnit.HOUR, mandatory=False)
    return (fee,), None


def _price(item: dict[str, Any], key: str) -> Decimal:
    return hourly_price(_money(item, key), key)


def _money(item: dict[str, Any], key: str) -> Any:
    """The string inside Cudo's `{"value": "0.52"}` money objects."""
    value = item.get(key)
    if isinstance(value, dict):
        return value.get("value")
    return value
