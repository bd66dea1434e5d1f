"""恒源云 GPUShare market machine list (`GET /app/api/market/machine/list` -> `{data: {list, total}}`).

Field meanings (from public monitor scripts that call the market list):

* `id`, `machineName`: the host; `isOnline` (bool): the host is up.
* `gpuNum` (cards on the host) and `gpuUsed` (cards rented): free = gpuNum - gpuUsed.
* `baseInfo.gpuName`: the card model (no VRAM field: the name must say it where the
  catalog has several sizes).
* `skuList[{skuName, price}]`: prices in CNY. `skuName: "payg"` is pay-as-you-go per hour
  (the monitors print it as `¥{price}/h`): our headline price.

Our reading (assumptions, not documented by GPUShare):

* One card is the unit rented, as on the console's "hire" form (pick a host, then the card
  count): price per GPU, `gpu_count` 1, `available_count` the free cards of the host.
* The other `skuName` values are the day/week/month packages the site sells; we read them
  as `"day"`, `"week"`, `"month"` (and `"year"`), each a commitment plan priced per card for
  the whole period. Any other skuName is set aside as a quarantine line beside the offer.
* `isOnline: false`: the platform says the host cannot be rented now, so the offer is
  `sold_out` whatever its counts (with no free count: cards on a host that is down are not
  free). `isOnline: null` (undocumented) is unknown stock. A host without the `isOnline` key,
  or without `gpuNum`/`gpuUsed`, is drift (MACHINE_CONTRACT): quarantined, never read from
  what is left (a renamed `isOnline` read from the counts turns offline hosts in stock).

Platform-wide add-on fees (the optional /hy-nas shared storage) come from the billing facts
(billing_facts.toml in this folder), as for every provider.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from gpurent_core.billing_facts import platform_fees
from gpurent_core.host import cuda_version
from gpurent_core.model import AddonFee, BillingUnit, PriceBasis, PriceKind, PricePlan
from gpurent_core.normalize.availability import (
    UNKNOWN,
    Availability,
    availability_from_counts,
    availability_from_flag,
)
from spiders.parsers.common import (
    INVALID_VALUE,
    MISSING_FIELD,
    PRICE_UNPARSED,
    FieldProblem,
    PageResult,
    ParseContext,
    Record,
    counted_stock,
    gpu_offer,
    id_text,
    identify_gpu,
    make_quarantine,
    optional_int,
    price_plan,
    require,
    set_aside,
    to_price,
)
from spiders.parsers.contract import Contract, apply_check, check_items, contracted
from spiders.parsers.envelope import answer_keys, listing_size

CURRENCY = "CNY"
# The console's rent form for one host, as the public monitor scripts link it.
HIRE_URL = "https://www.gpushare.com/store/hire/create?id={id}&models=-1&skuName=payg"
PAYG_SKU = "payg"
# Package skuNames (our assumption, see the module docstring) and the period each covers.
PLAN_SKUS: dict[str, BillingUnit] = {
    "day": BillingUnit.DAY,
    "week": BillingUnit.WEEK,
    "month": BillingUnit.MONTH,
    "year": BillingUnit.YEAR,
}

SKU_NAME, SKU_PRICE = "skuName", "price"
SKU_NAME_PATH, SKU_PRICE_PATH = f"skuList.{SKU_NAME}", f"skuList.{SKU_PRICE}"


class MachineContract(Contract):
    """The machine contract, with the two keys read inside each `skuList` entry (a list,
    which dotted paths do not enter): `skuList.skuName` is gone when an entry lacks it;
    `skuList.price` when the payg entry lacks it, or, on a machine without a payg entry,
    when no entry has it (the key is gone, not just the hourly plan)."""

    def gone_paths(self, item: Mapping[str, Any]) -> list[str]:
        gone = super().gone_paths(item)
        skus = item.get("skuList")
        entries = [s for s in skus if isinstance(s, Mapping)] if isinstance(skus, list) else []
        if any(SKU_NAME not in entry for entry in entries):
            gone.append(SKU_NAME_PATH)
        payg = [e for e in entries if e.get(SKU_NAME) == PAYG_SKU]
        if payg:
            price_gone = any(SKU_PRICE not in e for e in payg)
        else:
            price_gone = bool(entries) and all(SKU_PRICE not in e for e in entries)
        if price_gone:
            gone.append(SKU_PRICE_PATH)
        return gone


# What a machine cannot be trusted without (rule of truth 9): the stock fields included,
# since their loss would quietly turn the market "unknown", or offline hosts in stock; the
# payg price is read inside `skuList` (see MachineContract).
MACHINE_CONTRACT = MachineContract(
    "machine",
    identity=("id", "baseInfo.gpuName"),
    price=("skuList", SKU_NAME_PATH, SKU_PRICE_PATH),
    stock=("isOnline", "gpuNum", "gpuUsed"),
)
CONTRACTS: tuple[Contract, ...] = (MACHINE_CONTRACT,)

# Platform-wide fees from the billing facts (billing_facts.toml in this folder).
ADDON_FEES: tuple[AddonFee, ...] = platform_fees("gpushare")


@dataclass
class MachineListPage(PageResult):
    total: int | None = None
    """`data.total`: machines in the whole market (all pages)."""
    count: int = 0
    """Machines in this page's list (quarantined ones included)."""


def list_query(*, page: int, page_size: int) -> dict[str, str]:
    """The console's query: every card model (`models=-1`, empty `gpuName`), cheapest first.

    No free-card filter: sold-out hosts are part of what we track.
    """
    return {
        "models": "-1",
        "gpuName": "",
        "priceOrder": "asc",
        "pn": str(page),
        "ps": str(page_size),
    }


