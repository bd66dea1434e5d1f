"""The load keeps the feed in DuckDB from file to history (issue 13): staged feeds, SQL weave.

load_run stages the feed into temporary tables of the warehouse connection and weaves it
there; load_batch (a feed already read into frames) must store exactly the same history,
and neither may leave its temporary tables behind.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pytest
from wh_kit import FeedKit

from gpurent_core.model import StockStatus
from warehouse import history, offer_hashes
from warehouse.db import connect
from warehouse.feed import read_feed
from warehouse.load import load_batch, load_run

TABLES = (
    "offer_versions",
    "offer_identities",
    "current_offers",
    "current_runs",
    "addon_fee_sets",
    "price_plan_sets",
    "stale_spans",
    "quarantine",
)


def state(con: duckdb.DuckDBPyConnection) -> dict[str, list[Any]]:
    out = {}
    for table in TABLES:
        rows = con.execute(f"SELECT * FROM {table} ORDER BY ALL").fetchall()
        out[table] = rows
    out["crawl_runs"] = con.execute(
        "SELECT run_id, provider, status, offers, quarantined, feed_sha256, history_at,"
        " observed_at FROM crawl_runs ORDER BY ALL"
    ).fetchall()
    return out


def feeds(kit: FeedKit) -> list[tuple[Any, Path]]:
    r1, r2, r3 = kit.run(1), kit.run(2), kit.run(3)
    return [
        (r1, kit.write("r1", [kit.offer(r1, "a"), kit.offer(r1, "b"), kit.quarantine(r1)])),
        (
            r3,
            kit.write(
                "r3",
                [kit.offer(r3, "a", price=Decimal("3")), kit.offer(r3, "c", fees=(), plans=())],
            ),
        ),
        # Loaded late, between r1 and r3: a backfill.
        (r2, kit.write("r2", [kit.offer(r2, "a", status=StockStatus.SOLD_OUT), "{oops"])),
    ]


def test_load_run_and_load_batch_store_the_same_history(tmp_path: Path, kit: FeedKit) -> None:
    by_run = connect(tmp_path / "run.duckdb")
    by_batch = connect(tmp_path / "batch.duckdb")
    try:
        for run, path in feeds(kit):
            first = load_run(by_run, run, path)
            batch = read_feed(path, provider=run.provider, run_id=run.run_id)
            second = load_batch(by_batch, run, batch)
            assert first == second
        assert state(by_run) == state(by_batch)
        assert state(by_run)["offer_versions"]  # something was woven
    finally:
        by_run.close()
        by_batch.close()


def test_no_temporary_table_outlives_a_load(con: duckdb.DuckDBPyConnection, kit: FeedKit) -> None:
    for run, path in feeds(kit):
        load_run(con, run, path)
    left = con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE temporary AND table_name LIKE '_gpurent%'"
    ).fetchall()
    assert left == []


def test_a_failed_weave_drops_its_tables_and_the_retry_loads(
    con: duckdb.DuckDBPyConnection, kit: FeedKit, monkeypatch: pytest.MonkeyPatch
) -> None:
    (r1, p1), (r3, p3), _ = feeds(kit)
    load_run(con, r1, p1)
    real = history.store

    def fail_on_versions(c: duckdb.DuckDBPyConnection, table: str, *args: Any, **kw: Any) -> None:
        if table == "offer_versions":
            raise RuntimeError("disk full")
        real(c, table, *args, **kw)

    monkeypatch.setattr(history, "store", fail_on_versions)
    with pytest.raises(RuntimeError, match="disk full"):
        load_run(con, r3, p3)
    left = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE temporary AND table_name LIKE '_gpurent%'"
    ).fetchall()
    assert left == [(0,)]
    monkeypatch.setattr(history, "store", real)
    assert load_run(con, r3, p3).offers == 2
    keys = con.execute("SELECT offer_key FROM current_offers ORDER BY 1").fetchall()
    assert keys == [("a",), ("c",)]


def test_set_hashes_from_the_staged_lists_equal_the_row_form(
    con: duckdb.DuckDBPyConnection, kit: FeedKit
) -> None:
    """The load hashes each staged fee / plan list as a list (offer_hashes.list_hash); the stored
    sets must carry the hash the row form gives (FEE_SET_HASH / PLAN_SET_HASH, the
    expression of sql/0003_history.sql), or a database migrated from per-poll rows would
    see every offer as changed. Nulls, order and an offer without lists included."""
    r1 = kit.run(1)
    base = kit.offer(r1, "a")
    reordered = kit.offer(r1, "b", fees=tuple(reversed(base.fees)))
    path = kit.write("hashes", [base, reordered, kit.offer(r1, "c", fees=(), plans=())])
    load_run(con, r1, path)
    for table, id_column, expression in (
        ("addon_fee_sets", "fee_set_id", offer_hashes.FEE_SET_HASH),
        ("price_plan_sets", "plan_set_id", offer_hashes.PLAN_SET_HASH),
    ):
        rows = con.execute(
            f"SELECT set_hash, {expression} FROM {table} GROUP BY {id_column}, set_hash"
        ).fetchall()
        assert rows and all(stored == row_form for stored, row_form in rows)
    # Two orders of the same fees are two lists; no list at all is no set.
    assert con.execute("SELECT count(DISTINCT fee_set_id) FROM addon_fee_sets").fetchall() == [(2,)]
    lists = dict(
        con.execute(
            "SELECT offer_key, [f.fee_type for f in fees] FROM latest_offers ORDER BY 1"
        ).fetchall()
    )
    assert lists == {"a": ["data_disk", "egress"], "b": ["egress", "data_disk"], "c": []}
    sets = dict(con.execute("SELECT offer_key, fee_set_id FROM current_offers").fetchall())
    assert sets["c"] is None and sets["a"] != sets["b"]
