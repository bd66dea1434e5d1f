"""Verda (ex-DataCrunch) instance types, availability and locations to records.

Answers read (Verda's public API; shapes as in gpuhunt's Verda fixtures and the verda SDK), all
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
location = `in_stock`; a location the answer readably lists without that type (or does not
name at all) = `sold_out`, a real signal. Where the answer cannot say, the offer is kept out
of the run, never emitted as `unknown`: an emitted offer replaces its last good state in the
warehouse, so a failed fetch or a drifted entry would become a state change (rules of truth
2 and 10). Instead each offer it would have made is one quarantine line keyed by its offer
key (`<type>/<location>`, reason `missing_field: stock unreadable: ...`), the run ends
`partial` (or worse, as the health rules decide) and the warehouse keeps the offer's last
good state, stale. That is so when the answer is missing as a whole (failed, refused,
unreadable: every offer), when one location's entry lost its `availabilities` key (drift)
or it is not a list of type names (that location's offers; a type readably listed there is
still in stock), and when an entry's location cannot be read (the locations no readable
entry names). Such an entry also has its own quarantine line
(`on-demand-availability/<location>`); every entry without its list is a layout error (the
answer is then missing). Locations are those of `/locations` plus any the availability
answers name.

Each answer's entries are checked against its contract (`CONTRACTS`). An instance type that
lost a declared field, or cannot be read, costs one quarantine line per offer it would have
made (`<type>/<location>`). A CPU-only type (`number_of_gpus` 0) is no GPU rental: one skip
(`not_a_gpu_offer`), counted, never a quarantine line. The card count comes from
`number_of_gpus`, else from the description's "8x" (the description always names the card).

Identity never follows the stock answer (rule of truth 11): an offer is one instance type at
one location of `/locations` (and of any location an availability answer names), so a type no
location can launch is one `sold_out` offer per location under the same keys. When the
on-demand answer is missing as a whole, the page also declares `<type>/` unread for every
type it read (`PageResult.unread_prefixes`): a location only that answer would have named keeps
its offers too, while a type `/instance-types` no longer lists is closed.

Spot: `spot_price` becomes a spot plan on the offer where the spot availability lists the
type at that location (a plan carries no stock of its own: a plan is present only where spot
can be rented now). The plan follows the spot answer alone, never the on-demand one. Where
the spot answer cannot say (missing as a whole, or that location's entry unreadable), the
plan is left out rather than guessed, with one quarantine line per offer that would have
carried it (`<type>/<location>`, `missing_field: spot plan left out: ...`); the on-demand
offer stands, as it does beside an unreadable `spot_price` (spot is a side plan, so its
answer failing costs the plan, not the on-demand stock).

Storage: instance types whose storage is "dynamic" boot from a block volume, so the NVMe
volume price is a mandatory fee there (the size is the user's choice); other volume types,
and all volumes on types with their own local disk, are optional. Volumes are billed until
deleted, while the instance is shut down too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from functools import partial
from typing import Any, TypeGuard

from gpurent_core.model import (
    AddonFee,
    BillingUnit,
    PriceBasis,
    PriceKind,
    PricePlan,
    QuarantineRecord,
    SkipKind,
    SkipRecord,
    StockStatus,
)
from gpurent_core.normalize.availability import Availability, availability_from_flag
from gpurent_core.normalize.gpu import split_gpu_count
from spiders.parsers.common import (
    INVALID_VALUE,
    MISSING_FIELD,
    NOT_AN_OFFER,
    FieldProblem,
    PageResult,
    ParseContext,
    Record,
    Skip,
    gpu_offer,
    identify_gpu,
    kept_price,
    make_quarantine,
    not_an_object,
    price_plan,
    require,
    set_aside,
    to_decimal,
    to_int,
    to_price,
)
from spiders.parsers.contract import Contract, check_items, contracted
from spiders.parsers.fees import per_gb_fee

ENDPOINT_URL = "https://api.datacrunch.io/v1/instance-types"
# The fields each answer's items must carry (spiders.parsers.contract). The card count may
# come from the description ("8x H100 SXM5 80GB") when `number_of_gpus` is gone.
INSTANCE_TYPE_CONTRACT = Contract(
    "instance type",
    identity=("instance_type", "gpu.description", "gpu.number_of_gpus|gpu.description"),
    price=("price_per_hour", "currency"),
)
AVAILABILITY_CONTRACT = Contract("location", identity=("location_code",), stock=("availabilities",))
LOCATION_CONTRACT = Contract("location", identity=("code",))
VOLUME_TYPE_CONTRACT = Contract(
    "volume type",
    identity=("type",),
    price=("price.price_per_month_per_gb", "price.currency"),
)
CONTRACTS: tuple[Contract, ...] = (
    INSTANCE_TYPE_CONTRACT,
    AVAILABILITY_CONTRACT,
    LOCATION_CONTRACT,
    VOLUME_TYPE_CONTRACT,
)
BOOT_VOLUME_TYPE = "NVMe"
# Bounds past which a number is a broken cell, not a machine (Verda's largest has 8 cards).
MAX_GPUS = 64
MAX_VRAM_GB = 1024


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
    missing_fields: list[str] = field(default_factory=list)
    """Declared paths gone from some instance type (those types are quarantined)."""


def read_instance_types(data: Any) -> InstanceTypes:
    if not isinstance(data, list):
        return InstanceTypes(layout_error=f"not a list of instance types ({_kind(data)})")
    if not any(isinstance(item, dict) for item in data):
        # Empty, or a list of something else ([[...]]): nothing here is an instance type.
        return InstanceTypes(layout_error=f"no instance type in the list ({len(data)} entries)")
    check = check_items(data, INSTANCE_TYPE_CONTRACT)
    if check.layout_error is not None:
        return InstanceTypes(layout_error=check.layout_error, missing_fields=check.missing_fields)
    return InstanceTypes(items=data, missing_fields=check.missing_fields)


@dataclass
class Availabilities:
    """One availability answer (on demand or spot): the types listed per location, and where
    the answer cannot be read (an entry without its list, or without its location)."""

    by_location: dict[str, frozenset[str]] = field(default_factory=dict)
    unreadable: dict[str, FieldProblem] = field(default_factory=dict)
    """Locations whose entry lost or garbled its list (and why): a type not listed there is
    unknown."""
    blind: FieldProblem | None = None
    """An entry whose location cannot be read (and why): any location no readable entry
    names is unknown (that entry may have been its list)."""
    records: list[Record] = field(default_factory=list)
    """Quarantine lines of the unreadable entries."""
    layout_error: str | None = None
    missing_fields: list[str] = field(default_factory=list)

    def listed(self, instance_type: str, location: str | None) -> bool | None:
        """True: launchable there now; False: not listed; None: this answer cannot say."""
        if location is None:
            return None
        if instance_type in self.by_location.get(location, ()):
            return True
        if self.problem_at(location) is not None:
            return None
        return False

    def problem_at(self, location: str | None) -> FieldProblem | None:
        """Why this answer cannot say what is listed at `location` (None: it can)."""
        if location is None:
            return FieldProblem(MISSING_FIELD, "location_code", "no location to place it")
        if location in self.unreadable:
            return self.unreadable[location]
        if self.blind is not None and location not in self.by_location:
            return self.blind
        return None


def read_availability(data: Any, ctx: ParseContext, *, kind: str = "on-demand") -> Availabilities:
    """`kind` ("on-demand", "spot") names the answer in its quarantine lines."""
    if not isinstance(data, list):
        return Availabilities(layout_error=f"not a list of locations ({_kind(data)})")
    if data and not any(isinstance(entry, dict) for entry in data):
        return Availabilities(layout_error=f"no location in the list ({len(data)} entries)")
    check = check_items(data, AVAILABILITY_CONTRACT)
    if check.layout_error is not None:
        return Availabilities(layout_error=check.layout_error, missing_fields=check.missing_fields)
    result = Availabilities(missing_fields=check.missing_fields)
    for entry in data:
        problem = _read_availability_entry(entry, result)
        if problem is not None:
            code = entry.get("location_code") if isinstance(entry, dict) else None
            key = f"{kind}-availability/{code}" if _is_code(code) else None
            result.records.append(
                make_quarantine(
                    ctx, reason=problem.reason, field=problem.field, raw=_raw(entry),
                    offer_key=key,
                )
            )  # fmt: skip
    return result


def _read_availability_entry(entry: Any, result: Availabilities) -> FieldProblem | None:
    """Add one entry's listing to `result`; the problem that makes (part of) it unreadable."""
    if not isinstance(entry, dict):
        return _blind(
            result, FieldProblem(NOT_AN_OFFER, None, "availability entry is not an object")
        )
    gone = AVAILABILITY_CONTRACT.gone(entry)
    code = entry.get("location_code")
    if "location_code" in gone or not _is_code(code):
        if "location_code" in gone:
            problem = FieldProblem(MISSING_FIELD, "location_code", "key gone: location_code")
        else:
            problem = FieldProblem(INVALID_VALUE, "location_code", f"location_code is {code!r}")
        return _blind(result, problem)
    listed = entry.get("availabilities")
    names = frozenset(t for t in listed if _is_code(t)) if isinstance(listed, list) else frozenset()
    result.by_location[code] = result.by_location.get(code, frozenset()) | names
    if "availabilities" in gone:
        problem = FieldProblem(MISSING_FIELD, "availabilities", "key gone: availabilities")
    elif not isinstance(listed, list) or len(names) != len(listed):
        # Null, a retyped list, or entries that are not type names: what it lists is unknown.
        problem = FieldProblem(
            INVALID_VALUE, "availabilities", f"availabilities is not a list of type names at {code}"
        )
    else:
        return None
    result.unreadable.setdefault(code, problem)
    return problem


