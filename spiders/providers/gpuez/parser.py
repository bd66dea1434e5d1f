"""GpuEZ whole-machine list (`GET /zsc/open/api/v2/machine/list` ->
`{code, message, trace, data: {list: [...]}}`).

The shape is GpuEZ's documented one (its developer documentation, "整机列表",
developer.gpuez.com/release/API文档/整机列表; recordings/PROVENANCE). Per machine of `data.list`:
`id` (the host), `name`, `type` (4: bare metal), `area_id`, `gpu_id`, `gpu_count` (the cards
of the machine), `cpu_model`, `cpu_count` (cores), `mem_size`, `physics_system_disk_size`,
`system_disk_size` and `data_disk_size` (bytes), `cuda_version`, `price_week` and `price_month`
(text: the week and month package prices), `ended_at` (the last time it can be rented until),
`area_stat: {id, name}` and `gpu_stat: {id, vendor, model, mem_size, tf_lops16}`.

Our reading (assumptions, each said in PROVENANCE):

* envelope `code` 0 is success (the documentation calls `code` an error code without listing
  its values); any other code is an API error with its `message`. A `data.list` of null is an
  empty page (an empty list as a Go service writes it), never a layout change.
* One offer per machine, keyed by its `id`. The prices are CNY (元, decimal text) for the whole
  machine (`gpu_count` cards), prepaid packages: the week price is the headline and the month
  price a plan; a machine priced by the month only has that as its headline. An empty or zero
  price is no package of that term; a machine with neither is skipped (no public price).
* Stock: the list answers no stock question (no free-card count, no state), so every offer's
  stock is `unknown`: never in stock, never sold out. `ended_at` is read only for the longest
  rental from the observation (`max_rental_hours`), written "YYYY-MM-DD HH:MM:SS" in China
  time or ISO 8601 with an offset; any other text, or a zero date, leaves it unknown.
* `gpu_stat.mem_size` (VRAM; its unit is not documented) is read by its size: below 1024 it is
  whole GB, below 1024² MiB, from 1024³ bytes (a card's memory falls in one range only).
* `mem_size` and the disk sizes are bytes, counted per GiB (as gpurent counts GB elsewhere);
  the disk is the rental's system disk plus its data disk.
* A machine of `gpu_count` 0 is CPU only: skipped (counted).

Contract (`MACHINE`): `id`, `gpu_count` and `gpu_stat.model` (identity), `price_week` or
`price_month` (price), `ended_at` (stock role: the one availability fact the list gives, read
for no stock, but gone from every machine the layout changed). A key gone from one machine
quarantines it; gone from every machine is a layout error (never "sold out").
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

from gpurent_core.host import cuda_version
from gpurent_core.model import BillingUnit, PriceBasis, PriceKind, PricePlan, SkipKind
from gpurent_core.normalize.availability import UNKNOWN
from spiders.parsers.common import (
    INVALID_VALUE,
    MISSING_FIELD,
    FieldProblem,
    ParseContext,
    Record,
    Skip,
    gpu_offer,
    id_text,
    identify_gpu,
    measure,
    price_plan,
    require,
    set_aside,
    to_int,
    to_price,
)
from spiders.parsers.contract import Contract, apply_check, check_items, contracted
from spiders.parsers.envelope import ApiPage, code_envelope

CURRENCY = "CNY"
SITE_URL = "https://gpuez.com/"
OK_CODE = 0
BARE_METAL = 4
"""`machine_type` 4, bare metal: the one machine type the documentation lists (required)."""
MIB = 1024**2
GIB = 1024**3
CHINA_TIME = timezone(timedelta(hours=8), "CST")
NO_DATE_BEFORE = 2000
"""A year before this is a zero date ("0001-01-01"), which says no end rather than one."""
STOCK_KEY = "ended_at"
MACHINE = Contract(
    "machine",
    identity=("id", "gpu_count", "gpu_stat.model"),
    price=("price_week|price_month",),
    stock=(STOCK_KEY,),
)
CONTRACTS: tuple[Contract, ...] = (MACHINE,)
TERMS: tuple[tuple[str, BillingUnit], ...] = (
    ("price_week", BillingUnit.WEEK),
    ("price_month", BillingUnit.MONTH),
)
"""The package terms, shortest first: the first one priced is the headline."""


@dataclass
class MachinePage(ApiPage):
    """A page of the machine list (an envelope `code` other than 0 is an API error)."""

    listed: int = 0
    """Machines in the page's list, read or not: a full page asks for the next one."""


def parse_machine_list(data: Any, ctx: ParseContext) -> MachinePage:
    problem = code_envelope(data, code_key="code", ok=OK_CODE, message_key="message")
    if problem is not None:
        return MachinePage.unanswered(problem)
    payload = data.get("data")
    if not isinstance(payload, dict) or "list" not in payload:
        return MachinePage(layout_error="no 'data.list' in a code 0 answer")
    machines = [] if payload["list"] is None else payload["list"]
    if not isinstance(machines, list):
        return MachinePage(layout_error=f"data.list is not a list: {type(machines).__name__}")
    page = MachinePage(listed=len(machines))
    for machine in machines:
        page.records.extend(machine_records(machine, ctx))
    apply_check(page, check_items(machines, MACHINE))
    return page


def offer_key(machine: Any) -> str | None:
    """The machine's `id`: never dependent on anything the list may say of its stock."""
    return id_text(machine.get("id")) if isinstance(machine, dict) else None


