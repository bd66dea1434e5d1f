"""仙宫云 Xiangongyun: one GET of the public pricing page, read as HTML (no key, no browser).

The path `/pricing` is our assumption (no market API is documented, and the live page
was not captured); robots.txt is obeyed, as for every page.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import scrapy
from scrapy.http import Response

from spiders.base import ProviderSpider
from spiders.providers.xiangongyun.parser import parse_pricing

PRICING_PATH = "/pricing"


class XiangongyunSpider(ProviderSpider):
    name = "xiangongyun"

    async def start(self) -> AsyncIterator[Any]:
        yield scrapy.Request(
            self.url(PRICING_PATH),
            headers={"Accept": "text/html"},
            callback=self.parse_pricing,
            errback=self.on_request_failed,
            dont_filter=True,
        )

    def parse_pricing(self, response: Response) -> Iterator[Any]:
        yield from self.emit_page(parse_pricing(response.text, self.context()), PRICING_PATH)
