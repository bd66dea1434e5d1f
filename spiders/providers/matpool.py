"""矩池云 Matpool: the GPU market, public, with an optional token.

`GET {base}/api/machines?page=<n>&per_page=<size>&machine_category=0`, page 1, then pages
2..`pagination.numPages`. A third-party report read this endpoint without logging in
(PROVIDERS.md A3), so the token is optional: with `MATPOOL_TOKEN` set it is sent as
`Authorization: Bearer <token>`, without it the request goes out bare and the run needs no
credentials (report `auth: not_needed`).

A refused token (HTTP 401/403, or business code 176 "check jwt token failed") reports
`auth: rejected` and the market is read again without it, so the public data still loads.
If the market refuses a request without a token, it is not public after all: `auth: missing`.

The token is read from the environment, sent in one header and never logged, stored in
settings or written to the feed or the run report.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import urlencode

import scrapy
from scrapy.http import Response

from spiders.base import ProviderSpider
from spiders.parsers.common import load_json
from spiders.parsers.matpool import machines_query, parse_machines

MACHINES_PATH = "/api/machines"
TOKEN_ENV = "MATPOOL_TOKEN"


def matpool_token() -> str | None:
    token = os.environ.get(TOKEN_ENV, "").strip()
    return token or None


class MatpoolSpider(ProviderSpider):
    name = "matpool"
    home = "CN"
    auth_env = (TOKEN_ENV,)
    needs_auth = False
    default_base_url = "https://matpool.com"
    # The perPage of the shape-verified fixture (shared/data/provider-samples/matpool/).
    default_page_size = 20
    custom_settings = {  # noqa: RUF012 (Scrapy reads it as a class attribute)
        # The web client's JSON API, called as the client calls it; robots.txt is for pages.
        "ROBOTSTXT_OBEY": False,
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._token = matpool_token()

    async def start(self) -> AsyncIterator[Any]:
        yield self.page_request(1)

    def page_request(self, page: int) -> scrapy.Request:
        query = urlencode(machines_query(page=page, per_page=self.page_size))
        headers = {"Accept": "application/json"}
        if self._token is not None:
            headers["Authorization"] = f"Bearer {self._token}"
        return scrapy.Request(
            f"{self.url(MACHINES_PATH)}?{query}",
            headers=headers,
            # A refused token is an answer to read, not an error to retry.
            meta={"handle_httpstatus_list": [401, 403]},
            callback=self.parse_page,
            errback=self.on_request_failed,
            cb_kwargs={"page": page, "with_token": self._token is not None},
            dont_filter=True,
        )

    def parse_page(self, response: Response, page: int, with_token: bool) -> Iterator[Any]:
        where = f"{MACHINES_PATH} page {page}"
        if response.status in (401, 403):
            yield from self.refused(f"HTTP {response.status} from the market", page, with_token)
            return
        try:
            data = load_json(response.body)
        except ValueError:
            self.note_layout_error(f"{where}: answer is not JSON")
            return
        result = parse_machines(data, self.context())
        if result.auth_rejected:
            yield from self.refused("code 176 (token refused) from the market", page, with_token)
            return
        if result.api_error is not None:
            # HTTP 200 but no data: a failed request, not a layout change.
            self.ledger.requests_gave_up += 1
            self.ledger.add_error(f"api error on {MACHINES_PATH}: {result.api_error}")
            return
        if with_token:
            self.note_auth("ok")
        yield from self.emit_page(result, where)
        if page != 1 or result.layout_error is not None or result.num_pages is None:
            return
        last = min(result.num_pages, self.max_pages)
        if result.num_pages > self.max_pages:
            self.ledger.add_error(f"stopped at GPURENT_MAX_PAGES={self.max_pages}")
        for index in range(2, last + 1):
            yield self.page_request(index)

    def refused(self, detail: str, page: int, with_token: bool) -> Iterator[Any]:
        if with_token:
            # The token is bad, the market may still be public: ask for the same page again
            # without it (and every later page goes out without it too).
            self.note_auth("rejected", detail)
            self._token = None
            yield self.page_request(page)
            return
        if self.ledger.auth != "rejected":
            self.note_auth("missing", f"{detail} without a token: {TOKEN_ENV} needed")
