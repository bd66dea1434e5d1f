"""Prime Intellect: the marketplace's GPU offers of every underlying cloud (API key).

`GET {base}/api/v1/availability/?page=1&page_size=500` with `Authorization: Bearer <key>` (env
`PRIME_API_KEY`, the variable Prime Intellect's own CLI reads), the documented availability
endpoint (docs.primeintellect.ai, api-reference/check-gpu-availability). No filter is sent: a
filtered answer that comes back empty would say nothing about the rest of the market. The
answer is paged (`page`, `page_size` up to 500, the schema's default and maximum) but says no
total: a page that holds `page_size` offers or more asks for the next one, up to
GPURENT_MAX_PAGES.

Without the key the run reports `auth: missing` and asks nothing (it ends `auth_required`,
never sold out). HTTP 401/403 reports `auth: rejected`. An error body or an **empty answer**
is a failed request, never an empty market: Prime Intellect's API is known to answer an empty
200 from a flaky replica, so every offer keeps its last state, stale (the parser's
`EMPTY_ANSWER`).

The key is read from the environment, sent in one header and never logged, stored in settings
or written to the feed or the run report.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import urlencode

import scrapy
from scrapy.http import Response

from gpurent_core.providers import provider
from spiders.base import KEY_REFUSED, ApiSpider, env_secret
from spiders.providers.primeintellect.parser import parse_gpu_availability

AVAILABILITY_PATH = "/api/v1/availability/"
# The credentials it reads, from its line in gpurent_core.providers.
(KEY_ENV,) = provider("primeintellect").auth_env


class PrimeintellectSpider(ApiSpider):
    """Reads Prime Intellect's documented REST API, as its public CLI does."""

    name = "primeintellect"
    needs_auth = True
    default_page_size = 500  # the endpoint's default and largest page

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._key = env_secret(KEY_ENV)

    async def start(self) -> AsyncIterator[Any]:
        if self._key is None:
            self.note_auth("missing", f"{KEY_ENV} not set: the availability API needs a key")
            return
        yield self.page_request(1)

    def page_request(self, page: int) -> scrapy.Request:
        assert self._key is not None
        query = urlencode({"page": page, "page_size": self.page_size})
        return self.json_request(
            f"{self.url(AVAILABILITY_PATH)}?{query}",
            headers={"Authorization": f"Bearer {self._key}"},
            refusals=KEY_REFUSED,
            callback=self.parse_availability,
            cb_kwargs={"page": page},
        )

    def parse_availability(self, response: Response, page: int) -> Iterator[Any]:
        where = f"{AVAILABILITY_PATH} page {page}"
        if self.key_refused(response, "the availability API"):
            return
        result = self.json_page(response, where, parse_gpu_availability)
        if result is None:
            return
        if result.api_error is not None:
            # An empty answer too: what it would have listed is unread, not gone.
            self.note_api_error(where, result.api_error)
            return
        self.note_auth("ok")
        yield from self.emit_page(result, where)
        full = result.layout_error is None and result.listed >= self.page_size
        if full and not self.page_limit_reached(page):
            yield self.page_request(page + 1)
