"""PPIO 派欧云 GPU products (`GET /gpu-instance/openapi/v1/products` -> `{data: [...]}`).

Field meanings (skypilot's `fetch_ppio.py`):

* `id`: the product; `name`: the card ("RTX 4090 24GB"); `cpuPerGpu`, `memoryPerGpu` (GiB
  of RAM per card, not VRAM); `minRootFS` / `maxRootFS`: root disk bounds.
* `price`: per card per hour in 1/100000 CNY (skypilot divides by 100000:
  `PPIO_PRICE_SCALE`); one card is the unit skypilot lists, so the price is per GPU.
* `availableDeploy` (bool): can be deployed now, our stock flag; `canBuy: false` also
  means it cannot be rented now. A null flag (the provider giving none) is `unknown`
  stock, with the flag's quarantine line beside the offer saying why. A product without
  either key at all is drift (PRODUCT_CONTRACT): it is quarantined, never read as sold
  out or in stock. A flag that is not a bool (`"true"`, `1`) is unknown stock, the flag
  set aside beside the offer.
* `regions[]`: where the product runs. The stock flag is per product, not per region, so
  the offer is one per product and `region` lists its regions.

We ask without skypilot's `available=true` filter, so sold-out products are listed too.
`activityProduct` (a promotional product, which skypilot leaves out) is kept as an offer.
PPIO publishes no add-on fees in this answer, so offers carry none.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from gpurent_core.model import PriceBasis
from gpurent_core.normalize.availability import UNKNOWN, Availability, availability_from_flag
from gpurent_core.normalize.price import PPIO_PRICE_SCALE
from spiders.parsers.common import (
    INVALID_VALUE,
    MISSING_FIELD,
    FieldProblem,
    PageResult,
    ParseContext,
    Record,
    gpu_offer,
    id_text,
    identify_gpu,
    minor_units,
    require,
    set_aside,
)
from spiders.parsers.contract import Contract, contracted
from spiders.parsers.envelope import list_page

CURRENCY = "CNY"
ENDPOINT_URL = "https://api.ppinfra.com/gpu-instance/openapi/v1/products"
# What a product cannot be trusted without (rule of truth 9): both stock flags, since a
# lost `availableDeploy` read as "no flag" would turn the market unknown, and a lost
# `canBuy` read as its default (true) would put products that cannot be bought in stock.
# `regions` only describes the offer: a side field.
PRODUCT_CONTRACT = Contract(
    "product",
    identity=("id", "name"),
    price=("price",),
    stock=("availableDeploy", "canBuy"),
)
CONTRACTS: tuple[Contract, ...] = (PRODUCT_CONTRACT,)


def parse_products(data: Any, ctx: ParseContext) -> PageResult:
    return list_page(data, "data", ctx, records=product_records, contract=PRODUCT_CONTRACT)


def product_records(product: Any, ctx: ParseContext) -> list[Record]:
    return contracted(
        ctx,
        product,
        PRODUCT_CONTRACT,
        offer_key=lambda p: id_text(p.get("id")),
        build=lambda: _build(product, id_text(product.get("id")), ctx),
    )


def _build(product: dict[str, Any], key: str | None, ctx: ParseContext) -> list[Record]:
    if key is None:
        raise FieldProblem(MISSING_FIELD, "id", "id is missing")
    raw_name = require(product, "name")
    identity = identify_gpu(raw_name, field="name")
    price = _price(require(product, "price"))
    stock, problem = _availability(product)
    return [
        gpu_offer(
            ctx,
            offer_key=key,
            raw=product,
            gpu=identity,
            raw_gpu_name=raw_name,
            gpu_count=1,
            stock=stock,
            price=price,
            currency=CURRENCY,
            price_basis=PriceBasis.GPU,
            region=_regions(product.get("regions")),
            url=ENDPOINT_URL,
        ),
        *set_aside(ctx, problem, offer_key=key, item=product),
    ]


def _price(value: Any) -> Decimal:
    """`price` in CNY per card-hour (1/100000 CNY counted); a bad cell such as `1e400` or
    `10**30` costs this item, never the page (`minor_units`)."""
    return minor_units(value, PPIO_PRICE_SCALE, "price")


def _availability(product: dict[str, Any]) -> tuple[Availability, FieldProblem | None]:
    """The stock flag, narrowed by canBuy; a flag that is null or not a bool makes the stock
    unknown and is returned to be set aside (the quarantine line says why)."""
    deployable = product.get("availableDeploy")
    if not isinstance(deployable, bool):
        return UNKNOWN, _not_a_flag("availableDeploy", deployable)
    # canBuy false: it cannot be ordered now. Null says neither (skypilot's default of true
    # is for a missing key, which here is drift): unknown, set aside.
    can_buy = product.get("canBuy")
    if not isinstance(can_buy, bool):
        return UNKNOWN, _not_a_flag("canBuy", can_buy)
    return availability_from_flag(deployable and can_buy), None


def _not_a_flag(field: str, value: Any) -> FieldProblem:
    code = MISSING_FIELD if value is None else INVALID_VALUE
    return FieldProblem(code, field, f"{field} is not true or false: {value!r}"[:120])


def _regions(value: Any) -> str | None:
    if not isinstance(value, list):
        return None
    names = [str(v).strip() for v in value if isinstance(v, str | int) and str(v).strip()]
    return ", ".join(names) or None
