"""Hyperstack (NexGen Cloud): the price book, then every flavor of every region, joined.

`GET {base}/pricebook` then `GET {base}/core/flavors`, both with the header
`api_key: <HYPERSTACK_API_KEY>` (base `https://infrahub-api.nexgencloud.com/v1`). Flavors
carry stock but no price, so they are read only once the price book is in hand. Without a
key nothing is public: `auth: missing`, no request. HTTP 401/403: `auth: rejected`. An
answer with `"status": false` is a failed request, not a layout change.

The key is read from the environment, sent in one header and never logged, stored in
settings or written to the feed or the run report.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import scrapy
from scrapy.http import Response

from gpurent_core.providers import provider
from spiders.base import KEY_REFUSED, ApiSpider, env_secret
from spiders.providers.hyperstack.parser import BookPrice, parse_flavors, parse_pricebook

PRICEBOOK_PATH = "/pricebook"
FLAVORS_PATH = "/core/flavors"
# The credentials it reads, from its line in gpurent_core.providers.
(KEY_ENV,) = provider("hyperstack").auth_env


class HyperstackSpider(ApiSpider):
    """Reads a keyed JSON API for programs."""

    name = "hyperstack"
    needs_auth = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._key = env_secret(KEY_ENV)

    async def start(self) -> AsyncIterator[Any]:
        if self._key is None:
            self.note_auth("missing", f"{KEY_ENV} not set: Hyperstack publishes no keyless list")
            return
        yield self.api_request(PRICEBOOK_PATH, self.parse_pricebook)

    def api_request(self, path: str, callback: Any, **cb_kwargs: Any) -> scrapy.Request:
        assert self._key is not None
        return self.json_request(
            self.url(path),
            headers={"api_key": self._key},
            refusals=KEY_REFUSED,
            callback=callback,
            cb_kwargs=cb_kwargs,
        )

    def parse_pricebook(self, response: Response) -> Iterator[Any]:
        if self.key_refused(response, PRICEBOOK_PATH):
            return
        book = self.json_page(response, PRICEBOOK_PATH, lambda data, _ctx: parse_pricebook(data))
        if book is None:
            return
        if book.api_error is not None:
            self.note_api_error(PRICEBOOK_PATH, book.api_error)
            return
        self.note_auth("ok")
        for path in book.missing_fields:
            # Price book entries that lost a declared field (their rate is unread).
            self.ledger.add_missing_field(f"{PRICEBOOK_PATH}: {path}")
        if book.layout_error is not None:
            self.note_layout_error(f"{PRICEBOOK_PATH}: {book.layout_error}")
            return
        self.note_page_parsed()
        if book.problems:
            self.note(f"price book entries unread: {'; '.join(book.problems[:5])}")
        yield self.api_request(FLAVORS_PATH, self.parse_flavors, prices=book.prices)

    def parse_flavors(self, response: Response, prices: dict[str, BookPrice]) -> Iterator[Any]:
        if self.key_refused(response, FLAVORS_PATH):
            return
        page = self.json_page(
            response, FLAVORS_PATH, lambda data, ctx: parse_flavors(data, prices, ctx)
        )
        if page is None:
            return
        if page.api_error is not None:
            self.note_api_error(FLAVORS_PATH, page.api_error)
            return
        yield from self.emit_page(page, FLAVORS_PATH)
