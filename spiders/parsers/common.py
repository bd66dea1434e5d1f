"""Building blocks shared by the provider parsers: context, field readers, record builders.

Parsers are pure: given the decoded response and a `ParseContext` (provider, run id,
observation time) they return the same records every time, so a recorded page and
its expected `output.json` make a complete test.

A field that makes an offer untrustworthy raises `FieldProblem`; `guarded()` turns
it into a quarantine record (rule of truth 6: never dropped, never fatal).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from pydantic import ValidationError

from gpurent_core.host import form_interconnect
from gpurent_core.model import (
    AddonFee,
    BillingUnit,
    OfferRecord,
    PriceBasis,
    PriceKind,
    PricePlan,
    QuarantineRecord,
    SkipKind,
    SkipRecord,
)
from gpurent_core.normalize.availability import UNKNOWN, Availability
from gpurent_core.normalize.gpu import GpuIdentity, UnresolvedGpuName, resolve_gpu
from gpurent_core.normalize.price import from_minor_units

Record = OfferRecord | QuarantineRecord | SkipRecord
"""What a parser makes of one item: an offer, a quarantine line (an offer that cannot be
read), or a skip (no GPU rental offer gpurent ranks; counted, never written to the feed)."""

# Quarantine reason codes: the text before ": " in QuarantineRecord.reason.
GPU_UNRESOLVED = "gpu_unresolved"
PRICE_UNPARSED = "price_unparsed"
MISSING_FIELD = "missing_field"
INVALID_VALUE = "invalid_value"
INVALID_RECORD = "invalid_record"
NOT_AN_OFFER = "not_an_offer"
PARSE_ERROR = "parse_error"


@dataclass(frozen=True)
class ParseContext:
    provider: str
    run_id: str
    observed_at: datetime


@dataclass
class PageResult:
    """What one page yielded. `layout_error` set: the page did not have the expected shape."""

    records: list[Record] = field(default_factory=list)
    layout_error: str | None = None
    notes: list[str] = field(default_factory=list)
    missing_fields: list[str] = field(default_factory=list)
    """Declared field paths gone from some item of the page (spiders.parsers.contract)."""
    unread_prefixes: list[str] = field(default_factory=list)
    """Offer-key prefixes of items the page could not read whose identity is still known
    (an item that makes several offers, such as one per region): those offers keep their
    last state, stale, instead of being closed (rule of truth 10)."""
    sold_out_unlisted: list[str] = field(default_factory=list)
    """Offer-key prefixes under which the provider lists only what has capacity: an offer
    it stopped listing there is sold out in its own words (rule of truth 11)."""

    @property
    def offers(self) -> list[OfferRecord]:
        return [r for r in self.records if isinstance(r, OfferRecord)]

    @property
    def skipped(self) -> list[SkipRecord]:
        return [r for r in self.records if isinstance(r, SkipRecord)]


class FieldProblem(ValueError):
    """One field makes the offer untrustworthy; the offer becomes a quarantine line."""

    def __init__(self, code: str, field: str | None, detail: str) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.field = field
        self.detail = detail

    @property
    def reason(self) -> str:
        return f"{self.code}: {self.detail}"


class Skip(Exception):
    """The item is no GPU rental offer gpurent ranks (``SkipKind``): `guarded` makes it a
    skip record, counted by kind, rather than a quarantine line."""

    def __init__(self, kind: SkipKind, detail: str) -> None:
        super().__init__(f"{kind.value}: {detail}")
        self.kind = kind
        self.detail = detail


def make_skip(
    ctx: ParseContext, kind: SkipKind, detail: str, *, offer_key: str | None = None
) -> SkipRecord:
    return SkipRecord(
        provider=ctx.provider,
        run_id=ctx.run_id,
        observed_at=ctx.observed_at,
        offer_key=offer_key,
        skip_kind=kind,
        detail=detail,
    )


def load_json(body: bytes | str) -> Any:
    """Decode JSON with every non-integer number as an exact Decimal (never a float)."""
    text = body.decode("utf-8-sig") if isinstance(body, bytes) else body
    return json.loads(text, parse_float=Decimal)


def require(item: Mapping[str, Any], key: str) -> Any:
    value = item.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise FieldProblem(MISSING_FIELD, key, f"{key} is missing")
    return value


def to_decimal(value: Any, field: str, *, code: str = INVALID_VALUE) -> Decimal:
    """A JSON number (already Decimal/int) or numeric string as Decimal; floats refused."""
    if value is None:
        raise FieldProblem(MISSING_FIELD, field, f"{field} is missing")
    if isinstance(value, bool | float):
        raise FieldProblem(code, field, f"{field} is not an exact number: {_show(value)}")
    if isinstance(value, int | Decimal):
        number = Decimal(value)
    elif isinstance(value, str):
        try:
            number = Decimal(value.strip())
        except InvalidOperation:
            raise FieldProblem(code, field, f"{field} is not a number: {_show(value)}") from None
    else:
        raise FieldProblem(code, field, f"{field} is not a number: {_show(value)}")
    if not number.is_finite():
        raise FieldProblem(code, field, f"{field} is not a finite number: {_show(value)}")
    return number


PRICE_CEILING = Decimal(10) ** 8
"""No rental, fee or plan costs a hundred million currency units per billing unit: a number at
or above it is a bad cell (`1e400`, `10**30`), refused on its item, never stored (the
warehouse's money columns hold at most 8 to 10 integer digits)."""


def to_price(value: Any, field: str) -> Decimal:
    number = to_decimal(value, field, code=PRICE_UNPARSED)
    if number < 0:
        raise FieldProblem(PRICE_UNPARSED, field, f"{field} is negative: {_show(value)}")
    if number >= PRICE_CEILING:
        raise FieldProblem(PRICE_UNPARSED, field, f"{field} is out of range: {_show(value)}")
    return number


HOURLY_PRICE_MAX = Decimal(100_000)
"""No GPU machine rents for this much an hour in any currency we read: a larger hourly
number is a broken value, not a price."""


def hourly_price(value: Any, field: str) -> Decimal:
    """`to_price` of a price per hour, refused beyond `HOURLY_PRICE_MAX`."""
    price = to_price(value, field)
    if price > HOURLY_PRICE_MAX:
        raise FieldProblem(PRICE_UNPARSED, field, f"{field} is no hourly price: {_show(value)}")
    return price


def to_int(value: Any, field: str) -> int:
    number = to_decimal(value, field)
    if number != number.to_integral_value():
        raise FieldProblem(INVALID_VALUE, field, f"{field} is not a whole number: {_show(value)}")
    return int(number)


def optional_int(item: Mapping[str, Any], key: str) -> int | None:
    return None if item.get(key) is None else to_int(item[key], key)


def minor_units(value: Any, scale: int, field: str) -> Decimal:
    """A price counted in 1/`scale` of the currency (AutoDL's 1/1000 CNY, Lambda's cents).

    Whatever the cell holds (a wrong type, a negative, `1e400`), a value that is no price is
    this item's `price_unparsed` naming the field, never an arithmetic error."""
    try:
        return from_minor_units(value, scale)
    except (ValueError, ArithmeticError, TypeError) as exc:
        raise FieldProblem(PRICE_UNPARSED, field, f"{field}: {exc}") from None


def id_text(value: Any) -> str | None:
    """A provider's id (text or a whole number) as an offer key; None when absent or blank."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    text = str(value).strip()
    return text or None


def identify_gpu(
    raw_name: Any,
    *,
    field: str = "gpu_name",
    vram_gb: int | None = None,
    vram_mb: int | None = None,
) -> GpuIdentity:
    """The catalog identity of a provider's GPU name, or a GPU_UNRESOLVED problem (a `Skip`
    when the catalog leaves the name out on purpose: no GPU, a pre-Pascal card, a slice).

    A name that pins a catalog model but not its memory size ("RTX 3060": 8 or 12 GB) comes
    back with ``vram_gb`` None: the offer is kept with its VRAM unknown rather than given a
    guessed size or quarantined. No model at all, several models, or a VRAM figure that fits
    no variant is still a quarantine with the resolver's reason.
    """
    if not isinstance(raw_name, str) or not raw_name.strip():
        raise FieldProblem(MISSING_FIELD, field, f"{field} is missing")
    try:
        return resolve_gpu(raw_name, vram_gb=vram_gb, vram_mb=vram_mb)
    except UnresolvedGpuName as exc:
        reason = getattr(exc, "reason", None) or str(exc)
        if exc.left_out is not None:  # a CPU type, a pre-Pascal card: no offer we rank
            raise Skip(exc.left_out, f"{raw_name!r}: {reason}") from None
        raise FieldProblem(GPU_UNRESOLVED, field, f"{raw_name!r}: {reason}") from None


def counted_stock(
    field: str, read: Callable[[], Availability]
) -> tuple[Availability, FieldProblem | None]:
    """Stock read from counts by `read`; counts that cannot be trusted make it `unknown`
    (rule of truth 1), with the problem returned to be set aside beside the offer. A count the
    availability rules refuse (negative, more free than total) is charged to `field`."""
    try:
        return read(), None
    except FieldProblem as problem:
        return UNKNOWN, problem
    except ValueError as exc:
        return UNKNOWN, FieldProblem(INVALID_VALUE, field, str(exc))


def gpu_fields(identity: GpuIdentity, raw_name: str) -> dict[str, Any]:
    return {
        "gpu_vendor": identity.vendor,
        "gpu_model": identity.model,
        "gpu_vram_gb": identity.vram_gb,
        "gpu_form_factor": identity.form_factor,
        "raw_gpu_name": raw_name,
    }


def make_quarantine(
    ctx: ParseContext,
    *,
    reason: str,
    field: str | None,
    raw: Any,
    offer_key: str | None,
) -> QuarantineRecord:
    return QuarantineRecord(
        provider=ctx.provider,
        run_id=ctx.run_id,
        observed_at=ctx.observed_at,
        offer_key=offer_key,
        reason=reason,
        field=field,
        raw=_jsonable_raw(raw),
    )


def make_offer(ctx: ParseContext, *, offer_key: str, raw: Any, **fields: Any) -> Record:
    """An OfferRecord, or a quarantine line saying which field the contract refused."""
    try:
        return OfferRecord(
            provider=ctx.provider,
            run_id=ctx.run_id,
            observed_at=ctx.observed_at,
            offer_key=offer_key,
            **fields,
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or None
        return make_quarantine(
            ctx,
            reason=f"{INVALID_RECORD}: {where}: {first['msg']}",
            field=where,
            raw=raw,
            offer_key=offer_key,
        )


def gpu_offer(
    ctx: ParseContext,
    *,
    offer_key: str,
    raw: Any,
    gpu: GpuIdentity,
    raw_gpu_name: str,
    gpu_count: int,
    stock: Availability,
    price: Decimal,
    currency: str,
    price_basis: PriceBasis,
    url: str,
    region: str | None = None,
    billing_unit: BillingUnit = BillingUnit.HOUR,
    price_kind: PriceKind = PriceKind.ON_DEMAND,
    fees: Sequence[AddonFee] = (),
    plans: Sequence[PricePlan] = (),
    host: Mapping[str, Any] | None = None,
) -> Record:
    """`make_offer` from the parts every parser has in hand: the card's catalog identity (and
    the name as written), the stock signal and the headline price (hourly, on demand unless
    said otherwise).

    ``host``: what the provider publishes about the host (``gpurent_core.host.HOST_FIELDS``:
    CUDA version, reliability, vCPUs per GPU...), only what it says. The interconnect is
    the one the card's form factor states (SXM, NVL, PCIe) unless ``host`` says it."""
    attributes = dict(host or {})
    if attributes.get("interconnect") is None:
        attributes["interconnect"] = form_interconnect(gpu.form_factor)
    return make_offer(
        ctx,
        offer_key=offer_key,
        raw=raw,
        **gpu_fields(gpu, raw_gpu_name),
        gpu_count=gpu_count,
        status=stock.status,
        available_count=stock.available_count,
        price=price,
        currency=currency,
        billing_unit=billing_unit,
        price_basis=price_basis,
        price_kind=price_kind,
        region=region,
        url=url,
        fees=tuple(fees),
        plans=tuple(plans),
        **attributes,
    )


