"""Novita AI: every GPU product with its price and deployable flag, those that cannot be
deployed too (API key `NOVITA_API_KEY`; the request, the key and the refusals:
spiders.ppio_api, shared with PPIO, whose international brand it is)."""

from __future__ import annotations

from spiders.ppio_api import ProductListSpider
from spiders.providers.novita.parser import PRODUCTS


class NovitaSpider(ProductListSpider):
    """Reads a documented JSON API (Novita's API reference; skypilot calls it)."""

    name = "novita"
    products = PRODUCTS
