"""Errors the warehouse raises on purpose, so callers (CLI, flows) can say what went wrong."""

from __future__ import annotations


class WarehouseError(Exception):
    """Base class of the warehouse's own errors."""


class WarehouseMissing(WarehouseError):
    """A reader asked for a warehouse file that does not exist (or holds no gpurent schema)."""


class WarehouseLocked(WarehouseError):
    """Another process held the file lock for longer than the retries allowed."""


class MigrationError(WarehouseError):
    """A migration failed; it was rolled back and the schema stays at the previous version."""


class WarehouseDamaged(WarehouseError):
    """The file is a DuckDB database that cannot be read back: a block whose checksum does
    not match, a file cut short. Waiting will not help; a backup or a new warehouse will."""


# How DuckDB says a file is damaged (as opposed to held by another process).
DAMAGE_WORDS = ("corrupt", "checksum", "could not read enough bytes")


def is_damage(message: str) -> bool:
    lowered = message.lower()
    return any(word in lowered for word in DAMAGE_WORDS)


def damaged_message(path: object) -> str:
    return (
        f"the warehouse {path} is damaged (DuckDB cannot read it back: a checksum mismatch or "
        "a file cut short): restore a backup, or point --db at a new path and crawl again"
    )


NO_EXTENSION_FETCH: dict[str, str | bool | int | float | list[str]] = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
}
"""DuckDB's settings for every file gpurent opens: a file of another database (SQLite) made
DuckDB download the extension that reads it from the internet. What gpurent needs (JSON,
Parquet, ICU) is built in; the lake's extensions come from PyPI (``warehouse.lake``)."""


def unreadable_message(message: str, path: object) -> str | None:
    """One line for a file DuckDB will not open as a database (not a DuckDB file, or one a
    newer DuckDB wrote), from DuckDB's ``message``; None for any other error. The CLI and
    the library API both say it (neither shows DuckDB's own words)."""
    lowered = message.lower()
    # Another database's file (SQLite, say) makes DuckDB reach for the extension that reads
    # it; extensions are never fetched here (``NO_EXTENSION_FETCH``): it is no warehouse.
    foreign = "extension" in lowered and ("not found" in lowered or "install it" in lowered)
    if "not a valid duckdb database" in lowered or "not a duckdb" in lowered or foreign:
        return (
            f"{path} is not a gpurent warehouse (not a DuckDB file): point --db at the "
            "warehouse file, or give a new path and run `gpurent crawl --replay`"
        )
    if "created with an newer version" in lowered or "created with a newer version" in lowered:
        import duckdb

        return (
            f"the warehouse {path} was written by a newer DuckDB than this gpurent's "
            f"({duckdb.__version__}): point --db at a new path and crawl again "
            "(`gpurent crawl --replay` for the demo)"
        )
    return None
