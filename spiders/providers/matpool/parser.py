"""矩池云 Matpool market (`GET /api/machines` -> `{code, msg, machines, pagination}`).

Field meanings (Aoblex/matpool-cli docs/api-notes.md, read from the site's `/fe-next`
bundles, and the synthetic-value example of its shape there):

* `code`: 0 is success (the HTTP status is 200 either way).
* `agentId` (the host) and `resourceID`: the offer identity. There is no top-level `id`.
* `gpu{available,total}`: free and total cards; `unit{available,total}`: the allocation
  units ("份") the market rents, `gpu.total / unit.total` cards each.
* `hardware.gpu.gpuName`: the card; `hardware.priceMillicent`: the list price per unit per
  hour (元/小时/份, as quziang/matpool-gpu references/inventory.md reads the same field on
  the sister endpoint `/machine_pools`) in millicent (1 CNY = 100,000 millicent: `MATPOOL_PRICE_SCALE`, an inferred scale);
  `hardware.discountPriceMillicent`: the discounted price, kept as a `member` plan.

Contract (`MACHINE_CONTRACT`): every machine carries its identity (`agentId`, `resourceID`,
`hardware.gpu.gpuName`), its price (`hardware.priceMillicent`, and `unit.total`, which says
how many cards that price buys) and its stock (`gpu.available`, `gpu.total`). A key gone is
drift: that machine is quarantined, never read as "no count" (unknown) or one card a unit;
gone from every machine it is the page's layout error.

Identity (rule of truth 11): the key is `<agentId>/<resourceID>` whatever the counts say (a
machine with no free card is the same offer, sold out). A quarantine line carries that key,
so the offer keeps its last state, stale. A machine whose `resourceID` key is gone cannot say
which of its host's offers it is: its line has no key, and the page declares `<agentId>/`
unread (`PageResult.unread_prefixes`) so the host's offers are kept rather than closed.

Billing terms (SECONDARY, a third-party report's transcription, 2026-10): the boot phase
is not billed (nothing to add to the price), and 5 GB of network disk are free. The rate
beyond 5 GB is not in our sources, so that fee row carries amount 0 and is optional: the
cost engine does not count it (see its note).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from gpurent_core.billing_facts import platform_fees
from gpurent_core.model import AddonFee, PriceBasis, PriceKind, PricePlan
from gpurent_core.normalize.availability import UNKNOWN, Availability, availability_from_counts
from gpurent_core.normalize.price import MATPOOL_PRICE_SCALE
from spiders.parsers.common import (
    INVALID_VALUE,
    MISSING_FIELD,
    FieldProblem,
    ParseContext,
    Record,
    counted_stock,
    field_quarantine,
    gpu_offer,
    identify_gpu,
    minor_units,
    optional_int,
    price_plan,
    require,
    set_aside,
)
from spiders.parsers.contract import Contract, apply_check, check_items, contracted
from spiders.parsers.envelope import ApiPage, code_envelope, listing_size

CURRENCY = "CNY"
ENDPOINT_URL = "https://matpool.com/api/machines"
# What every machine carries (the free counts included: without them all stock is unknown).
MACHINE_CONTRACT = Contract(
    "machine",
    identity=("agentId", "resourceID", "hardware.gpu.gpuName"),
    price=("hardware.priceMillicent", "unit.total"),
    stock=("gpu.available", "gpu.total"),
)
CONTRACTS: tuple[Contract, ...] = (MACHINE_CONTRACT,)
# Business codes seen on Matpool's API for a refused token. 176 "check jwt token failed"
# was observed (HTTP 200) on the same web API under its matgo.cn domain
# (quziang/matpool-gpu references/web-api.md); other auth codes are not known.
AUTH_FAILED_CODES = frozenset({176})

# Platform-wide fees from the billing facts (billing_facts.toml in this folder). Matpool's
# network-disk rate beyond the free 5 GB is not known, so no fee is declared for it.
ADDON_FEES: tuple[AddonFee, ...] = platform_fees("matpool")


@dataclass
class MachinesPage(ApiPage):
    """A market page (a `code` other than 0, and not an auth code, is an API error)."""

    num_pages: int | None = None
    """`pagination.numPages`: pages in the whole market at this page size."""


def machines_query(*, page: int, per_page: int) -> dict[str, str]:
    """GPU machines (`machine_category=0`); `page` and `per_page` are required by the API."""
    return {"page": str(page), "per_page": str(per_page), "machine_category": "0"}


def parse_machines(data: Any, ctx: ParseContext) -> MachinesPage:
    problem = code_envelope(
        data, code_key="code", ok=0, message_key="msg", auth_codes=AUTH_FAILED_CODES
    )
    if problem is not None:
        return MachinesPage.unanswered(problem)
    machines = data.get("machines")
    if not isinstance(machines, list):
        return MachinesPage(layout_error="no 'machines' list in a code 0 answer")
    page = MachinesPage()
    pagination = data.get("pagination")
    num_pages = pagination.get("numPages") if isinstance(pagination, dict) else None
    page.num_pages = listing_size(num_pages, least=0)
    if page.num_pages is None:
        page.notes.append("machines without a usable pagination.numPages: read one page only")
    for machine in machines:
        page.records.extend(machine_records(machine, ctx))
        page.unread_prefixes.extend(_host_unread(machine))
    apply_check(page, check_items(machines, MACHINE_CONTRACT))
    return page


def offer_key(machine: Any) -> str | None:
    """`<agentId>/<resourceID>` (or the agentId alone when `resourceID` is null or empty);
    None when the `resourceID` key is gone (drift: no key can be told)."""
    agent = _agent(machine)
    if agent is None or "resourceID" not in machine:
        return None
    resource = machine.get("resourceID")
    if isinstance(resource, int | str) and not isinstance(resource, bool) and str(resource):
        return f"{agent}/{resource}"
    return str(agent)


def _agent(machine: Any) -> str | None:
    agent = machine.get("agentId") if isinstance(machine, dict) else None
    if isinstance(agent, bool) or not isinstance(agent, int | str) or not str(agent).strip():
        return None
    return str(agent)


def _host_unread(machine: Any) -> list[str]:
    """`<agentId>/` of a machine whose `resourceID` key is gone: the host's offers it may be."""
    agent = _agent(machine)
    if agent is None or "resourceID" in machine:
        return []
    return [f"{agent}/"]


