"""矩池云 Matpool market (`GET /api/machines` -> `{code, msg, machines, pagination}`).

Field meanings (PROVIDERS.md A3; Aoblex/matpool-cli docs/api-notes.md and its synthetic
fixture, shared/data/provider-samples/matpool/):

* `code`: 0 is success (the HTTP status is 200 either way).
* `agentId` (the host) and `resourceID`: the offer identity. There is no top-level `id`.
* `gpu{available,total}`: free and total cards; `unit{available,total}`: the allocation
  units ("份") the market rents, `gpu.total / unit.total` cards each.
* `hardware.gpu.gpuName`: the card; `hardware.priceMillicent`: the list price per unit per
  hour (元/小时/份, as quziang/matpool-gpu references/inventory.md reads the same field on
  the sister endpoint `/machine_pools`) in millicent (1 CNY = 100,000 millicent: `MATPOOL_PRICE_SCALE`, an inferred scale);
  `hardware.discountPriceMillicent`: the discounted price, kept as a `member` plan.

Billing terms (SECONDARY, third-party transcription 2026-10, PROVIDERS.md A3): the boot phase
is not billed (nothing to add to the price), and 5 GB of network disk are free. The rate
beyond 5 GB is not in our sources, so that fee row carries amount 0 and is optional: the
cost engine does not count it (see its note).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from gpurent.model import (
    AddonFee,
    BillingUnit,
    FeeBasis,
    FeeType,
    PriceBasis,
    PriceKind,
    PricePlan,
)
from gpurent.normalize.availability import UNKNOWN, Availability, availability_from_counts
from gpurent.normalize.price import MATPOOL_PRICE_SCALE, from_minor_units
from spiders.parsers.common import (
    INVALID_VALUE,
    MISSING_FIELD,
    PRICE_UNPARSED,
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
)

CURRENCY = "CNY"
ENDPOINT_URL = "https://matpool.com/api/machines"
# Keys every machine carries (the free counts included: without them all stock is unknown).
CORE_KEYS = ("agentId", "hardware", "gpu")
# Business codes seen on Matpool's API for a refused token. 176 "check jwt token failed"
# was observed (HTTP 200) on the same web API under its matgo.cn domain
# (quziang/matpool-gpu references/web-api.md); other auth codes are not known.
AUTH_FAILED_CODES = frozenset({176})

_SOURCE = "Matpool terms via third-party doc, 2026-10"
NETWORK_DISK_FEE = AddonFee(
    fee_type=FeeType.DATA_DISK,
    amount=Decimal(0),
    currency=CURRENCY,
    unit=BillingUnit.MONTH,
    basis=FeeBasis.GB,
    included_quantity=Decimal(5),
    mandatory=False,
    charged_while_stopped=True,
    note=(
        "network disk: first 5 GB free; the rate beyond 5 GB is not published in our "
        f"sources (amount 0 means unknown, not free) ({_SOURCE})"
    ),
)
ADDON_FEES: tuple[AddonFee, ...] = (NETWORK_DISK_FEE,)


@dataclass
class MachinesPage(PageResult):
    num_pages: int | None = None
    """`pagination.numPages`: pages in the whole market at this page size."""
    auth_rejected: bool = False
    api_error: str | None = None
    """A `code` other than 0 (and not an auth code): the API answered, but with an error."""


def machines_query(*, page: int, per_page: int) -> dict[str, str]:
    """GPU machines (`machine_category=0`); `page` and `per_page` are required by the API."""
    return {"page": str(page), "per_page": str(per_page), "machine_category": "0"}


def parse_machines(data: Any, ctx: ParseContext) -> MachinesPage:
    if not isinstance(data, dict) or "code" not in data:
        return MachinesPage(layout_error="no 'code' envelope in the answer")
    code = data.get("code")
    if code in AUTH_FAILED_CODES:
        return MachinesPage(auth_rejected=True)
    if code != 0:
        msg = str(data.get("msg") or "")[:80]
        return MachinesPage(api_error=f"code {code!r}: {msg}")
    machines = data.get("machines")
    if not isinstance(machines, list):
        return MachinesPage(layout_error="no 'machines' list in a code 0 answer")
    page = MachinesPage()
    pagination = data.get("pagination")
    num_pages = pagination.get("numPages") if isinstance(pagination, dict) else None
    if isinstance(num_pages, int) and not isinstance(num_pages, bool) and num_pages >= 0:
        page.num_pages = num_pages
    else:
        page.notes.append("machines without a usable pagination.numPages: read one page only")
    for machine in machines:
        page.records.extend(machine_records(machine, ctx))
    missing = keys_missing_everywhere(machines, CORE_KEYS)
    if missing:
        page.layout_error = f"no machine carries {', '.join(missing)}"
    return page


def offer_key(machine: dict[str, Any]) -> str | None:
    """`<agentId>/<resourceID>` (or the agentId alone when there is no resourceID)."""
    agent = machine.get("agentId")
    if isinstance(agent, bool) or not isinstance(agent, int | str) or not str(agent).strip():
        return None
    resource = machine.get("resourceID")
    if isinstance(resource, int | str) and not isinstance(resource, bool) and str(resource):
        return f"{agent}/{resource}"
    return str(agent)


def machine_records(machine: Any, ctx: ParseContext) -> list[Record]:
    if not isinstance(machine, dict):
        return [
            make_quarantine(
                ctx, reason="not_an_offer: not an object", field=None, raw=str(machine),
                offer_key=None,
            )
        ]  # fmt: skip
    key = offer_key(machine)
    return guarded(ctx, offer_key=key, raw=machine, build=lambda: _build(machine, key, ctx))


def _build(machine: dict[str, Any], key: str | None, ctx: ParseContext) -> list[Record]:
    if key is None:
        raise FieldProblem(MISSING_FIELD, "agentId", "agentId is missing")
    hardware = _object(machine, "hardware", "hardware")
    raw_name = require(_object(hardware, "gpu", "hardware.gpu"), "gpuName")
    identity = identify_gpu(raw_name, field="hardware.gpu.gpuName")
    price = _millicent(hardware, "priceMillicent")
    cards = _cards_per_unit(machine)
    side: list[Record] = []
    plans = _discount_plan(hardware, price, key, ctx, side)
    availability, problem = _availability(machine, need=cards)
    if problem is not None:
        side.append(field_quarantine(ctx, problem, offer_key=key, item=machine))
    record = make_offer(
        ctx,
        offer_key=key,
        raw=machine,
        **gpu_fields(identity, raw_name),
        # One allocation unit is what one price buys: `cards` cards.
        gpu_count=cards,
        status=availability.status,
        available_count=availability.available_count,
        price=price,
        currency=CURRENCY,
        billing_unit=BillingUnit.HOUR,
        price_basis=PriceBasis.INSTANCE,
        price_kind=PriceKind.ON_DEMAND,
        region=None,
        url=ENDPOINT_URL,
        fees=ADDON_FEES,
        plans=plans,
    )
    return [record, *side]


def _object(item: Any, key: str, where: str) -> dict[str, Any]:
    value = item.get(key) if isinstance(item, dict) else None
    if not isinstance(value, dict):
        raise FieldProblem(MISSING_FIELD, where, f"{where} is missing")
    return value


def _millicent(hardware: dict[str, Any], key: str) -> Decimal:
    value = hardware.get(key)
    if value is None:
        raise FieldProblem(MISSING_FIELD, key, f"{key} is missing")
    try:
        amount = from_minor_units(value, MATPOOL_PRICE_SCALE)
    except ValueError as exc:
        raise FieldProblem(PRICE_UNPARSED, key, str(exc)) from None
    if amount < 0:
        raise FieldProblem(PRICE_UNPARSED, key, f"{key} is negative: {value}")
    return amount


def _cards_per_unit(machine: dict[str, Any]) -> int:
    """Cards in one allocation unit: gpu.total / unit.total (the console's `unitStep`).

    1 when the unit counts are absent; a ratio that is not a whole number of cards
    quarantines the offer (its price could not be read per card).
    """
    gpu, unit = machine.get("gpu"), machine.get("unit")
    if not isinstance(gpu, dict) or not isinstance(unit, dict):
        return 1
    cards, units = optional_int(gpu, "total"), optional_int(unit, "total")
    if cards is None or not units:
        return 1
    if cards <= 0 or units < 0 or cards % units:
        raise FieldProblem(
            INVALID_VALUE, "unit", f"gpu.total {cards} is not a whole number of units {units}"
        )
    return cards // units


def _discount_plan(
    hardware: dict[str, Any], price: Decimal, key: str, ctx: ParseContext, side: list[Record]
) -> tuple[PricePlan, ...]:
    if hardware.get("discountPriceMillicent") is None:
        return ()
    try:
        discount = _millicent(hardware, "discountPriceMillicent")
        if discount > price:
            raise FieldProblem(
                INVALID_VALUE,
                "discountPriceMillicent",
                f"discount price {discount} above the list price {price}",
            )
    except FieldProblem as problem:
        # The list-price offer stands; the bad discount is set aside on its own line.
        side.append(field_quarantine(ctx, problem, offer_key=key, item=hardware))
        return ()
    if discount == price:
        return ()  # no discount on this machine
    return (
        PricePlan(
            price=discount,
            currency=CURRENCY,
            billing_unit=BillingUnit.HOUR,
            price_basis=PriceBasis.INSTANCE,
            price_kind=PriceKind.MEMBER,
        ),
    )


def _availability(
    machine: dict[str, Any], *, need: int
) -> tuple[Availability, FieldProblem | None]:
    """Stock from gpu{available,total}: missing is `unknown` (rule of truth 1); fewer free
    cards than one unit takes is `low`. Bad counts are `unknown`, their field quarantined."""
    gpu = machine.get("gpu")
    if not isinstance(gpu, dict):
        return UNKNOWN, None
    try:
        free = optional_int(gpu, "available")
        total = optional_int(gpu, "total")
        return availability_from_counts(free, total, need=need), None
    except FieldProblem as problem:
        return UNKNOWN, FieldProblem(problem.code, "gpu", problem.detail)
    except ValueError as exc:  # more free than total, negative counts
        return UNKNOWN, FieldProblem(INVALID_VALUE, "gpu", str(exc))
