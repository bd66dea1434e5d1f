"""Options and helpers shared by the commands (one definition, reused everywhere)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Annotated

import typer

from gpurent.cli.output import OutputFormat
from gpurent_core.config import Settings, load_settings
from gpurent_core.costing import UsageProfile

# Where `make demo` writes its warehouse, relative to the checkout it runs in.
DEMO_DB = Path("var/demo.duckdb")

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
        f"currency too. Default: $GPURENT_CURRENCY, else {Settings.model_fields['currency'].default}.",
        show_default=False,
    ),
]


def resolve_db(db: Path | None) -> Path:
    return (db or load_settings().db).expanduser()


def require_db(db: Path | None) -> Path:
    """The database path for a read command, with a friendly error when there is none yet."""
    path = resolve_db(db)
    if not path.exists() and db is None and DEMO_DB.is_file():
        # After `make demo` the data is in the checkout, not in the user data directory.
        typer.secho(
            f"no warehouse at {path}; the demo's is at {DEMO_DB}: use --db {DEMO_DB} or GPURENT_DB",
            err=True,
            fg="red",
        )
        raise typer.Exit(2)
    if not path.exists():
        typer.secho(
            f"No database at {path}. Run `gpurent crawl --replay` (offline demo) "
            "or `gpurent crawl` first, or point --db / GPURENT_DB at one.",
            err=True,
            fg="red",
        )
        raise typer.Exit(2)
    return path


def normalise_currency(value: str | None) -> str | None:
    if value is None:
        return None
    code = value.strip().upper()
    if len(code) != 3 or not code.isalpha():
        raise typer.BadParameter(f"{value!r} is not an ISO 4217 currency code (try CNY or USD)")
    from gpurent_core.fx import FX_ENV_VAR, FxError, load_fx_table

    try:
        known = load_fx_table().currencies
    except FxError as exc:
        raise typer.BadParameter(f"{FX_ENV_VAR} is not readable: {exc}") from exc
    if code not in known:
        # A currency no rate reaches would convert nothing (and a watch in it never fire).
        raise typer.BadParameter(
            f"no exchange rate for {code}: known {', '.join(sorted(known))}; "
            f"add one with {FX_ENV_VAR}={code}/CNY=<rate>"
        )
    return code


# Usage options shared by the commands that cost offers (offers, cheapest, explain, size).
SessionOption = Annotated[
    Decimal | None,
    typer.Option(
        "--session-hours",
        help=(
            "Length of one session, start to stop, in hours. Each session is billed by the "
            "provider's rules: rounded up to its billing granularity, at least its minimum "
            "rental (see `gpurent providers --details`). Default: the month's hours in one go."
        ),
        min=0,
    ),
]
BootOption = Annotated[
    Decimal,
    typer.Option(
        "--boot-minutes",
        help="Minutes from power-on to ready, paid each session where billing starts at power-on.",
        min=0,
    ),
]


def usage_profile(
    hours_per_month: Decimal,
    storage_gb: Decimal = Decimal(50),
    egress_gb: Decimal = Decimal(0),
    gpus: int = 1,
    session_hours: Decimal | None = None,
    boot_minutes: Decimal = Decimal(0),
) -> UsageProfile:
    """The usage options as a profile; a profile the engine refuses is a usage error."""
    try:
        return UsageProfile(
            hours_per_month=hours_per_month,
            storage_gb=storage_gb,
            egress_gb_per_month=egress_gb,
            gpus=gpus,
            session_hours=session_hours,
            boot_minutes=boot_minutes,
        )
    except (ValueError, TypeError) as exc:
        raise typer.BadParameter(str(exc)) from exc
