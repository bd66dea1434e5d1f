"""Settings from the environment (pydantic-settings): one place that knows the variable names.

Secrets (provider tokens) are read here and nowhere else, so they can be kept out of
logs, the database and exports.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from platformdirs import user_data_dir
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from gpurent_core.defaults import DEFAULT_CURRENCY


def default_db_path() -> Path:
    return Path(user_data_dir("gpurent", appauthor=False)) / "gpurent.duckdb"


class Settings(BaseSettings):
    """gpurent's settings; every field can be set with a ``GPURENT_``-prefixed variable."""

    model_config = SettingsConfigDict(env_prefix="GPURENT_", extra="ignore")

    db: Path = Field(default_factory=default_db_path)
    """DuckDB file (GPURENT_DB)."""
    chromium: str | None = None
    """Chromium executable for Playwright (GPURENT_CHROMIUM); default: `chromium` on PATH."""
    currency: str = DEFAULT_CURRENCY
    """Display currency for costs and rankings (GPURENT_CURRENCY); native prices are kept too."""
    work_dir: Path | None = None
    """Where crawl feeds and run reports are kept (GPURENT_WORK_DIR); default: beside the DB."""
    lock_wait_s: float | None = Field(default=None, ge=0)
    """Seconds to wait while another process writes the DB (GPURENT_LOCK_WAIT_S); default:
    120 s for a load (warehouse.db.WRITER_WAIT_S), 10 s for a read command (READER_WAIT_S)."""

    lake_catalog: str | None = None
    """Use the DuckLake warehouse instead of the DuckDB file (GPURENT_LAKE_CATALOG): a libpq
    connection string for its PostgreSQL catalog, e.g. ``dbname=gpurent host=db.internal``.
    The one setting that chooses the warehouse; every command and flow then reads and
    writes the lake, and ``db`` is not used."""
    lake_data: Path | None = None
    """The lake's Parquet folder on shared storage (GPURENT_LAKE_DATA); needed by the first
    writer, which creates the lake; the catalog remembers it for everyone else."""
    storage_url: str | None = None
    """Where fanned-out crawls put their feeds (GPURENT_STORAGE_URL): a shared path or an
    fsspec URL (``s3://bucket/feeds``); see docs/deploy.md."""

    def chromium_path(self) -> str | None:
        return self.chromium or shutil.which("chromium") or shutil.which("chromium-browser")

    def feeds_dir(self) -> Path:
        return (self.work_dir or self.db.parent / "feeds").resolve()


def load_settings() -> Settings:
    return Settings()
