"""JarvisLabs server meta (`GET /misc/server_meta` -> `{"server_meta": [...], "cpu_meta": ...}`).

Fields per GPU row (gpuhunt's JarvisLabs provider and its test fixture):
`gpu_type` ("L4", "A100-80GB", "RTX-PRO6000"), `region` ("india-noida-01", "europe-01"),
`vram` (GB per card, a string), `price_per_hour` and `spot_price` (USD per GPU-hour: gpuhunt
multiplies them by the card count), `num_free_devices` (free cards now),
`effective_num_free_devices`, `spot_num_free_devices`, `num_gpus` (most cards per
instance, a string), `workload_type` ("container", "vm", or null on older VM rows).

Our offer is one card of a (region, GPU type, workload type): basis `gpu`, `gpu_count` 1,
stock from `num_free_devices` (or `effective_num_free_devices` where it is fewer: the
cards gpuhunt reads as orderable) through `availability_from_counts`: a null count is unknown,
a count that is not a count (-1, "some") makes the stock unknown with the count set aside on
its own line, and a row whose `num_free_devices` key is gone is drift: quarantined by
`CONTRACT`, its last good state kept. `workload_type` is part of the offer's identity (null
on older rows, "any" in the key), so its key going away is drift too. On a container row
`spot_price` becomes a spot plan unless `spot_num_free_devices` says no spot card is free (a
plan carries no stock of its own; a missing count is unknown, so the plan stays); a VM row
(or an older row with no workload type, a VM) gets none: JarvisLabs sells spot for
containers only (gpuhunt's JarvisLabs provider, github.com/dstackai/gpuhunt, removed its
spot offers for that reason). `cpu_meta` (CPU-only machines)
holds no GPU offer and is not read. JarvisLabs publishes no add-on fee in this answer.
"""

from __future__ import annotations

from typing import Any

from gpurent_core.model import PriceBasis, PriceKind, PricePlan
from gpurent_core.normalize.availability import availability_from_counts
from spiders.parsers.common import (
    INVALID_VALUE,
    MISSING_FIELD,
    FieldProblem,
    PageResult,
    ParseContext,
    Record,
    counted_stock,
    gpu_offer,
    identify_gpu,
    kept_price,
    measure,
    optional_int,
    price_plan,
    require,
    set_aside,
    to_decimal,
    to_price,
)
from spiders.parsers.contract import Contract, contract_page, contracted
from spiders.parsers.envelope import list_at, no_list

CURRENCY = "USD"
ENDPOINT_URL = "https://backendn.jarvislabs.net/misc/server_meta"
# More free cards of one type than any region holds: a broken count, not stock.
MAX_FREE_CARDS = 100_000
# What every `server_meta` row must carry.
CONTRACT = Contract(
    "server_meta row",
    identity=("gpu_type", "region", "workload_type"),
    price=("price_per_hour",),
    stock=("num_free_devices",),
)
CONTRACTS: tuple[Contract, ...] = (CONTRACT,)


def parse_server_meta(data: Any, ctx: ParseContext) -> PageResult:
    rows = list_at(data, "server_meta")
    if rows is None:
        return PageResult(layout_error=no_list(data, "server_meta"))
    if not any(isinstance(row, dict) for row in rows):
        # JarvisLabs lists every GPU type, free or not: no row at all is a changed answer,
        # never "nothing for rent".
        return PageResult(layout_error=f"no server_meta row in the list ({len(rows)} entries)")
    return contract_page(rows, CONTRACT, lambda row: row_records(row, ctx))


def offer_key(row: dict[str, Any]) -> str | None:
    region, gpu_type = row.get("region"), row.get("gpu_type")
    if not (isinstance(region, str) and region and isinstance(gpu_type, str) and gpu_type):
        return None
    workload = row.get("workload_type")
    return f"{region}/{gpu_type}/{workload if isinstance(workload, str) and workload else 'any'}"


