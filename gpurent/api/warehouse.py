"""Which warehouse the API reads, and the one way it opens it.

The path comes from the caller, else ``GPURENT_DB``, else the user data directory; after
``make demo`` the data is in the checkout, and a reader without a path is told so. Opening
and closing goes through ``warehouse.db.reading`` (waits briefly for a writer's lock).

A damaged file is ``WarehouseDamaged`` (an ``ApiError``) whether DuckDB finds the damage when
the file opens or only when a read reaches the bad block: a program never meets a raw DuckDB
exception for it.
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from gpurent.api.errors import NotAWarehouse, NoWarehouse, WarehouseBusy, WarehouseDamaged

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


def warehouse_label(path: Path) -> str:
    """Where answers are read from and loads go, as a person should be told: the file, or
    the lake's catalog (GPURENT_LAKE_CATALOG; a password in it shown as ***)."""
    from gpurent_core.config import load_settings

    catalog = load_settings().lake_catalog
    if not catalog:
        return str(path)
    import re

    return "the lake, catalog " + re.sub(r"(password\s*=\s*)\S+", r"\1***", catalog)


def warehouse_exists(db: Path | str | None) -> bool:
    """Whether there is a warehouse to read: the DuckDB file, or a configured lake."""
    return resolve_db(db).exists() or lake_chosen()


@contextmanager
def open_warehouse(db: Path | str | None) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection to the warehouse, closed on leaving the block.

    Damage DuckDB meets inside the block (a read reaching a bad block) leaves it as
    ``WarehouseDamaged`` naming the file."""
    from warehouse.db import connect  # DuckDB loads only when something is read
    from warehouse.errors import WarehouseDamaged as Damaged
    from warehouse.errors import WarehouseLocked, WarehouseMissing

    path = require_db(db)
    try:
        con = connect(path, read_only=True)
    except WarehouseMissing as exc:
        raise NoWarehouse(str(exc), argument="db") from exc
    except WarehouseLocked as exc:
        raise WarehouseBusy(str(exc), argument="db") from exc
    except Damaged as exc:
        raise WarehouseDamaged(str(exc), argument="db") from exc
    except Exception as exc:
        refusal = _damage(exc, path) or _unreadable(exc, path)
        if refusal is None:
            raise
        raise refusal from exc
    try:
        yield con
    except Exception as exc:
        damaged = _damage(exc, path)
        if damaged is None:
            raise
        raise damaged from exc
    finally:
        con.close()


def _damage(exc: BaseException, path: object | None) -> WarehouseDamaged | None:
    """``WarehouseDamaged`` for a DuckDB error that says the file is damaged, else None.

    DuckDB is looked up, not imported: an error can only come from it once it is loaded."""
    duckdb = sys.modules.get("duckdb")
    if duckdb is None or not isinstance(exc, duckdb.Error):
        return None
    from warehouse.errors import damaged_message, is_damage

    if not is_damage(str(exc)):
        return None
    return WarehouseDamaged(damaged_message(path or "file"), argument="db")


def _unreadable(exc: BaseException, path: Path) -> NotAWarehouse | None:
    """``NotAWarehouse`` for a file DuckDB will not open (not a DuckDB file, a newer DuckDB's),
    else None: a program gets the CLI's one line, not DuckDB's exception."""
    duckdb = sys.modules.get("duckdb")
    if duckdb is None or not isinstance(exc, duckdb.Error):
        return None
    from warehouse.errors import unreadable_message

    message = unreadable_message(str(exc), path)
    return None if message is None else NotAWarehouse(message, argument="db")


def retried_read(read: F) -> F:
    """``read`` (which opens the warehouse itself) again, on a fresh connection, when the lake
    aborted it under a writer's maintenance step: up to LAKE_READ_TRIES tries, a short pause
    between, then `WarehouseBusy`. Readers get the last committed state, never a database
    error, while a loader works (issue 13). Damage DuckDB reports is ``WarehouseDamaged``
    (``open_warehouse`` names the file; this is the net for a read outside its block). Any
    other failure is raised at once."""

    @functools.wraps(read)
    def retrying(*args: Any, **kwargs: Any) -> Any:
        for attempt in range(1, LAKE_READ_TRIES + 1):
            try:
                return read(*args, **kwargs)
            except Exception as exc:
                lake = sys.modules.get("warehouse.lake")  # loaded by any lake connection
                if lake is None or not lake.is_read_conflict(exc):
                    damaged = _damage(exc, None)
                    if damaged is not None:
                        raise damaged from exc
                    raise
                if attempt == LAKE_READ_TRIES:
                    raise WarehouseBusy(lake.READ_CONFLICT_BUSY, argument="db") from exc
                time.sleep(0.05 * 2**attempt)
        raise AssertionError("unreachable")

    return retrying  # type: ignore[return-value]
