"""JarvisLabs server meta (`GET /misc/server_meta` -> `{"server_meta": [...], "cpu_meta": ...}`).

Fields per GPU row (PROVIDERS.md B5; gpuhunt's JarvisLabs provider and its fixture):
`gpu_type` ("L4", "A100-80GB", "RTX-PRO6000"), `region` ("india-noida-01", "europe-01"),
`vram` (GB per card, a string), `price_per_hour` and `spot_price` (USD per GPU-hour: gpuhunt
multiplies them by the card count), `num_free_devices` (free cards now),
`effective_num_free_devices`, `spot_num_free_devices`, `num_gpus` (most cards per
instance, a string), `workload_type` ("container", "vm", or null on older VM rows).

Our offer is one card of a (region, GPU type, workload type): basis `gpu`, `gpu_count` 1,
stock from `num_free_devices` through `availability_from_counts`. `spot_price` becomes a
spot plan unless `spot_num_free_devices` says no spot card is free (a plan carries no stock
of its own; a missing count is unknown, so the plan stays). `cpu_meta` (CPU-only machines)
holds no GPU offer and is not read. JarvisLabs publishes no add-on fee in this answer.
"""

from __future__ import annotations

from typing import Any

from gpurent.model import PriceBasis, PriceKind, PricePlan
from gpurent.normalize.availability import availability_from_counts
from spiders.parsers.common import (
    INVALID_VALUE,
    MISSING_FIELD,
    FieldProblem,
    PageResult,
    ParseContext,
    Record,
    counted_stock,
    gpu_offer,
    guarded,
    identify_gpu,
    kept_price,
    not_an_object,
    optional_int,
    price_plan,
    require,
    set_aside,
    to_decimal,
    to_price,
)
from spiders.parsers.envelope import list_page

CURRENCY = "USD"
ENDPOINT_URL = "https://backendn.jarvislabs.net/misc/server_meta"
# Keys every row carries (the free count included: without it all stock is unknown).
CORE_KEYS = ("gpu_type", "region", "price_per_hour", "num_free_devices")


def parse_server_meta(data: Any, ctx: ParseContext) -> PageResult:
    return list_page(
        data, "server_meta", ctx, records=row_records, core_keys=CORE_KEYS, noun="server_meta row"
    )


def offer_key(row: dict[str, Any]) -> str | None:
    region, gpu_type = row.get("region"), row.get("gpu_type")
    if not (isinstance(region, str) and region and isinstance(gpu_type, str) and gpu_type):
        return None
    workload = row.get("workload_type")
    return f"{region}/{gpu_type}/{workload if isinstance(workload, str) and workload else 'any'}"


def row_records(row: Any, ctx: ParseContext) -> list[Record]:
    if not isinstance(row, dict):
        return not_an_object(ctx, row)
    key = offer_key(row)
    return guarded(ctx, offer_key=key, raw=row, build=lambda: _build(row, key, ctx))


def _build(row: dict[str, Any], key: str | None, ctx: ParseContext) -> list[Record]:
    if key is None:
        raise FieldProblem(MISSING_FIELD, "region", "region or gpu_type missing")
    raw_name = require(row, "gpu_type")
    identity = identify_gpu(raw_name, field="gpu_type", vram_gb=_vram(row))
    price = to_price(require(row, "price_per_hour"), "price_per_hour")
    # Stock from `num_free_devices`: missing is `unknown`, a bad count too (set aside).
    availability, problem = counted_stock(
        "num_free_devices", lambda: availability_from_counts(optional_int(row, "num_free_devices"))
    )
    side = set_aside(ctx, problem, offer_key=key, item=row)
    plans = _spot_plan(row, key, ctx, side)
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
    )
    return [record, *side]


def _spot_plan(
    row: dict[str, Any], key: str, ctx: ParseContext, side: list[Record]
) -> tuple[PricePlan, ...]:
    price = kept_price(ctx, row, "spot_price", offer_key=key, side=side)
    if price is None:
        return ()
    try:
        free = optional_int(row, "spot_num_free_devices")
    except FieldProblem as problem:
        side.extend(set_aside(ctx, problem, offer_key=key, item=row))
        return ()
    if price == 0 or free == 0:
        return ()
    return (price_plan(price, CURRENCY, PriceBasis.GPU, PriceKind.SPOT),)


def _vram(row: dict[str, Any]) -> int | None:
    if row.get("vram") in (None, ""):
        return None
    size = to_decimal(row["vram"], "vram")
    if size <= 0:
        raise FieldProblem(INVALID_VALUE, "vram", f"vram is not positive: {row['vram']!r}")
    # A hint only (the catalog snaps it to a nominal size): whole GB are enough.
    return int(size.to_integral_value())
