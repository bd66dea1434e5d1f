"""Downloader middlewares: honour Retry-After, and note every attempt in the run ledger."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Self

from scrapy.exceptions import (
    CannotResolveHostError,
    DownloadCancelledError,
    DownloadConnectionRefusedError,
    DownloadFailedError,
    DownloadTimeoutError,
    IgnoreRequest,
    ResponseDataLossError,
)
from twisted.internet import error as net_error
from twisted.web.client import ResponseFailed
from twisted.web.http import PotentialDataLoss

from spiders.base import ProviderSpider
from spiders.options import SpiderOptions

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from spiders.ledger import RunLedger

logger = logging.getLogger(__name__)

# Retry-After is also sent with 503 ("down for maintenance, come back in N s").
RETRY_AFTER_STATUSES = frozenset({429, 503})


def retry_after_seconds(value: str | bytes | None, *, now: datetime | None = None) -> float | None:
    """Seconds asked for by a Retry-After header (delta-seconds or HTTP-date); None if unusable."""
    if value is None:
        return None
    text = (value.decode("latin-1") if isinstance(value, bytes) else value).strip()
    if not text:
        return None
    if text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


class RetryAfterMiddleware:
    """Wait what a 429/503 Retry-After asks (capped by GPURENT_RETRY_AFTER_MAX) before the retry.

    Sits just below RetryMiddleware, so the response reaches it first: it sleeps, then
    hands the response on and RetryMiddleware re-sends at once. Only requests that
    will actually be retried wait; a wait beyond the cap is cut to the cap.
    """

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        options = SpiderOptions.from_settings(crawler.settings)
        self.cap = options.retry_after_max_s
        self.retry_enabled = options.retry_enabled
        self.max_retry_times = options.retry_times
        self.retry_codes = frozenset(options.retry_http_codes)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def _will_retry(self, request: Request, status: int) -> bool:
        if not self.retry_enabled or request.meta.get("dont_retry", False):
            return False
        if status not in self.retry_codes:
            return False
        limit = request.meta.get("max_retry_times", self.max_retry_times)
        return bool(request.meta.get("retry_times", 0) < limit)

    async def process_response(self, request: Request, response: Response) -> Response:
        if response.status not in RETRY_AFTER_STATUSES:
            return response
        wanted = retry_after_seconds(response.headers.get(b"Retry-After"))
        if wanted is None or wanted <= 0 or not self._will_retry(request, response.status):
            return response
        wait = min(wanted, self.cap)
        logger.info(
            "%s on %s: waiting %.1fs (Retry-After %s) before retrying",
            response.status, request.url, wait, f"{wanted:g}",
        )  # fmt: skip
        await asyncio.sleep(wait)
        ledger = _ledger(self.crawler)
        if ledger is not None:
            ledger.retry_after_waits_s.append(round(wait, 3))
        return response


def describe_exception(exc: BaseException) -> str:
    """A short, secret-free name for a download failure (for the run report)."""
    for kinds, name in _FAILURE_NAMES:
        if isinstance(exc, kinds):
            if isinstance(exc, ResponseFailed) and not any(
                _is_data_loss(r) for r in getattr(exc, "reasons", None) or []
            ):
                return "connection lost"
            return name
    name = type(exc).__name__
    if "timeout" in name.lower():  # e.g. Playwright's TimeoutError
        return "timeout"
    return name


# Scrapy 2.19 wraps Twisted's errors in its own; both are listed for other download handlers.
_FAILURE_NAMES: tuple[tuple[type[BaseException] | tuple[type[BaseException], ...], str], ...] = (
    (
        (DownloadTimeoutError, net_error.TimeoutError, net_error.TCPTimedOutError, TimeoutError),
        "timeout",
    ),
    ((ResponseDataLossError, ResponseFailed), "truncated body"),
    ((DownloadConnectionRefusedError, net_error.ConnectionRefusedError), "connection refused"),
    ((CannotResolveHostError, net_error.DNSLookupError), "dns lookup failed"),
    ((net_error.ConnectionLost, net_error.ConnectionDone), "connection lost"),
    (DownloadCancelledError, "download cancelled"),
    # RobotsTxtMiddleware (or another filter) refused to send the request.
    (IgnoreRequest, "request ignored"),
    (DownloadFailedError, "download failed"),
)


def _is_data_loss(failure: object) -> bool:
    check = getattr(failure, "check", None)
    if check is None:
        return False
    return bool(check(PotentialDataLoss)) or "DataLoss" in repr(getattr(failure, "value", ""))


class RunLedgerMiddleware:
    """Count every HTTP answer and every failed attempt, retries included, in the spider's ledger.

    Runs closest to the network, so it sees the 500 that RetryMiddleware will swallow
    and the timeout that a retry will paper over.
    """

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def process_response(self, request: Request, response: Response) -> Response:
        spider = self.crawler.spider
        if isinstance(spider, ProviderSpider) and not _is_robots(request):
            where = spider.provider_path(request.url)
            spider.ledger.responses_by_status[str(response.status)] += 1
            if response.status >= 400:
                spider.ledger.add_error(f"{response.status} on {where}")
        return response

    def process_exception(self, request: Request, exception: Exception) -> None:
        spider = self.crawler.spider
        if isinstance(spider, ProviderSpider) and not _is_robots(request):
            spider.ledger.requests_failed += 1
            where = spider.provider_path(request.url)
            spider.ledger.add_error(f"{describe_exception(exception)} on {where}")


def _is_robots(request: Request) -> bool:
    return request.url.split("?", 1)[0].endswith("/robots.txt")


def _ledger(crawler: Crawler) -> RunLedger | None:
    spider = crawler.spider
    return spider.ledger if isinstance(spider, ProviderSpider) else None
