"""PPIO 派欧云: every GPU product with its price and deployable flag, sold-out ones too (API
key `PPIO_API_KEY`; the request, the key and the refusals: spiders.ppio_api)."""

from __future__ import annotations

from spiders.ppio_api import ProductListSpider
from spiders.providers.ppio.parser import PRODUCTS


class PpioSpider(ProductListSpider):
    """Reads a documented JSON API (skypilot calls it)."""

    name = "ppio"
    products = PRODUCTS
