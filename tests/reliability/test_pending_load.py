"""A load that cannot get the lock loses nothing: the runs are reported failed, their feeds
and a pending-load manifest stay, and `gpurent load` stores them later, once."""

from __future__ import annotations

import json
from pathlib import Path

from flows.crawl import PENDING_MANIFEST, read_manifest
from flows.nightly import load_and_track
from tests.reliability.rel_kit import (
    PROVIDERS,
    check_integrity,
    feed_keys,
    make_outcome,
    run_gpurent,
    stored_keys,
    writer_held,
)


def test_a_load_that_gives_up_keeps_its_runs_pending_and_gpurent_load_stores_them(
    tmp_path: Path,
) -> None:
    db = tmp_path / "var" / "gpurent.duckdb"
    feeds = tmp_path / "var" / "feeds"
    outcomes = [make_outcome(feeds, "run-1", p, 3 + i) for i, p in enumerate(PROVIDERS[:3])]
    with writer_held(db):
        report = load_and_track(db, outcomes, lock_wait_s=0)
    manifest = feeds / "run-1" / PENDING_MANIFEST
    assert report.busy is not None and report.busy.startswith("warehouse busy: ")
    assert report.manifest == manifest and manifest.is_file()
    assert [s.status for s in report.summaries] == ["failed"] * 3
    assert all("gpurent load" in s.message and "feed kept" in s.message for s in report.summaries)
    assert [o.provider for o in read_manifest(manifest)] == list(PROVIDERS[:3])
    assert all(o.feed_path.is_file() and o.report_path.is_file() for o in outcomes)
    assert check_integrity(db).runs == 0

    done = run_gpurent("load", str(feeds), "--db", str(db), "--format", "json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [(r["provider"], r["status"], r["result"]) for r in rows] == [
        (p, "ok", "loaded") for p in PROVIDERS[:3]
    ]
    assert not manifest.exists()
    for outcome in outcomes:
        assert stored_keys(db, outcome.provider, "run-1") == feed_keys(outcome)
    assert check_integrity(db).runs == 3

    again = run_gpurent("load", str(feeds), "--db", str(db))
    assert again.returncode == 0, again.stderr
    assert "nothing pending" in again.stderr


def test_a_manifest_left_after_its_runs_were_stored_is_skipped_and_cleared(
    tmp_path: Path,
) -> None:
    # A kill between a commit and the manifest's rewrite leaves a stored run listed.
    db = tmp_path / "gpurent.duckdb"
    outcomes = [make_outcome(tmp_path / "feeds", "run-7", p, 4) for p in PROVIDERS[:2]]
    stored = load_and_track(db, outcomes)
    assert stored.busy is None and stored.manifest is None
    from flows.crawl import write_manifest

    manifest = tmp_path / "feeds" / "run-7" / PENDING_MANIFEST
    write_manifest(manifest, outcomes, db_path=db)
    done = run_gpurent("load", str(manifest), "--db", str(db), "--format", "json")
    assert done.returncode == 0, done.stderr
    assert {r["result"] for r in json.loads(done.stdout)} == {"already stored"}
    assert not manifest.exists()
    assert check_integrity(db).runs == 2


def test_gpurent_load_on_a_busy_warehouse_says_so_and_keeps_the_manifest(tmp_path: Path) -> None:
    db = tmp_path / "gpurent.duckdb"
    outcome = make_outcome(tmp_path / "feeds", "run-3", "cudo", 2)
    manifest = tmp_path / "feeds" / "run-3" / PENDING_MANIFEST
    with writer_held(db):
        assert load_and_track(db, [outcome], lock_wait_s=0).manifest == manifest
        done = run_gpurent("load", str(manifest), "--db", str(db), env={"GPURENT_LOCK_WAIT_S": "0"})
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("gpurent: warehouse busy: ") and "stays pending" in last
    assert manifest.is_file()


def test_gpurent_load_refuses_what_is_not_a_manifest_in_one_line(tmp_path: Path) -> None:
    bogus = tmp_path / PENDING_MANIFEST
    bogus.write_text("{not json", encoding="utf-8")
    done = run_gpurent("load", str(bogus), "--db", str(tmp_path / "x.duckdb"))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "not a readable pending-load manifest" in done.stderr
    missing = run_gpurent("load", str(tmp_path / "nowhere"), "--db", str(tmp_path / "x.duckdb"))
    assert missing.returncode == 2 and "does not exist" in missing.stderr


def test_a_run_whose_feed_is_missing_is_failed_and_closes_nothing(tmp_path: Path) -> None:
    """Audit (CLI): a manifest entry whose feed file was gone loaded as `ok` with 0 offers
    beside a message of "11 offers". Its report says what was read, but what was read is
    lost: the run is failed, and the offers of the run before it stay (stale), not closed."""
    from warehouse.db import reading
    from warehouse.queries import latest_offers

    db = tmp_path / "gpurent.duckdb"
    first = make_outcome(tmp_path / "feeds", "run-1", "acme", 3)
    assert load_and_track(db, [first]).busy is None
    second = make_outcome(tmp_path / "feeds", "run-2", "acme", 3, hour=1)
    second.feed_path.unlink()
    [loaded] = load_and_track(db, [second]).summaries
    assert loaded.status == "failed" and loaded.offers == 0
    assert "feed missing" in loaded.message and "counted 3 offers" in loaded.message
    with reading(db) as con:
        latest = latest_offers(con).filter(latest_offers(con)["provider"] == "acme")
    assert latest.height == 3 and latest["stale"].all(), "kept, stale: not closed"


