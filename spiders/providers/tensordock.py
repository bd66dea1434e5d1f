"""TensorDock marketplace (legacy v0 API): one GET of every host node, priced by component.

`GET {base}/api/v0/client/deploy/hostnodes`, no key. gpuhunt dropped TensorDock in Feb 2026
and this v0 API may be retired: a 404 or a changed answer shows up as a failed run or a
layout change, never as sold out.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import scrapy
from scrapy.http import Response

from spiders.base import ProviderSpider
from spiders.parsers.common import load_json
from spiders.parsers.tensordock import parse_hostnodes

HOSTNODES_PATH = "/api/v0/client/deploy/hostnodes"


class TensordockSpider(ProviderSpider):
    name = "tensordock"
    home = "US"
    default_base_url = "https://marketplace.tensordock.com"
    custom_settings = {  # noqa: RUF012 (Scrapy reads it as a class attribute)
        # A public JSON API (no key) meant for programs; robots.txt is for page crawlers.
        "ROBOTSTXT_OBEY": False,
    }

    async def start(self) -> AsyncIterator[Any]:
        yield scrapy.Request(
            self.url(HOSTNODES_PATH),
            headers={"Accept": "application/json"},
            callback=self.parse_hostnodes,
            errback=self.on_request_failed,
            dont_filter=True,
        )

    def parse_hostnodes(self, response: Response) -> Iterator[Any]:
        try:
            data = load_json(response.body)
        except ValueError:
            self.note_layout_error(f"{HOSTNODES_PATH}: answer is not JSON")
            return
        yield from self.emit_page(parse_hostnodes(data, self.context()), HOSTNODES_PATH)
