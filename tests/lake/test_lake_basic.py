"""The DuckLake warehouse (warehouse/lake.py) on a throwaway PostgreSQL catalog: the
migrations build the same tables, a load stores the same rows, and `cheapest` gives the
same answer as the embedded warehouse for the same feeds; a reader works beside an open
writer. Never skipped: without PostgreSQL or the extensions the tests fail and say why."""

from __future__ import annotations

import itertools
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pytest
from pg import Postgres

from gpurent_core.cost.usage import UsageProfile
from gpurent_core.model import (
    OfferRecord,
    PriceBasis,
    ProviderRun,
    RunStatus,
    StockStatus,
)
from tests.warehouse.wh_kit import FeedKit
from warehouse import lake as lake_mod
from warehouse.costed import costed_latest_offers
from warehouse.db import connect
from warehouse.errors import MigrationError, WarehouseMissing
from warehouse.lake import (
    LakeConfig,
    LakeError,
    connect_lake,
    flush_inlined_data,
    lake_sql,
    migrate_lake,
)
from warehouse.load import load_run
from warehouse.migrations import MIGRATIONS, applied_migrations
from warehouse.queries import latest_offers

_names = itertools.count()


@pytest.fixture
def lake(postgres: Postgres, tmp_path: Path) -> LakeConfig:
    """A new, empty catalog database and data folder for each test."""
    dsn = postgres.create_database(f"lake_{next(_names)}")
    return LakeConfig(catalog=dsn, data_path=tmp_path / "lake-data")


# ---------------------------------------------------------------- feeds


def _feeds(root: Path) -> list[tuple[ProviderRun, Path]]:
    """Two providers over three runs: prices move, a card sells out, one offer leaves,
    a CNY provider with a per-instance price and no plans."""
    kit = FeedKit(root)
    out: list[tuple[ProviderRun, Path]] = []

    def add(run: ProviderRun, offers: list[OfferRecord]) -> None:
        out.append((run, kit.write(f"{run.provider}-{run.run_id}", offers)))

    def run_of(n: int, provider: str, status: RunStatus = RunStatus.OK) -> ProviderRun:
        return kit.run(n, status, provider=provider)

    r1 = run_of(1, "acme")
    add(r1, [kit.offer(r1, "a"), kit.offer(r1, "b", price=Decimal("2.10")), kit.offer(r1, "c")])
    r2 = run_of(2, "acme")
    add(
        r2,
        [
            kit.offer(r2, "a", price=Decimal("1.95")),
            kit.offer(r2, "b", status=StockStatus.SOLD_OUT, available_count=0),
        ],
    )
    c1 = run_of(1, "cnlab")
    add(
        c1,
        [
            kit.offer(
                c1,
                f"v{i}",
                gpu_model="RTX 4090",
                gpu_vram_gb=24,
                gpu_form_factor=None,
                raw_gpu_name="RTX 4090 24G",
                price=Decimal("1.88") + Decimal(i) / 10,
                currency="CNY",
                price_basis=PriceBasis.INSTANCE,
                region="北京A区",
                fees=(),
                plans=(),
            )
            for i in range(4)
        ],
    )
    r3 = run_of(3, "acme", RunStatus.FAILED)
    out.append((r3, None))  # type: ignore[arg-type]  # a failed run has no feed
    return out


def _load_all(con: duckdb.DuckDBPyConnection, feeds: list[tuple[ProviderRun, Path]]) -> None:
    for run, path in feeds:
        load_run(con, run, path)