def _blind(result: Availabilities, problem: FieldProblem) -> FieldProblem:
    """An entry whose location cannot be read: the first such problem says why for all."""
    if result.blind is None:
        result.blind = problem
    return problem


@dataclass
class Locations:
    codes: list[str] = field(default_factory=list)
    records: list[Record] = field(default_factory=list)
    """Quarantine lines of the entries whose code cannot be read."""
    layout_error: str | None = None
    missing_fields: list[str] = field(default_factory=list)


def read_locations(data: Any, ctx: ParseContext) -> Locations:
    if not isinstance(data, list) or not any(isinstance(e, dict) for e in data):
        return Locations(layout_error=f"not a list of locations ({_kind(data)})")
    check = check_items(data, LOCATION_CONTRACT)
    if check.layout_error is not None:
        return Locations(layout_error=check.layout_error, missing_fields=check.missing_fields)
    result = Locations(missing_fields=check.missing_fields)
    for entry in data:
        code = entry.get("code") if isinstance(entry, dict) else None
        if _is_code(code):
            result.codes.append(code)
            continue
        # The offers at that location still appear where an availability answer names it.
        problem = (
            FieldProblem(MISSING_FIELD, "code", "key gone: code")
            if isinstance(entry, dict) and "code" not in entry
            else FieldProblem(INVALID_VALUE, "code", f"location code is {code!r}")
        )
        result.records.append(
            make_quarantine(
                ctx, reason=problem.reason, field=problem.field, raw=_raw(entry), offer_key=None
            )
        )
    result.codes = list(dict.fromkeys(result.codes))
    return result


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
    missing_fields: list[str] = field(default_factory=list)


