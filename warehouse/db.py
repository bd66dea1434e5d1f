"""Opening the warehouse file: one writer that migrates, readers that wait briefly for it.

DuckDB allows one read-write process per file, or any number of read-only ones, and a
process that holds the file read-write shuts every other process out, readers included.
So whoever finds the file locked waits, with backoff, instead of failing at once: a load
(the writer) waits long (``GPURENT_LOCK_WAIT_S``, default ``WRITER_WAIT_S``), since
giving up means a crawl's results wait for ``gpurent load``; a read command waits briefly
(``READER_WAIT_S`` unless ``GPURENT_LOCK_WAIT_S`` says otherwise), then says "warehouse
busy" in one line. Writers keep their windows short (one provider run per connection) so
readers get in between. What a reader sees is always a committed state: each provider
run is one transaction. Within one process, DuckDB refuses a read-only connection to a
file that process already holds read-write: there, reuse the writer's connection
(``con.cursor()``).
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from gpurent_core.config import SettingError, load_settings
from warehouse.errors import (
    NO_EXTENSION_FETCH,
    WarehouseDamaged,
    WarehouseError,
    WarehouseLocked,
    WarehouseMissing,
    damaged_message,
    is_damage,
)
from warehouse.migrations import LATEST_MIGRATION, migrate

if TYPE_CHECKING:
    import polars as pl

    from warehouse.lake import LakeConfig

LOCK_WAIT_ENV = "GPURENT_LOCK_WAIT_S"
WRITER_WAIT_S = 120.0
"""How long a writer waits for the lock by default: a crawl's load should outlast another
crawl's load or a watch poll, which take seconds to a minute on a small machine."""
READER_WAIT_S = 10.0
"""How long a read command waits by default: long enough for one provider run's write
window, short enough that a person is told what is going on."""
FIRST_RETRY_S = 0.05
MAX_RETRY_S = 0.5
"""Backoff cap: the gaps between a writer's windows are short, so poll them often enough."""


def connect(
    path: Path | str,
    *,
    read_only: bool = False,
    wait_s: float | None = None,
    retries: int | None = None,
    retry_delay_s: float = 0.25,
) -> duckdb.DuckDBPyConnection:
    """Open the warehouse at ``path``.

    A writer creates the parent folders and the file, then applies pending migrations.
    A reader needs an existing, migrated file (else ``WarehouseMissing``). While another
    process holds the lock, both retry with backoff for ``wait_s`` seconds (default:
    ``lock_wait_s(read_only=...)``), then raise ``WarehouseLocked`` with the one line a
    user sees. ``retries`` instead gives a fixed number of retries ``retry_delay_s``
    apart (older callers). Every session runs in UTC.
    """
    lake = configured_lake()
    if lake is not None:
        # GPURENT_LAKE_CATALOG chooses the DuckLake warehouse: many readers beside the loader,
        # no file lock to wait for; the path is not used.
        from warehouse.lake import connect_lake

        return connect_lake(lake, read_only=read_only)
    db_path = Path(path).expanduser()
    if read_only and not db_path.is_file():
        raise WarehouseMissing(f"no warehouse at {db_path}: run a crawl first to create it")
    if not read_only:
        db_path.parent.mkdir(parents=True, exist_ok=True)
    if retries is not None:
        con = _open_counted(db_path, read_only=read_only, retries=retries, delay_s=retry_delay_s)
    else:
        wait = lock_wait_s(read_only=read_only) if wait_s is None else max(0.0, wait_s)
        con = _open_waiting(db_path, read_only=read_only, wait_s=wait)
    try:
        # Sessions default to the machine's zone; TIMESTAMPTZ must come back as UTC.
        # No progress bar: DuckDB draws it on stdout for slow queries, inside JSON output.
        con.execute("SET TimeZone = 'UTC'; SET enable_progress_bar = false")
        if read_only:
            current = _require_schema(con, db_path)
        else:
            migrate(con)
    except BaseException:
        con.close()
        raise
    if read_only and not current:
        # A warehouse an older gpurent wrote: upgrade it once (a writer's short transaction
        # per migration), then read it as asked.
        con.close()
        connect(db_path, read_only=False, wait_s=wait_s, retries=retries).close()
        return connect(db_path, read_only=True, wait_s=wait_s, retries=retries)
    return con


def configured_lake() -> LakeConfig | None:
    """The DuckLake the settings choose (GPURENT_LAKE_CATALOG), else None: the DuckDB file."""
    settings = load_settings()
    if not settings.lake_catalog:
        return None
    from warehouse.lake import LakeConfig

    return LakeConfig(catalog=settings.lake_catalog, data_path=settings.lake_data)


@contextmanager
def reading(path: Path | str) -> Iterator[duckdb.DuckDBPyConnection]:
    """The one way to read the warehouse: a read-only connection, always closed."""
    con = connect(path, read_only=True)
    try:
        yield con
    finally:
        con.close()