def parse_machine_list(data: Any, ctx: ParseContext) -> MachineListPage:
    payload = data.get("data") if isinstance(data, dict) else None
    machines = payload.get("list") if isinstance(payload, dict) else None
    if not isinstance(payload, dict) or not isinstance(machines, list):
        keys = answer_keys(data)
        return MachineListPage(layout_error=f"no 'data.list' in the answer (got {keys})")
    page = MachineListPage(count=len(machines))
    page.total = listing_size(payload.get("total"), least=0)
    if page.total is None:
        page.notes.append("machine list without a usable data.total: read one page only")
    for machine in machines:
        page.records.extend(machine_records(machine, ctx))
    apply_check(page, check_items(machines, MACHINE_CONTRACT))
    return page


def machine_records(machine: Any, ctx: ParseContext) -> list[Record]:
    return contracted(
        ctx,
        machine,
        MACHINE_CONTRACT,
        offer_key=lambda m: id_text(m.get("id")),
        build=lambda: _build(machine, id_text(machine.get("id")), ctx),
    )


def _build(machine: dict[str, Any], key: str | None, ctx: ParseContext) -> list[Record]:
    if key is None:
        raise FieldProblem(MISSING_FIELD, "id", "id is missing")
    base = machine.get("baseInfo")
    if not isinstance(base, dict):
        raise FieldProblem(MISSING_FIELD, "baseInfo", "baseInfo is missing")
    raw_name = require(base, "gpuName")
    identity = identify_gpu(raw_name, field="baseInfo.gpuName")
    skus = machine.get("skuList")
    if not isinstance(skus, list):
        raise FieldProblem(MISSING_FIELD, "skuList", "skuList is missing")
    side: list[Record] = []
    price, plans = _prices(skus, key, ctx, side)
    availability, problem = _availability(machine)
    side.extend(set_aside(ctx, problem, offer_key=key, item=machine))
    record = gpu_offer(
        ctx,
        offer_key=key,
        raw=machine,
        gpu=identity,
        raw_gpu_name=raw_name,
        gpu_count=1,
        stock=availability,
        price=price,
        currency=CURRENCY,
        price_basis=PriceBasis.GPU,
        url=HIRE_URL.format(id=key),
        fees=ADDON_FEES,
        plans=plans,
        # The host's CUDA (`gpuToolkitVersion`) and driver (`gpuDriverVersion`), as listed.
        host={
            "cuda_version": cuda_version(base.get("gpuToolkitVersion")),
            "driver_version": _text(base.get("gpuDriverVersion")),
        },
    )
    return [record, *side]


def _text(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _prices(
    skus: list[Any], key: str, ctx: ParseContext, side: list[Record]
) -> tuple[Decimal, tuple[PricePlan, ...]]:
    """The payg price (required: without it the offer is quarantined) and the package plans.

    A package with a bad price or an unknown skuName is set aside on its own line; the
    offer stands on its payg price.
    """
    payg = [s for s in skus if isinstance(s, dict) and s.get("skuName") == PAYG_SKU]
    if not payg:
        raise FieldProblem(PRICE_UNPARSED, "skuList", "no 'payg' sku: no hourly price")
    price = to_price(payg[0].get("price"), "skuList.payg.price")
    plans: list[PricePlan] = []
    for sku in skus:
        if isinstance(sku, dict) and sku.get("skuName") == PAYG_SKU:
            continue
        name = sku.get("skuName") if isinstance(sku, dict) else None
        unit = PLAN_SKUS.get(name) if isinstance(name, str) else None
        try:
            if unit is None:
                raise FieldProblem(INVALID_VALUE, "skuList", f"unknown skuName {name!r}")
            amount = to_price(sku.get("price"), f"skuList.{name}.price")
        except FieldProblem as problem:
            side.append(
                make_quarantine(
                    ctx, reason=problem.reason, field=problem.field,
                    raw={"skuList": [sku]}, offer_key=key,
                )
            )  # fmt: skip
            continue
        plans.append(price_plan(amount, CURRENCY, PriceBasis.GPU, PriceKind.COMMITMENT, unit))
    return price, tuple(plans)


def _availability(machine: dict[str, Any]) -> tuple[Availability, FieldProblem | None]:
    """`isOnline: false` is sold out; otherwise stock from the counts. A null or unreadable
    flag or count, or counts that contradict each other, make the stock `unknown` (rule of
    truth 1) with that field quarantined beside the offer: GPUShare documents no meaning
    for a null here, and a null flag read from the counts could put an offline host in
    stock."""
    online = machine.get("isOnline")
    if online is False:
        return availability_from_flag(False), None
    if online is not True:
        # null, "false", 0: not the documented flag; read as neither state.
        detail = f"isOnline is not true or false: {online!r}"[:120]
        return UNKNOWN, FieldProblem(INVALID_VALUE, "isOnline", detail)
    return counted_stock("gpuNum", lambda: _free_cards(machine))


def _free_cards(machine: dict[str, Any]) -> Availability:
    total = _count(machine, "gpuNum")
    used = _count(machine, "gpuUsed")
    if used < 0 or used > total:
        raise FieldProblem(INVALID_VALUE, "gpuUsed", f"gpuUsed {used} does not fit gpuNum {total}")
    return availability_from_counts(total - used, total)


def _count(machine: dict[str, Any], key: str) -> int:
    value = optional_int(machine, key)
    if value is None:
        raise FieldProblem(MISSING_FIELD, key, f"{key} is null: stock unknown")
    return value