def read_volume_types(data: Any, ctx: ParseContext) -> VolumeTypes:
    if not isinstance(data, list) or not any(isinstance(e, dict) for e in data):
        return VolumeTypes(layout_error=f"not a list of priced volume types ({_kind(data)})")
    check = check_items(data, VOLUME_TYPE_CONTRACT)
    if check.layout_error is not None:
        return VolumeTypes(layout_error=check.layout_error, missing_fields=check.missing_fields)
    result = VolumeTypes(missing_fields=check.missing_fields)
    for entry in data:
        name = entry.get("type") if isinstance(entry, dict) else None
        key = f"volume-type/{name}" if _is_code(name) else None
        result.records.extend(
            contracted(
                ctx,
                entry,
                VOLUME_TYPE_CONTRACT,
                offer_key=key,
                build=partial(_volume_price, entry, result),
            )
        )
    return result


def _volume_price(entry: dict[str, Any], result: VolumeTypes) -> list[Record]:
    name = entry["type"]
    if not _is_code(name):
        raise FieldProblem(INVALID_VALUE, "type", f"volume type name is {name!r}")
    price = entry["price"]
    if not isinstance(price, dict):
        raise FieldProblem(INVALID_VALUE, "price", f"price is not an object: {price!r}")
    amount = to_price(price["price_per_month_per_gb"], "price.price_per_month_per_gb")
    result.prices.append(VolumePrice(name, amount, _currency(price["currency"])))
    return []


# -- offers: instance type x location ----------------------------------------------


@dataclass(frozen=True)
class Inputs:
    """What the run read; None where that answer is missing (failed or unreadable)."""

    instance_types: InstanceTypes
    on_demand: Availabilities | None = None
    spot: Availabilities | None = None
    locations: Locations | None = None
    volume_types: VolumeTypes | None = None
    why_missing: Mapping[str, str] = field(default_factory=dict)
    """Source ("on_demand", "spot", ...) -> why that answer is None ("failed",
    "unreadable"), for the quarantine lines that stand in for what it would have said."""

    def missing_reason(self, source: str) -> str:
        noun = {"on_demand": "on-demand", "spot": "spot"}.get(source, source)
        return f"{noun} availability answer {self.why_missing.get(source, 'missing')}"