def machine_records(machine: Any, ctx: ParseContext) -> list[Record]:
    key = offer_key(machine)
    return contracted(ctx, machine, MACHINE, offer_key=key, build=lambda: _build(machine, key, ctx))


def _build(machine: dict[str, Any], key: str | None, ctx: ParseContext) -> list[Record]:
    if key is None:
        raise FieldProblem(INVALID_VALUE, "id", f"id is no id: {machine.get('id')!r:.40}")
    count = to_int(require(machine, "gpu_count"), "gpu_count")
    if count == 0:
        raise Skip(SkipKind.NOT_A_GPU_OFFER, "gpu_count 0: a machine without a card")
    if count < 0:
        raise FieldProblem(INVALID_VALUE, "gpu_count", f"gpu_count is negative: {count}")
    card = machine.get("gpu_stat")
    if not isinstance(card, dict):
        raise FieldProblem(MISSING_FIELD, "gpu_stat.model", "gpu_stat is not an object")
    raw_name = card.get("model")
    if not isinstance(raw_name, str):
        raise FieldProblem(MISSING_FIELD, "gpu_stat.model", f"gpu_stat.model is {raw_name!r:.40}")
    vram_gb, vram_mb = _vram(card.get("mem_size"))
    identity = identify_gpu(raw_name, field="gpu_stat.model", vram_gb=vram_gb, vram_mb=vram_mb)
    side: list[Record] = []
    price, unit, plans = _packages(machine, key, ctx, side)
    record = gpu_offer(
        ctx,
        offer_key=key,
        raw=machine,
        gpu=identity,
        raw_gpu_name=raw_name,
        gpu_count=count,
        stock=UNKNOWN,  # the list carries no stock signal
        price=price,
        currency=CURRENCY,
        billing_unit=unit,
        price_basis=PriceBasis.INSTANCE,
        price_kind=PriceKind.COMMITMENT,
        region=_region(machine),
        url=SITE_URL,
        plans=plans,
        host=_host(machine, count, ctx.observed_at),
    )
    return [record, *side]


def _vram(value: Any) -> tuple[int | None, int | None]:
    """`gpu_stat.mem_size` as (GB, MiB), one of them set, read by its size (module
    docstring); neither when it is no positive whole number or falls between the ranges."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return None, None
    if value < 1024:
        return value, None
    if value < MIB:
        return None, value
    if value >= GIB:
        return None, value // MIB
    return None, None


def _packages(
    machine: dict[str, Any], key: str, ctx: ParseContext, side: list[Record]
) -> tuple[Decimal, BillingUnit, list[PricePlan]]:
    """The headline package (the shortest term priced) and the longer ones as plans. An
    unreadable headline price quarantines the machine; an unreadable plan price is set aside
    and the offer stands without that plan."""
    priced: list[tuple[Decimal, BillingUnit]] = []
    for field, unit in TERMS:
        try:
            amount = _package_price(machine.get(field), field)
        except FieldProblem as problem:
            if not priced:
                raise
            side.extend(set_aside(ctx, problem, offer_key=key, item={field: machine.get(field)}))
            continue
        if amount is not None:
            priced.append((amount, unit))
    if not priced:
        raise Skip(SkipKind.NO_PUBLIC_PRICE, "neither a week nor a month price")
    (price, unit), *longer = priced
    plans = [
        price_plan(amount, CURRENCY, PriceBasis.INSTANCE, PriceKind.COMMITMENT, term)
        for amount, term in longer
    ]
    return price, unit, plans


def _package_price(value: Any, field: str) -> Decimal | None:
    """A package price; None when the machine has no package of that term (null, empty text
    or zero: a price of nothing would rank first and is no rental)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    amount = to_price(value, field)
    return amount if amount else None


def _region(machine: dict[str, Any]) -> str | None:
    area = machine.get("area_stat")
    name = area.get("name") if isinstance(area, dict) else None
    return name.strip() or None if isinstance(name, str) else None


def _host(machine: dict[str, Any], count: int, observed_at: datetime) -> dict[str, Any]:
    """What the list says of the machine, per card; each None where it says nothing."""
    return {
        "cuda_version": cuda_version(machine.get("cuda_version")),
        "max_rental_hours": _rentable_hours(machine.get(STOCK_KEY), observed_at),
        "vcpus_per_gpu": measure(machine.get("cpu_count"), 2, per=count),
        "ram_gb_per_gpu": measure(machine.get("mem_size"), 1, per=count * GIB),
        "disk_gb_per_gpu": _disk_gb_per_gpu(machine, count),
    }


def _disk_gb_per_gpu(machine: dict[str, Any], count: int) -> Decimal | None:
    """The rental's system and data disks (bytes) per card; unknown unless both are read."""
    sizes = [measure(machine.get(key), 0) for key in ("system_disk_size", "data_disk_size")]
    if None in sizes:
        return None
    return measure(sum(size for size in sizes if size is not None), 1, per=count * GIB)


def _rentable_hours(value: Any, observed_at: datetime) -> int | None:
    """Whole hours from the observation to `ended_at` (0 once it has passed); None when
    `ended_at` is no readable time."""
    until = _moment(value)
    if until is None:
        return None
    return max((until - observed_at) // timedelta(hours=1), 0)


def _moment(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if moment.year < NO_DATE_BEFORE:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=CHINA_TIME)
