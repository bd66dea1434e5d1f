"""Fee and plan lists vouched for once per distinct list (warehouse.feed_lists), and the
content hash in two steps (migration 15)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pytest
from feed_ways import exact_lines, exact_only
from wh_kit import FeedKit

from warehouse import feed as feed_module
from warehouse import feed_lists, history, migrations
from warehouse.feed_file import FeedFile
from warehouse.load import load_run
from warehouse.migrations import migrate
from warehouse.offer_hashes import CONTENT_FIELDS, CONTENT_HASH

STATE = (
    "SELECT offer_key, version_id, content_hash, fee_hash, plan_hash, fee_set_id, plan_set_id,"
    " price, status FROM current_offers ORDER BY offer_key"
)
# The same with each set id as its set's hash: ids only identify, and a reading that
# primes a list for an offer later quarantined leaves that id unused.
SAME_STATE = """
    SELECT offer_key, version_id, content_hash, fee_hash, plan_hash,
        (SELECT any_value(set_hash) FROM addon_fee_sets AS s
         WHERE s.fee_set_id = o.fee_set_id) AS fee_set,
        (SELECT any_value(set_hash) FROM price_plan_sets AS s
         WHERE s.plan_set_id = o.plan_set_id) AS plan_set,
        price, status
    FROM current_offers AS o ORDER BY offer_key
"""


@pytest.fixture
def kit(tmp_path: Path) -> FeedKit:
    return FeedKit(tmp_path)


def _both_ways(
    path: Path, kit: FeedKit, monkeypatch: pytest.MonkeyPatch, sql: str = SAME_STATE
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


def _spy_tables(monkeypatch: pytest.MonkeyPatch) -> list[list[int]]:
    """Record the lines read again one by one (FeedFile.table)."""
    asked: list[list[int]] = []
    real = FeedFile.table

    def spy(self: FeedFile, numbers: Any) -> Any:
        asked.append(sorted(numbers))
        return real(self, numbers)

    monkeypatch.setattr(FeedFile, "table", spy)
    return asked


def _spy_scans(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    scans: list[int] = []
    real = FeedFile.scan

    def spy(self: FeedFile) -> Any:
        scans.append(1)
        return real(self)

    monkeypatch.setattr(FeedFile, "scan", spy)
    return scans


def test_lists_primed_from_the_sample_are_never_read_again(
    kit: FeedKit, monkeypatch: pytest.MonkeyPatch
) -> None:
    no_plans: dict[str, Any] = {"plans": ()}
    offers = [
        _line(kit, f"o{i}", price=Decimal(f"2.{i:02d}"), **(no_plans if i % 2 else {}))
        for i in range(40)
    ]
    path = kit.write("shared", offers)
    asked = _spy_tables(monkeypatch)
    scans = _spy_scans(monkeypatch)
    exact = exact_lines(monkeypatch)
    con = duckdb.connect()
    migrate(con)
    assert load_run(con, kit.run(1), path).offers == 40
    # The sample (the whole of a small file) primed one fee list and two plan lists (with
    # and without): the file is read once, no line again, none the exact way, and the
    # sets are stored from the primed lists.
    assert (asked, len(scans), exact) == ([], 1, [])
    sets = con.execute(
        "SELECT count(DISTINCT fee_set_id), count(DISTINCT plan_set_id), count(*)"
        " FROM current_offers"
    ).fetchall()
    assert sets == [(1, 1, 40)]  # no plans is no set
    assert con.execute(
        "SELECT count(*) FROM addon_fee_sets AS s JOIN current_offers AS o"
        " ON o.fee_set_id = s.fee_set_id AND o.fee_hash = s.set_hash"
    ).fetchall() == [(2 * 40,)]  # two fees per set, every offer's id matching its hash


def test_a_large_first_run_is_stored_without_updating_a_row(
    kit: FeedKit, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An UPDATE or DELETE of a row a large INSERT wrote, before COMMIT, makes DuckDB write
    the whole insert again: a canonical feed's rows are stored final."""
    offers = [
        _line(kit, f"o{i}", price=Decimal(f"2.{i % 100:02d}"), gpu_count=1 + i % 3)
        for i in range(300)
    ]
    path = kit.write("final", offers)
    changed: list[tuple[str, int]] = []
    real = history.run_sql

    def spy(con: duckdb.DuckDBPyConnection, sql: str, params: Any = None) -> Any:
        answer = real(con, sql, params)
        words = " ".join(sql.split())
        if words.startswith(("UPDATE current_offers", "DELETE FROM current_offers")):
            changed.append((words[:40], int(answer[0][0]) if answer else 0))
        return answer

    for module in (history, feed_module, feed_lists):
        monkeypatch.setattr(module, "run_sql", spy)
    con = duckdb.connect()
    migrate(con)
    assert load_run(con, kit.run(1), path).offers == 300
    assert changed and all(count == 0 for _, count in changed), changed
    assert con.execute(
        "SELECT count(*) FROM current_offers WHERE fee_set_id IS NULL OR plan_set_id IS NULL"
    ).fetchall() == [(0,)]


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
    exact = exact_lines(monkeypatch)
    fast, slow = _both_ways(path, kit, monkeypatch)
    assert fast == slow and len(fast) == 2
    assert exact[0] == 2  # the set-wise reading left it, twice (sample, then itself)


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
    exact = exact_lines(monkeypatch)
    fast, slow = _both_ways(path, kit, monkeypatch)
    assert fast == slow
    assert exact[:2] == [2, 3]


