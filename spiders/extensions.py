"""RunReport, the feed writer and the item log line of gpurent's spiders.

`RunReport`: when a provider spider closes, write what happened to GPURENT_RUN_REPORT (JSON).
The flow decides from this report whether the run was ok, partial, failed,
auth_required or layout_changed; the fields are listed in `spiders.ledger.REPORT_FIELDS`
and documented in `build_report`. No secret ever reaches it: it holds counts,
statuses, paths and short error names, never headers or bodies.

`FeedLinesExporter` writes the JSON Lines feed (``-O feed.jsonl``) byte for byte as Scrapy's
own exporter does, without Scrapy's per-field walk for the plain dicts our spiders yield;
`ItemLogFormatter` builds the per-item "Scraped from" DEBUG line only when LOG_LEVEL lets
it through; `CrawlGarbageCollector` keeps Python's cycle collector from re-walking the
start-up objects of the crawl process every few hundred records. All three are about crawl
speed (benchmarks.crawl); none changes what is written.
"""

from __future__ import annotations

import gc
import json
import logging
import os
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from scrapy import Spider, signals
from scrapy.exporters import JsonLinesItemExporter
from scrapy.logformatter import LogFormatter, LogFormatterResult

from gpurent_core.model import utcnow
from spiders.base import ProviderSpider
from spiders.feed_batch import RecordBatch
from spiders.ledger import build_report
from spiders.options import SpiderOptions

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from twisted.python.failure import Failure

logger = logging.getLogger(__name__)


class RunReport:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        # Read at start-up: a bad value of any option stops the crawl before it begins.
        self.path: Path | None = SpiderOptions.from_settings(crawler.settings).run_report
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
        if not isinstance(spider, ProviderSpider):
            return
        for line in item if type(item) is RecordBatch else (item,):
            if not isinstance(line, dict):
                continue
            if line.get("kind") == "offer":
                spider.ledger.offers += 1
            elif line.get("kind") == "quarantine":
                spider.ledger.quarantined += 1

    def spider_error(self, failure: Failure, response: Any, spider: Spider) -> None:
        # A bug in a callback: the page was not parsed, say so rather than look empty.
        if isinstance(spider, ProviderSpider):
            where = spider.provider_path(getattr(response, "url", "") or "")
            spider.ledger.parse_errors += 1
            spider.ledger.add_error(f"parse error on {where}: {type(failure.value).__name__}")
            spider.note_unread()  # what the page listed was not read

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


class CrawlGarbageCollector:
    """Cheaper cycle collection while a spider runs (each crawl is its own process).

    A crawl allocates a few objects per record field, almost all freed at once by reference
    counting, yet each of Python's generation-0 collections (every 700 allocations) and the
    older ones it triggers walk the tens of thousands of objects Scrapy and its imports left
    alive at start-up. At spider open this collects once, freezes what is left
    (`gc.freeze`: never walked again, never freed) and collects generation 0 every
    `GEN0_THRESHOLD` allocations instead; at spider close both are undone. Cyclic garbage is
    still collected, just in larger batches.
    """

    GEN0_THRESHOLD = 10_000

    def __init__(self) -> None:
        self._saved: tuple[int, int, int] | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        ext = cls()
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def spider_opened(self, spider: Spider) -> None:
        self._saved = gc.get_threshold()
        gc.collect()
        gc.freeze()
        gen0, gen1, gen2 = self._saved
        gc.set_threshold(max(self.GEN0_THRESHOLD, gen0), gen1, gen2)

    def spider_closed(self, spider: Spider, reason: str) -> None:
        if self._saved is not None:
            gc.set_threshold(*self._saved)
            gc.unfreeze()
            self._saved = None


FEED_SEPARATORS = (",", ":")
"""Feed lines are minified JSON: the canonical line the warehouse reads set-wise
(warehouse.feed_fast), a tenth shorter than with Python's default separators."""


class FeedLinesExporter(JsonLinesItemExporter):
    """Scrapy's JSON Lines exporter, with a direct path for the plain dicts our spiders yield,
    writing minified lines (``FEED_SEPARATORS``; a feed option ``separators`` overrides it).

    For a `dict` item with no ``fields_to_export``, Scrapy's exporter copies the item field by
    field (through ItemAdapter, each value through the identity serializer) and encodes the
    copy: the same keys, in the same order, with the same values. This path encodes the dict
    itself with the same encoder and encoding, so each line is byte for byte what Scrapy
    writes; any other item (an `Item`, a dataclass, a feed with ``fields``, an overridden
    `serialize_field`) takes Scrapy's own path. A `RecordBatch` (a page's lines as one item,
    `spiders.feed_batch`) is written as its lines, each as that dict would have been.
    """

    def __init__(self, file: Any, **kwargs: Any) -> None:
        kwargs.setdefault("separators", FEED_SEPARATORS)
        super().__init__(file, **kwargs)

    def export_item(self, item: Any) -> None:
        direct = (
            self.fields_to_export is None
            and type(self).serialize_field is JsonLinesItemExporter.serialize_field
        )
        if type(item) is RecordBatch:  # a page's lines (spiders.feed_batch): one line each
            if direct and all(type(line) is dict for line in item):
                encode = self.encoder.encode
                text = "".join([encode(line) + "\n" for line in item])
                self.file.write(text.encode(self.encoding or "utf-8"))
            else:
                for line in item:
                    super().export_item(line)
            return
        if type(item) is dict and direct:
            text = self.encoder.encode(item) + "\n"
            self.file.write(text.encode(self.encoding or "utf-8"))
            return
        super().export_item(item)


class ItemLogFormatter(LogFormatter):
    """Scrapy's log formatter, minus the cost of the per-item "Scraped from" line when it is
    not shown: that line is DEBUG, and Scrapy builds its log record (item included) even when
    LOG_LEVEL drops it, once per offer. At LOG_LEVEL DEBUG (or a level Python does not
    know) it is logged exactly as before."""

    def __init__(self, *, log_items: bool = True) -> None:
        super().__init__()
        self.log_items = log_items

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        level = _level_number(crawler.settings.get("LOG_LEVEL"))
        return cls(log_items=level is None or level <= logging.DEBUG)

    # Scrapy documents None as "omit this log line" (and checks for it), though its type
    # hints say a dict.
    def scraped(  # type: ignore[override]
        self, item: Any, response: Response | Failure | None, spider: Spider
    ) -> LogFormatterResult | None:
        if not self.log_items:
            return None
        return super().scraped(item, response, spider)


def _level_number(level: Any) -> int | None:
    """A logging level given as a number or a name ("INFO", "warning"); None if unknown."""
    if isinstance(level, int):
        return level
    if isinstance(level, str):
        text = level.strip()
        if text.isdigit():
            return int(text)
        return logging.getLevelNamesMapping().get(text.upper())
    return None
