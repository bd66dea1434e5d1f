"""Schema migrations: recorded, re-runnable, atomic; CHECK lists mirror the model's enums."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import duckdb
import pytest

from gpurent_core.model import (
    BillingUnit,
    FeeBasis,
    FeeType,
    PriceBasis,
    PriceKind,
    RunStatus,
    StockStatus,
)
from warehouse import migrations
from warehouse.db import connect
from warehouse.errors import MigrationError
from warehouse.migrations import MIGRATIONS, Migration, applied_migrations, migrate

# Every test here is about what the migrations do to a new file (tests/conftest.py: new
# warehouses elsewhere start as a copy of a migrated one).
MIGRATES_FRESH_FILES = True

EXPECTED_RELATIONS = {
    "schema_migrations",
    "crawl_runs",
    "observations",
    "addon_fees",
    "price_plans",
    "quarantine",
    "fx_rates",
    "good_runs",
    "latest_runs",
    "last_runs",
    "latest_offers",
    # history (migrations 3-4): versions instead of one row per offer per poll
    "offer_versions",
    "offer_identities",
    "version_rows",
    "addon_fee_sets",
    "price_plan_sets",
    "current_offers",
    "current_runs",
    "history_runs",
    "run_versions",
}


def relations(con: duckdb.DuckDBPyConnection) -> set[str]:
    rows = con.execute("SELECT table_name FROM information_schema.tables").fetchall()
    return {name for (name,) in rows}


def test_a_fresh_warehouse_records_every_migration(con: duckdb.DuckDBPyConnection) -> None:
    assert applied_migrations(con) == [(m.version, m.name) for m in MIGRATIONS]
    assert applied_migrations(con)[:4] == [
        (1, "init"),
        (2, "views"),
        (3, "history"),
        (4, "history views"),
    ]
    stamps = con.execute("SELECT applied_at FROM schema_migrations").fetchall()
    assert all(stamp is not None for (stamp,) in stamps)
    assert relations(con) >= EXPECTED_RELATIONS


def catalog(con: duckdb.DuckDBPyConnection) -> dict[str, set[tuple[object, ...]]]:
    """Everything the migrations define, as DuckDB lists it."""
    queries = {
        "columns": "SELECT table_name, column_name, data_type, is_nullable, column_default"
        " FROM information_schema.columns",
        "views": "SELECT view_name, sql FROM duckdb_views() WHERE NOT internal",
        "indexes": "SELECT table_name, index_name, sql FROM duckdb_indexes()",
        "constraints": "SELECT table_name, constraint_type, constraint_text"
        " FROM duckdb_constraints()",
        "sequences": "SELECT sequence_name, start_value, increment_by FROM duckdb_sequences()",
        "macros": "SELECT function_name, macro_definition FROM duckdb_functions()"
        " WHERE NOT internal AND function_type LIKE '%macro%'",
        "migrations": "SELECT version, name FROM schema_migrations",
    }
    return {name: set(con.execute(sql).fetchall()) for name, sql in queries.items()}


def test_the_copy_other_tests_start_from_is_what_the_migrations_make(
    db_path: Path, migrated_warehouse: Path | None
) -> None:
    # tests/conftest.py: a new warehouse outside this module starts as a copy of that file.
    # Both files as reopened (DuckDB writes a view's SQL back in its own spelling).
    assert migrated_warehouse is not None
    connect(db_path).close()
    fresh = duckdb.connect(str(db_path), read_only=True)
    copy = duckdb.connect(str(migrated_warehouse), read_only=True)
    try:
        assert catalog(copy) == catalog(fresh)
    finally:
        copy.close()
        fresh.close()


def test_migrating_again_applies_nothing(db_path: Path) -> None:
    first = connect(db_path)
    assert migrate(first) == []
    first.close()
    second = connect(db_path)  # a writer migrates on connect: nothing left to do
    try:
        count = second.execute("SELECT count(*) FROM schema_migrations").fetchall()
        assert count == [(len(MIGRATIONS),)]
        assert migrate(second) == []
    finally:
        second.close()


def test_an_older_gpurent_refuses_a_newer_schema(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("INSERT INTO schema_migrations (version, name) VALUES (99, 'future')")
    with pytest.raises(MigrationError, match="version 99, newer than this gpurent"):
        migrate(con)


@dataclass(frozen=True)
class InlineMigration(Migration):
    script: str = ""

    def sql(self) -> str:
        return self.script


def test_a_failing_migration_leaves_the_schema_as_it_was(
    con: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    after = max(m.version for m in MIGRATIONS) + 1
    broken = InlineMigration(
        after, "broken", "", "CREATE TABLE half_built (x INTEGER); SELECT * FROM no_such_table;"
    )
    monkeypatch.setattr(migrations, "MIGRATIONS", (*MIGRATIONS, broken))
    with pytest.raises(MigrationError, match=f"migration {after}"):
        migrate(con)
    assert "half_built" not in relations(con)
    assert [v for v, _ in applied_migrations(con)] == [m.version for m in MIGRATIONS]

    fixed = InlineMigration(after, "fixed", "", "CREATE TABLE half_built (x INTEGER);")
    monkeypatch.setattr(migrations, "MIGRATIONS", (*MIGRATIONS, fixed))
    assert migrate(con) == [after]
    assert "half_built" in relations(con)


ENUM_CHECKS: dict[tuple[str, str], type[StrEnum]] = {
    ("crawl_runs", "status"): RunStatus,
    # observations / addon_fees / price_plans became views over these (migration 3)
    ("offer_versions", "status"): StockStatus,
    ("offer_versions", "billing_unit"): BillingUnit,
    ("offer_versions", "price_basis"): PriceBasis,
    ("offer_versions", "price_kind"): PriceKind,
    ("addon_fee_sets", "fee_type"): FeeType,
    ("addon_fee_sets", "unit"): BillingUnit,
    ("addon_fee_sets", "basis"): FeeBasis,
    ("price_plan_sets", "billing_unit"): BillingUnit,
    ("price_plan_sets", "price_basis"): PriceBasis,
    ("price_plan_sets", "price_kind"): PriceKind,
}
# Tables whose CHECK lists mirror model enums (other tables have CHECK lists of their own).
ENUM_TABLES = {table for table, _ in ENUM_CHECKS}


def test_enum_check_lists_match_the_model(con: duckdb.DuckDBPyConnection) -> None:
    # If an enum gains a member, this fails here instead of failing a load in production.
    rows = con.execute(
        "SELECT table_name, constraint_text FROM duckdb_constraints()"
        " WHERE constraint_type = 'CHECK'"
    ).fetchall()
    found: dict[tuple[str, str], set[str]] = {}
    for table, text in rows:
        match = re.search(r"\(?(\w+) IN \(([^)]*)\)", text)
        if match and table in ENUM_TABLES:
            found[(table, match.group(1))] = set(re.findall(r"'([^']*)'", match.group(2)))
    assert found == {key: {m.value for m in enum} for key, enum in ENUM_CHECKS.items()}


def test_constraints_reject_values_outside_the_enums(con: duckdb.DuckDBPyConnection) -> None:
    with pytest.raises(duckdb.ConstraintException):
        con.execute(
            "INSERT INTO crawl_runs (run_id, provider, started_at, finished_at, duration_s, status)"
            " VALUES ('r', 'p', now(), now(), 0, 'sold_out')"
        )
    with pytest.raises(duckdb.ConstraintException):
        con.execute(
            "INSERT INTO fx_rates (rate_date, base, quote, rate, source)"
            " VALUES (DATE '2026-11-01', 'usd', 'CNY', 7.1, 'test')"
        )


def test_a_reader_upgrades_a_warehouse_an_older_gpurent_wrote(db_path: Path) -> None:
    con = connect(db_path)
    latest = MIGRATIONS[-1]
    # As the release before the latest migration left it: no row for it, none of its views.
    con.execute(f"DELETE FROM schema_migrations WHERE version = {latest.version}")
    con.close()
    reader = connect(db_path, read_only=True)
    try:
        versions = [v for v, _ in applied_migrations(reader)]
        assert versions[-1] == latest.version
        assert reader.execute("SELECT count(*) FROM latest_offers").fetchone() == (0,)
    finally:
        reader.close()


def test_a_step_another_writer_applied_since_the_first_read_is_not_applied_again(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two writers upgrading one lake: the second read the versions before the first one
    committed its steps. Each step re-reads inside its own transaction, so nothing runs
    twice (audit: schema_migrations held 21 and 22 twice; a data step would have run twice)."""
    connect(db_path).close()  # migrated to the latest
    con = duckdb.connect(str(db_path))
    try:
        stale_view = [(m.version, m.name) for m in MIGRATIONS if m.version < 21]
        monkeypatch.setattr(migrations, "applied_migrations", lambda _con: stale_view)
        leases: list[int] = []
        assert migrate(con, lease=lambda c: leases.append(1)) == []
        rows = con.execute(
            "SELECT version, count(*) FROM schema_migrations GROUP BY version HAVING count(*) > 1"
        ).fetchall()
        assert rows == []
        assert len(leases) == len(MIGRATIONS) - len(stale_view)  # each step took the lease
    finally:
        con.close()
