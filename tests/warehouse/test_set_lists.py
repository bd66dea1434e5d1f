"""Fee and plan lists stored once per set (migration 13): current_offers holds set ids only,
latest_offers joins the lists back, and a warehouse migrated with offers in it reads the
same latest state after the migration as before."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
from wh_kit import FeedKit

from gpurent_core.model import AddonFee, BillingUnit, FeeBasis, FeeType
from warehouse.load import load_run
from warehouse.migrations import migrate

LATEST = (
    "SELECT provider, offer_key, price, fees, plans, stale FROM latest_offers"
    " ORDER BY provider, offer_key"
)


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> set[str]:
    rows = con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = ?", [table]
    ).fetchall()
    return {str(r[0]) for r in rows}


def _one_fee() -> tuple[AddonFee, ...]:
    return (
        AddonFee(
            fee_type=FeeType.PUBLIC_IP,
            amount=Decimal("0.004"),
            currency="USD",
            unit=BillingUnit.HOUR,
            basis=FeeBasis.INSTANCE,
            mandatory=False,
        ),
    )


def _feeds(kit: FeedKit) -> list[tuple[Any, Path]]:
    r1, r2 = kit.run(1), kit.run(2)
    z1 = kit.run(1, provider="zeta")
    return [
        (r1, kit.write("r1", [kit.offer(r1, "a"), kit.offer(r1, "b", fees=_one_fee()),
                              kit.offer(r1, "c", fees=(), plans=())])),
        (z1, kit.write("z1", [kit.offer(z1, "a", plans=())])),
        (r2, kit.write("r2", [kit.offer(r2, "a", price=Decimal("3")),
                              kit.offer(r2, "b", fees=_one_fee()),
                              kit.offer(r2, "c", fees=_one_fee(), plans=())])),
    ]  # fmt: skip


def test_current_offers_holds_set_ids_and_latest_offers_the_lists(kit: FeedKit) -> None:
    con = duckdb.connect()
    migrate(con)
    for run, path in _feeds(kit):
        load_run(con, run, path)
    assert not {"fees", "plans"} & _columns(con, "current_offers")
    rows = {(r[0], r[1]): r for r in con.execute(LATEST).fetchall()}
    fee_types = {k: [f["fee_type"] for f in r[3]] for k, r in rows.items()}
    assert fee_types == {
        ("acme", "a"): ["data_disk", "egress"],
        ("acme", "b"): ["public_ip"],
        ("acme", "c"): ["public_ip"],
        ("zeta", "a"): ["data_disk", "egress"],
    }
    assert [len(r[4]) for r in rows.values()] == [1, 1, 0, 0]
    assert [f["seq"] for f in rows[("acme", "a")][3]] == [0, 1]
    # One list row per set, as many as the sets of fee rows.
    for lists, rows_table, id_column in (
        ("fee_set_lists", "addon_fee_sets", "fee_set_id"),
        ("plan_set_lists", "price_plan_sets", "plan_set_id"),
    ):
        counts = con.execute(
            f"SELECT (SELECT count(*) FROM {lists}),"
            f" (SELECT count(DISTINCT {id_column}) FROM {rows_table}),"
            f" (SELECT count(DISTINCT {id_column}) FROM {lists})"
        ).fetchall()[0]
        assert counts[0] == counts[1] == counts[2] > 0, lists


def _as_before_13(con: duckdb.DuckDBPyConnection) -> None:
    """The schema migration 12 left, with the same rows: the lists back in current_offers
    (this release's loader cannot write that schema), the list tables gone."""
    from warehouse import migrations

    for column, lists, id_column in (
        ("fees", "fee_set_lists", "fee_set_id"),
        ("plans", "plan_set_lists", "plan_set_id"),
    ):
        kind = con.execute(
            f"SELECT data_type FROM information_schema.columns"
            f" WHERE table_name = '{lists}' AND column_name = '{column}'"
        ).fetchall()[0][0]
        con.execute(f"ALTER TABLE current_offers ADD COLUMN {column} {kind} DEFAULT []")
        con.execute(
            f"UPDATE current_offers AS c SET {column} = l.{column} FROM {lists} AS l"
            f" WHERE l.{id_column} = c.{id_column}"
        )
        con.execute(f"DROP TABLE {lists}")
    con.execute("DELETE FROM schema_migrations WHERE version = 13")
    twelve = next(m for m in migrations.MIGRATIONS if m.version == 12).sql()
    con.execute(twelve[twelve.index("CREATE OR REPLACE VIEW latest_offers") :])


def test_migrating_a_loaded_warehouse_keeps_its_latest_state(kit: FeedKit) -> None:
    con = duckdb.connect()
    migrate(con)
    feeds = _feeds(kit)
    for run, path in feeds[:2]:
        load_run(con, run, path)
    _as_before_13(con)
    assert {"fees", "plans"} <= _columns(con, "current_offers")
    before = con.execute(LATEST).fetchall()
    assert [len(r[3]) for r in before] == [2, 1, 0, 2]  # acme a, b, c; zeta a

    assert migrate(con) == [13]
    assert not {"fees", "plans"} & _columns(con, "current_offers")
    assert con.execute(LATEST).fetchall() == before
    # Loading goes on from the migrated sets: an unchanged list adds no set.
    sets = con.execute("SELECT count(*) FROM fee_set_lists").fetchall()
    run, path = feeds[2]
    load_run(con, run, path)
    assert con.execute("SELECT count(*) FROM fee_set_lists").fetchall() == sets
    latest = {(r[0], r[1]): r for r in con.execute(LATEST).fetchall()}
    assert latest[("acme", "a")][2] == Decimal("3")
    assert [f["fee_type"] for f in latest[("acme", "c")][3]] == ["public_ip"]
