"""Cudo Compute machine types (`GET /v1/vms/machine-types` -> `{"machineTypes": [...]}`).

Cudo prices a VM by component (PROVIDERS.md B7), each `{"value": "<decimal string>"}`
in USD per hour: `gpuPriceHr` per GPU, `vcpuPriceHr` per vCPU, `memoryGibPriceHr` per
GiB of RAM, `minStorageGibPriceHr` per GiB of disk, `ipv4PriceHr` per public IPv4.

Our offer is one card of a (data center, machine type, GPU model): Cudo lets a VM take
1..`maxGpuFree` GPUs at the same per-GPU price, so the one-card VM is the comparable
unit, and `available_count` (`totalGpuFree`) says how many cards are free there.
The smallest VM that carries one card is priced through mandatory fees:

* vCPU: `minVcpuPerGpu` vCPUs at `vcpuPriceHr`;
* memory: Cudo bounds the ratio vCPU / GiB between `minVcpuPerMemoryGib` and
  `maxVcpuPerMemoryGib`, so `minVcpuPerGpu` vCPUs need at least
  `minVcpuPerGpu / maxVcpuPerMemoryGib` GiB, rounded up to a whole GiB;
* disk: `minStorageGibPriceHr` per GiB (size is the user's choice);
* public IPv4: optional.
"""

from __future__ import annotations

from decimal import ROUND_CEILING, Decimal
from typing import Any

from gpurent.model import AddonFee, BillingUnit, FeeType, PriceBasis
from gpurent.normalize.availability import UNKNOWN, Availability, availability_from_counts
from spiders.parsers.common import (
    INVALID_VALUE,
    MISSING_FIELD,
    FieldProblem,
    PageResult,
    ParseContext,
    Record,
    counted_stock,
    gpu_offer,
    guarded,
    identify_gpu,
    not_an_object,
    optional_int,
    require,
    set_aside,
    to_decimal,
    to_price,
)
from spiders.parsers.envelope import list_page
from spiders.parsers.fees import per_gb_fee, per_instance_fee, vm_part_fee

CURRENCY = "USD"
ENDPOINT_URL = "https://rest.compute.cudo.org/v1/vms/machine-types"
# Keys every machine type carries (the free count included: without it all stock is unknown).
CORE_KEYS = ("dataCenterId", "machineType", "gpuModel", "gpuPriceHr", "totalGpuFree")


def parse_machine_types(data: Any, ctx: ParseContext) -> PageResult:
    return list_page(
        data,
        "machineTypes",
        ctx,
        records=machine_type_records,
        core_keys=CORE_KEYS,
        noun="machine type",
    )


def offer_key(item: dict[str, Any]) -> str | None:
    parts = [item.get("dataCenterId"), item.get("machineType"), item.get("gpuModelId")]
    if not all(isinstance(p, str) and p for p in parts):
        return None
    return "/".join(str(p) for p in parts)


def machine_type_records(item: Any, ctx: ParseContext) -> list[Record]:
    if not isinstance(item, dict):
        return not_an_object(ctx, item)
    key = offer_key(item)
    return guarded(ctx, offer_key=key, raw=item, build=lambda: _build(item, key, ctx))


def _build(item: dict[str, Any], key: str | None, ctx: ParseContext) -> list[Record]:
    if key is None:
        raise FieldProblem(
            MISSING_FIELD, "dataCenterId", "dataCenterId, machineType or gpuModelId missing"
        )
    raw_name = require(item, "gpuModel")
    identity = identify_gpu(raw_name, field="gpuModel")
    price = _price(item, "gpuPriceHr")
    availability, problem = counted_stock("totalGpuFree", lambda: _availability(item))
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
            fees=_fees(item),
        ),
        *set_aside(ctx, problem, offer_key=key, item=item),
    ]


def _availability(item: dict[str, Any]) -> Availability:
    """Stock from the free counts: missing is `unknown` (rule of truth 1); a bad count is
    `unknown` too, with its field quarantined beside the offer (`counted_stock`)."""
    free = optional_int(item, "totalGpuFree")
    largest = optional_int(item, "maxGpuFree")
    if free is None:
        return UNKNOWN
    # maxGpuFree is the largest VM one host can start; cards counted free in the data
    # center but on no host that can start a VM are not rentable.
    return availability_from_counts(0 if largest == 0 else free)


def _fees(item: dict[str, Any]) -> tuple[AddonFee, ...]:
    vcpus = to_decimal(require(item, "minVcpuPerGpu"), "minVcpuPerGpu")
    vcpu_per_gib = to_decimal(require(item, "maxVcpuPerMemoryGib"), "maxVcpuPerMemoryGib")
    if vcpus <= 0 or vcpu_per_gib <= 0:
        raise FieldProblem(INVALID_VALUE, "minVcpuPerGpu", "vCPU or memory ratio not positive")
    min_ram_gib = (vcpus / vcpu_per_gib).to_integral_value(rounding=ROUND_CEILING)
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
    if item.get("ipv4PriceHr") is not None:
        fees.append(
            per_instance_fee(
                FeeType.PUBLIC_IP,
                _price(item, "ipv4PriceHr"),
                CURRENCY,
                BillingUnit.HOUR,
                mandatory=False,
            )
        )
    return tuple(fees)


def _price(item: dict[str, Any], key: str) -> Decimal:
    return to_price(_money(item, key), key)


def _money(item: dict[str, Any], key: str) -> Any:
    """The string inside Cudo's `{"value": "0.52"}` money objects."""
    value = item.get(key)
    if isinstance(value, dict):
        return value.get("value")
    return value
