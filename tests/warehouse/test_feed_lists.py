"""Offers whose fee or plan lists the SQL reading must not vouch for (warehouse.feed_sql)
read as the exact path reads them, and the content hash in two steps (migration 15)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest
from feed_ways import exact_lines, exact_only
from wh_kit import FeedKit

from warehouse import migrations
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


def test_migration_15_moves_stored_content_hashes_to_two_steps(kit: FeedKit) -> None:
    con = duckdb.connect()
    migrate(con)
    r1, r2 = kit.run(1), kit.run(2)
    load_run(con, r1, kit.write("r1", [kit.offer(r1, "a"), kit.offer(r1, "b", plans=())]))
    # As a warehouse before migration 15 stored it: one hash of fields and list hashes.
    old = f"hash({', '.join(CONTENT_FIELDS)}, fee_hash, plan_hash)"
    con.execute(f"UPDATE current_offers SET content_hash = {old}")
    # (Migration 20 then adds the host attributes to the hash: both are re-applied.)
    con.execute("DELETE FROM schema_migrations WHERE version IN (15, 20)")
    before = con.execute(STATE).fetchall()
    assert migrate(con) == [15, 20]
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
