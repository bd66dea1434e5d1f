"""The spider side of the GPU product list that PPIO 派欧云 and Novita AI (its international
brand) share: one keyed request, one answer, read by `spiders.parsers.ppio_products`.

`GET {base}/gpu-instance/openapi/v1/products` with `Authorization: Bearer <key>`, without the
`available=true` filter skypilot uses, so products that cannot be deployed now come back
too. No pagination is documented.

Nothing is public: without the key the run reports `auth: missing` and asks nothing (it ends
`auth_required`, never sold out); HTTP 401/403 reports `auth: rejected`. The key is read from
the environment (each provider's variable, from its line in gpurent_core.providers), sent in
one header and never logged, stored in settings or written to the feed or the run report.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any, ClassVar

from scrapy.http import Response

from gpurent_core.providers import provider
from spiders.base import KEY_REFUSED, ApiSpider, env_secret
from spiders.parsers.ppio_products import ProductList

PRODUCTS_PATH = "/gpu-instance/openapi/v1/products"


class ProductListSpider(ApiSpider):
    """A provider of the PPIO platform: a subclass names the spider and its `products`
    (the provider's `ProductList`: currency, endpoint, contract, fees)."""

    needs_auth = True
    products: ClassVar[ProductList]

    async def start(self) -> AsyncIterator[Any]:
        (key_env,) = provider(self.name).auth_env
        key = env_secret(key_env)
        if key is None:
            self.note_auth("missing", f"{key_env} not set: the product list needs a key")
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
        page = self.json_page(response, PRODUCTS_PATH, self.products.parse)
        if page is None:
            return
        self.note_auth("ok")
        yield from self.emit_page(page, PRODUCTS_PATH)
