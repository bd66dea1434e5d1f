"""RunReport: when a provider spider closes, write what happened to GPURENT_RUN_REPORT (JSON).

The flow decides from this report whether the run was ok, partial, failed,
auth_required or layout_changed; the fields are listed in `spiders.ledger.REPORT_FIELDS`
and documented in `build_report`. No secret ever reaches it: it holds counts,
statuses, paths and short error names, never headers or bodies.
"""

from __future__ import annotations

import json
import logging
import os
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from scrapy import Spider, signals

from gpurent_core.model import utcnow
from spiders.base import ProviderSpider
from spiders.ledger import build_report

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from twisted.python.failure import Failure

logger = logging.getLogger(__name__)


class RunReport:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        path = crawler.settings.get("GPURENT_RUN_REPORT")
        self.path = Path(path) if path else None
        self.started_at: datetime = utcnow()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        ext = cls(crawler)
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.item_scraped, signal=signals.item_scraped)
        crawler.signals.connect(ext.spider_error, signal=signals.spider_error)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def spider_opened(self, spider: Spider) -> None:
        self.started_at = utcnow()

    def item_scraped(self, item: Any, spider: Spider) -> None:
        if not isinstance(spider, ProviderSpider) or not isinstance(item, dict):
            return
        if item.get("kind") == "offer":
            spider.ledger.offers += 1
        elif item.get("kind") == "quarantine":
            spider.ledger.quarantined += 1

    def spider_error(self, failure: Failure, response: Any, spider: Spider) -> None:
        # A bug in a callback: the page was not parsed, say so rather than look empty.
        if isinstance(spider, ProviderSpider):
            where = spider.provider_path(getattr(response, "url", "") or "")
            spider.ledger.parse_errors += 1
            spider.ledger.add_error(f"parse error on {where}: {type(failure.value).__name__}")

    def spider_closed(self, spider: Spider, reason: str) -> None:
        if not isinstance(spider, ProviderSpider):
            return
        report = build_report(
            spider.ledger,
            provider=spider.name,
            run_id=spider.run_id,
            started_at=self.started_at,
            finished_at=utcnow(),
            finish_reason=reason,
            needs_auth=spider.needs_auth,
        )
        logger.info(
            "run report: offers=%s quarantined=%s pages_parsed=%s auth=%s "
            "layout_errors=%s errors=%s",
            report["offers"], report["quarantined"], report["pages_parsed"], report["auth"],
            len(report["layout_errors"]), len(report["errors"]),
        )  # fmt: skip
        if self.path is not None:
            write_json_atomic(self.path, report)


def write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    """Write via a temporary file and rename, so a reader never sees half a report."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