def machine_records(machine: Any, ctx: ParseContext) -> list[Record]:
    return contracted(
        ctx,
        machine,
        MACHINE_CONTRACT,
        offer_key=offer_key,
        build=lambda: _build(machine, offer_key(machine), ctx),
    )


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
    side.extend(set_aside(ctx, problem, offer_key=key, item=machine))
    record = gpu_offer(
        ctx,
        offer_key=key,
        raw=machine,
        gpu=identity,
        raw_gpu_name=raw_name,
        # One allocation unit is what one price buys: `cards` cards.
        gpu_count=cards,
        stock=availability,
        price=price,
        currency=CURRENCY,
        price_basis=PriceBasis.INSTANCE,
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
    return minor_units(value, MATPOOL_PRICE_SCALE, key)


def _cards_per_unit(machine: dict[str, Any]) -> int:
    """Cards in one allocation unit: gpu.total / unit.total (the console's `unitStep`).

    1 when the card count is not there to divide (the stock is then unknown anyway); a unit
    count that is not one, or a ratio that is not a whole number of cards, quarantines the
    offer (what one price buys could not be read).
    """
    gpu, unit = machine.get("gpu"), machine.get("unit")
    if not isinstance(unit, dict):
        raise FieldProblem(INVALID_VALUE, "unit", f"unit is not an object: {unit!r:.40}")
    units = optional_int(unit, "total")
    if units is None or units < 1:
        raise FieldProblem(INVALID_VALUE, "unit", f"unit.total is no unit count: {units}")
    cards = optional_int(gpu, "total") if isinstance(gpu, dict) else None
    if cards is None:
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
    return (price_plan(discount, CURRENCY, PriceBasis.INSTANCE, PriceKind.MEMBER),)


def _availability(
    machine: dict[str, Any], *, need: int
) -> tuple[Availability, FieldProblem | None]:
    """Stock from gpu{available,total}: missing is `unknown` (rule of truth 1); fewer free
    cards than one unit takes is `low`. Bad counts are `unknown`, their field quarantined."""
    gpu = machine.get("gpu")
    if not isinstance(gpu, dict):
        return UNKNOWN, FieldProblem(INVALID_VALUE, "gpu", f"gpu is not an object: {gpu!r:.40}")
    availability, problem = counted_stock(
        "gpu",
        lambda: availability_from_counts(_free(gpu), optional_int(gpu, "total"), need=need),
    )
    if problem is not None:  # the counts sit in `gpu`: its line shows that object
        problem = FieldProblem(problem.code, "gpu", problem.detail)
    return availability, problem


def _free(gpu: dict[str, Any]) -> int:
    free = optional_int(gpu, "available")
    if free is None:  # present (the contract holds) but null: no count to read
        raise FieldProblem(INVALID_VALUE, "gpu", "gpu.available is null")
    return free
