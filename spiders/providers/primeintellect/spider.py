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

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import scrapy

from spiders.keyed_list import KeyedListSpider
from spiders.parsers.common import ParseContext
from spiders.providers.primeintellect.parser import AvailabilityPage, parse_gpu_availability


class PrimeintellectSpider(KeyedListSpider):
    """Reads Prime Intellect's documented REST API, as its public CLI does."""

    name = "primeintellect"
    list_path = "/api/v1/availability/"
    paged = True
    default_page_size = 500  # the endpoint's default and largest page

    def page_query(self, page: int) -> str:
        return "?" + urlencode({"page": page, "page_size": self.page_size})

    def parse_list(self, data: Any, ctx: ParseContext) -> AvailabilityPage:
        # An empty answer is an API error: what it would have listed is unread, not gone.
        return parse_gpu_availability(data, ctx)

    def later_requests(self, page: int, result: AvailabilityPage) -> Iterator[scrapy.Request]:
        full = result.layout_error is None and result.listed >= self.page_size
        if full and not self.page_limit_reached(page):
            yield self.list_request(page + 1)
