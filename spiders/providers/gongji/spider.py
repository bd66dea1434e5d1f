"""共绩算力 Gongji: the pricing page's GPU table, read in headless Chromium.

No public API is known; the page builds its table with JavaScript, so the request goes
through scrapy-playwright with the system Chromium (`spiders.browser`) and waits for the
rows. The path `/pricing` (https://www.gongjiyun.com/pricing) is the page a third-party
Chinese price report cites for Gongji's prices; its structure is our assumption (never
captured; see spiders/providers/gongji/recordings/PROVENANCE). Public page, no credentials;
robots.txt is obeyed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from scrapy.http import Response

from spiders.browser import BrowserPageSpider
from spiders.providers.gongji.parser import ROW_SELECTOR, parse_pricing


class GongjiSpider(BrowserPageSpider):
    name = "gongji"
    page_path = "/pricing"
    row_selector = ROW_SELECTOR

    def parse_page(self, response: Response) -> Iterator[Any]:
        yield from self.emit_page(parse_pricing(response.text, self.context()), self.page_path)
