"""Which warehouse the API reads, and the one way it opens it.

The path comes from the caller, else ``GPURENT_DB``, else the user data directory; after
``make demo`` the data is in the checkout, and a reader without a path is told so. Opening
and closing goes through ``warehouse.db.reading`` (waits briefly for a writer's lock).
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from gpurent.api.errors import NoWarehouse, WarehouseBusy

if TYPE_CHECKING:
    import duckdb

F = TypeVar("F", bound=Callable[..., Any])
LAKE_READ_TRIES = 4
"""Reads of the lake a maintenance step may abort (``warehouse.lake.is_read_conflict``)."""

# Where `make demo` writes its warehouse, relative to the checkout it runs in.
DEMO_DB = Path("var/demo.duckdb")


def resolve_db(db: Path | str | None) -> Path:
    """The warehouse path: ``db``, else the settings' (``GPURENT_DB`` or the default)."""
    if db is not None:
        return Path(db).expanduser()
    from gpurent_core.config import load_settings  # read only when asked

    return load_settings().db.expanduser()


def require_db(db: Path | str | None) -> Path:
    """The path of an existing warehouse, or ``NoWarehouse`` saying how to get one."""
    path = resolve_db(db)
    refuse_directory(path)
    if path.exists() or lake_chosen():
        return path  # a lake (GPURENT_LAKE_CATALOG) is found through its catalog instead
    if db is None and DEMO_DB.is_file():
        raise NoWarehouse(
            f"no warehouse at {path}; the demo's is at {DEMO_DB}: use --db {DEMO_DB} or GPURENT_DB",
            argument="db",
        )
    raise NoWarehouse(
        f"No database at {path}. Run `gpurent crawl --replay` (offline demo) "
        "or `gpurent crawl` first, or point --db / GPURENT_DB at one.",
        argument="db",
    )


def refuse_directory(path: Path) -> None:
    """``NoWarehouse`` when ``path`` is a folder: a crawl cannot create a warehouse there
    (unless a lake is chosen: then the path is not used)."""
    if path.is_dir() and not lake_chosen():
        raise NoWarehouse(
            f"{path} is a directory, not a warehouse file: point --db / GPURENT_DB at the "
            f"warehouse file (e.g. {path / 'gpurent.duckdb'})",
            argument="db",
        )


def lake_chosen() -> bool:
    """Whether the settings choose the DuckLake warehouse (GPURENT_LAKE_CATALOG)."""
    from gpurent_core.config import load_settings

    return bool(load_settings().lake_catalog)


def warehouse_exists(db: Path | str | None) -> bool:
    """Whether there is a warehouse to read: the DuckDB file, or a configured lake."""
    return resolve_db(db).exists() or lake_chosen()


@contextmanager
def open_warehouse(db: Path | str | None) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection to the warehouse, closed on leaving the block."""
    from warehouse.db import connect  # DuckDB loads only when something is read
    from warehouse.errors import WarehouseLocked, WarehouseMissing

    path = require_db(db)
    try:
        con = connect(path, read_only=True)
    except WarehouseMissing as exc:
        raise NoWarehouse(str(exc), argument="db") from exc
    except WarehouseLocked as exc:
        raise WarehouseBusy(
            f"{exc}: a crawl or load is writing; try again when it is done", argument="db"
        ) from exc
    try:
        yield con
    finally:
        con.close()


def retried_read(read: F) -> F:
    """``read`` (which opens the warehouse itself) again, on a fresh connection, when the lake
    aborted it under a writer's maintenance step: up to LAKE_READ_TRIES tries, a short pause
    between, then `WarehouseBusy`. Readers get the last committed state, never a database
    error, while a loader works (issue 13). Any other failure is raised at once."""

    @functools.wraps(read)
    def retrying(*args: Any, **kwargs: Any) -> Any:
        for attempt in range(1, LAKE_READ_TRIES + 1):
            try:
                return read(*args, **kwargs)
            except Exception as exc:
                lake = sys.modules.get("warehouse.lake")  # loaded by any lake connection
                if lake is None or not lake.is_read_conflict(exc):
                    raise
                if attempt == LAKE_READ_TRIES:
                    raise WarehouseBusy(lake.READ_CONFLICT_BUSY, argument="db") from exc
                time.sleep(0.05 * 2**attempt)
        raise AssertionError("unreachable")

    return retrying  # type: ignore[return-value]
