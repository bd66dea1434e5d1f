"""Base for spiders whose price page builds its table with JavaScript (scrapy-playwright).

Used by 算家云, 共绩算力 and AutoDL's homepage fallback: only these spiders
swap in the Playwright download handler, the browser is the system Chromium
(GPURENT_CHROMIUM, else `chromium` on PATH; never a download), headless, with the flags a
container needs. A page request waits for the table rows the script builds (or for an HTTP
error page, left to Scrapy's retries), at most GPURENT_TABLE_WAIT_MS (spiders.options); rows
that never appear on a page that answered mean the page changed (a layout error, never "sold
out"). robots.txt is obeyed as for every page (ROBOTSTXT_OBEY stays on; the robots.txt
request itself goes through Scrapy's own HTTP client).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any, ClassVar

import scrapy
from scrapy.settings import BaseSettings
from scrapy_playwright.page import PageMethod
from twisted.python.failure import Failure

from gpurent_core.config import load_settings
from spiders.base import ProviderSpider
from spiders.options import DEFAULTS, SETTING_NAMES

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


def rows_or_error_page(row_selector: str) -> str:
    """A page function true once the script has built the rows, or at once on an HTTP error
    page: Scrapy then handles that status as for any page (retries, error counts) instead of
    the wait timing out as if the page had changed."""
    return (
        f"() => document.querySelector({json.dumps(row_selector)}) !== null"
        " || ((performance.getEntriesByType('navigation')[0] || {}).responseStatus || 200) >= 400"
    )


def chromium_launch_options() -> dict[str, Any]:
    launch: dict[str, Any] = {"headless": True, "args": CHROMIUM_ARGS}
    path = load_settings().chromium_path()
    if path:
        launch["executable_path"] = path
    return launch


class BrowserPageSpider(ProviderSpider):
    """A provider spider that reads one JavaScript-built price page in headless Chromium."""

    needs_browser = True
    page_path: ClassVar[str] = "/"
    row_selector: ClassVar[str] = "tr"
    """CSS selector of the rows the page's script builds; the browser waits for it."""
    custom_settings = {  # noqa: RUF012 (Scrapy reads it as a class attribute)
        # Requests without meta["playwright"] (robots.txt) still use Scrapy's HTTP client.
        "DOWNLOAD_HANDLERS": {"http": PLAYWRIGHT_HANDLER, "https": PLAYWRIGHT_HANDLER},
        "PLAYWRIGHT_BROWSER_TYPE": "chromium",
        # Defaults of the browser options (spiders.options): a -s setting still wins.
        SETTING_NAMES["navigation_timeout_ms"]: DEFAULTS.navigation_timeout_ms,
        SETTING_NAMES["browser_contexts"]: DEFAULTS.browser_contexts,
    }

    @classmethod
    def update_settings(cls, settings: BaseSettings) -> None:
        super().update_settings(settings)
        # Read at crawl time, not import time, so GPURENT_CHROMIUM set by a test counts.
        settings.set("PLAYWRIGHT_LAUNCH_OPTIONS", chromium_launch_options(), priority="spider")

    async def start(self) -> AsyncIterator[Any]:
        yield self.page_request()

    def page_request(self) -> scrapy.Request:
        return scrapy.Request(
            self.url(self.page_path),
            meta={
                "playwright": True,
                "playwright_page_methods": [
                    PageMethod(
                        "wait_for_function",
                        rows_or_error_page(self.row_selector),
                        timeout=self.options.table_wait_ms,
                    ),
                ],
            },
            callback=self.parse_page,
            errback=self.on_page_failed,
            dont_filter=True,
        )

    def parse_page(self, response: Any) -> Any:
        raise NotImplementedError

    def on_page_failed(self, failure: Failure) -> None:
        self.on_request_failed(failure)
        text = str(failure.value)
        if "Timeout" in type(failure.value).__name__ and "wait_for_function" in text:
            # The page loaded but its script never built the table: the layout moved on.
            self.note_layout_error(
                f"{self.page_path}: price table never appeared ({self.row_selector})"
            )
