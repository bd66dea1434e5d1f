"""The crawl's fast paths (issue 13) write and log exactly what Scrapy's own would.

`FeedLinesExporter` must write the same bytes as Scrapy's JsonLinesItemExporter, and
`ItemLogFormatter` must drop the per-item DEBUG line only when LOG_LEVEL drops it anyway.
"""

from __future__ import annotations

import gc
import io
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import scrapy
from crawl_kit import TOKEN, crawl
from scrapy.exporters import JsonLinesItemExporter
from scrapy.logformatter import LogFormatter
from scrapy.settings import Settings
from scrapy.utils.project import get_project_settings

from replay import ReplayServer
from spiders.extensions import (
    FEED_SEPARATORS,
    CrawlGarbageCollector,
    FeedLinesExporter,
    ItemLogFormatter,
)

ITEMS: list[Any] = [
    {"kind": "offer", "price": "1.98", "fees": [{"note": "¥0.0007/GB/h 本地盘"}], "n": None},
    {"kind": "quarantine", "raw": {"a": [1, 2.5, True, None]}, "reason": "gpu_unresolved: 'x'"},
    {"nested": {"deep": {"deeper": ["\u2028", '"quoted"', "tab\t"]}}, "emoji": "🚀"},
    {},
]


class PriceItem(scrapy.Item):
    price = scrapy.Field()
    currency = scrapy.Field(serializer=str.lower)


@dataclass
class Row:
    offer_key: str
    price: str


def _written(exporter_cls: type[JsonLinesItemExporter], items: list[Any], **kwargs: Any) -> bytes:
    """What the exporter writes; Scrapy's is given our separators (minified lines)."""
    if exporter_cls is JsonLinesItemExporter:
        kwargs.setdefault("separators", FEED_SEPARATORS)
    out = io.BytesIO()
    exporter = exporter_cls(out, **kwargs)
    exporter.start_exporting()
    for item in items:
        exporter.export_item(item)
    exporter.finish_exporting()
    return out.getvalue()


@pytest.mark.parametrize("encoding", ["utf-8", None, "latin-1"])
def test_plain_dicts_are_written_byte_for_byte_as_scrapy_writes_them(encoding: str | None) -> None:
    items = ITEMS if encoding != "latin-1" else [{"price": "1.98", "région": "é"}]
    ours = _written(FeedLinesExporter, items, encoding=encoding)
    assert ours == _written(JsonLinesItemExporter, items, encoding=encoding)
    assert len(ours.splitlines()) == len(items)


def test_lines_are_minified_unless_the_feed_says_otherwise() -> None:
    item = {"kind": "offer", "price": "1.98", "fees": []}
    assert _written(FeedLinesExporter, [item]) == b'{"kind":"offer","price":"1.98","fees":[]}\n'
    spaced = _written(FeedLinesExporter, [item], separators=(", ", ": "))
    assert spaced == b'{"kind": "offer", "price": "1.98", "fees": []}\n'


def test_other_items_and_field_lists_take_scrapys_path() -> None:
    items: list[Any] = [
        PriceItem(price="2.00", currency="CNY"),
        Row(offer_key="k1", price="0.33"),
        {"price": "1", "currency": "USD", "extra": 1},
    ]
    assert _written(FeedLinesExporter, items) == _written(JsonLinesItemExporter, items)
    assert b'"cny"' in _written(FeedLinesExporter, items[:1])  # the field serializer ran
    fields = {"fields_to_export": ["price"]}
    assert _written(FeedLinesExporter, items, **fields) == _written(
        JsonLinesItemExporter, items, **fields
    )


def test_a_subclass_serializer_is_not_bypassed() -> None:
    class Upper(FeedLinesExporter):
        def serialize_field(self, field: Any, name: str, value: Any) -> Any:
            return value.upper() if isinstance(value, str) else value

    assert _written(Upper, [{"kind": "offer"}]) == b'{"kind":"OFFER"}\n'


def test_project_feeds_use_it_for_json_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCRAPY_SETTINGS_MODULE", "spiders.settings")
    settings = get_project_settings()
    exporters = settings.getwithbase("FEED_EXPORTERS")
    assert exporters["jsonl"] == exporters["jsonlines"] == "spiders.extensions.FeedLinesExporter"
    assert exporters["json"] == "scrapy.exporters.JsonItemExporter"  # the others untouched
    assert settings["LOG_FORMATTER"] == "spiders.extensions.ItemLogFormatter"


def _formatter(level: Any) -> ItemLogFormatter:
    crawler: Any = SimpleNamespace(settings=Settings({"LOG_LEVEL": level}))
    return ItemLogFormatter.from_crawler(crawler)


@pytest.mark.parametrize("level", ["INFO", "WARNING", "ERROR", logging.INFO, "30"])
def test_the_item_line_is_skipped_when_the_level_drops_it(level: Any) -> None:
    formatter = _formatter(level)
    spider = scrapy.Spider(name="probe")
    assert formatter.scraped({"kind": "offer"}, None, spider) is None
    # Everything else is logged as Scrapy logs it.
    response = scrapy.http.TextResponse("http://127.0.0.1/x", body=b"{}")
    request = response.request = scrapy.Request("http://127.0.0.1/x")
    assert formatter.crawled(request, response, spider) == LogFormatter().crawled(
        request, response, spider
    )


@pytest.mark.parametrize("level", ["DEBUG", logging.DEBUG, "NOTALEVEL"])
def test_the_item_line_is_kept_at_debug(level: Any) -> None:
    spider = scrapy.Spider(name="probe")
    item = {"kind": "offer"}
    assert _formatter(level).scraped(item, None, spider) == LogFormatter().scraped(
        item, None, spider
    )


def test_a_real_crawl_writes_scrapys_bytes_and_logs_items_at_debug(
    server: ReplayServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUSHARE_TOKEN", TOKEN)
    result = crawl("gpushare", server, tmp_path, settings={"LOG_LEVEL": "DEBUG"})
    assert result.returncode == 0 and result.feed
    written = (tmp_path / "gpushare.jsonl").read_bytes()
    decoded = [json.loads(line) for line in written.splitlines()]
    assert written == _written(JsonLinesItemExporter, decoded, encoding="utf-8")
    # A page's lines travel as one item (spiders.feed_batch): logged with their page.
    assert 0 < result.log.count("Scraped from") <= len(result.feed)
    for record in result.feed:
        if record.get("offer_key"):
            assert f"'offer_key': '{record['offer_key']}'" in result.log
    (tmp_path / "quiet").mkdir()
    quiet = crawl("gpushare", server, tmp_path / "quiet", settings={"LOG_LEVEL": "INFO"})
    assert "Scraped from" not in quiet.log
    assert [_drop_time(r) for r in quiet.feed] == [_drop_time(r) for r in result.feed]


def _drop_time(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != "observed_at"}


def test_the_collector_is_tuned_while_the_spider_runs_and_restored_after(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = gc.get_threshold()
    ext = CrawlGarbageCollector()
    spider = scrapy.Spider(name="probe")
    try:
        ext.spider_opened(spider)
        assert gc.get_threshold()[0] >= CrawlGarbageCollector.GEN0_THRESHOLD
        assert gc.get_threshold()[1:] == before[1:]
        assert gc.get_freeze_count() > 0
    finally:
        ext.spider_closed(spider, "finished")
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
    ext.spider_closed(spider, "finished")  # a second close changes nothing
    assert gc.get_threshold() == before
    monkeypatch.setenv("SCRAPY_SETTINGS_MODULE", "spiders.settings")
    assert "spiders.extensions.CrawlGarbageCollector" in get_project_settings()["EXTENSIONS"]
