"""Crawl outcomes on shared storage: round trips through memory:// and a folder, idempotent
puts, replacement by a retried crawl, and uploads that are not finished or not intact."""

from __future__ import annotations

import json
import secrets
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from flows.crawl import CrawlOutcome, CrawlSpec, crawl_command, read_manifest, write_manifest
from flows.storage import OUTCOME_MARKER, FeedStore, StoreError, check_segment

RUN = "20260101T020000Z-abc123"
T0 = datetime(2026, 1, 1, 2, 0, tzinfo=UTC)


def crawled(work: Path, provider: str, *, feed: str | None, run_id: str = RUN) -> CrawlOutcome:
    """Files as a crawler leaves them (feed None: it wrote no feed)."""
    _, feed_path, report, log = crawl_command(CrawlSpec(provider, run_id, work))
    feed_path.parent.mkdir(parents=True, exist_ok=True)
    if feed is not None:
        feed_path.write_text(feed, encoding="utf-8")
    report.write_text(json.dumps({"offers": 2 if feed else 0}), encoding="utf-8")
    log.write_text(f"log of {provider}\n", encoding="utf-8")
    log.with_suffix(".stderr").write_text("", encoding="utf-8")
    return CrawlOutcome(provider, run_id, T0, T0 + timedelta(seconds=7), 0, feed_path, report, log)