def measure(value: Any, places: int = 2, *, per: Any = 1) -> Decimal | None:
    """A host measure the provider publishes (vCPUs, GB, GB/s, a score) as a Decimal rounded
    to ``places``, divided by ``per`` (cards, to get a per-GPU figure); None where it is
    absent, no number, negative, or ``per`` is no positive number: an optional attribute
    left unknown, never guessed (and never costing the offer)."""
    numbers = []
    for raw in (value, per):
        if isinstance(raw, bool) or not isinstance(raw, int | float | str | Decimal):
            return None
        try:
            number = Decimal(str(raw).strip())
        except InvalidOperation:
            return None
        if not number.is_finite() or number < 0:
            return None
        numbers.append(number)
    amount, divisor = numbers
    if divisor == 0:
        return None
    return (amount / divisor).quantize(Decimal(1).scaleb(-places)).normalize() + 0


def price_plan(
    price: Decimal,
    currency: str,
    basis: PriceBasis,
    kind: PriceKind,
    unit: BillingUnit = BillingUnit.HOUR,
) -> PricePlan:
    """Another way to rent the same offer (spot, member, a package), hourly unless said."""
    return PricePlan(
        price=price, currency=currency, billing_unit=unit, price_basis=basis, price_kind=kind
    )


def guarded(
    ctx: ParseContext, *, offer_key: str | None, raw: Any, build: Callable[[], list[Record]]
) -> list[Record]:
    """Run one offer's builder; a `Skip` becomes its skip record, a FieldProblem that offer's
    quarantine line, and so does any other failure while building it (item isolation: an input no reader foresaw
    costs that item, never the page)."""
    try:
        return build()
    except Skip as skip:
        return [make_skip(ctx, skip.kind, skip.detail, offer_key=offer_key)]
    except FieldProblem as problem:
        return [
            make_quarantine(
                ctx, reason=problem.reason, field=problem.field, raw=raw, offer_key=offer_key
            )
        ]
    except Exception as exc:  # isolation is the point; the reason names the failure
        return [
            make_quarantine(
                ctx,
                reason=f"{PARSE_ERROR}: {type(exc).__name__}: {str(exc)[:160]}",
                field=None,
                raw=raw,
                offer_key=offer_key,
            )
        ]


