"""A page's feed lines as one Scrapy item (spiders.feed_batch, issue 13): the feed, the run
report and every other feed format stay what one item per record gave."""

from __future__ import annotations

import io
import json
from collections import OrderedDict
from pathlib import Path
from typing import Any

import pytest
from crawl_kit import TOKEN, crawl
from scrapy.exporters import JsonLinesItemExporter
from scrapy.utils.project import get_project_settings

from replay import ReplayServer
from spiders.extensions import FEED_SEPARATORS, FeedLinesExporter
from spiders.feed_batch import FEED_LINES_EXPORTER, RecordBatch, feeds_take_batches

LINES: list[dict[str, Any]] = [
    {"kind": "offer", "offer_key": "a", "price": "1.98", "note": "¥0.0007/GB/h 本地盘"},
    {"kind": "quarantine", "offer_key": None, "raw": {"x": [1, 2.5, True, None]}},
    {"kind": "offer", "offer_key": "b", "emoji": "🚀", "odd": "\u2028"},
]
OURS = {"jsonl": FEED_LINES_EXPORTER, "jsonlines": FeedLinesExporter}
SCRAPYS = {"json": "scrapy.exporters.JsonItemExporter", "csv": "scrapy.exporters.CsvItemExporter"}


def _written(exporter_cls: type[JsonLinesItemExporter], items: list[Any]) -> bytes:
    out = io.BytesIO()
    # Scrapy's own exporter, given our separators, is the reference.
    exporter = exporter_cls(out, encoding="utf-8", separators=FEED_SEPARATORS)
    exporter.start_exporting()
    for item in items:
        exporter.export_item(item)
    exporter.finish_exporting()
    return out.getvalue()


def test_a_batch_is_written_as_its_lines_byte_for_byte() -> None:
    one_by_one = _written(JsonLinesItemExporter, LINES)
    assert _written(FeedLinesExporter, [RecordBatch(LINES)]) == one_by_one
    # Batches and single dicts mixed, in order; an empty batch writes nothing.
    mixed = [RecordBatch(LINES[:1]), LINES[1], RecordBatch(), RecordBatch(LINES[2:])]
    assert _written(FeedLinesExporter, mixed) == one_by_one


def test_a_batch_of_other_items_or_a_subclass_serializer_takes_scrapys_path() -> None:
    class Upper(FeedLinesExporter):
        def serialize_field(self, field: Any, name: str, value: Any) -> Any:
            return value.upper() if isinstance(value, str) else value

    assert _written(Upper, [RecordBatch([{"kind": "offer"}])]) == b'{"kind":"OFFER"}\n'
    odd = RecordBatch([OrderedDict(kind="offer", n=1)])  # type: ignore[list-item]
    assert _written(FeedLinesExporter, [odd]) == b'{"kind":"offer","n":1}\n'


@pytest.mark.parametrize(
    ("feeds", "expected"),
    [
        ({"out.jsonl": {"format": "jsonl"}}, True),
        ({"out.jsonl": {"format": "jsonlines"}, "b.jsonl": {"format": "jsonl"}}, True),
        ({}, False),  # no feed: whoever reads the items reads records
        ({"out.json": {"format": "json"}}, False),
        ({"out.jsonl": {"format": "jsonl"}, "out.csv": {"format": "csv"}}, False),
        ({"out.jsonl": {"format": "jsonl", "fields": ["price"]}}, False),
        ({"out.jsonl": {"format": "jsonl", "item_classes": ["x.Y"]}}, False),
        ({"out.jsonl": {"format": "jsonl", "batch_item_count": 100}}, False),
        ({"out.jsonl": {}}, False),
        ({"out.jsonl": "jsonl"}, False),
    ],
)
def test_batches_only_where_every_feed_is_written_by_our_exporter(
    feeds: dict[str, Any], expected: bool
) -> None:
    assert feeds_take_batches(feeds, OURS | SCRAPYS) is expected


def test_a_format_mapped_to_another_exporter_gets_records() -> None:
    feeds = {"out.jsonl": {"format": "jsonl"}}
    assert not feeds_take_batches(feeds, {"jsonl": JsonLinesItemExporter})
    assert not feeds_take_batches(feeds, {"jsonl": "my.Exporter"})
    assert not feeds_take_batches(feeds, {})
    assert feeds_take_batches(feeds, {"jsonl": FeedLinesExporter})


def test_the_project_settings_batch_json_lines_and_nothing_else(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SCRAPY_SETTINGS_MODULE", "spiders.settings")
    exporters = get_project_settings().getwithbase("FEED_EXPORTERS")
    assert feeds_take_batches({"f.jsonl": {"format": "jsonl"}}, exporters)
    assert not feeds_take_batches({"f.json": {"format": "json"}}, exporters)
    assert exporters["json"] == "scrapy.exporters.JsonItemExporter"  # Scrapy's own


def test_a_batched_crawl_and_a_record_by_record_crawl_agree(
    server: ReplayServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same crawl with the JSON Lines feed alone (batched) and with a JSON array feed
    beside it (one item per record): the same lines, in the same order, the same counts in
    the run report, and the array holds each record as an object of its own."""
    monkeypatch.setenv("GPUSHARE_TOKEN", TOKEN)
    (tmp_path / "batched").mkdir()
    (tmp_path / "records").mkdir()
    batched = crawl("gpushare", server, tmp_path / "batched")
    array = tmp_path / "records" / "gpushare.json"
    records = crawl("gpushare", server, tmp_path / "records", extra_feeds=[array])
    assert batched.returncode == records.returncode == 0
    assert len(batched.feed) > 1
    assert [_drop_time(r) for r in batched.feed] == [_drop_time(r) for r in records.feed]
    assert [_drop_time(r) for r in json.loads(array.read_text("utf-8"))] == [
        _drop_time(r) for r in records.feed
    ]
    offers = sum(1 for r in batched.feed if r["kind"] == "offer")
    quarantined = sum(1 for r in batched.feed if r["kind"] == "quarantine")
    for report in (batched.report, records.report):
        assert (report["offers"], report["quarantined"]) == (offers, quarantined)
    # Scrapy counted pages, not records, in the batched crawl.
    assert _scraped_count(batched.log) < len(batched.feed) == _scraped_count(records.log)


def _scraped_count(log: str) -> int:
    marker = "'item_scraped_count': "
    at = log.rindex(marker) + len(marker)
    return int(log[at : log.index(",", at)].rstrip("}"))


def _drop_time(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != "observed_at"}
