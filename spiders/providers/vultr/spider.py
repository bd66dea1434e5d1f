"""Vultr: the Cloud GPU plans and the bare-metal plans, with their regions and prices.

Two public lists of Vultr's API v2, asked without a key (the API reference marks both "No
authorization required"; public projects such as dstackai/gpuhunt read them the same way):

* `GET {base}/v2/plans?type=vcg&per_page=500`, the Cloud GPU plans ("List Plans");
* `GET {base}/v2/plans-metal?per_page=500`, the bare-metal plans ("List Bare Metal Plans").

Both are paged by cursor (`per_page` at most 500, the spider's page): a page's
`meta.links.next`, when not empty, is the `cursor` of the next page, which the spider asks
for in turn, up to GPURENT_MAX_PAGES. A cursor already asked (a loop) is a layout error.

A page that fails, is not JSON or is an error body (`{error, status}`) leaves its list's
offers unread, and only those (their keys start with the list, `cloud-gpu/` or
`bare-metal/`): a page of a plan list is no set of offers anyone can name beforehand, but the
other list was read whole and closes what it no longer lists. A page whose shape changed (a
layout error) leaves every offer unread. The per-region availability call
(`/v2/regions/{id}/availability`) is not made: the plans' `locations` are the stock answer
(parser.py says why).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import urlencode

import scrapy
from scrapy.http import Response

from spiders.base import UNREAD_META, ApiSpider
from spiders.parsers.common import load_json
from spiders.providers.vultr.parser import (
    BARE_METAL,
    CLOUD_GPU,
    CLOUD_GPU_TYPE,
    Listing,
    PlansPage,
    parse_listing,
)

PLANS_PATH = "/v2/plans"
METAL_PLANS_PATH = "/v2/plans-metal"


def listing_path(listing: Listing) -> str:
    return PLANS_PATH if listing is CLOUD_GPU else METAL_PLANS_PATH


class VultrSpider(ApiSpider):
    """Reads Vultr's documented public API (v2), as its own clients do."""

    name = "vultr"
    default_page_size = 500  # the largest page the API gives (per_page maximum)

    async def start(self) -> AsyncIterator[Any]:
        for listing in (CLOUD_GPU, BARE_METAL):
            yield self.listing_request(listing, cursor=None, asked=())

    def listing_request(
        self, listing: Listing, *, cursor: str | None, asked: tuple[str, ...]
    ) -> scrapy.Request:
        """A page of `listing`: the first (`cursor` None) or the one `cursor` names;
        `asked` holds the cursors of the pages before it."""
        params: dict[str, Any] = {"type": CLOUD_GPU_TYPE} if listing is CLOUD_GPU else {}
        params["per_page"] = self.page_size
        if cursor is not None:
            params["cursor"] = cursor
        return self.json_request(
            f"{self.url(listing_path(listing))}?{urlencode(params)}",
            meta={UNREAD_META: {"prefixes": [listing.prefix]}},
            callback=self.parse_listing,
            cb_kwargs={"listing": listing, "asked": asked},
        )

    def parse_listing(
        self, response: Response, listing: Listing, asked: tuple[str, ...]
    ) -> Iterator[Any]:
        page = len(asked) + 1
        where = f"{listing_path(listing)} page {page}"
        result = self.read_page(response, where, listing)
        if result is None:
            return
        if result.api_error is not None:
            self.note_api_error(where, result.api_error, prefixes=[listing.prefix])
            return
        yield from self.emit_page(result, where)
        cursor = result.next_cursor
        if result.layout_error is not None or cursor is None:
            return
        if cursor in asked:
            self.note_layout_error(
                f"{where}: meta.links.next {cursor!r} was asked before",
                prefixes=[listing.prefix],
            )
        elif not self.page_limit_reached(page):
            yield self.listing_request(listing, cursor=cursor, asked=(*asked, cursor))

    def read_page(self, response: Response, where: str, listing: Listing) -> PlansPage | None:
        """The parsed page; None, with the list's offers unread, when the answer is not JSON."""
        try:
            data = load_json(response.body)
        except ValueError:
            self.note_layout_error(f"{where}: answer is not JSON", prefixes=[listing.prefix])
            return None
        return parse_listing(data, self.context(), listing)