def build_offers(inputs: Inputs, ctx: ParseContext) -> PageResult:
    page = PageResult(missing_fields=list(inputs.instance_types.missing_fields))
    page.notes.extend(_answer_notes(inputs))
    locations = _locations(inputs)
    for item in inputs.instance_types.items:
        records = instance_type_records(item, locations, inputs, ctx)
        page.records.extend(records)
        if inputs.on_demand is None:
            page.unread_prefixes.extend(_unread_prefixes(item, records))
    return page


def _unread_prefixes(item: Any, records: list[Record]) -> list[str]:
    """`<type>/` of a type whose offers the missing on-demand answer leaves unread: every
    readable type but one that is no offer at all (skipped)."""
    name = item.get("instance_type") if isinstance(item, dict) else None
    if not _is_code(name) or any(isinstance(r, SkipRecord) for r in records):
        return []
    return [f"{name}/"]


def _answer_notes(inputs: Inputs) -> list[str]:
    """What the offers cannot say because an answer, or part of one, is missing."""
    notes: list[str] = []
    if inputs.on_demand is None:
        notes.append("on-demand availability missing: offers kept out, last good state stays")
    elif inputs.on_demand.records:
        notes.append(
            "on-demand availability partly unreadable: offers there kept out, last good state stays"
        )
    if inputs.spot is None:
        notes.append("spot availability missing: spot plans left out")
    elif inputs.spot.records:
        notes.append("spot availability partly unreadable: spot plans left out there")
    if inputs.volume_types is None:
        notes.append("volume types missing: offers without storage fees")
    elif inputs.volume_types.records:
        notes.append("some volume types unreadable: their storage fees unknown")
    return notes


def _locations(inputs: Inputs) -> list[str | None]:
    codes: list[str] = list(inputs.locations.codes) if inputs.locations else []
    for answer in (inputs.on_demand, inputs.spot):
        if answer is not None:
            codes += sorted(c for c in answer.by_location if c not in codes)
    return list(dict.fromkeys(codes)) or [None]


def instance_type_records(
    item: Any, locations: list[str | None], inputs: Inputs, ctx: ParseContext
) -> list[Record]:
    """The offers of one instance type, one per location; a type that cannot be read costs
    one quarantine line per offer it would have made (a CPU-only type: one skip)."""
    if not isinstance(item, dict):
        return not_an_object(ctx, item)
    name = item.get("instance_type")
    key = name if _is_code(name) else None
    built: list[list[Record]] = []

    def build() -> list[Record]:
        built.append(_build(item, key, locations, inputs, ctx))
        return built[0]

    records = contracted(ctx, item, INSTANCE_TYPE_CONTRACT, offer_key=key, build=build)
    if built:
        # Built: each line already names its offer (or the type, for a side field).
        return records
    return [line for record in records for line in _per_location(record, key, locations)]


def _per_location(record: Record, name: str | None, locations: list[str | None]) -> list[Record]:
    """A quarantine line per offer the type would have made, each with that offer's key (so
    each keeps its last state, stale); without a readable name the lines have no key."""
    if not isinstance(record, QuarantineRecord):
        return [record]
    return [
        record.model_copy(update={"offer_key": _offer_key(name, location)})
        for location in locations
    ]


def _offer_key(name: str | None, location: str | None) -> str | None:
    if name is None or location is None:
        return name
    return f"{name}/{location}"


