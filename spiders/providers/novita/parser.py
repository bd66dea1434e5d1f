"""Novita AI GPU products (`GET /gpu-instance/openapi/v1/products` -> `{data: [...]}`).

Novita AI is PPIO's international brand and its GPU-instance API serves PPIO's product list:
the list is read by `spiders.parsers.ppio_products`, where the field meanings are written.
What is Novita's own:

* prices in USD (per card-hour in 1/100000 USD: skypilot's `fetch_novita.py` divides by
  100000; RTX 4090 at 69000 is $0.69/h);
* the contract: Novita's API reference documents `availableDeploy` but no `canBuy`, so
  `availableDeploy` alone is the stock: the key a product cannot be trusted without. A
  `canBuy` in the answer (a third-party reading of the live API saw one) is not read: a key
  the contract does not hold could turn offers sold out or in stock by vanishing;
* `spotPrice` (a string in the same unit): the spot plan beside the offer;
* the container-disk fee past the free allowance, which the answer does not carry: a
  platform fee from the billing facts (`billing_facts.toml`), on every offer.

`monthlyPrice` (subscription prices) and `billingMethods` are not read: the reference does
not say what a `monthlyPrice` entry's price covers (a card? a month?).
"""

from __future__ import annotations

from typing import Any

from gpurent_core.billing_facts import platform_fees
from gpurent_core.model import AddonFee
from spiders.parsers.common import PageResult, ParseContext
from spiders.parsers.contract import Contract
from spiders.parsers.ppio_products import ProductList

CURRENCY = "USD"
ENDPOINT_URL = "https://api.novita.ai/gpu-instance/openapi/v1/products"
# What a product cannot be trusted without (rule of truth 9): the documented stock flag.
# `regions` and `spotPrice` only describe the offer: side fields.
PRODUCT_CONTRACT = Contract(
    "product",
    identity=("id", "name"),
    price=("price",),
    stock=("availableDeploy",),
)
CONTRACTS: tuple[Contract, ...] = (PRODUCT_CONTRACT,)
ADDON_FEES: tuple[AddonFee, ...] = platform_fees("novita")
PRODUCTS = ProductList(CURRENCY, ENDPOINT_URL, PRODUCT_CONTRACT, ADDON_FEES)


def parse_products(data: Any, ctx: ParseContext) -> PageResult:
    return PRODUCTS.parse(data, ctx)
