"""Options and helpers shared by the commands (one definition, reused everywhere)."""

from __future__ import annotations

import os
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
        help="Display currency for costs and ranking (CNY, USD, EUR, or one GPURENT_FX adds); "
        "prices keep their native "
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
    """The settings, read when a command needs them (not at start-up or for `--help`)."""
    from gpurent_core.config import load_settings

    return load_settings()


def resolve_db(db: Path | None) -> Path:
    """The warehouse path the command uses (``gpurent.api.warehouse.resolve_db``)."""
    return api_warehouse.resolve_db(db)


def require_db(db: Path | None) -> Path:
    """The path of an existing warehouse, else the one line that says how to get one."""
    with as_usage_errors():
        return api_warehouse.require_db(db)


def writable_db(db: Path | None) -> Path:
    """The warehouse path for a command that writes, refused in one line (exit 2) before
    any work when no warehouse can be written there: a folder, a path under a regular file
    or in a read-only place, a file that is not a DuckDB database. A warehouse that another
    process holds passes: the writer waits for it (a crawl keeps its runs pending)."""
    path = resolve_db(db)
    if api_warehouse.lake_chosen():
        return path  # the lake is found through its catalog; the path is not used
    check_db_file(path)
    # The file, or the nearest folder it would be created in (connect() makes the rest).
    place = next(p for p in (path, *path.absolute().parents) if p.exists())
    if place is not path and not place.is_dir():
        problem = f"cannot create {path}: {place} is a file, not a folder"
    elif not os.access(place, os.W_OK | (0 if place is path else os.X_OK)):
        problem = f"cannot write {path}: {place} is read-only"  # a read-only mount: root too
    else:
        return path
    raise typer.BadParameter(f"{problem}; choose a writable --db", param_hint="--db")


def check_db_file(path: Path) -> None:
    """Refuse, in one line, a ``path`` that is a folder, a file that is not a DuckDB
    database, or another program's DuckDB database, without writing it; a missing one, an
    empty one, or one another process holds, passes."""
    with as_usage_errors():
        api_warehouse.refuse_directory(path)
    if not path.is_file() or api_warehouse.lake_chosen():
        return
    import duckdb

    from warehouse.errors import NO_EXTENSION_FETCH, unreadable_message

    try:
        con = duckdb.connect(str(path), read_only=True, config=NO_EXTENSION_FETCH)
        try:
            tables = {
                name
                for (name,) in con.execute(
                    "SELECT table_name FROM information_schema.tables"
                ).fetchall()
            }
        finally:
            con.close()
    except duckdb.IOException as exc:
        if "lock" in str(exc).lower():
            return
        unreadable = unreadable_message(str(exc), path)
        if unreadable is not None:
            raise typer.BadParameter(unreadable, param_hint="--db") from exc
        raise  # said in one line by the front door (gpurent.cli.errors)
    if tables and "schema_migrations" not in tables:
        # Another program's database: a writer would add gpurent's tables beside its own.
        raise typer.BadParameter(
            f"{path} is a DuckDB database of another program ({len(tables)} table(s), no "
            "gpurent warehouse in it): it is not written to; give a new path for gpurent",
            param_hint="--db",
        )


@contextmanager
def reader(db: Path | None) -> Iterator[duckdb.DuckDBPyConnection]:
    """The warehouse for a read command; the API's refusals inside become usage errors."""
    with as_usage_errors(), api_warehouse.open_warehouse(db) as con:
        yield con


def normalise_currency(value: str | None) -> str | None:
    """``--currency`` checked (``gpurent.api.names.resolve_currency``): upper case, or None."""
    with as_usage_errors():
        return resolve_currency(value)