def field_quarantine(
    ctx: ParseContext, problem: FieldProblem, *, offer_key: str | None, item: Mapping[str, Any]
) -> QuarantineRecord:
    """A quarantine line for one bad field of an offer that is kept (its other fields hold)."""
    name = problem.field
    raw = {name: item.get(name)} if name is not None and name in item else dict(item)
    return make_quarantine(
        ctx, reason=problem.reason, field=problem.field, raw=raw, offer_key=offer_key
    )


def set_aside(
    ctx: ParseContext,
    problem: FieldProblem | None,
    *,
    offer_key: str | None,
    item: Mapping[str, Any],
) -> list[Record]:
    """The quarantine line of a bad side field (none when `problem` is None)."""
    if problem is None:
        return []
    return [field_quarantine(ctx, problem, offer_key=offer_key, item=item)]


def kept_price(
    ctx: ParseContext,
    item: Mapping[str, Any],
    key: str,
    *,
    offer_key: str | None,
    side: list[Record],
) -> Decimal | None:
    """`item[key]` as the price of a plan or fee beside an offer: None when absent; a bad value
    is set aside on its own quarantine line in `side`, and the offer stands without it."""
    if item.get(key) is None:
        return None
    try:
        return to_price(item[key], key)
    except FieldProblem as problem:
        side.extend(set_aside(ctx, problem, offer_key=offer_key, item=item))
        return None


