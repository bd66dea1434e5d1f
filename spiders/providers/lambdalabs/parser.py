"""Lambda instance types (`GET /api/v1/instance-types`) to records.

Shape (Lambda's public cloud API; field use as in gpuhunt's Lambda provider):
`{"data": {<name>: {"instance_type": {name, description, gpu_description,
price_cents_per_hour, specs: {vcpus, memory_gib, storage_gib, gpus}},
"regions_with_capacity_available": [{name, description}, ...]}}}`.
Errors come as `{"error": {code, message, suggestion}}` ("global/invalid-api-key").

* price: `price_cents_per_hour`, US cents per hour for the whole instance type
  (`LAMBDA_PRICE_SCALE`), so the basis is `instance` and `gpu_count` is `specs.gpus`.
* GPU: `gpu_description` ("H100 (80 GB SXM5)": model, memory and form factor), else
  `description` ("1x H100 (80 GB SXM5)").
* stock and identity: our offer is one type in one region, key `<type>/<region>`, whatever
  the stock says (rule of truth 11). Lambda lists only the regions with capacity now: each
  listed region is an `in_stock` offer, and every type read declares its prefix `<type>/`
  as sold-out-unlisted (`PageResult.sold_out_unlisted`): a region Lambda stopped listing for
  the type is sold out there, the same offer turning `sold_out` in the warehouse. An empty
  list is therefore no offer at all, only that prefix (sold out everywhere it was seen).
  Lambda gives no free counts.
* a `null` list says nothing about any region. Emitting a regionless `unknown` offer would
  invent an identity, and declaring the sold-out prefix would turn every region sold out on
  a non-answer; so the type's regions are *unread*: the prefix is declared in
  `unread_prefixes` (each region keeps its last state, stale) and a quarantine line says
  why (the run is partial). The same holds for a type that cannot be read at all (a key
  gone, a bad price): its quarantine line is keyed by the type's name and its prefix is
  unread. A type without a GPU (`specs.gpus` 0) is no GPU offer: skipped.
* host: `specs.vcpus`, `memory_gib` and `storage_gib` are the machine's, given per card.
* add-ons: none in this answer. Persistent file systems are billed apart and Lambda has no
  egress fee (SECONDARY: a third-party report); no source gives a file-system rate, so no fee.
  Lambda bills by the minute at the hourly rate: the price stays per hour.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from gpurent_core.model import OfferRecord, PriceBasis, QuarantineRecord, SkipKind
from gpurent_core.normalize.availability import availability_from_flag
from gpurent_core.normalize.gpu import split_gpu_count
from gpurent_core.normalize.price import LAMBDA_PRICE_SCALE
from spiders.parsers.common import (
    INVALID_VALUE,
    MISSING_FIELD,
    PRICE_UNPARSED,
    FieldProblem,
    ParseContext,
    Record,
    Skip,
    gpu_offer,
    guarded,
    identify_gpu,
    make_quarantine,
    measure,
    minor_units,
    require,
    to_int,
    to_price,
)
from spiders.parsers.contract import Contract, apply_check, check_items, drift_quarantine
from spiders.parsers.envelope import ApiPage, answer_keys

CURRENCY = "USD"
ENDPOINT_URL = "https://cloud.lambdalabs.com/api/v1/instance-types"
# What one entry of `data` must carry. The card count may come from the description
# ("8x Tesla V100") when `specs.gpus` is absent, and the GPU name from either description.
CONTRACT = Contract(
    "instance type",
    identity=(
        "instance_type.gpu_description|instance_type.description",
        "instance_type.specs.gpus|instance_type.description",
    ),
    price=("instance_type.price_cents_per_hour",),
    stock=("regions_with_capacity_available",),
)
CONTRACTS: tuple[Contract, ...] = (CONTRACT,)
AUTH_ERROR_CODES = ("global/invalid-api-key", "global/unauthorized")


class InstanceTypesPage(ApiPage):
    """The instance types (an `error` envelope: a refused key, or an API error)."""


def parse_instance_types(data: Any, ctx: ParseContext) -> InstanceTypesPage:
    if isinstance(data, dict) and isinstance(data.get("error"), dict):
        code = str(data["error"].get("code") or "")
        if code in AUTH_ERROR_CODES:
            return InstanceTypesPage(auth_rejected=True)
        message = str(data["error"].get("message") or "")[:80]
        return InstanceTypesPage(api_error=f"{code or 'error'}: {message}")
    if not isinstance(data, dict) or not isinstance(data.get("data"), dict):
        keys = answer_keys(data)
        return InstanceTypesPage(layout_error=f"no 'data' object in the answer (got {keys})")
    entries: dict[str, Any] = data["data"]
    if not entries:
        # Lambda lists every type, sold out or not: an empty map is not a market state.
        return InstanceTypesPage(layout_error="'data' holds no instance type")
    page = InstanceTypesPage()
    for name, entry in entries.items():
        records = entry_records(str(name), entry, ctx)
        page.records.extend(records)
        declare_regions(page, str(name), records)
    apply_check(page, check_items(entries.values(), CONTRACT))
    return page


def region_prefix(name: str) -> str:
    """The offer-key prefix of every region of one instance type."""
    return f"{name}/"


def declare_regions(page: InstanceTypesPage, name: str, records: list[Record]) -> None:
    """What the type's absent regions mean: unread when the entry was not read whole (a
    quarantine line), sold out when it was (Lambda lists only regions with capacity); a
    skipped type (no GPU) has no regions to speak of."""
    if any(isinstance(record, QuarantineRecord) for record in records):
        page.unread_prefixes.append(region_prefix(name))
    elif all(isinstance(record, OfferRecord) for record in records):
        page.sold_out_unlisted.append(region_prefix(name))


def entry_records(name: str, entry: Any, ctx: ParseContext) -> list[Record]:
    if isinstance(entry, dict):
        gone = CONTRACT.gone(entry)
        if gone:
            return [drift_quarantine(ctx, entry, gone, offer_key=name)]
    if not isinstance(entry, dict) or not isinstance(entry.get("instance_type"), dict):
        return [
            make_quarantine(
                ctx, reason="not_an_offer: no instance_type object", field="instance_type",
                raw=entry if isinstance(entry, dict) else str(entry), offer_key=name,
            )
        ]  # fmt: skip
    return guarded(ctx, offer_key=name, raw=entry, build=lambda: _build(name, entry, ctx))


def _build(name: str, entry: dict[str, Any], ctx: ParseContext) -> list[Record]:
    itype: dict[str, Any] = entry["instance_type"]
    specs: dict[str, Any] = itype["specs"] if isinstance(itype.get("specs"), dict) else {}
    gpus = _gpu_count(itype, specs)
    raw_name = _gpu_name(itype)
    identity = identify_gpu(raw_name, field="gpu_description")
    price = _price(require(itype, "price_cents_per_hour"))

    regions = entry["regions_with_capacity_available"]  # present: the contract held
    if regions is None:
        # Says nothing about any region: the type's regions are unread (module docstring).
        raise FieldProblem(
            MISSING_FIELD,
            "regions_with_capacity_available",
            "regions_with_capacity_available is null",
        )
    if not isinstance(regions, list):
        raise FieldProblem(
            INVALID_VALUE, "regions_with_capacity_available", "not a list of regions"
        )
    names: list[str] = []
    for region in regions:
        region_name = region.get("name") if isinstance(region, dict) else None
        if not isinstance(region_name, str) or not region_name:
            raise FieldProblem(
                INVALID_VALUE, "regions_with_capacity_available", "a region has no name"
            )
        names.append(region_name)
    # An empty list makes no offer: the type's sold-out prefix says it (declare_regions).
    listed = availability_from_flag(True)
    return [
        gpu_offer(
            ctx,
            offer_key=region_prefix(name) + region,
            raw=entry,
            gpu=identity,
            raw_gpu_name=raw_name,
            gpu_count=gpus,
            stock=listed,
            price=price,
            currency=CURRENCY,
            price_basis=PriceBasis.INSTANCE,
            region=region,
            url=ENDPOINT_URL,
            host=_host(specs, gpus),
        )
        for region in names
    ]


def _host(specs: dict[str, Any], gpus: int) -> dict[str, Any]:
    """The instance type's `specs` are the whole machine's: per card, divided by its GPUs
    (GiB as Lambda writes them, counted as GB as the other providers' figures are)."""
    return {
        "vcpus_per_gpu": measure(specs.get("vcpus"), 2, per=gpus),
        "ram_gb_per_gpu": measure(specs.get("memory_gib"), 1, per=gpus),
        "disk_gb_per_gpu": measure(specs.get("storage_gib"), 1, per=gpus),
    }


def _price(cents: Any) -> Decimal:
    # The schema says a whole number of cents; a fraction would mean the unit changed.
    # to_price first: a value of the wrong type, a negative or non-finite one, is refused
    # with the field's name before any arithmetic.
    number = to_price(cents, "price_cents_per_hour")
    if number != number.to_integral_value():
        raise FieldProblem(
            PRICE_UNPARSED, "price_cents_per_hour", f"not a whole number of cents: {cents}"
        )
    return minor_units(number, LAMBDA_PRICE_SCALE, "price_cents_per_hour")


def _gpu_count(itype: dict[str, Any], specs: dict[str, Any]) -> int:
    if specs.get("gpus") is not None:
        count = to_int(specs["gpus"], "specs.gpus")
    else:
        written, _ = split_gpu_count(str(itype.get("description") or ""))
        if written is None:
            raise FieldProblem(MISSING_FIELD, "specs.gpus", "specs.gpus is missing")
        count = written
    if count < 0:
        raise FieldProblem(INVALID_VALUE, "specs.gpus", f"negative card count: {count}")
    if count == 0:
        raise Skip(SkipKind.NOT_A_GPU_OFFER, "CPU-only instance type (specs.gpus 0)")
    return count


def _gpu_name(itype: dict[str, Any]) -> str:
    for key in ("gpu_description", "description"):
        value = itype.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    raise FieldProblem(MISSING_FIELD, "gpu_description", "gpu_description is missing")
