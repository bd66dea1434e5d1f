"""Versioned schema migrations, recorded in ``schema_migrations``.

Each migration is one SQL script applied in its own transaction together with its
``schema_migrations`` row, so a failed script leaves no half-built schema and a re-run
applies only what is missing. Migrations are append-only: never edit an applied script,
add a new version instead (``views.sql`` holds only CREATE OR REPLACE VIEW, so a later
migration may point at it again after it changes).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources

import duckdb

from warehouse.errors import MigrationError

_BOOTSTRAP = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER     PRIMARY KEY,
    name       VARCHAR     NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
)
"""


@dataclass(frozen=True)
class Migration:
    """One schema step: ``resource`` is a path inside the ``warehouse`` package."""

    version: int
    name: str
    resource: str

    def sql(self) -> str:
        return resources.files("warehouse").joinpath(self.resource).read_text(encoding="utf-8")


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "init", "sql/0001_init.sql"),
    Migration(2, "views", "views.sql"),
    Migration(3, "history", "sql/0003_history.sql"),
    Migration(4, "history views", "history_views.sql"),
    Migration(10, "watches", "sql/0010_watches.sql"),
    Migration(11, "alerts_outbox", "sql/0011_alerts_outbox.sql"),
    Migration(12, "stale rows", "sql/0012_stale_rows.sql"),
    Migration(13, "set lists", "sql/0013_set_lists.sql"),
    Migration(14, "open versions", "sql/0014_open_versions.sql"),
    Migration(15, "content hash steps", "sql/0015_content_hash_steps.sql"),
    Migration(16, "skipped items", "sql/0016_skipped_items.sql"),
    Migration(17, "confirmed offers", "sql/0017_confirmed_offers.sql"),
    Migration(18, "watch form factor", "sql/0018_watch_form_factor.sql"),
    Migration(19, "stopped unknown", "sql/0019_stopped_unknown.sql"),
    Migration(20, "host attributes", "sql/0020_host_attributes.sql"),
    Migration(21, "unread scopes", "sql/0021_unread_scopes.sql"),
    Migration(22, "watch spot", "sql/0022_watch_spot.sql"),
    Migration(23, "outbox claims", "sql/0023_outbox_claims.sql"),
)


LATEST_MIGRATION = max(m.version for m in MIGRATIONS)
"""The schema version this gpurent writes: a file below it is upgraded on first open."""


def applied_migrations(con: duckdb.DuckDBPyConnection) -> list[tuple[int, str]]:
    """(version, name) of the applied migrations, oldest first."""
    rows = con.execute("SELECT version, name FROM schema_migrations ORDER BY version").fetchall()
    return [(int(version), str(name)) for version, name in rows]


def _applied(con: duckdb.DuckDBPyConnection, version: int) -> bool:
    found = con.execute("SELECT 1 FROM schema_migrations WHERE version = ?", [version])
    return found.fetchone() is not None


def migrate(
    con: duckdb.DuckDBPyConnection,
    *,
    dialect: Callable[[str], str] | None = None,
    where: str = "the warehouse",
    lease: Callable[[duckdb.DuckDBPyConnection], None] | None = None,
) -> list[int]:
    """Apply the pending migrations in order; return the versions applied by this call.

    ``dialect`` rewrites each script (and the bootstrap) for another engine: the DuckLake
    warehouse passes ``warehouse.lake.lake_sql``; ``where`` names it in errors. ``lease``
    is taken first in each step's transaction (the lake's load lease: two writers' steps
    then conflict on commit), and the step is skipped when, read in that transaction, it
    is applied already: another writer may have applied it since the first read, and a step
    that changes data must not run twice."""
    rewrite = dialect or (lambda script: script)
    con.execute(rewrite(_BOOTSTRAP))
    done = {version for version, _ in applied_migrations(con)}
    known = max(m.version for m in MIGRATIONS)
    if done and max(done) > known:
        # An older gpurent must not write into a schema it does not know.
        raise MigrationError(
            f"the schema of {where} is at version {max(done)}, newer than this gpurent "
            f"(which knows up to {known}): upgrade gpurent"
        )
    applied: list[int] = []
    for migration in sorted(MIGRATIONS, key=lambda m: m.version):
        if migration.version in done:
            continue
        script = rewrite(migration.sql())
        con.execute("BEGIN TRANSACTION")
        try:
            if lease is not None:
                lease(con)
            if _applied(con, migration.version):
                con.execute("ROLLBACK")
                continue
            if script.strip():
                con.execute(script)
            con.execute(
                "INSERT INTO schema_migrations (version, name) VALUES (?, ?)",
                [migration.version, migration.name],
            )
            con.execute("COMMIT")
        except duckdb.Error as exc:
            with contextlib.suppress(duckdb.Error):  # keep the migration's error, not this one
                con.execute("ROLLBACK")
            raise MigrationError(
                f"migration {migration.version} ({migration.name}) failed on {where}: {exc}"
            ) from exc
        applied.append(migration.version)
    return applied