def not_an_object(ctx: ParseContext, item: Any, detail: str = "not an object") -> list[Record]:
    """The quarantine line of a list entry that is not an object at all (no key to give it)."""
    return [
        make_quarantine(
            ctx, reason=f"{NOT_AN_OFFER}: {detail}", field=None, raw=str(item), offer_key=None
        )
    ]


def keys_missing_everywhere(items: Iterable[Any], keys: Iterable[str]) -> list[str]:
    """Keys that no dict item carries: a renamed field, not one odd offer."""
    dicts = [item for item in items if isinstance(item, dict)]
    if not dicts:
        return []
    return [key for key in keys if all(key not in item for item in dicts)]


def renamed_fields(items: Iterable[Any], keys: Iterable[str], noun: str) -> str | None:
    """The layout error when no `noun` carries one of `keys`, else None."""
    missing = keys_missing_everywhere(items, keys)
    return f"no {noun} carries {', '.join(missing)}" if missing else None


def feed_dicts(records: Iterable[Record]) -> list[dict[str, Any]]:
    return [record.model_dump(mode="json") for record in records]


def _show(value: Any) -> str:
    # Decimals as written ("-0.1"), anything else as Python shows it ('n/a').
    if isinstance(value, Decimal):
        # Plain digits unless absurdly long: 1e400 is shown as 1E+400, not 401 characters.
        plain = value.is_finite() and -30 < value.adjusted() < 30
        return format(value, "f") if plain else str(value)
    return repr(value)


def _jsonable_raw(raw: Any) -> dict[str, Any] | str | None:
    # Decimals become strings: exact, and the feed stays plain JSON.
    if raw is None or isinstance(raw, str):
        return raw
    text = json.dumps(raw, default=_json_default, ensure_ascii=False)
    decoded = json.loads(text)
    return decoded if isinstance(decoded, dict) else text


def _json_default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return format(value, "f")
    return str(value)
