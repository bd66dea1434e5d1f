"""恒源云 GPUShare: the market machine list, every card model, sold-out hosts included.

`GET {base}/app/api/market/machine/list?models=-1&gpuName=&priceOrder=asc&pn=<page>&ps=50`
with `Authorization: Bearer <token>` (the web token, env `GPUSHARE_TOKEN`), page after
page until `data.total` machines have been seen (or a page comes back empty).

The market is not readable without the token, so without one the run reports
`auth: missing` and asks nothing (it ends `auth_required`, never sold out). HTTP 401
(GPUShare's "token expired") or 403 reports `auth: rejected`.

The token is read from the environment, sent in one header and never logged, stored in
settings or written to the feed or the run report.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import urlencode

import scrapy
from scrapy.http import Response

from gpurent_core.providers import provider
from spiders.base import KEY_REFUSED, ApiSpider, env_secret
from spiders.providers.gpushare.parser import list_query, parse_machine_list

MACHINE_LIST_PATH = "/app/api/market/machine/list"
# The credentials it reads, from its line in gpurent_core.providers.
(TOKEN_ENV,) = provider("gpushare").auth_env
# The web console sends these, and public GPUShare monitor scripts copy them with the token
# (spiders/providers/gpushare/recordings/PROVENANCE).
CONSOLE_HEADERS = {
    "Origin": "https://www.gpushare.com",
    "Referer": "https://www.gpushare.com/store",
}


class GpushareSpider(ApiSpider):
    """Reads the console's JSON API, called as the console calls it."""

    name = "gpushare"
    needs_auth = True
    default_page_size = 50

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._token = env_secret(TOKEN_ENV)

    async def start(self) -> AsyncIterator[Any]:
        if self._token is None:
            self.note_auth("missing", f"{TOKEN_ENV} not set: the market needs a token")
            return
        yield self.page_request(1)

    def page_request(self, page: int, seen: int = 0) -> scrapy.Request:
        assert self._token is not None
        query = urlencode(list_query(page=page, page_size=self.page_size))
        return self.json_request(
            f"{self.url(MACHINE_LIST_PATH)}?{query}",
            headers={"Authorization": f"Bearer {self._token}", **CONSOLE_HEADERS},
            refusals=KEY_REFUSED,
            callback=self.parse_page,
            cb_kwargs={"page": page, "seen": seen},
        )

    def parse_page(self, response: Response, page: int, seen: int) -> Iterator[Any]:
        where = f"{MACHINE_LIST_PATH} page {page}"
        if self.key_refused(response, "the machine list"):
            return
        result = self.json_page(response, where, parse_machine_list)
        if result is None:
            return
        self.note_auth("ok")
        yield from self.emit_page(result, where)
        # Page by page until data.total machines are seen (or a page comes back empty):
        # right even if the server serves fewer than `ps` machines per page.
        seen += result.count
        if result.layout_error is not None or result.total is None or result.count == 0:
            return
        if seen >= result.total or self.page_limit_reached(page):
            return
        yield self.page_request(page + 1, seen)
