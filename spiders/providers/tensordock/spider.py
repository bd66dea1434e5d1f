"""TensorDock marketplace (legacy v0 API): one GET of every host node, priced by component.

`GET {base}/api/v0/client/deploy/hostnodes`, no key. gpuhunt dropped TensorDock in Feb 2026
and this v0 API may be retired: a 404 or a changed answer shows up as a failed run or a
layout change, never as sold out.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from scrapy.http import Response

from spiders.base import ApiSpider
from spiders.providers.tensordock.parser import parse_hostnodes

HOSTNODES_PATH = "/api/v0/client/deploy/hostnodes"


class TensordockSpider(ApiSpider):
    """Reads a public JSON API (no key) meant for programs."""

    name = "tensordock"

    async def start(self) -> AsyncIterator[Any]:
        yield self.json_request(self.url(HOSTNODES_PATH), callback=self.parse_hostnodes)

    def parse_hostnodes(self, response: Response) -> Iterator[Any]:
        page = self.json_page(response, HOSTNODES_PATH, parse_hostnodes)
        if page is not None:
            yield from self.emit_page(page, HOSTNODES_PATH)
