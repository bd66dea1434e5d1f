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

from gpurent.model import BillingUnit, PriceBasis, PriceKind, PricePlan
from gpurent.normalize.availability import UNKNOWN, Availability, availability_from_counts
from spiders.parsers.common import (
    INVALID_VALUE,
    MISSING_FIELD,
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
    to_decimal,
    to_price,
)

CURRENCY = "USD"
ENDPOINT_URL = "https://backendn.jarvislabs.net/misc/server_meta"
# Keys every row carries (the free count included: without it all stock is unknown).
CORE_KEYS = ("gpu_type", "region", "price_per_hour", "num_free_devices")


def parse_server_meta(data: Any, ctx: ParseContext) -> PageResult:
    if not isinstance(data, dict) or not isinstance(data.get("server_meta"), list):
        keys = sorted(data)[:8] if isinstance(data, dict) else type(data).__name__
        return PageResult(layout_error=f"no 'server_meta' list in the answer (got {keys})")
    rows: list[Any] = data["server_meta"]
    page = PageResult()
    for row in rows:
        page.records.extend(row_records(row, ctx))
    missing = keys_missing_everywhere(rows, CORE_KEYS)
    if missing:
        page.layout_error = f"no server_meta row carries {', '.join(missing)}"
    return page


def offer_key(row: dict[str, Any]) -> str | None:
    region, gpu_type = row.get("region"), row.get("gpu_type")
    if not (isinstance(region, str) and region and isinstance(gpu_type, str) and gpu_type):
        return None
    workload = row.get("workload_type")
    return f"{region}/{gpu_type}/{workload if isinstance(workload, str) and workload else 'any'}"


def row_records(row: Any, ctx: ParseContext) -> list[Record]:
    if not isinstance(row, dict):
        return [
            make_quarantine(
                ctx, reason="not_an_offer: not an object", field=None, raw=str(row),
                offer_key=None,
            )
        ]  # fmt: skip
    key = offer_key(row)
    return guarded(ctx, offer_key=key, raw=row, build=lambda: _build(row, key, ctx))


def _build(row: dict[str, Any], key: str | None, ctx: ParseContext) -> list[Record]:
    if key is None:
        raise FieldProblem(MISSING_FIELD, "region", "region or gpu_type missing")
    raw_name = require(row, "gpu_type")
    identity = identify_gpu(raw_name, field="gpu_type", vram_gb=_vram(row))
    price = to_price(require(row, "price_per_hour"), "price_per_hour")
    availability, problem = _availability(row)
    side: list[Record] = []
    if problem is not None:
        side.append(field_quarantine(ctx, problem, offer_key=key, item=row))
    plans = _spot_plan(row, key, ctx, side)
    record = make_offer(
        ctx,
        offer_key=key,
        raw=row,
        **gpu_fields(identity, raw_name),
        gpu_count=1,
        status=availability.status,
        available_count=availability.available_count,
        price=price,
        currency=CURRENCY,
        billing_unit=BillingUnit.HOUR,
        price_basis=PriceBasis.GPU,
        price_kind=PriceKind.ON_DEMAND,
        region=row["region"],
        url=ENDPOINT_URL,
        plans=plans,
    )
    return [record, *side]


def _availability(row: dict[str, Any]) -> tuple[Availability, FieldProblem | None]:
    """Stock from `num_free_devices`; missing is `unknown`, a bad count too (quarantined)."""
    try:
        return availability_from_counts(optional_int(row, "num_free_devices")), None
    except FieldProblem as problem:
        return UNKNOWN, problem
    except ValueError as exc:  # negative count
        return UNKNOWN, FieldProblem(INVALID_VALUE, "num_free_devices", str(exc))


def _spot_plan(
    row: dict[str, Any], key: str, ctx: ParseContext, side: list[Record]
) -> tuple[PricePlan, ...]:
    if row.get("spot_price") is None:
        return ()
    try:
        price = to_price(row["spot_price"], "spot_price")
        free = optional_int(row, "spot_num_free_devices")
    except FieldProblem as problem:
        side.append(field_quarantine(ctx, problem, offer_key=key, item=row))
        return ()
    if price == 0 or free == 0:
        return ()
    return (
        PricePlan(
            price=price,
            currency=CURRENCY,
            billing_unit=BillingUnit.HOUR,
            price_basis=PriceBasis.GPU,
            price_kind=PriceKind.SPOT,
        ),
    )


def _vram(row: dict[str, Any]) -> int | None:
    if row.get("vram") in (None, ""):
        return None
    size = to_decimal(row["vram"], "vram")
    if size <= 0:
        raise FieldProblem(INVALID_VALUE, "vram", f"vram is not positive: {row['vram']!r}")
    # A hint only (the catalog snaps it to a nominal size): whole GB are enough.
    return int(size.to_integral_value())
