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

from decimal import ROUND_CEILING
from typing import Any

from gpurent.model import AddonFee, BillingUnit, FeeBasis, FeeType, PriceBasis, PriceKind
from gpurent.normalize.availability import UNKNOWN, Availability, availability_from_counts
from spiders.parsers.common import (
    INVALID_VALUE,
    MISSING_FIELD,
    FieldProblem,
    PageResult,
    ParseContext,
    Record,
    field_quarantine,
    gpu_fields,
    guarded,
    identify_gpu,
    keys_missing_everywhere,
    make_offer,
    make_quarantine,
    optional_int,
    require,
    to_decimal,
    to_price,
)

CURRENCY = "USD"
ENDPOINT_URL = "https://rest.compute.cudo.org/v1/vms/machine-types"
# Keys every machine type carries (the free count included: without it all stock is unknown).
CORE_KEYS = ("dataCenterId", "machineType", "gpuModel", "gpuPriceHr", "totalGpuFree")


def parse_machine_types(data: Any, ctx: ParseContext) -> PageResult:
    if not isinstance(data, dict) or not isinstance(data.get("machineTypes"), list):
        keys = sorted(data)[:8] if isinstance(data, dict) else type(data).__name__
        return PageResult(layout_error=f"no 'machineTypes' list in the answer (got {keys})")
    items: list[Any] = data["machineTypes"]
    page = PageResult()
    for item in items:
        page.records.extend(machine_type_records(item, ctx))
    missing = keys_missing_everywhere(items, CORE_KEYS)
    if missing:
        page.layout_error = f"no machine type carries {', '.join(missing)}"
    return page


def offer_key(item: dict[str, Any]) -> str | None:
    parts = [item.get("dataCenterId"), item.get("machineType"), item.get("gpuModelId")]
    if not all(isinstance(p, str) and p for p in parts):
        return None
    return "/".join(str(p) for p in parts)


def machine_type_records(item: Any, ctx: ParseContext) -> list[Record]:
    if not isinstance(item, dict):
        return [
            make_quarantine(
                ctx, reason="not_an_offer: not an object", field=None, raw=str(item),
                offer_key=None,
            )
        ]  # fmt: skip
    key = offer_key(item)
    return guarded(ctx, offer_key=key, raw=item, build=lambda: _build(item, key, ctx))


def _build(item: dict[str, Any], key: str | None, ctx: ParseContext) -> list[Record]:
    if key is None:
        raise FieldProblem(
            MISSING_FIELD, "dataCenterId", "dataCenterId, machineType or gpuModelId missing"
        )
    raw_name = require(item, "gpuModel")
    identity = identify_gpu(raw_name, field="gpuModel")
    price = to_price(_money(item, "gpuPriceHr"), "gpuPriceHr")
    availability, problem = _availability(item)
    side = [] if problem is None else [field_quarantine(ctx, problem, offer_key=key, item=item)]
    return [
        make_offer(
            ctx,
            offer_key=key,
            raw=item,
            **gpu_fields(identity, raw_name),
            gpu_count=1,
            status=availability.status,
            available_count=availability.available_count,
            price=price,
            currency=CURRENCY,
            billing_unit=BillingUnit.HOUR,
            price_basis=PriceBasis.GPU,
            price_kind=PriceKind.ON_DEMAND,
            region=item["dataCenterId"],
            url=ENDPOINT_URL,
            fees=_fees(item),
        ),
        *side,
    ]


def _availability(item: dict[str, Any]) -> tuple[Availability, FieldProblem | None]:
    """Stock from the free counts: missing is `unknown` (rule of truth 1); a bad count is
    `unknown` too, with its field quarantined beside the offer."""
    try:
        free = optional_int(item, "totalGpuFree")
        largest = optional_int(item, "maxGpuFree")
        if free is None:
            return UNKNOWN, None
        # maxGpuFree is the largest VM one host can start; cards counted free in the data
        # center but on no host that can start a VM are not rentable.
        return availability_from_counts(0 if largest == 0 else free), None
    except FieldProblem as problem:
        return UNKNOWN, problem
    except ValueError as exc:  # negative counts
        return UNKNOWN, FieldProblem(INVALID_VALUE, "totalGpuFree", str(exc))


def _fees(item: dict[str, Any]) -> tuple[AddonFee, ...]:
    vcpus = to_decimal(require(item, "minVcpuPerGpu"), "minVcpuPerGpu")
    vcpu_per_gib = to_decimal(require(item, "maxVcpuPerMemoryGib"), "maxVcpuPerMemoryGib")
    if vcpus <= 0 or vcpu_per_gib <= 0:
        raise FieldProblem(INVALID_VALUE, "minVcpuPerGpu", "vCPU or memory ratio not positive")
    min_ram_gib = (vcpus / vcpu_per_gib).to_integral_value(rounding=ROUND_CEILING)
    fees = [
        AddonFee(
            fee_type=FeeType.VCPU,
            amount=to_price(_money(item, "vcpuPriceHr"), "vcpuPriceHr"),
            currency=CURRENCY,
            unit=BillingUnit.HOUR,
            basis=FeeBasis.VCPU,
            quantity=vcpus,
            mandatory=True,
            note="minVcpuPerGpu vCPUs per card",
        ),
        AddonFee(
            fee_type=FeeType.MEMORY,
            amount=to_price(_money(item, "memoryGibPriceHr"), "memoryGibPriceHr"),
            currency=CURRENCY,
            unit=BillingUnit.HOUR,
            basis=FeeBasis.GIB_RAM,
            quantity=min_ram_gib,
            mandatory=True,
            note="least RAM for minVcpuPerGpu vCPUs: ceil(minVcpuPerGpu / maxVcpuPerMemoryGib)",
        ),
        AddonFee(
            fee_type=FeeType.DATA_DISK,
            amount=to_price(_money(item, "minStorageGibPriceHr"), "minStorageGibPriceHr"),
            currency=CURRENCY,
            unit=BillingUnit.HOUR,
            basis=FeeBasis.GB,
            mandatory=True,
            note="per GiB of the VM disk (size chosen when renting)",
        ),
    ]
    if item.get("ipv4PriceHr") is not None:
        fees.append(
            AddonFee(
                fee_type=FeeType.PUBLIC_IP,
                amount=to_price(_money(item, "ipv4PriceHr"), "ipv4PriceHr"),
                currency=CURRENCY,
                unit=BillingUnit.HOUR,
                basis=FeeBasis.INSTANCE,
                mandatory=False,
            )
        )
    return tuple(fees)


def _money(item: dict[str, Any], key: str) -> Any:
    """The string inside Cudo's `{"value": "0.52"}` money objects."""
    value = item.get(key)
    if isinstance(value, dict):
        return value.get("value")
    return value