def _answer(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """`cheapest`'s rows (all of them, and the first 3 the bounded way), without the age;
    stale ones too (acme's latest run failed: rule 11 leaves its offers out unless asked),
    and the lake's answer without them is the same minus them."""
    profile = UsageProfile()

    def rows(costed: list[Any]) -> list[dict[str, Any]]:
        out = []
        for c in costed:
            row = {**c.as_row(), **c.terms()}
            row.pop("age_s")  # seconds since observed_at at query time
            out.append(row)
        return out

    every = rows(costed_latest_offers(con, profile, display_currency="CNY", include_stale=True))
    first = rows(
        costed_latest_offers(con, profile, display_currency="CNY", limit=3, include_stale=True)
    )
    assert first == every[:3]
    confirmed = rows(costed_latest_offers(con, profile, display_currency="CNY"))
    assert confirmed == [r for r in every if not r["stale"]]
    return every


# ---------------------------------------------------------------- tests


def test_lake_sql_keeps_what_ducklake_holds_and_drops_the_rest() -> None:
    script = """
    -- a comment that says CHECK (x > 0) and PRIMARY KEY
    CREATE SEQUENCE offer_version_ids START 1;
    CREATE TABLE t (
        id     INTEGER PRIMARY KEY DEFAULT nextval('offer_version_ids'),
        code   VARCHAR NOT NULL CHECK (regexp_full_match(code, '[A-Z]{3}')),
        tags   VARCHAR[] NOT NULL DEFAULT []::VARCHAR[],
        n      INTEGER NOT NULL DEFAULT 0 CHECK (n >= 0),
        status VARCHAR NOT NULL DEFAULT 'pending',
        CHECK ((n > 1) = (code IS NULL)),
        UNIQUE (code, n),
        PRIMARY KEY (id, code)
    );
    CREATE VIEW v AS SELECT 'a, b' AS s, '--' AS d FROM t;
    """
    out = lake_sql(script)
    assert out == (
        "CREATE OR REPLACE TEMP SEQUENCE offer_version_ids START 1;\n"
        "CREATE TABLE t (\n"
        "        id     INTEGER,\n"
        "        code   VARCHAR NOT NULL,\n"
        "        tags   VARCHAR[] NOT NULL,\n"
        "        n      INTEGER NOT NULL DEFAULT 0,\n"
        "        status VARCHAR NOT NULL DEFAULT 'pending');\n"
        "CREATE VIEW v AS SELECT 'a, b' AS s, '--' AS d FROM t;\n"
    )
    with pytest.raises(MigrationError, match="SEQUENCES"):
        lake_sql("CREATE SEQUENCE nobody_knows START 1;")


def test_the_extensions_must_match_the_installed_duckdb(monkeypatch: pytest.MonkeyPatch) -> None:
    found = lake_mod.extension_files()
    assert set(found) == {"ducklake", "postgres_scanner"}
    assert all(p.parent.name == f"v{duckdb.__version__}" for p in found.values())
    monkeypatch.setattr(duckdb, "__version__", "0.0.1")
    with pytest.raises(LakeError, match=r"is for DuckDB v.*this is DuckDB v0\.0\.1: install"):
        lake_mod.extension_files()


def test_migrations_build_the_embedded_schema_once(lake: LakeConfig, tmp_path: Path) -> None:
    con = connect_lake(lake)
    try:
        assert applied_migrations(con) == [(m.version, m.name) for m in MIGRATIONS]
        assert migrate_lake(con) == []
        lake_objects = set(
            con.execute(
                "SELECT table_name, table_type FROM information_schema.tables"
                " WHERE table_catalog = 'lake'"
            ).fetchall()
        )
    finally:
        con.close()
    embedded = connect(tmp_path / "embedded.duckdb")
    try:
        embedded_objects = set(
            embedded.execute(
                "SELECT table_name, table_type FROM information_schema.tables"
                " WHERE table_catalog = 'embedded'"
            ).fetchall()
        )
    finally:
        embedded.close()
    assert lake_objects == embedded_objects
    assert ("current_offers", "BASE TABLE") in lake_objects
    assert ("latest_offers", "VIEW") in lake_objects
    again = connect_lake(lake)  # a second writer finds nothing to apply
    try:
        assert migrate_lake(again) == []
    finally:
        again.close()


def test_loads_give_the_embedded_answer(lake: LakeConfig, tmp_path: Path) -> None:
    feeds = _feeds(tmp_path / "feeds")
    embedded = connect(tmp_path / "embedded.duckdb")
    try:
        _load_all(embedded, feeds)
        expected = _answer(embedded)
        expected_latest = latest_offers(embedded).drop("age_s")
        expected_versions = embedded.execute(
            "SELECT version_id, provider, valid_from, valid_to, status, price"
            " FROM offer_versions ORDER BY version_id"
        ).fetchall()
    finally:
        embedded.close()
    # Each run through its own writer connection: the version ids go on across them.
    for feed in feeds:
        writer = connect_lake(lake)
        try:
            _load_all(writer, [feed])
        finally:
            writer.close()
    reader = connect_lake(LakeConfig(catalog=lake.catalog), read_only=True)
    try:
        assert _answer(reader) == expected
        assert latest_offers(reader).drop("age_s").equals(expected_latest)
        versions = reader.execute(
            "SELECT version_id, provider, valid_from, valid_to, status, price"
            " FROM offer_versions ORDER BY version_id"
        ).fetchall()
    finally:
        reader.close()
    # Ids within one run follow the engine's row order: compare the rows, and that the ids
    # stay unique across the writer connections.
    assert sorted(v[1:] for v in versions) == sorted(v[1:] for v in expected_versions)
    assert len({v[0] for v in versions}) == len(versions)
    assert len(expected) == 6  # a, b (sold out: still listed), the 4 CNY cards; c left
    # Small commits sit in the catalog (DuckLake's inlining) until flushed to Parquet.
    writer = connect_lake(lake)
    try:
        flush_inlined_data(writer)
        assert _answer(writer) == expected
    finally:
        writer.close()
    written = {p.parent.name for p in (tmp_path / "lake-data").rglob("*.parquet")}
    assert {"crawl_runs", "offer_versions", "current_offers"} <= written


def test_a_reader_works_beside_an_open_writer(lake: LakeConfig, tmp_path: Path) -> None:
    feeds = _feeds(tmp_path / "feeds")
    writer = connect_lake(lake)
    try:
        _load_all(writer, feeds[:1])
        reader = connect_lake(lake, read_only=True)  # the embedded file would refuse this
        try:
            before = {r["offer_key"] for r in _answer(reader)}
            _load_all(writer, feeds[1:])
            after = {r["offer_key"] for r in _answer(reader)}
            with pytest.raises(duckdb.Error, match="read-only"):
                reader.execute("DELETE FROM crawl_runs")
        finally:
            reader.close()
    finally:
        writer.close()
    assert before == {"a", "b", "c"}
    assert after == {"a", "b", "v0", "v1", "v2", "v3"}


def test_a_reader_of_an_empty_catalog_is_told_to_load_first(
    postgres: Postgres, tmp_path: Path
) -> None:
    dsn = postgres.create_database(f"lake_{next(_names)}")
    with pytest.raises(WarehouseMissing, match="a load creates it"):
        connect_lake(LakeConfig(catalog=dsn, data_path=tmp_path / "d"), read_only=True)
