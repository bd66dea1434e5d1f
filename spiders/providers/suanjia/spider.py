"""算家云 SuanJia: the price page's GPU market table, read in headless Chromium.

No public API is known; the page builds its table with JavaScript, so the request goes
through scrapy-playwright with the system Chromium (`spiders.browser`) and waits for the
rows. The base URL and the path `/pricing` are our assumptions (the live page was never
captured). Public page, no credentials; robots.txt is obeyed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from scrapy.http import Response

from spiders.browser import BrowserPageSpider
from spiders.providers.suanjia.parser import ROW_SELECTOR, parse_market


class SuanjiaSpider(BrowserPageSpider):
    name = "suanjia"
    page_path = "/pricing"
    row_selector = ROW_SELECTOR

    def parse_page(self, response: Response) -> Iterator[Any]:
        yield from self.emit_page(parse_market(response.text, self.context()), self.page_path)
