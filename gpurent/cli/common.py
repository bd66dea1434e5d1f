"""Options and helpers shared by the commands (one definition, reused everywhere)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    import duckdb

    from gpurent_core.config import Settings

from gpurent.api import warehouse as api_warehouse
from gpurent.api.names import resolve_currency
from gpurent.cli.api_errors import as_usage_errors
from gpurent.cli.output import OutputFormat
from gpurent_core.defaults import DEFAULT_CURRENCY

DbOption = Annotated[
    Path | None,
    typer.Option(
        "--db",
        envvar="GPURENT_DB",
        help="DuckDB file. Default: $GPURENT_DB, else gpurent.duckdb in your user data directory.",
        show_default=False,
    ),
]

FormatOption = Annotated[
    OutputFormat,
    typer.Option("--format", "-f", help="table for people; json or csv for programs."),
]

CurrencyOption = Annotated[
    str | None,
    typer.Option(
        "--currency",
        help="Currency to show costs in (an ISO 4217 code with a known rate, e.g. CNY or "
        "USD); prices keep their native currency too.",
        show_default=False,
    ),
]

# The commands that rank by cost fall back on the settings' display currency.
DisplayCurrencyOption = Annotated[
    str | None,
    typer.Option(
        "--currency",
        help="Display currency for costs and ranking (CNY or USD); prices keep their native "
        f"currency too. Default: $GPURENT_CURRENCY, else {DEFAULT_CURRENCY}.",
        show_default=False,
    ),
]


ProviderOption = Annotated[
    str | None, typer.Option("--provider", help="Only this provider (see `gpurent providers`).")
]
GpusOption = Annotated[int, typer.Option("--gpus", min=1, help="Cards you need.")]

# The replay options of the commands that fetch (crawl, watch poll), declared once.
ReplayOption = Annotated[
    str | None,
    typer.Option(
        "--replay",
        help="Fetch from the bundled recordings (or the recordings in DIR) served on "
        "127.0.0.1 instead of the real providers. `--replay` alone: bundled ones.",
        metavar="[DIR]",
        show_default=False,
    ),
]
SceneOption = Annotated[str, typer.Option("--scene", help="Replay scene to serve.")]
StepOption = Annotated[int, typer.Option("--step", min=1, help="Step of the replay scene.")]


def settings() -> Settings:
    """The settings, read when a command needs them (pydantic-settings stays out of
    start-up and `--help`)."""
    from gpurent_core.config import load_settings

    return load_settings()


def resolve_db(db: Path | None) -> Path:
    """The warehouse path the command uses (``gpurent.api.warehouse.resolve_db``)."""
    return api_warehouse.resolve_db(db)


def require_db(db: Path | None) -> Path:
    """The path of an existing warehouse, else the one line that says how to get one."""
    with as_usage_errors():
        return api_warehouse.require_db(db)


@contextmanager
def reader(db: Path | None) -> Iterator[duckdb.DuckDBPyConnection]:
    """The warehouse for a read command; the API's refusals inside become usage errors."""
    with as_usage_errors(), api_warehouse.open_warehouse(db) as con:
        yield con


def normalise_currency(value: str | None) -> str | None:
    """``--currency`` checked (``gpurent.api.names.resolve_currency``): upper case, or None."""
    with as_usage_errors():
        return resolve_currency(value)
