"""One page's feed lines as one Scrapy item: `RecordBatch`, and when a crawl may use it.

Scrapy hands every item through the spider middlewares, the item pipeline, the
`item_scraped` signal and the feed exporter, each step an asyncio task and a signal
dispatch: about as much time per item as parsing and checking the offer itself
(benchmarks.crawl). A page of 500 machines is 500 such trips for what is, to the feed, 500
lines written in a row. So a spider whose every feed is JSON Lines written by
`spiders.extensions.FeedLinesExporter` yields each page's lines as one `RecordBatch`; the
exporter writes them one line each, byte for byte what 500 items would have written, and the
run report counts the lines, not the batch.

Any other feed (``-O offers.json``, a CSV, a custom exporter) or no feed at all gets one dict
per record, as before: only the exporter above knows what a batch is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

FEED_LINES_EXPORTER = "spiders.extensions.FeedLinesExporter"


class RecordBatch(list[dict[str, Any]]):
    """Feed lines (one dict each, as `record.model_dump(mode="json")` gives them) that travel
    through Scrapy as one item."""


def feeds_take_batches(feeds: Mapping[str, Any], exporters: Mapping[str, Any]) -> bool:
    """True when there is a feed and every one is written by FeedLinesExporter.

    ``feeds``: Scrapy's FEEDS (uri -> options with ``format``); ``exporters``: the
    FEED_EXPORTERS in force (format -> exporter path or class)."""
    if not feeds:
        return False
    for options in feeds.values():
        fmt = options.get("format") if isinstance(options, Mapping) else None
        if not isinstance(fmt, str) or _path_of(exporters.get(fmt)) != FEED_LINES_EXPORTER:
            return False
        if options.get("fields") or options.get("item_classes") or options.get("item_filter"):
            return False  # a feed that picks fields or items reads each record itself
        if options.get("batch_item_count"):
            return False  # Scrapy would count a page as one item towards the split
    return True


def _path_of(exporter: Any) -> str | None:
    if isinstance(exporter, str):
        return exporter
    if isinstance(exporter, type):
        return f"{exporter.__module__}.{exporter.__qualname__}"
    return None
