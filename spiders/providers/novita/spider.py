"""Novita AI: every GPU product with its price and deployable flag, sold-out ones too.

PPIO's international brand, on the same platform: `GET {base}/gpu-instance/openapi/v1/products`
with `Authorization: Bearer <NOVITA_API_KEY>`, no `available=true` filter. The key, the
refusals and the order of the checks are those of `spiders.keyed_list`; the answer is read by
`spiders.parsers.ppio_products` (Novita's `ProductList`: USD, its own contract and fees).
"""

from __future__ import annotations

from typing import Any

from spiders.keyed_list import KeyedListSpider
from spiders.parsers.common import PageResult, ParseContext
from spiders.providers.novita.parser import parse_products


class NovitaSpider(KeyedListSpider):
    """Reads a documented JSON API (Novita's API reference; skypilot calls it)."""

    name = "novita"
    list_path = "/gpu-instance/openapi/v1/products"

    def parse_list(self, data: Any, ctx: ParseContext) -> PageResult:
        return parse_products(data, ctx)
