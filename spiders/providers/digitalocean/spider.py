"""DigitalOcean: every Droplet size with its regions and prices; the GPU sizes are the offers.

`GET {base}/v2/sizes?page=N&per_page=200` with `Authorization: Bearer <token>` (env
`DIGITALOCEAN_TOKEN`, the name DigitalOcean's API reference and its Python client examples
use), the documented "List All Droplet Sizes" call (docs.digitalocean.com/reference/api/
reference/sizes/; scopes `sizes:read`, `regions:read`). The list is paged (`per_page` at most
200, the spider's page); page 1's `meta.total` says how many sizes there are, so the other
pages are asked at once, up to GPURENT_MAX_PAGES. A page 1 without a readable total that
still names a next page (`links.pages.next`) leaves the rest of the list unread.

Without the token the run reports `auth: missing` and asks nothing (it ends `auth_required`,
never sold out). HTTP 401/403 or an `unauthorized` error body reports `auth: rejected`; any
other error body is a failed request. A page that fails (or is refused) leaves every offer
not yet seen unread: a page of the list is not a set of offers we could name beforehand.

The token is read from the environment, sent in one header and never logged, stored in
settings or written to the feed or the run report.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import urlencode

import scrapy
from scrapy.http import Response

from gpurent_core.providers import provider
from spiders.base import KEY_REFUSED, ApiSpider, env_secret
from spiders.providers.digitalocean.parser import SizesPage, parse_sizes

SIZES_PATH = "/v2/sizes"
# The credentials it reads, from its line in gpurent_core.providers.
(TOKEN_ENV,) = provider("digitalocean").auth_env


class DigitaloceanSpider(ApiSpider):
    """Reads DigitalOcean's documented public API (v2), as its own clients do."""

    name = "digitalocean"
    needs_auth = True
    default_page_size = 200  # the largest page the API gives (per_page maximum)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._token = env_secret(TOKEN_ENV)

    async def start(self) -> AsyncIterator[Any]:
        if self._token is None:
            self.note_auth("missing", f"{TOKEN_ENV} not set: the size list needs a token")
            return
        yield self.sizes_request(1)

    def sizes_request(self, page: int) -> scrapy.Request:
        assert self._token is not None
        query = urlencode({"page": page, "per_page": self.page_size})
        return self.json_request(
            f"{self.url(SIZES_PATH)}?{query}",
            headers={"Authorization": f"Bearer {self._token}"},
            refusals=KEY_REFUSED,
            callback=self.parse_sizes,
            cb_kwargs={"page": page},
        )

    def parse_sizes(self, response: Response, page: int) -> Iterator[Any]:
        where = f"{SIZES_PATH} page {page}"
        if self.key_refused(response, where):
            self.note_unread()  # what the page lists was not read
            return
        result = self.json_page(response, where, parse_sizes)
        if result is None:
            return
        if result.auth_rejected:
            self.note_auth("rejected", f"unauthorized error from {where}")
            self.note_unread()
            return
        if result.api_error is not None:
            self.note_api_error(where, result.api_error)
            return
        self.note_auth("ok")
        yield from self.emit_page(result, where)
        if page == 1:
            yield from self.later_requests(result, where)

    def later_requests(self, first: SizesPage, where: str) -> Iterator[scrapy.Request]:
        """Pages 2.. of the list, counted from page 1's `meta.total`."""
        if first.total is None:
            if first.has_next:
                self.note_layout_error(f"{where}: no meta.total but a next page: the rest unread")
            return
        for page in self.later_pages(math.ceil(first.total / self.page_size)):
            yield self.sizes_request(page)