@contextmanager
def writing(path: Path | str) -> Iterator[duckdb.DuckDBPyConnection]:
    """The one way to write the warehouse: created and migrated if needed, always closed."""
    con = connect(path)
    try:
        yield con
    finally:
        con.close()


def lock_wait_s(*, read_only: bool) -> float:
    """Seconds to wait for another process's lock: GPURENT_LOCK_WAIT_S, else the default."""
    try:
        configured = load_settings().lock_wait_s
    except SettingError as exc:
        raise WarehouseError(str(exc)) from exc
    if configured is not None:
        return configured
    return READER_WAIT_S if read_only else WRITER_WAIT_S


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
    import polars as pl  # here, not at the top: Polars and pyarrow are ~0.3 s of imports

    result = pl.from_arrow(con.sql(sql, params=params or None).to_arrow_table())
    if not isinstance(result, pl.DataFrame):  # from_arrow of a Table is always a frame
        raise TypeError(f"expected a DataFrame, got {type(result).__name__}")
    return result


def query_rows(
    con: duckdb.DuckDBPyConnection,
    sql: str,
    params: list[Any] | dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Run a read query and return its rows as dicts, through DuckDB alone.

    The same values and types as ``query_frame(...).iter_rows(named=True)`` (Decimal money,
    UTC datetimes, lists of dicts for fees and plans; a test holds them equal), for the
    paths that only walk rows and should not import Polars to do it."""
    cursor = con.execute(sql, params or None)
    names = [column[0] for column in cursor.description or ()]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


# DuckDB's words for a file another process holds ("Could not set lock on file ..."): the
# word itself, never "block" (a damaged block's message is no lock).
LOCK_WORDS = re.compile(r"\block\b", re.IGNORECASE)


def _try_open(db_path: Path, *, read_only: bool) -> duckdb.DuckDBPyConnection | str:
    """A connection, or the lock error's text when another process holds the file."""
    try:
        return duckdb.connect(str(db_path), read_only=read_only, config=NO_EXTENSION_FETCH)
    except duckdb.IOException as exc:
        message = str(exc)
        if "does not exist" in message.lower():
            raise WarehouseMissing(f"no warehouse at {db_path}") from exc
        if is_damage(message):  # a checksum "in block at ..." is no lock to wait for
            raise WarehouseDamaged(damaged_message(db_path)) from exc
        if not LOCK_WORDS.search(message):
            raise
        return message


def _open_waiting(db_path: Path, *, read_only: bool, wait_s: float) -> duckdb.DuckDBPyConnection:
    started = time.monotonic()
    deadline = started + wait_s
    delay = FIRST_RETRY_S
    while True:
        opened = _try_open(db_path, read_only=read_only)
        if not isinstance(opened, str):
            return opened
        left = deadline - time.monotonic()
        if left <= 0:
            raise WarehouseLocked(
                busy_message(db_path, opened, waited_s=time.monotonic() - started)
            )
        # Jitter keeps several waiting processes from polling in step.
        time.sleep(min(left, delay * random.uniform(0.5, 1.0)))
        delay = min(MAX_RETRY_S, delay * 2)


def _open_counted(
    db_path: Path, *, read_only: bool, retries: int, delay_s: float
) -> duckdb.DuckDBPyConnection:
    started = time.monotonic()
    attempt = 0
    while True:
        opened = _try_open(db_path, read_only=read_only)
        if not isinstance(opened, str):
            return opened
        if attempt >= retries:
            raise WarehouseLocked(
                busy_message(db_path, opened, waited_s=time.monotonic() - started)
            )
        attempt += 1
        time.sleep(delay_s)


def busy_message(db_path: Path, lock_error: str, *, waited_s: float) -> str:
    """The one line a user sees when the file stayed locked (the holder's PID if known)."""
    pid = re.search(r"PID (\d+)", lock_error)
    holder = f", PID {pid.group(1)}," if pid else ""
    return (
        f"warehouse busy: another process{holder} holds {db_path} (a crawl or load, or another "
        f"program with it open) for the {waited_s:.1f} s waited; try again shortly (or set "
        f"{LOCK_WAIT_ENV})"
    )


def _require_schema(con: duckdb.DuckDBPyConnection, db_path: Path) -> bool:
    """Whether the file's schema is this gpurent's (False: migrations are pending)."""
    # Asking for the table itself costs under 1 ms; information_schema costs ~5 ms an open.
    try:
        row = con.execute("SELECT max(version) FROM schema_migrations").fetchone()
    except duckdb.CatalogException as exc:
        raise WarehouseMissing(f"{db_path} holds no gpurent warehouse (never migrated)") from exc
    return row is not None and row[0] is not None and row[0] >= LATEST_MIGRATION
