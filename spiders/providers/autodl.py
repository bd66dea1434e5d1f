"""AutoDL: market machines with stock (token), or the public price table (no token).

With `AUTODL_TOKEN` in the environment: `POST {base}/api/v1/user/machine/list` with the
web console's form (all regions, sold-out hosts included) and the header
`Authorization: <token>` (no "Bearer"), page 1 then pages 2..`data.max_page`.

Without a token, or when AutoDL refuses it (`code: "AuthorizeFailed"`, HTTP 401/403):
the run report says `auth: missing` / `rejected`, and the spider reads the price table
of `{base}/home` in headless Chromium (scrapy-playwright), because the table is built
by the page's JavaScript. Those rows have prices but no stock: status `unknown`.

The token is read from the environment, sent in one header and never logged, stored
in settings or written to the feed or the run report.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Iterator
from typing import Any

import scrapy
from scrapy.http import Response
from scrapy.settings import BaseSettings
from scrapy_playwright.page import PageMethod
from twisted.python.failure import Failure

from gpurent.config import load_settings
from spiders.base import ProviderSpider
from spiders.parsers.autodl import ROW_SELECTOR, machine_list_body, parse_home, parse_machine_list
from spiders.parsers.common import load_json

MACHINE_LIST_PATH = "/api/v1/user/machine/list"
HOME_PATH = "/home"
TOKEN_ENV = "AUTODL_TOKEN"
# Headless in a container or CI: no sandbox (no user namespaces), no GPU, small /dev/shm,
# and none of the background traffic a desktop browser makes on its own.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PLAYWRIGHT_HANDLER = "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler"
# How long the homepage script may take to build the table (ms).
TABLE_WAIT_MS = 15_000


def autodl_token() -> str | None:
    token = os.environ.get(TOKEN_ENV, "").strip()
    return token or None


class AutodlSpider(ProviderSpider):
    name = "autodl"
    home = "CN"
    needs_browser = True
    auth_env = ("AUTODL_TOKEN",)
    default_base_url = "https://www.autodl.com"
    needs_auth = True
    default_page_size = 20
    custom_settings = {  # noqa: RUF012 (Scrapy reads it as a class attribute)
        # Only this spider needs a browser, so only it swaps in the Playwright handler;
        # requests without meta["playwright"] still go through Scrapy's own HTTP client.
        "DOWNLOAD_HANDLERS": {"http": PLAYWRIGHT_HANDLER, "https": PLAYWRIGHT_HANDLER},
        "PLAYWRIGHT_BROWSER_TYPE": "chromium",
        "PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT": 30_000,
        "PLAYWRIGHT_MAX_CONTEXTS": 1,
    }

    @classmethod
    def update_settings(cls, settings: BaseSettings) -> None:
        super().update_settings(settings)
        # Read at crawl time, not import time, so GPURENT_CHROMIUM set by a test counts.
        launch: dict[str, Any] = {"headless": True, "args": CHROMIUM_ARGS}
        # The system Chromium (GPURENT_CHROMIUM, else `chromium` on PATH), never a download.
        path = load_settings().chromium_path()
        if path:
            launch["executable_path"] = path
        settings.set("PLAYWRIGHT_LAUNCH_OPTIONS", launch, priority="spider")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._token = autodl_token()
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
        body = machine_list_body(page_index=page_index, page_size=self.page_size)
        return scrapy.Request(
            self.url(MACHINE_LIST_PATH),
            method="POST",
            body=json.dumps(body),
            headers={
                "Content-Type": "application/json",
                "Accept": "application/json",
                "Authorization": self._token,
            },
            meta={
                # The console's JSON API, called as the console calls it; robots.txt
                # rules are for the pages (the homepage request obeys them).
                "dont_obey_robotstxt": True,
                # A refused token is an answer to read, not an error to retry.
                "handle_httpstatus_list": [401, 403],
            },
            callback=self.parse_machine_page,
            errback=self.on_request_failed,
            cb_kwargs={"page_index": page_index},
            dont_filter=True,
        )

    def parse_machine_page(self, response: Response, page_index: int) -> Iterator[Any]:
        where = f"{MACHINE_LIST_PATH} page {page_index}"
        if response.status in (401, 403):
            yield from self.rejected(f"HTTP {response.status} from the machine list")
            return
        try:
            data = load_json(response.body)
        except ValueError:
            self.note_layout_error(f"{where}: answer is not JSON")
            return
        page = parse_machine_list(data, self.context())
        if page.auth_rejected:
            yield from self.rejected("AuthorizeFailed from the machine list")
            return
        if page.api_error is not None:
            # HTTP 200 but no data: a failed request, not a layout change.
            self.ledger.requests_gave_up += 1
            self.ledger.add_error(f"api error on {MACHINE_LIST_PATH}: {page.api_error}")
            return
        self.note_auth("ok")
        yield from self.emit_page(page, where)
        if page_index != 1 or page.layout_error is not None or page.max_page is None:
            return
        last = min(page.max_page, self.max_pages)
        if page.max_page > self.max_pages:
            self.ledger.add_error(f"stopped at GPURENT_MAX_PAGES={self.max_pages}")
        for index in range(2, last + 1):
            yield self.machine_request(index)

    def rejected(self, detail: str) -> Iterator[Any]:
        self.note_auth("rejected", detail)
        if not self._home_requested:
            yield self.home_request()

    # -- homepage (browser) ----------------------------------------------------

    def home_request(self) -> scrapy.Request:
        self._home_requested = True
        return scrapy.Request(
            self.url(HOME_PATH),
            meta={
                "playwright": True,
                "playwright_page_methods": [
                    PageMethod("wait_for_selector", ROW_SELECTOR, timeout=TABLE_WAIT_MS),
                ],
            },
            callback=self.parse_home,
            errback=self.on_home_failed,
            dont_filter=True,
        )

    def parse_home(self, response: Response) -> Iterator[Any]:
        yield from self.emit_page(parse_home(response.text, self.context()), HOME_PATH)

    def on_home_failed(self, failure: Failure) -> None:
        self.on_request_failed(failure)
        text = str(failure.value)
        if "Timeout" in type(failure.value).__name__ and "selector" in text.lower():
            # The page loaded but its script never built the table: the layout moved on.
            self.note_layout_error(f"{HOME_PATH}: price table never appeared ({ROW_SELECTOR})")
