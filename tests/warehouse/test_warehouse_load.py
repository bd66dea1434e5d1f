"""load_run: one transaction per provider run, idempotent, and only good runs feed "latest"."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest
from wh_kit import REPO_ROOT, FeedKit, table_counts

from gpurent_core.model import RunStatus, StockStatus
from warehouse import history
from warehouse.db import connect
from warehouse.load import load_run
from warehouse.queries import latest_offers, provider_status


def test_loading_the_same_run_twice_changes_nothing(
    con: duckdb.DuckDBPyConnection, kit: FeedKit
) -> None:
    run = kit.run(1)
    feed = kit.write("r1", [kit.offer(run, "a"), kit.offer(run, "b"), "{oops", kit.quarantine(run)])
    first = load_run(con, run, feed)
    after_first = table_counts(con)
    second = load_run(con, run, feed)
    assert table_counts(con) == after_first
    assert after_first["observations"] == 2
    assert after_first["addon_fees"] == 4
    assert after_first["price_plans"] == 2
    assert after_first["quarantine"] == 2
    assert after_first["crawl_runs"] == 1
    assert (first.offers, first.fees, first.plans, first.quarantined) == (2, 4, 2, 2)
    assert not first.skipped_duplicate_run
    assert second.skipped_duplicate_run
    assert (second.offers, second.fees, second.plans, second.quarantined) == (2, 4, 2, 2)


def test_a_bad_line_becomes_a_quarantine_row_and_the_others_load(
    con: duckdb.DuckDBPyConnection, kit: FeedKit
) -> None:
    run = kit.run(1)
    bad = kit.offer(run, "neg").model_dump_json().replace('"price":"2.49"', '"price":"-2.49"')
    assert bad != kit.offer(run, "neg").model_dump_json()
    result = load_run(con, run, kit.write("r1", [kit.offer(run, "a"), bad, kit.offer(run, "b")]))
    assert (result.offers, result.quarantined) == (2, 1)
    rows = con.execute("SELECT seq, offer_key, field, reason FROM quarantine").fetchall()
    assert len(rows) == 1
    seq, offer_key, field, reason = rows[0]
    assert (seq, offer_key, field) == (2, "neg", "price")
    assert "greater than or equal to 0" in reason
    keys = con.execute("SELECT offer_key FROM observations ORDER BY offer_key").fetchall()
    assert keys == [("a",), ("b",)]
    stored = con.execute("SELECT offers, quarantined FROM crawl_runs").fetchall()
    assert stored == [(2, 1)]


def test_a_failure_mid_load_leaves_the_database_as_it_was(
    con: duckdb.DuckDBPyConnection, kit: FeedKit, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = kit.run(1)
    load_run(con, good, kit.write("r1", [kit.offer(good)]))
    before = table_counts(con)

    real_store = history.store
    calls: list[str] = []

    def store_then_fail(c: duckdb.DuckDBPyConnection, table: str, *args: Any, **kw: Any) -> None:
        calls.append(table)
        if len(calls) > 1:
            raise RuntimeError("disk on fire")
        real_store(c, table, *args, **kw)

    monkeypatch.setattr(history, "store", store_then_fail)
    run = kit.run(2)
    feed = kit.write("r2", [kit.offer(run, "a"), kit.offer(run, "b"), "{oops"])
    with pytest.raises(RuntimeError, match="disk on fire"):
        load_run(con, run, feed)
    # The closed offer's identity was written, then undone (warehouse/history.py).
    assert calls == ["offer_identities", "offer_versions"]
    assert table_counts(con) == before
    assert latest_offers(con)["run_id"].to_list() == ["run-1"]

    monkeypatch.setattr(history, "store", real_store)
    assert load_run(con, run, feed).offers == 2  # the connection is usable; the retry loads
    assert sorted(latest_offers(con)["offer_key"]) == ["a", "b"]


CRASH_MID_LOAD = """
import os, sys
from pathlib import Path
from gpurent_core.model import ProviderRun
from warehouse import history, load
from warehouse.db import connect

real = history.store
def store_then_die(con, table, *args, **kwargs):
    real(con, table, *args, **kwargs)
    os._exit(17)  # the process dies with the transaction open
