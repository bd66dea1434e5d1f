"""AutoDL: market machines with stock (token), or the public price table (no token).

With `AUTODL_TOKEN` in the environment: `POST {base}/api/v1/user/machine/list` with the
web console's form (all regions, sold-out hosts included) and the header
`Authorization: <token>` (no "Bearer"), page 1 then pages 2..`data.max_page`.

Without a token, or when AutoDL refuses it (`code: "AuthorizeFailed"`, HTTP 401/403):
the run report says `auth: missing` / `rejected`, and the spider reads the price table
of `{base}/home` in headless Chromium (scrapy-playwright, set up by `spiders.browser`),
because the table is built by the page's JavaScript. Those rows have prices but no stock:
status `unknown`. An HTTP error page there is a failed request (retried, then given up), not
a layout change; a page that answered but never built its table is a layout change. The
machine list was not read then: the machines keep their last state, stale (rule of truth 10).

The token is read from the environment, sent in one header and never logged, stored
in settings or written to the feed or the run report.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import scrapy
from scrapy.http import Response

from gpurent_core.providers import provider
from spiders.base import KEY_REFUSED, env_secret
from spiders.browser import BrowserPageSpider
from spiders.providers.autodl.parser import (
    ROW_SELECTOR,
    machine_list_body,
    parse_home,
    parse_machine_list,
)

MACHINE_LIST_PATH = "/api/v1/user/machine/list"
HOME_PATH = "/home"
# The credentials it reads, from its line in gpurent_core.providers.
(TOKEN_ENV,) = provider("autodl").auth_env


class AutodlSpider(BrowserPageSpider):
    name = "autodl"
    needs_auth = True
    default_page_size = 20
    # The homepage table, read in Chromium when there is no token (or it is refused).
    page_path = HOME_PATH
    row_selector = ROW_SELECTOR

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._token = env_secret(TOKEN_ENV)
        self._home_requested = False

    async def start(self) -> AsyncIterator[Any]:
        if self._token is None:
            self.note_auth("missing", f"{TOKEN_ENV} not set: public price table, stock unknown")
            yield self.home_request()
            return
        yield self.machine_request(1)

    # -- machine list (API) ----------------------------------------------------

    def machine_request(self, page_index: int) -> scrapy.Request:
        assert self._token is not None
        return self.json_request(
            self.url(MACHINE_LIST_PATH),
            json_body=machine_list_body(page_index=page_index, page_size=self.page_size),
            headers={"Authorization": self._token},
            refusals=KEY_REFUSED,
            # The console's JSON API, called as the console calls it; robots.txt rules are
            # for the pages (the homepage request obeys them).
            meta={"dont_obey_robotstxt": True},
            callback=self.parse_machine_page,
            cb_kwargs={"page_index": page_index},
        )

    def parse_machine_page(self, response: Response, page_index: int) -> Iterator[Any]:
        where = f"{MACHINE_LIST_PATH} page {page_index}"
        if response.status in KEY_REFUSED:
            yield from self.rejected(f"HTTP {response.status} from the machine list")
            return
        page = self.json_page(response, where, parse_machine_list)
        if page is None:
            return
        if page.auth_rejected:
            yield from self.rejected("AuthorizeFailed from the machine list")
            return
        if page.api_error is not None:
            self.note_api_error(MACHINE_LIST_PATH, page.api_error)
            return
        self.note_auth("ok")
        yield from self.emit_page(page, where)
        if page_index != 1 or page.layout_error is not None or page.max_page is None:
            return
        for index in self.later_pages(page.max_page):
            yield self.machine_request(index)

    def rejected(self, detail: str) -> Iterator[Any]:
        self.note_auth("rejected", detail)
        if not self._home_requested:
            yield self.home_request()

    # -- homepage (browser) ----------------------------------------------------

    def home_request(self) -> scrapy.Request:
        self._home_requested = True
        # The machine list was not read (no token, or it was refused): its machines keep
        # their last state, stale, rather than being closed by a table that never lists them
        # (its rows are keyed home:<card>, never a machine id).
        self.note_unread()
        return self.page_request()

    def parse_page(self, response: Response) -> Iterator[Any]:
        yield from self.emit_page(parse_home(response.text, self.context()), HOME_PATH)