def _build(
    item: dict[str, Any],
    name: str | None,
    locations: list[str | None],
    inputs: Inputs,
    ctx: ParseContext,
) -> list[Record]:
    if name is None:
        raise FieldProblem(
            INVALID_VALUE, "instance_type", f"instance_type is {item.get('instance_type')!r}"
        )
    gpu = item["gpu"]
    if not isinstance(gpu, dict):
        raise FieldProblem(INVALID_VALUE, "gpu", f"gpu is not an object: {gpu!r}")
    count = _gpu_count(gpu)
    raw_name = require(gpu, "description")
    written, _ = split_gpu_count(str(raw_name))
    if written is not None and written != count:
        raise FieldProblem(
            INVALID_VALUE, "gpu.description", f"{raw_name!r} disagrees with number_of_gpus {count}"
        )
    side: list[Record] = []
    vram = _vram_per_card(
        item,
        count,
        set_aside_at=lambda p: side.extend(set_aside(ctx, p, offer_key=name, item=item)),
    )
    identity = identify_gpu(raw_name, field="gpu.description", vram_gb=vram)
    price = to_price(require(item, "price_per_hour"), "price_per_hour")
    currency = _currency(item.get("currency"))
    spot = _spot_price(item, name, ctx, side)
    fees = _fees(item, inputs.volume_types)
    records: list[Record] = []
    for location in locations:
        key = _offer_key(name, location) or name
        stock = _stock(name, location, inputs)
        if isinstance(stock, FieldProblem):
            # Kept out: the warehouse keeps this offer's last good state, stale.
            records.append(_stand_in(ctx, stock, "stock unreadable", key, item))
            continue
        plans: tuple[PricePlan, ...] = ()
        if spot is not None:
            here = _spot_here(name, location, inputs)
            if isinstance(here, FieldProblem):
                side.append(_stand_in(ctx, here, "spot plan left out", key, item))
            elif here:
                plans = (_plan(spot, currency),)
        records.append(
            gpu_offer(
                ctx,
                offer_key=key,
                raw=item,
                gpu=identity,
                raw_gpu_name=raw_name,
                gpu_count=count,
                stock=stock,
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


def _stock(name: str, location: str | None, inputs: Inputs) -> Availability | FieldProblem:
    """The on-demand stock of one offer, or why the on-demand answer cannot say."""
    return _listed(name, location, inputs.on_demand, inputs.missing_reason("on_demand"))


def _spot_here(name: str, location: str | None, inputs: Inputs) -> bool | FieldProblem:
    """Whether the spot plan goes on the offer: it follows the spot answer alone (never the
    on-demand one); where that answer cannot say, why (the plan is then left out)."""
    listed = _listed(name, location, inputs.spot, inputs.missing_reason("spot"))
    if isinstance(listed, FieldProblem):
        return listed
    return listed.status is StockStatus.IN_STOCK


def _listed(
    name: str, location: str | None, answer: Availabilities | None, missing: str
) -> Availability | FieldProblem:
    if answer is None:
        return FieldProblem(MISSING_FIELD, "availabilities", missing)
    flag = answer.listed(name, location)
    if flag is None:
        return answer.problem_at(location) or FieldProblem(
            MISSING_FIELD, "availabilities", "availability cannot say"
        )
    return availability_from_flag(flag)


def _stand_in(
    ctx: ParseContext, problem: FieldProblem, what: str, key: str, item: dict[str, Any]
) -> Record:
    """The quarantine line that stands in for what an availability answer cannot say."""
    return make_quarantine(
        ctx,
        reason=f"{problem.code}: {what}: {problem.detail}",
        field=problem.field,
        raw=item,
        offer_key=key,
    )


def _gpu_count(gpu: dict[str, Any]) -> int:
    """`number_of_gpus`, else the count the description writes ("8x H100 SXM5 80GB")."""
    if gpu.get("number_of_gpus") is not None:
        count = to_int(gpu["number_of_gpus"], "gpu.number_of_gpus")
    else:
        written, _ = split_gpu_count(str(gpu.get("description") or ""))
        if written is None:
            raise FieldProblem(
                MISSING_FIELD, "gpu.number_of_gpus", "no number_of_gpus and no count in the name"
            )
        count = written
    if count == 0:
        # Verda's CPU nodes: an instance type without a card is no GPU rental (rule 9).
        raise Skip(SkipKind.NOT_A_GPU_OFFER, "CPU-only instance type (number_of_gpus 0)")
    if not 0 < count <= MAX_GPUS:
        raise FieldProblem(
            INVALID_VALUE, "gpu.number_of_gpus", f"number_of_gpus is not a card count: {count}"
        )
    return count


def _vram_per_card(
    item: dict[str, Any], count: int, *, set_aside_at: Callable[[FieldProblem], None]
) -> int | None:
    """The memory per card from `gpu_memory` (all cards), a hint to the catalog; a hint that
    is not a plausible size is set aside and the name alone decides."""
    memory = item.get("gpu_memory")
    total = memory.get("size_in_gigabytes") if isinstance(memory, dict) else None
    if total is None:
        return None
    where = "gpu_memory.size_in_gigabytes"
    try:
        size = to_decimal(total, where)
        if not 0 < size <= MAX_VRAM_GB * count:
            raise FieldProblem(INVALID_VALUE, where, f"{where} is not a memory size: {total!r}")
    except FieldProblem as problem:
        set_aside_at(problem)
        return None
    # A hint only (the catalog snaps it to a nominal size): whole GB are enough.
    return int((size / count).to_integral_value())


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


def _is_code(value: Any) -> TypeGuard[str]:
    """A name or code as the answers write them: non-empty text."""
    return isinstance(value, str) and bool(value.strip())
