"""PPIO 派欧云 GPU products (`GET /gpu-instance/openapi/v1/products` -> `{data: [...]}`).

The list is read by `spiders.parsers.ppio_products`, shared with Novita AI (PPIO's
international brand, same schema); the field meanings are written there. What is PPIO's own:

* prices in CNY (per card-hour in 1/100000 CNY);
* both stock flags are part of the contract: a lost `availableDeploy` read as "no flag"
  would turn the market unknown, and a lost `canBuy` read as its default (true) would put
  products that cannot be bought in stock. `regions` only describes the offer: a side field.

We ask without skypilot's `available=true` filter, so sold-out products are listed too.
`activityProduct` (a promotional product, which skypilot leaves out) is kept as an offer.
PPIO publishes no add-on fees in this answer, so offers carry none.
"""

from __future__ import annotations

from typing import Any

from spiders.parsers.common import PageResult, ParseContext
from spiders.parsers.contract import Contract
from spiders.parsers.ppio_products import ProductList

CURRENCY = "CNY"
ENDPOINT_URL = "https://api.ppinfra.com/gpu-instance/openapi/v1/products"
# What a product cannot be trusted without (rule of truth 9).
PRODUCT_CONTRACT = Contract(
    "product",
    identity=("id", "name"),
    price=("price",),
    stock=("availableDeploy", "canBuy"),
)
CONTRACTS: tuple[Contract, ...] = (PRODUCT_CONTRACT,)
PRODUCTS = ProductList(CURRENCY, ENDPOINT_URL, PRODUCT_CONTRACT)


def parse_products(data: Any, ctx: ParseContext) -> PageResult:
    return PRODUCTS.parse(data, ctx)
