"""PPIO 派欧云: every GPU product with its price and deployable flag, sold-out ones too.

`GET {base}/gpu-instance/openapi/v1/products` with `Authorization: Bearer <PPIO_API_KEY>`,
without the `available=true` filter skypilot uses, so products that cannot be deployed now
come back too. No pagination is documented. Nothing is public: the key, the refusals and
the order of the checks are those of `spiders.keyed_list`; the answer is read by
`spiders.parsers.ppio_products`, shared with Novita, PPIO's international brand.
"""

from __future__ import annotations

from typing import Any

from spiders.keyed_list import KeyedListSpider
from spiders.parsers.common import PageResult, ParseContext
from spiders.providers.ppio.parser import parse_products


class PpioSpider(KeyedListSpider):
    """Reads a documented JSON API (skypilot calls it)."""

    name = "ppio"
    list_path = "/gpu-instance/openapi/v1/products"

    def parse_list(self, data: Any, ctx: ParseContext) -> PageResult:
        return parse_products(data, ctx)