def test_a_feed_cut_short_is_failed_and_turns_nothing_sold_out(tmp_path: Path) -> None:
    """Audit (operations): a feed write that failed part-way (a full disk: Scrapy logs the
    error, the crawl still ends "finished", its report counts 9 offers) was loaded as the
    whole listing: 6 offers the provider listed turned confirmed sold out or closed."""
    from warehouse.db import reading
    from warehouse.queries import latest_offers

    db = tmp_path / "gpurent.duckdb"
    first = make_outcome(tmp_path / "feeds", "run-1", "acme", 4)
    assert load_and_track(db, [first]).busy is None
    with reading(db) as con:
        before = dict(latest_offers(con).select("offer_key", "status").iter_rows())
    second = make_outcome(tmp_path / "feeds", "run-2", "acme", 4, hour=1)
    lines = second.feed_path.read_bytes().splitlines(keepends=True)
    second.feed_path.write_bytes(b"".join(lines[:2]) + lines[2][:40])  # two whole, one cut
    [loaded] = load_and_track(db, [second]).summaries
    assert loaded.status == "failed" and "feed cut short" in loaded.message
    assert "counted 4 offers" in loaded.message and "holds 2" in loaded.message
    with reading(db) as con:
        acme = latest_offers(con).filter(latest_offers(con)["provider"] == "acme")
    assert acme.height == 4 and acme["stale"].all()
    assert dict(acme.select("offer_key", "status").iter_rows()) == before, "no state changed"


def test_a_crawl_stopped_before_its_end_closes_nothing_it_did_not_list(tmp_path: Path) -> None:
    """Audit (operations): a crawler stopped by SIGTERM (report `finish_reason: shutdown`)
    was loaded ok and closed the offers of the pages it never reached."""
    from warehouse.db import reading
    from warehouse.queries import latest_offers

    db = tmp_path / "gpurent.duckdb"
    first = make_outcome(tmp_path / "feeds", "run-1", "acme", 5)
    assert load_and_track(db, [first]).busy is None
    second = make_outcome(tmp_path / "feeds", "run-2", "acme", 5, hour=1)
    lines = second.feed_path.read_text(encoding="utf-8").splitlines(keepends=True)
    second.feed_path.write_text("".join(lines[:3]), encoding="utf-8")  # pages 2-3 never read
    doc = json.loads(second.report_path.read_text(encoding="utf-8"))
    doc |= {"offers": 3, "finish_reason": "shutdown", "unread_prefixes": []}
    second.report_path.write_text(json.dumps(doc), encoding="utf-8")
    [loaded] = load_and_track(db, [second]).summaries
    assert loaded.status == "partial" and "stopped before its end (shutdown)" in loaded.message
    with reading(db) as con:
        acme = latest_offers(con).filter(latest_offers(con)["provider"] == "acme")
    assert acme.height == 5, "the two it did not reach are kept, not closed"
    assert acme.filter(acme["stale"]).height == 2


def test_gpurent_load_refuses_runs_crawled_for_another_warehouse(tmp_path: Path) -> None:
    """Audit (operations): `gpurent load` stored a manifest's runs into whatever --db it was
    given and deleted the manifest: the warehouse they were crawled for never got them."""
    import pytest
    import typer

    from flows.crawl import write_manifest
    from gpurent.cli.load_cmd import load_manifests

    meant, other = tmp_path / "meant.duckdb", tmp_path / "other.duckdb"
    outcome = make_outcome(tmp_path / "feeds", "run-3", "acme", 2)
    manifest = tmp_path / "feeds" / "run-3" / PENDING_MANIFEST
    write_manifest(manifest, [outcome], db_path=meant)
    with pytest.raises(typer.BadParameter, match=f"crawled for {meant}"):
        load_manifests(other, [manifest])
    assert manifest.exists() and not other.exists()
    rows, busy = load_manifests(meant, [manifest])
    assert busy is None and [r["result"] for r in rows] == ["loaded"]


def test_a_pending_list_that_cannot_be_written_loses_no_run(tmp_path: Path) -> None:
    """Audit (operations): with the feeds disk full, writing the pending-load list failed
    and the whole load aborted: every provider's finished run was lost, and `providers`
    went on showing the previous ok. The runs are loaded all the same."""
    db = tmp_path / "gpurent.duckdb"
    outcomes = [make_outcome(tmp_path / "feeds", "run-9", p, 3) for p in PROVIDERS[:2]]
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the list's folder would be", encoding="utf-8")
    report = load_and_track(db, outcomes, manifest=blocked / PENDING_MANIFEST)
    assert report.busy is None and [s.status for s in report.summaries] == ["ok", "ok"]
    for outcome in outcomes:
        assert stored_keys(db, outcome.provider, "run-9") == feed_keys(outcome)
