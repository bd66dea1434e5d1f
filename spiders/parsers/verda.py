"""Verda (ex-DataCrunch) instance types, availability and locations to records.

Answers read (PROVIDERS.md B4; shapes as in the gpuhunt fixtures and the verda SDK), all
under `{base}/v1` after an OAuth2 client-credentials token:

* `GET /instance-types`: `[{instance_type, price_per_hour ("3.95", USD per hour for the
  whole instance), spot_price, currency ("usd"), gpu{description ("1x H100 SXM5 80GB"),
  number_of_gpus}, gpu_memory{size_in_gigabytes (all cards)}, storage{description
  ("dynamic" or "225GB NVME"), size_in_gigabytes}, ...}]`.
* `GET /instance-availability?is_spot=false|true`: `[{location_code, availabilities:
  [instance_type, ...]}]`: a type listed at a location can be launched there now.
* `GET /locations`: `[{code, name, country_code}]`.
* `GET /volume-types`: `[{type ("NVMe", "HDD", "NVMe_Shared"), price{currency,
  price_per_month_per_gb}}]` (the SDK's VolumeTypesService): the storage add-on.

Our offer is one instance type at one location, priced per instance (basis `instance`,
`gpu_count` = number_of_gpus). Stock: listed in the on-demand availability at that
location = `in_stock`, else `sold_out`; when that answer is missing, `unknown`.
Locations are those of `/locations` plus any the availability answers name.

Spot: `spot_price` becomes a spot plan on the offer where the spot availability lists the
type at that location (a plan carries no stock of its own, so a plan is present only where
spot can be rented now, or where the spot answer is missing: unknown is not sold out).

Storage: instance types whose storage is "dynamic" boot from a block volume, so the NVMe
volume price is a mandatory fee there (the size is the user's choice); other volume types,
and all volumes on types with their own local disk, are optional. Volumes are billed until
deleted, while the instance is shut down too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from gpurent.model import AddonFee, BillingUnit, PriceBasis, PriceKind, PricePlan
from gpurent.normalize.availability import UNKNOWN, Availability, availability_from_flag
from gpurent.normalize.gpu import split_gpu_count
from spiders.parsers.common import (
    INVALID_VALUE,
    MISSING_FIELD,
    NOT_AN_OFFER,
    FieldProblem,
    PageResult,
    ParseContext,
    Record,
    gpu_offer,
    guarded,
    identify_gpu,
    kept_price,
    keys_missing_everywhere,
    make_quarantine,
    not_an_object,
    price_plan,
    require,
    to_decimal,
    to_int,
    to_price,
)
from spiders.parsers.fees import per_gb_fee

ENDPOINT_URL = "https://api.datacrunch.io/v1/instance-types"
TYPE_KEYS = ("instance_type", "price_per_hour", "gpu")
AVAILABILITY_KEYS = ("location_code", "availabilities")
BOOT_VOLUME_TYPE = "NVMe"


def token_body(client_id: str, client_secret: str) -> dict[str, str]:
    return {
        "grant_type": "client_credentials",
        "client_id": client_id,
        "client_secret": client_secret,
    }


def read_token(data: Any) -> str | None:
    """The access token of a `/oauth2/token` answer (None: not the expected shape)."""
    token = data.get("access_token") if isinstance(data, dict) else None
    return token if isinstance(token, str) and token else None


# -- the answers, each read on its own --------------------------------------------


@dataclass
class InstanceTypes:
    items: list[Any] = field(default_factory=list)
    layout_error: str | None = None


def read_instance_types(data: Any) -> InstanceTypes:
    if not isinstance(data, list):
        return InstanceTypes(layout_error=f"not a list of instance types ({_kind(data)})")
    missing = keys_missing_everywhere(data, TYPE_KEYS)
    if missing or not data:
        what = ", ".join(missing) if missing else "anything"
        return InstanceTypes(layout_error=f"no instance type carries {what}")
    return InstanceTypes(items=data)


@dataclass
class Availabilities:
    by_location: dict[str, frozenset[str]] = field(default_factory=dict)
    layout_error: str | None = None

    def listed(self, instance_type: str, location: str | None) -> bool:
        return location is not None and instance_type in self.by_location.get(location, ())


def read_availability(data: Any) -> Availabilities:
    if not isinstance(data, list):
        return Availabilities(layout_error=f"not a list of locations ({_kind(data)})")
    missing = keys_missing_everywhere(data, AVAILABILITY_KEYS)
    if missing:
        return Availabilities(layout_error=f"no location carries {', '.join(missing)}")
    result = Availabilities()
    for entry in data:
        code = entry.get("location_code") if isinstance(entry, dict) else None
        listed = entry.get("availabilities") if isinstance(entry, dict) else None
        if isinstance(code, str) and code and isinstance(listed, list):
            names = frozenset(t for t in listed if isinstance(t, str))
            result.by_location[code] = result.by_location.get(code, frozenset()) | names
    return result


@dataclass
class Locations:
    codes: list[str] = field(default_factory=list)
    layout_error: str | None = None


def read_locations(data: Any) -> Locations:
    if not isinstance(data, list) or keys_missing_everywhere(data, ("code",)):
        return Locations(layout_error=f"not a list of locations with a code ({_kind(data)})")
    codes = [e["code"] for e in data if isinstance(e, dict) and isinstance(e.get("code"), str)]
    return Locations(codes=list(dict.fromkeys(codes)))


@dataclass(frozen=True)
class VolumePrice:
    volume_type: str
    amount: Decimal
    currency: str


@dataclass
class VolumeTypes:
    prices: list[VolumePrice] = field(default_factory=list)
    records: list[Record] = field(default_factory=list)
    """Quarantine lines for volume types whose price cannot be read."""
    layout_error: str | None = None


def read_volume_types(data: Any, ctx: ParseContext) -> VolumeTypes:
    if not isinstance(data, list) or keys_missing_everywhere(data, ("type", "price")):
        return VolumeTypes(layout_error=f"not a list of priced volume types ({_kind(data)})")
    result = VolumeTypes()
    for entry in data:
        name = entry.get("type") if isinstance(entry, dict) else None
        key = f"volume-type/{name}" if isinstance(name, str) and name else None
        try:
            if not isinstance(entry, dict) or key is None:
                raise FieldProblem(MISSING_FIELD, "type", "volume type without a name")
            price = entry.get("price")
            if not isinstance(price, dict):
                raise FieldProblem(MISSING_FIELD, "price", "price is missing")
            amount = to_price(price.get("price_per_month_per_gb"), "price_per_month_per_gb")
            currency = _currency(price.get("currency"))
            result.prices.append(VolumePrice(str(name), amount, currency))
        except FieldProblem as problem:
            result.records.append(
                make_quarantine(
                    ctx, reason=problem.reason, field=problem.field, raw=_raw(entry),
                    offer_key=key,
                )
            )  # fmt: skip
    return result


# -- offers: instance type x location ----------------------------------------------


@dataclass(frozen=True)
class Inputs:
    """What the run read; None where that answer is missing (failed or unreadable)."""

    instance_types: InstanceTypes
    on_demand: Availabilities | None = None
    spot: Availabilities | None = None
    locations: Locations | None = None
    volume_types: VolumeTypes | None = None


def build_offers(inputs: Inputs, ctx: ParseContext) -> PageResult:
    page = PageResult()
    if inputs.on_demand is None:
        page.notes.append("on-demand availability missing: stock unknown")
    if inputs.volume_types is None:
        page.notes.append("volume types missing: offers without storage fees")
    locations = _locations(inputs)
    for item in inputs.instance_types.items:
        page.records.extend(instance_type_records(item, locations, inputs, ctx))
    return page


def _locations(inputs: Inputs) -> list[str | None]:
    codes: list[str] = list(inputs.locations.codes) if inputs.locations else []
    for answer in (inputs.on_demand, inputs.spot):
        if answer is not None:
            codes += sorted(c for c in answer.by_location if c not in codes)
    return list(dict.fromkeys(codes)) or [None]


def instance_type_records(
    item: Any, locations: list[str | None], inputs: Inputs, ctx: ParseContext
) -> list[Record]:
    if not isinstance(item, dict):
        return not_an_object(ctx, item)
    name = item.get("instance_type")
    key = name if isinstance(name, str) and name else None
    return guarded(
        ctx, offer_key=key, raw=item, build=lambda: _build(item, key, locations, inputs, ctx)
    )


def _build(
    item: dict[str, Any],
    name: str | None,
    locations: list[str | None],
    inputs: Inputs,
    ctx: ParseContext,
) -> list[Record]:
    if name is None:
        raise FieldProblem(MISSING_FIELD, "instance_type", "instance_type is missing")
    gpu: dict[str, Any] = item["gpu"] if isinstance(item.get("gpu"), dict) else {}
    count = to_int(require(gpu, "number_of_gpus"), "gpu.number_of_gpus")
    if count < 1:
        raise FieldProblem(NOT_AN_OFFER, "gpu.number_of_gpus", "CPU-only instance type (no GPU)")
    raw_name = require(gpu, "description")
    written, _ = split_gpu_count(str(raw_name))
    if written is not None and written != count:
        raise FieldProblem(
            INVALID_VALUE, "gpu.description", f"{raw_name!r} disagrees with number_of_gpus {count}"
        )
    identity = identify_gpu(raw_name, field="gpu.description", vram_gb=_vram_per_card(item, count))
    price = to_price(require(item, "price_per_hour"), "price_per_hour")
    currency = _currency(item.get("currency"))
    side: list[Record] = []
    spot = _spot_price(item, name, ctx, side)
    fees = _fees(item, inputs.volume_types)
    records: list[Record] = []
    for location in locations:
        availability = _availability(name, location, inputs.on_demand)
        spot_here = spot is not None and (inputs.spot is None or inputs.spot.listed(name, location))
        plans = (_plan(spot, currency),) if spot is not None and spot_here else ()
        records.append(
            gpu_offer(
                ctx,
                offer_key=f"{name}/{location}" if location else name,
                raw=item,
                gpu=identity,
                raw_gpu_name=raw_name,
                gpu_count=count,
                stock=availability,
                price=price,
                currency=currency,
                price_basis=PriceBasis.INSTANCE,
                region=location,
                url=ENDPOINT_URL,
                fees=fees,
                plans=plans,
            )
        )
    return [*records, *side]


def _availability(name: str, location: str | None, answer: Availabilities | None) -> Availability:
    if answer is None or location is None:
        return UNKNOWN
    return availability_from_flag(answer.listed(name, location))


def _vram_per_card(item: dict[str, Any], count: int) -> int | None:
    memory = item.get("gpu_memory")
    total = memory.get("size_in_gigabytes") if isinstance(memory, dict) else None
    if total is None:
        return None
    size = to_decimal(total, "gpu_memory.size_in_gigabytes")
    # A hint only (the catalog snaps it to a nominal size): whole GB are enough.
    return int((size / count).to_integral_value()) if size > 0 else None


def _spot_price(
    item: dict[str, Any], name: str, ctx: ParseContext, side: list[Record]
) -> Decimal | None:
    # The on-demand offers stand; a bad spot price is set aside on its own line.
    price = kept_price(ctx, item, "spot_price", offer_key=name, side=side)
    return price if price else None  # 0: no spot price


def _plan(price: Decimal, currency: str) -> PricePlan:
    return price_plan(price, currency, PriceBasis.INSTANCE, PriceKind.SPOT)


def _fees(item: dict[str, Any], volumes: VolumeTypes | None) -> tuple[AddonFee, ...]:
    if volumes is None:
        return ()
    storage = item.get("storage")
    dynamic = isinstance(storage, dict) and storage.get("description") == "dynamic"
    fees: list[AddonFee] = []
    for volume in volumes.prices:
        boot = dynamic and volume.volume_type == BOOT_VOLUME_TYPE
        note = f"{volume.volume_type} volume, per GB per month"
        if boot:
            note += "; the boot volume of a type without local disk"
        fees.append(
            per_gb_fee(
                volume.amount,
                volume.currency,
                BillingUnit.MONTH,
                mandatory=boot,
                while_stopped=True,
                note=note,
            )
        )
    return tuple(fees)


def _currency(value: Any) -> str:
    if value is None:
        raise FieldProblem(MISSING_FIELD, "currency", "currency is missing")
    if not isinstance(value, str) or len(value.strip()) != 3 or not value.strip().isalpha():
        raise FieldProblem(INVALID_VALUE, "currency", f"currency is not an ISO code: {value!r}")
    return value.strip().upper()


def _kind(data: Any) -> str:
    return (
        f"got keys {sorted(data)[:8]}" if isinstance(data, dict) else f"got {type(data).__name__}"
    )


def _raw(entry: Any) -> Any:
    return entry if isinstance(entry, dict) else str(entry)
