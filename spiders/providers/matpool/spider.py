"""矩池云 Matpool: the GPU market, public, with an optional token.

`GET {base}/api/machines?page=<n>&per_page=<size>&machine_category=0`, page 1, then pages
2..`pagination.numPages` (Aoblex/matpool-cli `docs/api-notes.md`, read from the site's
/fe-next bundles). A third-party price report read this endpoint without logging in, so the
token is optional: with `MATPOOL_TOKEN` set it is sent as `Authorization: Bearer <token>`,
without it the request goes out bare and the run needs no credentials (report
`auth: not_needed`).

A refused token (HTTP 401/403, or business code 176 "check jwt token failed") reports
`auth: rejected` and the market is read again without it, so the public data still loads.
If the market refuses a request without a token, it is not public after all: `auth: missing`.

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
from spiders.providers.matpool.parser import machines_query, parse_machines

MACHINES_PATH = "/api/machines"
# The credentials it reads, from its line in gpurent_core.providers.
(TOKEN_ENV,) = provider("matpool").auth_env


class MatpoolSpider(ApiSpider):
    """Reads the web client's JSON API, called as the client calls it."""

    name = "matpool"
    needs_auth = False
    # The perPage of matpool-cli's shape-verified fixture (Aoblex/matpool-cli test/fixtures.js).
    default_page_size = 20

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._token = env_secret(TOKEN_ENV)

    async def start(self) -> AsyncIterator[Any]:
        yield self.page_request(1)

    def page_request(self, page: int) -> scrapy.Request:
        query = urlencode(machines_query(page=page, per_page=self.page_size))
        auth = {} if self._token is None else {"Authorization": f"Bearer {self._token}"}
        return self.json_request(
            f"{self.url(MACHINES_PATH)}?{query}",
            headers=auth,
            refusals=KEY_REFUSED,
            callback=self.parse_page,
            cb_kwargs={"page": page, "with_token": self._token is not None},
        )

    def parse_page(self, response: Response, page: int, with_token: bool) -> Iterator[Any]:
        where = f"{MACHINES_PATH} page {page}"
        if response.status in KEY_REFUSED:
            yield from self.refused(f"HTTP {response.status} from the market", page, with_token)
            return
        result = self.json_page(response, where, parse_machines)
        if result is None:
            return
        if result.auth_rejected:
            yield from self.refused("code 176 (token refused) from the market", page, with_token)
            return
        if result.api_error is not None:
            self.note_api_error(MACHINES_PATH, result.api_error)
            return
        if with_token:
            self.note_auth("ok")
        yield from self.emit_page(result, where)
        if page != 1 or result.layout_error is not None or result.num_pages is None:
            return
        for index in self.later_pages(result.num_pages):
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
