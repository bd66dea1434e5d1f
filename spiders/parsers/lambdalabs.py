"""Lambda instance types (`GET /api/v1/instance-types`) to records.

Shape (PROVIDERS.md B3; field use as in gpuhunt's Lambda provider):
`{"data": {<name>: {"instance_type": {name, description, gpu_description,
price_cents_per_hour, specs: {vcpus, memory_gib, storage_gib, gpus}},
"regions_with_capacity_available": [{name, description}, ...]}}}`.
Errors come as `{"error": {code, message, suggestion}}` ("global/invalid-api-key").

* price: `price_cents_per_hour`, US cents per hour for the whole instance type
  (`LAMBDA_PRICE_SCALE`), so the basis is `instance` and `gpu_count` is `specs.gpus`.
* GPU: `gpu_description` ("H100 (80 GB SXM5)": model, memory and form factor), else
  `description` ("1x H100 (80 GB SXM5)").
* stock: a region listed in `regions_with_capacity_available` can launch the type now:
  one `in_stock` offer per such region. An empty list is Lambda saying the type is sold
  out everywhere: one `sold_out` offer with no region (key = the type's name). A missing
  list is `unknown`. Lambda gives no free counts.
* add-ons: none in this answer. Persistent file systems are billed apart and Lambda has no
  egress fee (SECONDARY, PROVIDERS.md B3); our sources give no file-system rate, so no fee.
  Lambda bills by the minute at the hourly rate: the price stays per hour.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from gpurent_core.model import PriceBasis
from gpurent_core.normalize.availability import UNKNOWN, Availability, availability_from_flag
from gpurent_core.normalize.gpu import split_gpu_count
from gpurent_core.normalize.price import LAMBDA_PRICE_SCALE
from spiders.parsers.common import (
    INVALID_VALUE,
    MISSING_FIELD,
    NOT_AN_OFFER,
    PRICE_UNPARSED,
    FieldProblem,
    ParseContext,
    Record,
    gpu_offer,
    guarded,
    identify_gpu,
    make_quarantine,
    minor_units,
    require,
    set_aside,
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
        page.records.extend(entry_records(str(name), entry, ctx))
    apply_check(page, check_items(entries.values(), CONTRACT))
    return page


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

    def offer(key: str, region: str | None, availability: Availability) -> Record:
        return gpu_offer(
            ctx,
            offer_key=key,
            raw=entry,
            gpu=identity,
            raw_gpu_name=raw_name,
            gpu_count=gpus,
            stock=availability,
            price=price,
            currency=CURRENCY,
            price_basis=PriceBasis.INSTANCE,
            region=region,
            url=ENDPOINT_URL,
        )

    regions = entry["regions_with_capacity_available"]  # present: the contract held
    if regions is None:
        # Nothing to read: unknown, and a line saying why (the run is partial, not `ok`).
        problem = FieldProblem(
            MISSING_FIELD,
            "regions_with_capacity_available",
            "regions_with_capacity_available is null",
        )
        return [offer(name, None, UNKNOWN), *set_aside(ctx, problem, offer_key=name, item=entry)]
    if not isinstance(regions, list):
        raise FieldProblem(
            INVALID_VALUE, "regions_with_capacity_available", "not a list of regions"
        )
    if not regions:
        return [offer(name, None, availability_from_flag(False))]
    names: list[str] = []
    for region in regions:
        region_name = region.get("name") if isinstance(region, dict) else None
        if not isinstance(region_name, str) or not region_name:
            raise FieldProblem(
                INVALID_VALUE, "regions_with_capacity_available", "a region has no name"
            )
        names.append(region_name)
    listed = availability_from_flag(True)
    return [offer(f"{name}/{region}", region, listed) for region in names]


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
        raise FieldProblem(NOT_AN_OFFER, "specs.gpus", "CPU-only instance type (no GPU)")
    return count


def _gpu_name(itype: dict[str, Any]) -> str:
    for key in ("gpu_description", "description"):
        value = itype.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    raise FieldProblem(MISSING_FIELD, "gpu_description", "gpu_description is missing")