def row_records(row: Any, ctx: ParseContext) -> list[Record]:
    key = offer_key(row) if isinstance(row, dict) else None
    return contracted(ctx, row, CONTRACT, offer_key=key, build=lambda: _build(row, key, ctx))


def _build(row: dict[str, Any], key: str | None, ctx: ParseContext) -> list[Record]:
    if key is None:
        raise FieldProblem(MISSING_FIELD, "region", "region or gpu_type missing")
    raw_name = require(row, "gpu_type")
    identity = identify_gpu(raw_name, field="gpu_type", vram_gb=_vram(row))
    price = to_price(require(row, "price_per_hour"), "price_per_hour")
    # Stock from `num_free_devices`: a null or bad count is `unknown` (set aside, with why).
    availability, problem = counted_stock(
        "num_free_devices", lambda: availability_from_counts(_orderable(row))
    )
    side = set_aside(ctx, problem, offer_key=key, item=row)
    # Spot is sold for containers only (gpuhunt's JarvisLabs provider, which dropped spot
    # offers for that reason): a VM row's spot_price is no price anyone can rent it at.
    plans = _spot_plan(row, key, ctx, side) if row.get("workload_type") == "container" else ()
    record = gpu_offer(
        ctx,
        offer_key=key,
        raw=row,
        gpu=identity,
        raw_gpu_name=raw_name,
        gpu_count=1,
        stock=availability,
        price=price,
        currency=CURRENCY,
        price_basis=PriceBasis.GPU,
        region=row["region"],
        url=ENDPOINT_URL,
        plans=plans,
        # What one card's instance comes with, as the row says it (already per card).
        host={
            "vcpus_per_gpu": measure(row.get("cpus_per_gpu"), 2),
            "ram_gb_per_gpu": measure(row.get("ram_per_gpu"), 1),
        },
    )
    return [record, *side]


def _spot_plan(
    row: dict[str, Any], key: str, ctx: ParseContext, side: list[Record]
) -> tuple[PricePlan, ...]:
    price = kept_price(ctx, row, "spot_price", offer_key=key, side=side)
    if price is None:
        return ()
    try:
        free = (
            None
            if row.get("spot_num_free_devices") is None
            else _free_count(row, "spot_num_free_devices")
        )
    except FieldProblem as problem:
        side.extend(set_aside(ctx, problem, offer_key=key, item=row))
        return ()
    if price == 0 or free == 0:
        return ()
    return (price_plan(price, CURRENCY, PriceBasis.GPU, PriceKind.SPOT),)


def _orderable(row: dict[str, Any]) -> int:
    """The free cards one can order: `num_free_devices`, or `effective_num_free_devices`
    where the row gives it and it is fewer. JarvisLabs documents neither; gpuhunt reads the
    effective one as what can be ordered, so the larger of the two is never taken."""
    free = _free_count(row, "num_free_devices")
    if row.get("effective_num_free_devices") is None:
        return free
    return min(free, _free_count(row, "effective_num_free_devices"))


def _free_count(row: dict[str, Any], key: str) -> int:
    """A free-card count: null says nothing (JarvisLabs documents no null), and a count no
    region could hold is not a count."""
    count = optional_int(row, key)
    if count is None:
        raise FieldProblem(MISSING_FIELD, key, f"{key} is null")
    if count > MAX_FREE_CARDS:
        raise FieldProblem(INVALID_VALUE, key, f"{key} is not a plausible count: {count}")
    return count


def _vram(row: dict[str, Any]) -> int | None:
    if row.get("vram") in (None, ""):
        return None
    size = to_decimal(row["vram"], "vram")
    if size <= 0:
        raise FieldProblem(INVALID_VALUE, "vram", f"vram is not positive: {row['vram']!r}")
    # A hint only (the catalog snaps it to a nominal size): whole GB are enough.
    return int(size.to_integral_value())
