"""Scrapy settings for gpurent's provider spiders (`scrapy.cfg`: default = spiders.settings).

Run a spider from the repo root: ``scrapy crawl vastai -O feed.jsonl``.

gpurent's own settings (GPURENT_*, all optional; pass with ``-s NAME=value``) and the Scrapy
settings gpurent's code reads itself are declared once, in ``spiders.options.SpiderOptions``:
name, type, default, meaning and an example for each, in its field docs. The values below
are its defaults (`DEFAULTS`):

GPURENT_BASE_URL (SpiderOptions.base_url): the replay server instead of the provider.
GPURENT_RUN_ID (SpiderOptions.run_id): the run id on every feed line and on the report.
GPURENT_RUN_REPORT (SpiderOptions.run_report): where the JSON run report is written.
GPURENT_RETRY_AFTER_MAX (SpiderOptions.retry_after_max_s): cap on a Retry-After wait.
GPURENT_PAGE_SIZE (SpiderOptions.page_size): offers asked per page.
GPURENT_MAX_PAGES (SpiderOptions.max_pages): the page cap; a listing cut off by it ends the
    run `partial`.
GPURENT_TABLE_WAIT_MS (SpiderOptions.table_wait_ms): browser spiders' wait for the price
    table (not set below: its default applies).

RETRY_ENABLED, RETRY_TIMES, RETRY_HTTP_CODES and DOWNLOAD_TIMEOUT are Scrapy's, with their
values from the same defaults. A value that cannot be used stops the crawl at start-up with
a message naming the setting.

Secrets never go through settings (Scrapy logs overridden settings): the AutoDL token
comes from the environment variable ``AUTODL_TOKEN`` and the Chromium binary from
``GPURENT_CHROMIUM`` (else ``chromium`` on PATH).
"""

from __future__ import annotations

# Lower-case names are not settings: Scrapy reads only the upper-case ones of this module.
from scrapy.settings.default_settings import EXTENSIONS_BASE as _EXTENSIONS_BASE

from spiders.options import DEFAULTS as _defaults

BOT_NAME = "gpurent"
# The providers, and the spiders that read no GPU provider (spiders/api_prices: OpenRouter's
# per-token prices for `gpurent api-prices refresh`).
SPIDER_MODULES = ["spiders.providers", "spiders.api_prices"]
NEWSPIDER_MODULE = "spiders.providers"
# A provider's crawl imports that provider's spider only, found through its registry line
# (spiders.loader); other names, and `scrapy list`, walk SPIDER_MODULES as Scrapy does.
SPIDER_LOADER_CLASS = "spiders.loader.ProviderSpiderLoader"

# Say who we are: providers can reach us instead of guessing.
USER_AGENT = "gpurent/0.1 (+https://github.com/gpurent/gpurent; price tracker)"

# Web pages obey robots.txt. Spiders that only call a documented JSON API switch this
# off in their custom_settings, each with its reason.
ROBOTSTXT_OBEY = True

# Be gentle: a price tracker polls every few minutes, it never needs speed.
AUTOTHROTTLE_ENABLED = True
AUTOTHROTTLE_START_DELAY = 1.0
AUTOTHROTTLE_MAX_DELAY = 30.0
AUTOTHROTTLE_TARGET_CONCURRENCY = 1.0
CONCURRENT_REQUESTS_PER_DOMAIN = 2

RETRY_ENABLED = _defaults.retry_enabled
RETRY_TIMES = _defaults.retry_times
RETRY_HTTP_CODES = list(_defaults.retry_http_codes)
DOWNLOAD_TIMEOUT = _defaults.download_timeout_s

DOWNLOADER_MIDDLEWARES = {
    # Closest to the network of ours (above DownloaderStats, 850): sees every attempt.
    "spiders.middlewares.RunLedgerMiddleware": 900,
    # Between RetryMiddleware (550) and the network, so it runs on the 429 before the retry.
    "spiders.middlewares.RetryAfterMiddleware": 560,
}
EXTENSIONS = {
    "spiders.extensions.RunReport": 500,
    # Cycle collection in larger batches, start-up objects frozen (crawl speed).
    "spiders.extensions.CrawlGarbageCollector": 510,
}
# Scrapy's own extensions, less two that no scheduled crawl needs: an open telnet port, and
# the remote control (an HTTP server on a local port that runs the Python code sent to it,
# its token written to a job file in the user's profile). Left out of the base list, not
# set to None in EXTENSIONS: Scrapy imports every listed class, even a disabled one, and the
# remote control's module imports aiohttp (with the server, ~0.3 s of every crawl's start-up).
_UNWANTED_EXTENSIONS = {
    "scrapy.extensions.telnet.TelnetConsole",
    "scrapy.extensions.remote_control.RemoteControl",
}
EXTENSIONS_BASE = {
    name: order for name, order in _EXTENSIONS_BASE.items() if name not in _UNWANTED_EXTENSIONS
}
REMOTE_CONTROL_ENABLED = False
TELNETCONSOLE_ENABLED = False

FEED_EXPORT_ENCODING = "utf-8"
# The same JSON Lines bytes as Scrapy's exporter, written faster (spiders.extensions).
FEED_EXPORTERS = {
    "jsonlines": "spiders.extensions.FeedLinesExporter",
    "jsonl": "spiders.extensions.FeedLinesExporter",
}
# No per-offer "Scraped from" DEBUG record unless LOG_LEVEL is DEBUG (spiders.extensions).
LOG_FORMATTER = "spiders.extensions.ItemLogFormatter"
LOG_LEVEL = "INFO"
TWISTED_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"

GPURENT_BASE_URL = _defaults.base_url
GPURENT_RUN_ID = _defaults.run_id
GPURENT_RUN_REPORT = _defaults.run_report
GPURENT_RETRY_AFTER_MAX = _defaults.retry_after_max_s
GPURENT_PAGE_SIZE = _defaults.page_size
GPURENT_MAX_PAGES = _defaults.max_pages