@pytest.fixture(params=["memory", "folder"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> FeedStore:
    if request.param == "memory":
        # memory:// is one filesystem per process: a fresh root per test.
        return FeedStore(f"memory://gpurent-test-{secrets.token_hex(4)}/feeds")
    return FeedStore(tmp_path / "shared")


def test_outcomes_round_trip_to_a_local_crawl_layout(store: FeedStore, tmp_path: Path) -> None:
    a = crawled(tmp_path / "machine-a", "vastai", feed='{"offer": 1}\n{"offer": 2}\n')
    b = crawled(tmp_path / "machine-b", "cudo", feed=None)
    assert store.put(a, crawled_by="machine-a").written
    assert store.put(b, crawled_by="machine-b").written

    assert store.runs() == [RUN]
    stored = store.outcomes(RUN)
    assert [(s.provider, s.crawled_by) for s in stored] == [
        ("cudo", "machine-b"),
        ("vastai", "machine-a"),
    ]
    assert "feed" not in stored[0].files and stored[1].files["feed"] == "vastai.jsonl"

    loader = tmp_path / "loader"
    fetched = {o.provider: o for o in store.fetch(RUN, loader)}
    assert fetched.keys() == {"cudo", "vastai"}
    got = fetched["vastai"]
    # Exactly where a local crawl of this run would have put them, times and code kept.
    _, feed, report, log = crawl_command(CrawlSpec("vastai", RUN, loader))
    assert (got.feed_path, got.report_path, got.log_path) == (feed, report, log)
    assert feed.read_text(encoding="utf-8") == '{"offer": 1}\n{"offer": 2}\n'
    assert got.report() == {"offers": 2}
    assert log.read_text(encoding="utf-8") == "log of vastai\n"
    assert (got.started_at, got.finished_at, got.returncode) == (a.started_at, a.finished_at, 0)
    assert not fetched["cudo"].feed_path.exists(), "no feed crawled: none fetched"
    assert fetched["cudo"].report() == {"offers": 0}

    # The fetched runs work with the pending-load manifest like a local crawl's.
    manifest = loader / RUN / "pending-load.json"
    write_manifest(manifest, list(fetched.values()), db_path=tmp_path / "x.duckdb")
    assert {o.feed_path for o in read_manifest(manifest)} == {o.feed_path for o in fetched.values()}

    only = store.fetch(RUN, tmp_path / "other", providers=["cudo", "lambda"])
    assert [o.provider for o in only] == ["cudo"]


def test_a_second_put_of_the_same_crawl_writes_nothing(store: FeedStore, tmp_path: Path) -> None:
    outcome = crawled(tmp_path / "w", "vastai", feed='{"offer": 1}\n')
    first = store.put(outcome, crawled_by="worker-1")
    again = store.put(outcome, crawled_by="worker-2")
    assert first.written and not again.written
    assert again.stored == first.stored, "the first put stands, its crawler named"
    assert again.location == store.location(RUN, "vastai")
    [stored] = store.outcomes(RUN)
    assert stored.crawled_by == "worker-1"
    fetched = store.fetch(RUN, tmp_path / "l1") + store.fetch(RUN, tmp_path / "l1")
    assert [o.feed_path.read_text(encoding="utf-8") for o in fetched] == ['{"offer": 1}\n'] * 2


def test_a_retried_crawl_replaces_the_earlier_one(store: FeedStore, tmp_path: Path) -> None:
    store.put(crawled(tmp_path / "try1", "vastai", feed='{"offer": 1}\n'))
    retry = crawled(tmp_path / "try2", "vastai", feed=None)
    assert store.put(retry).written
    [got] = store.fetch(RUN, tmp_path / "loader")
    assert not got.feed_path.exists(), "the feed of the replaced crawl is gone with it"
    assert got.report() == {"offers": 0}


def test_an_unfinished_upload_is_not_an_outcome(store: FeedStore, tmp_path: Path) -> None:
    store.put(crawled(tmp_path / "w", "vastai", feed='{"offer": 1}\n'))
    # Files of a second provider are arriving, its marker not yet.
    store.fs.makedirs(store._path(RUN, "cudo"), exist_ok=True)
    store.fs.pipe_file(store._path(RUN, "cudo", "cudo.jsonl"), b"{}\n")
    assert [s.provider for s in store.outcomes(RUN)] == ["vastai"]
    assert [o.provider for o in store.fetch(RUN, tmp_path / "l")] == ["vastai"]


def test_a_feed_that_does_not_match_its_digest_is_refused(store: FeedStore, tmp_path: Path) -> None:
    store.put(crawled(tmp_path / "w", "vastai", feed='{"offer": 1}\n'))
    store.fs.pipe_file(store._path(RUN, "vastai", "vastai.jsonl"), b'{"offer": 666}\n')
    with pytest.raises(StoreError, match="does not match its digest"):
        store.fetch(RUN, tmp_path / "l")
    assert not (tmp_path / "l" / RUN / "vastai.jsonl").exists(), "nothing torn left behind"


def test_a_marker_that_is_not_ours_is_an_error_not_a_run(store: FeedStore, tmp_path: Path) -> None:
    store.fs.makedirs(store._path(RUN, "vastai"), exist_ok=True)
    store.fs.pipe_file(store._path(RUN, "vastai", OUTCOME_MARKER), b'{"format": "other"}')
    with pytest.raises(StoreError, match="not a stored outcome"):
        store.outcomes(RUN)


def test_an_empty_store_has_no_runs(store: FeedStore) -> None:
    assert store.runs() == []
    assert store.outcomes(RUN) == []


def test_the_summary_lies_beside_the_outcomes(store: FeedStore) -> None:
    where = store.put_summary(RUN, [{"provider": "vastai", "status": "ok"}])
    assert where == f"{store.url.rstrip('/')}/{RUN}/summary.json"
    doc = json.loads(store.fs.cat_file(store._path(RUN, "summary.json")))
    assert doc == {"run_id": RUN, "runs": [{"provider": "vastai", "status": "ok"}]}
    assert store.outcomes(RUN) == [], "a summary is not a provider"


@pytest.mark.parametrize("bad", ["", "..", "a/b", "../etc", "x y", ".hidden"])
def test_run_ids_and_providers_are_single_plain_folder_names(bad: str) -> None:
    with pytest.raises(ValueError, match="cannot name a folder"):
        check_segment(bad, "run id")


def test_file_urls_and_paths_name_the_same_store(tmp_path: Path) -> None:
    outcome = crawled(tmp_path / "w", "vastai", feed='{"offer": 1}\n')
    FeedStore(f"file://{tmp_path / 'shared'}").put(outcome)
    assert [s.provider for s in FeedStore(tmp_path / "shared").outcomes(RUN)] == ["vastai"]
    assert (tmp_path / "shared" / RUN / "vastai" / "vastai.jsonl").is_file()
