"""Microsoft Azure: the public retail price list of GPU virtual machines (no key).

`GET {base}/api/retail/prices?api-version=2023-01-01-preview&meterRegion='primary'&$filter=...`,
Microsoft's unauthenticated Retail Prices API (learn.microsoft.com/rest/api/cost-management/
retail-prices/azure-retail-prices), once per VM series of `vm_sizes.toml`: the filter asks for
the series' Virtual Machines pay-as-you-go meters (`priceType eq 'Consumption'`, which spot
meters are too) by `contains(armSkuName, ...)`, and `meterRegion='primary'` for the meters
that are billed. Each answer holds one page and `NextPageLink`, the URL of the next page (null
on the last): the spider follows it, the link's path and query put on its own base URL (the
real link names `prices.azure.com:443`; a replay server or a mirror must be asked instead, and
no link may send the crawl to another host). A link to another path is a layout error.

The series' pages are a chain: a page that fails leaves what it and the pages after it would
have listed unread, and only that: the series' sizes (`Series.offer_prefixes`). The other
series' chains are read whole, and close what they no longer list.

Stock is never read: a price list says nothing about capacity, so every offer is `unknown`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import scrapy
from scrapy.http import Response

from spiders.base import UNREAD_META, ApiSpider
from spiders.parsers.common import load_json
from spiders.providers.azure.parser import PricesPage, parse_prices
from spiders.providers.azure.sizes import Series, series_table

PRICES_PATH = "/api/retail/prices"
API_VERSION = "2023-01-01-preview"
PRIMARY_METERS = "'primary'"


def first_page_query(series: Series) -> str:
    """The query of a series' first page, spaces as %20 as Microsoft's examples write them."""
    params = (
        ("api-version", API_VERSION),
        ("meterRegion", PRIMARY_METERS),
        ("$filter", series.odata_filter()),
    )
    return "&".join(f"{quote(k, safe='$')}={quote(v, safe=chr(39) + '(),')}" for k, v in params)


class AzureSpider(ApiSpider):
    """Reads Microsoft's public Retail Prices API, a JSON API made for programs."""

    name = "azure"

    async def start(self) -> AsyncIterator[Any]:
        for series in series_table():
            url = f"{self.url(PRICES_PATH)}?{first_page_query(series)}"
            yield self.page_request(url, series, 1)

    def page_request(self, url: str, series: Series, page: int) -> scrapy.Request:
        return self.json_request(
            url,
            meta={UNREAD_META: {"prefixes": series.offer_prefixes()}},
            callback=self.parse_page,
            cb_kwargs={"series": series, "page": page},
        )

    def parse_page(self, response: Response, series: Series, page: int) -> Iterator[Any]:
        where = f"{PRICES_PATH} {series.name} page {page}"
        result = self.read_page(response, where, series)
        if result is None:
            return
        yield from self.emit_page(result, where)
        if result.next_link is None or result.layout_error is not None:
            return
        following = self.next_page_url(result.next_link, response.url)
        if following is None:
            self.note_layout_error(
                f"{where}: NextPageLink {result.next_link!r} is not the next page of {PRICES_PATH}",
                prefixes=series.offer_prefixes(),
            )
        elif not self.page_limit_reached(page):
            yield self.page_request(following, series, page + 1)

    def read_page(self, response: Response, where: str, series: Series) -> PricesPage | None:
        """The parsed page; None, with the series unread, when the answer is not JSON."""
        try:
            data = load_json(response.body)
        except ValueError:
            self.note_layout_error(f"{where}: answer is not JSON", prefixes=series.offer_prefixes())
            return None
        return parse_prices(data, self.context())

    def next_page_url(self, link: str, current: str) -> str | None:
        """`link` (Microsoft's next-page URL) on this crawl's base URL; None when it names
        another path, or the page just read (a loop)."""
        parts = urlsplit(link)
        if parts.path.rstrip("/") != PRICES_PATH or not parts.query:
            return None
        if unquote(parts.query) == unquote(urlsplit(current).query):
            return None
        return f"{self.url(PRICES_PATH)}?{parts.query}"
