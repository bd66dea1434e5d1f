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

import os
from collections.abc import AsyncIterator, Iterator
from typing import Any

import scrapy
from scrapy.http import Response

from spiders.base import ProviderSpider
from spiders.parsers.common import load_json
from spiders.parsers.hyperstack import BookPrice, parse_flavors, parse_pricebook

PRICEBOOK_PATH = "/pricebook"
FLAVORS_PATH = "/core/flavors"
KEY_ENV = "HYPERSTACK_API_KEY"


def hyperstack_key() -> str | None:
    key = os.environ.get(KEY_ENV, "").strip()
    return key or None


class HyperstackSpider(ProviderSpider):
    name = "hyperstack"
    home = "GB"
    auth_env = (KEY_ENV,)
    needs_auth = True
    default_base_url = "https://infrahub-api.nexgencloud.com/v1"
    custom_settings = {  # noqa: RUF012 (Scrapy reads it as a class attribute)
        # A keyed JSON API for programs; robots.txt is for page crawlers.
        "ROBOTSTXT_OBEY": False,
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._key = hyperstack_key()

    async def start(self) -> AsyncIterator[Any]:
        if self._key is None:
            self.note_auth("missing", f"{KEY_ENV} not set: Hyperstack publishes no keyless list")
            return
        yield self.api_request(PRICEBOOK_PATH, self.parse_pricebook)

    def api_request(self, path: str, callback: Any, **cb_kwargs: Any) -> scrapy.Request:
        assert self._key is not None
        return scrapy.Request(
            self.url(path),
            headers={"Accept": "application/json", "api_key": self._key},
            # A refused key is an answer to read, not an error to retry.
            meta={"handle_httpstatus_list": [401, 403]},
            callback=callback,
            errback=self.on_request_failed,
            cb_kwargs=cb_kwargs,
            dont_filter=True,
        )

    def refused(self, response: Response, path: str) -> bool:
        if response.status in (401, 403):
            self.note_auth("rejected", f"HTTP {response.status} from {path}")
            return True
        return False

    def api_failed(self, path: str, message: str) -> None:
        # HTTP 200 but no data: a failed request, not a layout change.
        self.ledger.requests_gave_up += 1
        self.ledger.add_error(f"api error on {path}: {message}")

    def parse_pricebook(self, response: Response) -> Iterator[Any]:
        if self.refused(response, PRICEBOOK_PATH):
            return
        try:
            data = load_json(response.body)
        except ValueError:
            self.note_layout_error(f"{PRICEBOOK_PATH}: answer is not JSON")
            return
        book = parse_pricebook(data)
        if book.api_error is not None:
            self.api_failed(PRICEBOOK_PATH, book.api_error)
            return
        self.note_auth("ok")
        if book.layout_error is not None:
            self.note_layout_error(f"{PRICEBOOK_PATH}: {book.layout_error}")
            return
        self.note_page_parsed()
        if book.problems:
            self.note(f"price book entries unread: {'; '.join(book.problems[:5])}")
        yield self.api_request(FLAVORS_PATH, self.parse_flavors, prices=book.prices)

    def parse_flavors(self, response: Response, prices: dict[str, BookPrice]) -> Iterator[Any]:
        if self.refused(response, FLAVORS_PATH):
            return
        try:
            data = load_json(response.body)
        except ValueError:
            self.note_layout_error(f"{FLAVORS_PATH}: answer is not JSON")
            return
        page = parse_flavors(data, prices, self.context())
        if page.api_error is not None:
            self.api_failed(FLAVORS_PATH, page.api_error)
            return
        yield from self.emit_page(page, FLAVORS_PATH)
