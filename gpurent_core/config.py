"""Settings from the environment: one place that knows the variable names.

Every field of `Settings` is read from the ``GPURENT_``-prefixed variable of its name
(``GPURENT_DB``, ``GPURENT_LOCK_WAIT_S``; the name's case does not matter, as in a shell
that upper-cases it or not). A blank value is unset. A value that cannot be read as the
field's type is refused with `SettingError`, naming the variable and what it expects; other
``GPURENT_`` variables (``GPURENT_FX``, read by gpurent_core.fx) are left to their readers.

Why not pydantic-settings: every command reads these settings at start-up, and that library
brings pydantic and asyncio with it, ~150 ms of a command that answers in ~250 ms
(issue 13's start-up figure). Eight fields of three types are read here in a few lines.

Secrets (provider tokens) are read here and nowhere else, so they can be kept out of
logs, the database and exports.
"""

from __future__ import annotations

import math
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from platformdirs import user_data_dir

from gpurent_core.defaults import DEFAULT_CURRENCY

ENV_PREFIX = "GPURENT_"


class SettingError(ValueError):
    """A variable whose value cannot be used; the message names it and what it expects."""


def default_db_path() -> Path:
    return Path(user_data_dir("gpurent", appauthor=False)) / "gpurent.duckdb"


def _seconds(text: str) -> float:
    value = float(text)  # ValueError: not a number
    if not math.isfinite(value) or value < 0:
        raise ValueError(text)
    return value


# How a variable's text becomes the field's value, and what is expected when it cannot.
_PATH: tuple[Callable[[str], Any], str] = (Path, "a path")
_TEXT: tuple[Callable[[str], Any], str] = (str, "text")
_SECONDS: tuple[Callable[[str], Any], str] = (_seconds, "a number of seconds >= 0")


@dataclass(frozen=True)
class Settings:
    """gpurent's settings; every field can be set with a ``GPURENT_``-prefixed variable."""

    db: Path = field(default_factory=default_db_path, metadata={"read": _PATH})
    """DuckDB file (GPURENT_DB)."""
    chromium: str | None = field(default=None, metadata={"read": _TEXT})
    """Chromium executable for Playwright (GPURENT_CHROMIUM); default: `chromium` on PATH."""
    currency: str = field(default=DEFAULT_CURRENCY, metadata={"read": _TEXT})
    """Display currency for costs and rankings (GPURENT_CURRENCY); native prices are kept too."""
    work_dir: Path | None = field(default=None, metadata={"read": _PATH})
    """Where crawl feeds and run reports are kept (GPURENT_WORK_DIR); default: beside the DB."""
    lock_wait_s: float | None = field(default=None, metadata={"read": _SECONDS})
    """Seconds to wait while another process writes the DB (GPURENT_LOCK_WAIT_S); default:
    120 s for a load (warehouse.db.WRITER_WAIT_S), 10 s for a read command (READER_WAIT_S)."""

    lake_catalog: str | None = field(default=None, metadata={"read": _TEXT})
    """Use the DuckLake warehouse instead of the DuckDB file (GPURENT_LAKE_CATALOG): a libpq
    connection string for its PostgreSQL catalog, e.g. ``dbname=gpurent host=db.internal``.
    The one setting that chooses the warehouse; every command and flow then reads and
    writes the lake, and ``db`` is not used."""
    lake_data: Path | None = field(default=None, metadata={"read": _PATH})
    """The lake's Parquet folder on shared storage (GPURENT_LAKE_DATA); needed by the first
    writer, which creates the lake; the catalog remembers it for everyone else."""
    storage_url: str | None = field(default=None, metadata={"read": _TEXT})
    """Where fanned-out crawls put their feeds (GPURENT_STORAGE_URL): a shared path or an
    fsspec URL (``s3://bucket/feeds``); see docs/deploy.md."""

    def chromium_path(self) -> str | None:
        return self.chromium or shutil.which("chromium") or shutil.which("chromium-browser")

    def feeds_dir(self) -> Path:
        return (self.work_dir or self.db.parent / "feeds").resolve()


def settings_from(environ: Mapping[str, str]) -> Settings:
    """The settings ``environ`` sets (see the module doc); raises SettingError."""
    given = {
        name[len(ENV_PREFIX) :].lower(): value
        for name, value in environ.items()
        if name.upper().startswith(ENV_PREFIX) and value.strip()
    }
    values: dict[str, Any] = {}
    for spec in fields(Settings):
        text = given.get(spec.name)
        if text is None:
            continue
        read, expected = spec.metadata["read"]
        try:
            values[spec.name] = read(text.strip())
        except ValueError:
            variable = f"{ENV_PREFIX}{spec.name.upper()}"
            raise SettingError(f"bad setting: {variable}={text!r}: expected {expected}") from None
    return Settings(**values)


def load_settings() -> Settings:
    return settings_from(os.environ)
