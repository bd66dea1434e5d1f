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
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import scrapy

from spiders.keyed_list import KeyedListSpider
from spiders.parsers.common import ParseContext
from spiders.providers.digitalocean.parser import SizesPage, parse_sizes


class DigitaloceanSpider(KeyedListSpider):
    """Reads DigitalOcean's documented public API (v2), as its own clients do."""

    name = "digitalocean"
    list_path = "/v2/sizes"
    paged = True
    default_page_size = 200  # the largest page the API gives (per_page maximum)

    def page_query(self, page: int) -> str:
        return "?" + urlencode({"page": page, "per_page": self.page_size})

    def parse_list(self, data: Any, ctx: ParseContext) -> SizesPage:
        return parse_sizes(data, ctx)

    def later_requests(self, page: int, result: SizesPage) -> Iterator[scrapy.Request]:
        """Pages 2.. of the list, counted from page 1's `meta.total`."""
        if page != 1:
            return
        if result.total is None:
            if result.has_next:
                where = self.where(page)
                self.note_layout_error(f"{where}: no meta.total but a next page: the rest unread")
            return
        for later in self.later_pages(math.ceil(result.total / self.page_size)):
            yield self.list_request(later)
