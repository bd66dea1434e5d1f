"""Novita AI: every GPU product with its price and deployable flag (API key).

`GET {base}/gpu-instance/openapi/v1/products` with `Authorization: Bearer <key>` (env
`NOVITA_API_KEY`), without the `available=true` filter skypilot uses, so products that cannot
be deployed come back too. One answer; no pagination is documented.

Nothing is public: without the key the run reports `auth: missing` and asks nothing (it
ends `auth_required`, never sold out). HTTP 401/403 reports `auth: rejected`.

The key is read from the environment, sent in one header and never logged, stored in
settings or written to the feed or the run report.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from scrapy.http import Response

from gpurent_core.providers import provider
from spiders.base import KEY_REFUSED, ApiSpider, env_secret
from spiders.providers.novita.parser import parse_products

PRODUCTS_PATH = "/gpu-instance/openapi/v1/products"
# The credentials it reads, from its line in gpurent_core.providers.
(KEY_ENV,) = provider("novita").auth_env


class NovitaSpider(ApiSpider):
    """Reads a documented JSON API (Novita's API reference; skypilot calls it)."""

    name = "novita"
    needs_auth = True

    async def start(self) -> AsyncIterator[Any]:
        key = env_secret(KEY_ENV)
        if key is None:
            self.note_auth("missing", f"{KEY_ENV} not set: the product list needs a key")
            return
        yield self.json_request(
            self.url(PRODUCTS_PATH),
            headers={"Authorization": f"Bearer {key}"},
            refusals=KEY_REFUSED,
            callback=self.parse_products,
        )

    def parse_products(self, response: Response) -> Iterator[Any]:
        if self.key_refused(response, "the product list"):
            return
        page = self.json_page(response, PRODUCTS_PATH, parse_products)
        if page is None:
            return
        self.note_auth("ok")
        yield from self.emit_page(page, PRODUCTS_PATH)