def test_a_list_the_sample_missed_is_primed_from_its_own_line(
    kit: FeedKit, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = kit.offer(kit.run(1)).plans[0]
    own = (plan.model_copy(update={"price": Decimal(4321)}),)
    lines = [_line(kit, f"o{i:02d}", **({"plans": own} if i == 29 else {})) for i in range(30)]
    path = kit.write("missed", lines)
    fast, slow = _both_ways(path, kit, monkeypatch)
    assert fast == slow and len(fast) == 30
    # A sample of the first line only: line 30's plan list is not among what it primed.
    monkeypatch.setattr(feed_module, "SAMPLE_WINDOWS", 1)
    monkeypatch.setattr(feed_module, "SAMPLE_BYTES", len(lines[0]) + 1)
    asked = _spy_tables(monkeypatch)
    exact = exact_lines(monkeypatch)
    con = duckdb.connect()
    migrate(con)
    assert load_run(con, kit.run(1), path).offers == 30
    # Read once by offset, primed from it, then read set-wise from what was read.
    assert (asked, exact) == ([[30]], [])
    assert con.execute(SAME_STATE).fetchall() == fast


def test_many_lines_the_sample_missed_are_read_from_the_file_streamed_again(
    kit: FeedKit, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [
        _line(kit, f"o{i}", fees=(), plans=(kit.offer(kit.run(1)).plans[0].model_copy(
            update={"price": Decimal(1000 + i)}),))
        for i in range(12)
    ]  # fmt: skip
    path = kit.write("distinct", lines)
    fast, slow = _both_ways(path, kit, monkeypatch)
    assert fast == slow and len(fast) == 12
    monkeypatch.setattr(feed_module, "SAMPLE_WINDOWS", 0)  # no sample: nothing primed
    scans = _spy_scans(monkeypatch)
    exact = exact_lines(monkeypatch)
    con = duckdb.connect()
    migrate(con)
    load_run(con, kit.run(1), path)
    # Read set-wise (nothing stored), then from the file streamed again to prime the
    # lists of the 12 lines left, and once more to read them.
    assert (len(scans), exact) == (3, [])
    assert con.execute(SAME_STATE).fetchall() == fast


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
    assert [m.name for m in migrations.MIGRATIONS if m.version == 15] == ["content hash steps"]


def test_a_failure_while_priming_rolls_the_load_back_with_its_own_error(
    kit: FeedKit, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = feed_lists.run_sql

    def failing(con: duckdb.DuckDBPyConnection, sql: str, params: Any = None) -> Any:
        if sql.lstrip().startswith(f"INSERT INTO {feed_lists.PRIMED_PLANS}"):
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