history.store = store_then_die
con = connect(sys.argv[1])
load.load_run(con, ProviderRun.model_validate_json(sys.argv[2]), Path(sys.argv[3]))
"""


def test_a_process_killed_mid_load_leaves_the_database_as_it_was(
    db_path: Path, kit: FeedKit
) -> None:
    good = kit.run(1)
    con = connect(db_path)
    load_run(con, good, kit.write("r1", [kit.offer(good)]))
    before = table_counts(con)
    con.close()

    run = kit.run(2)
    feed = kit.write("r2", [kit.offer(run, "a"), kit.offer(run, "b")])
    crashed = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(CRASH_MID_LOAD), str(db_path),
         run.model_dump_json(), str(feed)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    assert crashed.returncode == 17, crashed.stderr

    con = connect(db_path)
    try:
        assert table_counts(con) == before
        assert latest_offers(con)["run_id"].to_list() == ["run-1"]
    finally:
        con.close()


def test_a_failed_run_keeps_the_last_good_state(
    con: duckdb.DuckDBPyConnection, kit: FeedKit
) -> None:
    good = kit.run(1)
    load_run(con, good, kit.write("r1", [kit.offer(good, "a"), kit.offer(good, "b")]))
    failed = kit.run(2, RunStatus.FAILED, message="HTTP 503 x3")
    # Whatever a failed run's feed holds (here: everything sold out), none of it is stored.
    sold_out = [kit.offer(failed, k, status=StockStatus.SOLD_OUT) for k in ("a", "b")]
    result = load_run(con, failed, kit.write("r2", sold_out))
    assert (result.offers, result.ignored_offers) == (0, 2)

    offers = latest_offers(con)
    assert offers["run_id"].unique().to_list() == ["run-1"]
    assert offers["status"].unique().to_list() == ["in_stock"]
    assert offers["observed_at"].to_list() == [kit.offer(good).observed_at] * 2
    assert offers["age_s"].min() > 0  # type: ignore[operator]

    status = provider_status(con).row(0, named=True)
    assert status["last_status"] == "failed"
    assert status["last_run_id"] == "run-2"
    assert status["last_message"] == "HTTP 503 x3"
    assert status["last_offers"] == 0
    assert status["last_good_run_id"] == "run-1"
    assert status["last_good_offers"] == 2
    assert status["last_good_at"] == good.finished_at


def test_an_offer_gone_from_the_next_run_does_not_linger(
    con: duckdb.DuckDBPyConnection, kit: FeedKit
) -> None:
    one, two = kit.run(1), kit.run(2)
    load_run(con, one, kit.write("r1", [kit.offer(one, "a"), kit.offer(one, "gone")]))
    load_run(con, two, kit.write("r2", [kit.offer(two, "a")]))
    offers = latest_offers(con)
    assert offers.select("offer_key", "run_id").rows() == [("a", "run-2")]
    # History keeps it: the first run's observation is still stored.
    assert con.execute("SELECT count(*) FROM observations").fetchall() == [(3,)]


def test_a_layout_changed_run_writes_no_observations(
    con: duckdb.DuckDBPyConnection, kit: FeedKit
) -> None:
    good = kit.run(1)
    load_run(con, good, kit.write("r1", [kit.offer(good)]))
    broken = kit.run(2, RunStatus.LAYOUT_CHANGED, message="0 offers from a 200 page")
    feed = kit.write("r2", [kit.offer(broken, "x"), kit.quarantine(broken), "{not json"])
    result = load_run(con, broken, feed)
    assert (result.offers, result.fees, result.plans) == (0, 0, 0)
    assert (result.quarantined, result.ignored_offers) == (2, 1)
    rows = con.execute(
        "SELECT count(*) FROM observations WHERE run_id = 'run-2'"
        " UNION ALL SELECT count(*) FROM addon_fees WHERE run_id = 'run-2'"
        " UNION ALL SELECT count(*) FROM quarantine WHERE run_id = 'run-2'"
    ).fetchall()
    assert rows == [(0,), (0,), (2,)]
    assert latest_offers(con)["run_id"].to_list() == ["run-1"]
    assert provider_status(con)["last_status"].to_list() == ["layout_changed"]


def test_a_failed_run_without_a_feed_writes_only_its_run_row(
    con: duckdb.DuckDBPyConnection, kit: FeedKit
) -> None:
    result = load_run(con, kit.run(1, RunStatus.FAILED), None)
    assert result.offers == 0
    counts = table_counts(con)
    assert counts["crawl_runs"] == 1
    assert sum(counts.values()) == 1


def test_a_good_run_with_no_offers_is_not_the_latest_state(
    con: duckdb.DuckDBPyConnection, kit: FeedKit
) -> None:
    one, empty = kit.run(1), kit.run(2)
    load_run(con, one, kit.write("r1", [kit.offer(one)]))
    load_run(con, empty, kit.write("r2", []))
    assert latest_offers(con)["run_id"].to_list() == ["run-1"]


@pytest.mark.parametrize("status", [RunStatus.PARTIAL, RunStatus.AUTH_REQUIRED])
def test_partial_and_auth_required_runs_feed_the_latest_state(
    con: duckdb.DuckDBPyConnection, kit: FeedKit, status: RunStatus
) -> None:
    one, two = (
        kit.run(1),
        kit.run(2, status, unread_prefixes=("",) if status is RunStatus.PARTIAL else ()),
    )
    load_run(con, one, kit.write("r1", [kit.offer(one, "old")]))
    load_run(con, two, kit.write("r2", [kit.offer(two, "new", status=StockStatus.UNKNOWN)]))
    # A run whose page failed keeps what it did not see, stale (rule 10); the others close it.
    kept = [("old", "in_stock", True)] if status is RunStatus.PARTIAL else []
    assert latest_offers(con).select("offer_key", "status", "stale").rows() == [
        ("new", "unknown", False),
        *kept,
    ]


def test_decimals_round_trip_exactly_to_the_column_scale(
    con: duckdb.DuckDBPyConnection, kit: FeedKit
) -> None:
    run = kit.run(1)
    feed = kit.write(
        "money",
        [
            kit.offer(run, "float-artifact", price=Decimal("0.24666666666666665")),
            kit.offer(run, "plain", price=Decimal("2.72")),
        ],
    )
    load_run(con, run, feed)
    stored = dict(con.execute("SELECT offer_key, price FROM observations").fetchall())
    expected = Decimal("0.24666666666666665").quantize(Decimal("1e-8"), ROUND_HALF_EVEN)
    assert stored["float-artifact"] == expected == Decimal("0.24666667")
    assert stored["plain"] == Decimal("2.72")
    assert format(stored["plain"].normalize(), "f") == "2.72"
    assert all(type(v) is Decimal for v in stored.values())

    offers = latest_offers(con)
    assert offers.schema["price"] == pl.Decimal(18, 8)
    prices = dict(offers.select("offer_key", "price").rows())
    assert prices == stored
    fees = offers.filter(pl.col("offer_key") == "plain")["fees"].to_list()[0]
    assert [fee["amount"] for fee in fees] == [Decimal("0.0001369863"), Decimal("0.05")]
    assert type(fees[0]["amount"]) is Decimal
