"""PPIO 派欧云: every GPU product with its price and deployable flag (API key).

`GET {base}/gpu-instance/openapi/v1/products` with `Authorization: Bearer <key>` (env
`PPIO_API_KEY`), without the `available=true` filter skypilot uses, so sold-out products
come back too. One answer; no pagination is documented.

Nothing is public: without the key the run reports `auth: missing` and asks nothing (it
ends `auth_required`, never sold out). HTTP 401/403 reports `auth: rejected`.

The key is read from the environment, sent in one header and never logged, stored in
settings or written to the feed or the run report.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from typing import Any

import scrapy
from scrapy.http import Response

from spiders.base import ProviderSpider
from spiders.parsers.common import load_json
from spiders.parsers.ppio import parse_products

PRODUCTS_PATH = "/gpu-instance/openapi/v1/products"
KEY_ENV = "PPIO_API_KEY"


def ppio_api_key() -> str | None:
    key = os.environ.get(KEY_ENV, "").strip()
    return key or None


class PpioSpider(ProviderSpider):
    name = "ppio"
    home = "CN"
    auth_env = (KEY_ENV,)
    needs_auth = True
    default_base_url = "https://api.ppinfra.com"
    custom_settings = {  # noqa: RUF012 (Scrapy reads it as a class attribute)
        # A documented JSON API (skypilot calls it); robots.txt is for page crawlers.
        "ROBOTSTXT_OBEY": False,
    }

    async def start(self) -> AsyncIterator[Any]:
        key = ppio_api_key()
        if key is None:
            self.note_auth("missing", f"{KEY_ENV} not set: the product list needs a key")
            return
        yield scrapy.Request(
            self.url(PRODUCTS_PATH),
            headers={"Accept": "application/json", "Authorization": f"Bearer {key}"},
            # A refused key is an answer to read, not an error to retry.
            meta={"handle_httpstatus_list": [401, 403]},
            callback=self.parse_products,
            errback=self.on_request_failed,
            dont_filter=True,
        )

    def parse_products(self, response: Response) -> Iterator[Any]:
        if response.status in (401, 403):
            self.note_auth("rejected", f"HTTP {response.status} from the product list")
            return
        try:
            data = load_json(response.body)
        except ValueError:
            self.note_layout_error(f"{PRODUCTS_PATH}: answer is not JSON")
            return
        self.note_auth("ok")
        yield from self.emit_page(parse_products(data, self.context()), PRODUCTS_PATH)
