"""Opening the warehouse file: one writer that migrates, readers that wait briefly for it.

DuckDB allows one read-write process per file, or any number of read-only ones. The flow
is the only writer and keeps its write windows short, so a reader (CLI, dashboard) that
finds the file locked sleeps and retries instead of failing at once. Within one process,
DuckDB refuses a read-only connection to a file that process already holds read-write:
there, reuse the writer's connection (``con.cursor()``).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from warehouse.errors import WarehouseLocked, WarehouseMissing
from warehouse.migrations import migrate


def connect(
    path: Path | str,
    *,
    read_only: bool = False,
    retries: int = 20,
    retry_delay_s: float = 0.25,
) -> duckdb.DuckDBPyConnection:
    """Open the warehouse at ``path``.

    A writer creates the parent folders and the file, then applies pending migrations.
    A reader needs an existing, migrated file (else ``WarehouseMissing``). Both retry
    ``retries`` times, ``retry_delay_s`` apart, while another process holds the lock,
    then raise ``WarehouseLocked``. Every session runs in UTC.
    """
    db_path = Path(path).expanduser()
    if read_only and not db_path.is_file():
        raise WarehouseMissing(f"no warehouse at {db_path}: run a crawl first to create it")
    if not read_only:
        db_path.parent.mkdir(parents=True, exist_ok=True)
    con = _open(db_path, read_only=read_only, retries=retries, retry_delay_s=retry_delay_s)
    try:
        # Sessions default to the machine's zone; TIMESTAMPTZ must come back as UTC.
        con.execute("SET TimeZone = 'UTC'")
        if read_only:
            _require_schema(con, db_path)
        else:
            migrate(con)
    except BaseException:
        con.close()
        raise
    return con


def fetch_one(
    con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None
) -> tuple[Any, ...] | None:
    """The first row of a query, with its result read to the end.

    DuckDB 2 refuses ``con.sql()`` and ``register()`` while an ``execute()`` result is
    unfinished, and ``fetchone()`` leaves it unfinished; ``fetchall()`` does not.
    """
    rows = con.execute(sql, params).fetchall()
    return tuple(rows[0]) if rows else None


def query_frame(
    con: duckdb.DuckDBPyConnection,
    sql: str,
    params: list[Any] | dict[str, Any] | None = None,
) -> pl.DataFrame:
    """Run a read query and hand its result to Polars through Arrow (no copies).

    ``params`` binds ``?`` placeholders (a list) or ``$name`` ones (a dict)."""
    result = pl.from_arrow(con.sql(sql, params=params or None).to_arrow_table())
    if not isinstance(result, pl.DataFrame):  # from_arrow of a Table is always a frame
        raise TypeError(f"expected a DataFrame, got {type(result).__name__}")
    return result


def _open(
    db_path: Path, *, read_only: bool, retries: int, retry_delay_s: float
) -> duckdb.DuckDBPyConnection:
    attempt = 0
    while True:
        try:
            return duckdb.connect(str(db_path), read_only=read_only)
        except duckdb.IOException as exc:
            message = str(exc).lower()
            if "does not exist" in message:
                raise WarehouseMissing(f"no warehouse at {db_path}") from exc
            if "lock" not in message:
                raise
            if attempt >= retries:
                raise WarehouseLocked(
                    f"{db_path} is held by another process (tried {attempt + 1} times): {exc}"
                ) from exc
        attempt += 1
        time.sleep(retry_delay_s)


def _require_schema(con: duckdb.DuckDBPyConnection, db_path: Path) -> None:
    found = fetch_one(
        con, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_migrations'"
    )
    if found is None or found[0] == 0:
        raise WarehouseMissing(f"{db_path} holds no gpurent warehouse (never migrated)")
