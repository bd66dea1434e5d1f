"""Fee and plan lists vouched for once per distinct list (warehouse.feed_lists), and the
content hash in two steps (migration 15)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pytest
from feed_ways import exact_only
from wh_kit import FeedKit

from warehouse import feed as feed_module
from warehouse import migrations
from warehouse.feed_file import FeedFile
from warehouse.load import load_run
from warehouse.migrations import migrate
from warehouse.offer_hashes import CONTENT_FIELDS, CONTENT_HASH

STATE = (
    "SELECT offer_key, version_id, content_hash, fee_hash, plan_hash, fee_set_id, plan_set_id,"
    " price, status FROM current_offers ORDER BY offer_key"
)


@pytest.fixture
def kit(tmp_path: Path) -> FeedKit:
    return FeedKit(tmp_path)


def _settled(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record how many rows each settle took out (to go the exact way)."""
    removed: list[int] = []
    real = feed_module.settle

    def spy(*args: Any, **kwargs: Any) -> int:
        removed.append(real(*args, **kwargs))
        return removed[-1]

    monkeypatch.setattr(feed_module, "settle", spy)
    return removed


def _both_ways(
    path: Path, kit: FeedKit, monkeypatch: pytest.MonkeyPatch, sql: str = STATE
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    results = []
    for exact in (False, True):
        con = duckdb.connect()
        migrate(con)
        with monkeypatch.context() as patch:
            if exact:
                exact_only(patch)
            load_run(con, kit.run(1), path)
        results.append(con.execute(sql).fetchall())
        results.append(
            con.execute("SELECT offer_key, reason FROM quarantine ORDER BY 1").fetchall()
        )
        con.close()
    assert results[1] == results[3]
    return results[0], results[2]


def _line(kit: FeedKit, key: str, **changes: Any) -> str:
    return kit.offer(kit.run(1), key, **changes).model_dump_json()


def test_lists_are_read_once_per_distinct_text(
    kit: FeedKit, monkeypatch: pytest.MonkeyPatch
) -> None:
    no_plans: dict[str, Any] = {"plans": ()}
    offers = [
        _line(kit, f"o{i}", price=Decimal(f"2.{i:02d}"), **(no_plans if i % 2 else {}))
        for i in range(40)
    ]
    path = kit.write("shared", offers)
    asked: list[list[int]] = []
    real = FeedFile.table

    def spy(self: FeedFile, numbers: Any) -> Any:
        asked.append(sorted(numbers))
        return real(self, numbers)

    monkeypatch.setattr(FeedFile, "table", spy)
    removed = _settled(monkeypatch)
    con = duckdb.connect()
    migrate(con)
    assert load_run(con, kit.run(1), path).offers == 40
    # One fee list for all, two plan lists (with and without): lines 1 and 2 carry them.
    # (The sets new to the warehouse are then read for storing, from one line each.)
    assert asked[0] == [1, 2] and removed == [0]
    sets = con.execute(
        "SELECT count(DISTINCT fee_set_id), count(DISTINCT plan_set_id), count(*)"
        " FROM current_offers"
    ).fetchall()
    assert sets == [(1, 1, 40)]  # no plans is no set


def test_a_list_read_back_longer_is_never_vouched_for(
    kit: FeedKit, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A number in a list reads back longer than written (1e2 reads back 100.0): with two
    spaces elsewhere the line is as long as its parts read back. The list must still fail
    its check, and the line go the exact way."""
    good = json.loads(_line(kit, "good"))
    odd = json.loads(_line(kit, "odd"))
    text = json.dumps(odd, separators=(",", ":"))
    amount = json.dumps(odd["fees"][1]["amount"])
    assert text.count(amount) == 1
    text = text.replace(amount, "1e2").replace(',"offer_key"', ' , "offer_key"')
    path = kit.write("longer", [json.dumps(good, separators=(",", ":")), text])
    removed = _settled(monkeypatch)
    fast, exact = _both_ways(path, kit, monkeypatch)
    assert fast == exact
    assert removed[0] == 1  # read set-wise, then taken out by its list check


def test_offers_sharing_a_bad_list_all_go_the_exact_way(
    kit: FeedKit, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = json.loads(_line(kit, "a"))
    bad_plans = [base["plans"][0] | {"extra": "1"}]
    lines = [
        json.dumps(base | {"offer_key": key} | ({"plans": bad_plans} if key != "a" else {}),
                   separators=(",", ":"))
        for key in ("a", "b", "c")
    ]  # fmt: skip
    path = kit.write("bad-list", lines)
    removed = _settled(monkeypatch)
    fast, exact = _both_ways(path, kit, monkeypatch)
    assert fast == exact
    assert removed[0] == 2


def test_many_distinct_lists_are_read_from_the_file_streamed_again(
    kit: FeedKit, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [
        _line(kit, f"o{i}", fees=(), plans=(kit.offer(kit.run(1)).plans[0].model_copy(
            update={"price": Decimal(1000 + i)}),))
        for i in range(12)
    ]  # fmt: skip
    path = kit.write("distinct", lines)
    scans: list[int] = []
    real = FeedFile.scan

    def spy(self: FeedFile) -> Any:
        scans.append(1)
        return real(self)

    fast, exact = _both_ways(path, kit, monkeypatch)
    assert fast == exact and len(fast) == 12
    monkeypatch.setattr(FeedFile, "scan", spy)
    con = duckdb.connect()
    migrate(con)
    load_run(con, kit.run(1), path)
    # Read set-wise, then its lists from the file streamed again (12 of 12 lines).
    assert len(scans) == 2


def test_migration_15_moves_stored_content_hashes_to_two_steps(kit: FeedKit) -> None:
    con = duckdb.connect()
    migrate(con)
    r1, r2 = kit.run(1), kit.run(2)
    load_run(con, r1, kit.write("r1", [kit.offer(r1, "a"), kit.offer(r1, "b", plans=())]))
    # As a warehouse before migration 15 stored it: one hash of fields and list hashes.
    old = f"hash({', '.join(CONTENT_FIELDS)}, fee_hash, plan_hash)"
    con.execute(f"UPDATE current_offers SET content_hash = {old}")
    con.execute("DELETE FROM schema_migrations WHERE version = 15")
    before = con.execute(STATE).fetchall()
    assert migrate(con) == [15]
    after = con.execute(STATE).fetchall()
    assert [r[2] for r in after] != [r[2] for r in before]
    check = con.execute(
        f"SELECT count(*) FROM current_offers AS o WHERE o.content_hash = {CONTENT_HASH}"
    ).fetchall()
    assert check == [(2,)]
    # The next run with the same offers changes nothing.
    load_run(con, r2, kit.write("r2", [kit.offer(r2, "a"), kit.offer(r2, "b", plans=())]))
    assert con.execute(STATE).fetchall() == after
    assert con.execute("SELECT count(*) FROM offer_versions").fetchall() == [(0,)]
    assert migrations.MIGRATIONS[-1].version == 15


def test_a_failure_while_settling_rolls_the_load_back_with_its_own_error(
    kit: FeedKit, monkeypatch: pytest.MonkeyPatch
) -> None:
    from warehouse import feed_lists

    real = feed_lists.run_sql

    def failing(con: duckdb.DuckDBPyConnection, sql: str, params: Any = None) -> Any:
        if sql.lstrip().startswith("UPDATE"):
            # A DuckDB error, which aborts the transaction (any later statement fails too).
            con.execute("SELECT error('disk full')")
        return real(con, sql, params)

    con = duckdb.connect()
    migrate(con)
    r1 = kit.run(1)
    path = kit.write("r1", [kit.offer(r1, "a"), kit.offer(r1, "b")])
    monkeypatch.setattr(feed_lists, "run_sql", failing)
    with pytest.raises(duckdb.Error, match="disk full"):
        load_run(con, r1, path)
    left = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE temporary AND table_name LIKE '_gpurent%'"
    ).fetchall()
    assert left == [(0,)]
    assert con.execute("SELECT count(*) FROM current_offers").fetchall() == [(0,)]
    monkeypatch.setattr(feed_lists, "run_sql", real)
    assert load_run(con, r1, path).offers == 2
