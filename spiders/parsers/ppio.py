"""PPIO 派欧云 GPU products (`GET /gpu-instance/openapi/v1/products` -> `{data: [...]}`).

Field meanings (PROVIDERS.md A7; skypilot's `fetch_ppio.py`):

* `id`: the product; `name`: the card ("RTX 4090 24GB"); `cpuPerGpu`, `memoryPerGpu` (GiB
  of RAM per card, not VRAM); `minRootFS` / `maxRootFS`: root disk bounds.
* `price`: per card per hour in 1/100000 CNY (skypilot divides by 100000:
  `PPIO_PRICE_SCALE`); one card is the unit skypilot lists, so the price is per GPU.
* `availableDeploy` (bool): can be deployed now, our stock flag; `canBuy: false` also
  means it cannot be rented now. Without `availableDeploy` the stock is `unknown`.
* `regions[]`: where the product runs. The stock flag is per product, not per region, so
  the offer is one per product and `region` lists its regions.

We ask without skypilot's `available=true` filter, so sold-out products are listed too.
`activityProduct` (a promotional product, which skypilot leaves out) is kept as an offer.
PPIO publishes no add-on fees in this answer, so offers carry none.
"""

from __future__ import annotations

from typing import Any

from gpurent.model import PriceBasis
from gpurent.normalize.availability import UNKNOWN, Availability, availability_from_flag
from gpurent.normalize.price import PPIO_PRICE_SCALE
from spiders.parsers.common import (
    MISSING_FIELD,
    FieldProblem,
    PageResult,
    ParseContext,
    Record,
    gpu_offer,
    guarded,
    id_text,
    identify_gpu,
    minor_units,
    not_an_object,
    not_negative,
    require,
)
from spiders.parsers.envelope import list_page

CURRENCY = "CNY"
ENDPOINT_URL = "https://api.ppinfra.com/gpu-instance/openapi/v1/products"
# Keys every product carries (the stock flag included: its loss would turn the market
# "unknown").
CORE_KEYS = ("id", "name", "price", "availableDeploy")


def parse_products(data: Any, ctx: ParseContext) -> PageResult:
    return list_page(
        data, "data", ctx, records=product_records, core_keys=CORE_KEYS, noun="product"
    )


def product_records(product: Any, ctx: ParseContext) -> list[Record]:
    if not isinstance(product, dict):
        return not_an_object(ctx, product)
    key = id_text(product.get("id"))
    return guarded(ctx, offer_key=key, raw=product, build=lambda: _build(product, key, ctx))


def _build(product: dict[str, Any], key: str | None, ctx: ParseContext) -> list[Record]:
    if key is None:
        raise FieldProblem(MISSING_FIELD, "id", "id is missing")
    raw_name = require(product, "name")
    identity = identify_gpu(raw_name, field="name")
    price_raw = require(product, "price")
    price = not_negative(minor_units(price_raw, PPIO_PRICE_SCALE, "price"), "price", price_raw)
    return [
        gpu_offer(
            ctx,
            offer_key=key,
            raw=product,
            gpu=identity,
            raw_gpu_name=raw_name,
            gpu_count=1,
            stock=_availability(product),
            price=price,
            currency=CURRENCY,
            price_basis=PriceBasis.GPU,
            region=_regions(product.get("regions")),
            url=ENDPOINT_URL,
        )
    ]


def _availability(product: dict[str, Any]) -> Availability:
    deployable = product.get("availableDeploy")
    if not isinstance(deployable, bool):
        return UNKNOWN
    # canBuy defaults to true (as skypilot reads it); false means it cannot be ordered now.
    return availability_from_flag(deployable and product.get("canBuy") is not False)


def _regions(value: Any) -> str | None:
    if not isinstance(value, list):
        return None
    names = [str(v).strip() for v in value if isinstance(v, str | int) and str(v).strip()]
    return ", ".join(names) or None
