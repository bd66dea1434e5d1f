"""Vast.ai marketplace: every on-demand offer, sold-out ones included.

Search is `POST {base}/api/v0/bundles/` with a JSON filter body; no key is needed.

Pagination (our choice; the API documents `limit` and `order` but no page cursor):
keyset on the offer id. Each page asks for `"id": {"gt": <highest id so far>}` with
`"order": [["id", "asc"]]` and `"limit": N`, starting from id > 0, and the crawl stops
at the first page that comes back empty. Stopping at an empty page rather than at the
first page shorter than N costs one request per run, but stays right if the server
caps `limit` below N (a short page would then end the crawl early and silently drop
offers). GPURENT_MAX_PAGES stops a server that ignores the id filter.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import scrapy
from scrapy.http import Response

from spiders.base import ApiSpider
from spiders.providers.vastai.parser import parse_bundles, search_body

BUNDLES_PATH = "/api/v0/bundles/"


class VastaiSpider(ApiSpider):
    """Reads a documented JSON API that Vast.ai's own CLI calls."""

    name = "vastai"
    default_page_size = 500

    async def start(self) -> AsyncIterator[Any]:
        yield self.page_request(after_id=0, page=1)

    def page_request(self, *, after_id: int, page: int) -> scrapy.Request:
        return self.json_request(
            self.url(BUNDLES_PATH),
            json_body=search_body(limit=self.page_size, after_id=after_id),
            callback=self.parse_page,
            cb_kwargs={"after_id": after_id, "page": page},
        )

    def parse_page(self, response: Response, after_id: int, page: int) -> Iterator[Any]:
        where = f"{BUNDLES_PATH} page {page}"
        result = self.json_page(response, where, parse_bundles)
        if result is None:
            return
        yield from self.emit_page(result, where)
        if result.layout_error is not None or result.count == 0:
            return
        if result.last_id is None or result.last_id <= after_id:
            self.note_layout_error(f"{where}: offer ids do not advance past {after_id}")
            return
        if self.page_limit_reached(page):
            return
        yield self.page_request(after_id=result.last_id, page=page + 1)
