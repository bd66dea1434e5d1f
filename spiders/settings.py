"""Scrapy settings for gpurent's provider spiders (`scrapy.cfg`: default = spiders.settings).

Run a spider from the repo root: ``scrapy crawl vastai -O feed.jsonl``.

gpurent's own settings (pass with ``-s NAME=value``; all optional):

GPURENT_BASE_URL (str | None; default None = the spider's real provider URL)
    Base URL the spider calls instead, e.g. ``http://127.0.0.1:8765/vastai`` (replay server).
GPURENT_RUN_ID (str | None; default None = a generated UTC stamp)
    Run id stamped on every feed line and on the run report, e.g. ``20261004T120000Z-1a2b3c``.
GPURENT_RUN_REPORT (str | None; default None = no report file)
    Path of the JSON run report written when the spider closes, e.g. ``/tmp/vastai.report.json``
    (fields: spiders.ledger.REPORT_FIELDS).
GPURENT_RETRY_AFTER_MAX (float seconds; default 60.0)
    Longest wait a 429/503 Retry-After may impose before the retry, e.g. ``5``.
GPURENT_PAGE_SIZE (int | None; default None = the spider's own: Vast.ai 500, AutoDL 20)
    Offers asked per page where the provider API pages, e.g. ``100``.
GPURENT_MAX_PAGES (int; default 200)
    Safety stop for pagination loops, e.g. ``50``. A listing that still has pages when it is
    reached ends the run `partial` (report field ``page_cap_reached``), never `ok`: the market
    was cut off. Raise it for markets larger than 200 pages.

Secrets never go through settings (Scrapy logs overridden settings): the AutoDL token
comes from the environment variable ``AUTODL_TOKEN`` and the Chromium binary from
``GPURENT_CHROMIUM`` (else ``chromium`` on PATH).
"""

from __future__ import annotations

BOT_NAME = "gpurent"
SPIDER_MODULES = ["spiders.providers"]
NEWSPIDER_MODULE = "spiders.providers"

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

RETRY_ENABLED = True
RETRY_TIMES = 3
RETRY_HTTP_CODES = [429, 500, 502, 503, 504, 522, 524, 408]
DOWNLOAD_TIMEOUT = 30

DOWNLOADER_MIDDLEWARES = {
    # Closest to the network of ours (above DownloaderStats, 850): sees every attempt.
    "spiders.middlewares.RunLedgerMiddleware": 900,
    # Between RetryMiddleware (550) and the network, so it runs on the 429 before the retry.
    "spiders.middlewares.RetryAfterMiddleware": 560,
}
EXTENSIONS = {
    "spiders.extensions.RunReport": 500,
    # An open telnet port is no use to a scheduled crawl.
    "scrapy.extensions.telnet.TelnetConsole": None,
}

FEED_EXPORT_ENCODING = "utf-8"
LOG_LEVEL = "INFO"
TWISTED_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"

GPURENT_BASE_URL = None
GPURENT_RUN_ID = None
GPURENT_RUN_REPORT = None
GPURENT_RETRY_AFTER_MAX = 60.0
GPURENT_PAGE_SIZE = None
GPURENT_MAX_PAGES = 200
