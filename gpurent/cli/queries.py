"""Read commands over the warehouse: offers, cheapest, providers, quarantine."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any

import duckdb
import typer
from rich.console import Console

from gpurent.cli.common import (
    BootOption,
    CurrencyOption,
    DbOption,
    FormatOption,
    SessionOption,
    normalise_currency,
    require_db,
    resolve_db,
    usage_profile,
)
from gpurent.cli.output import OutputFormat, render
from gpurent.config import load_settings

# fmt: off
OFFER_COLUMNS = [
    "provider", "gpu_model", "gpu_vram_gb", "gpu_count", "status", "available_count",
    "price", "currency", "billing_unit", "price_basis", "true_hourly", "true_monthly",
    "cost_currency", "region", "age",
]
JSON_EXTRA = [
    "offer_key", "price_kind", "native_true_hourly", "native_true_monthly",
    "price_per_gpu_hour", "monthly_plan", "fx_rate", "fx_date", "observed_at", "stale", "age_s",
    "run_id", "url",
]
# fmt: on


@contextmanager
def reader(db: Path | None) -> Iterator[duckdb.DuckDBPyConnection]:
    from warehouse.db import connect

    con = connect(require_db(db), read_only=True)
    try:
        yield con
    finally:
        con.close()


def human_age(then: datetime | None, now: datetime) -> str:
    if then is None:
        return ""
    seconds = max(0, int((now - then).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return f"{seconds}s ago"


UNIT_ABBREV = {
    "second": "s",
    "minute": "min",
    "hour": "h",
    "day": "d",
    "week": "wk",
    "month": "mo",
    "year": "yr",
}


def _money(value: Decimal | None) -> str:
    return "" if value is None else f"{value:,.2f}"


def vram_label(vram_gb: int | None) -> str:
    """VRAM for tables: "?" when the name leaves it open and the offer does not state it."""
    return "?" if vram_gb is None else str(vram_gb)


def age_label(row: dict[str, Any]) -> str:
    """How old the row is; a stale one (its provider's last run could not see it) says so."""
    age = str(row["age"]).removesuffix(" ago")
    return f"stale {age}" if row.get("stale") else age


def table_row(row: dict[str, Any]) -> dict[str, Any]:
    """A compact line for people; JSON and CSV keep every field at full precision."""
    free = row["available_count"]
    per = "/gpu" if row["price_basis"] == "gpu" else ""
    price = row["price"]
    shown = f"{price:.4f}".rstrip("0").rstrip(".") if price.as_tuple().exponent < -4 else str(price)
    unit = UNIT_ABBREV.get(row["billing_unit"], row["billing_unit"])
    return {
        "provider": row["provider"],
        "gpu": f"{row['gpu_model']} {vram_label(row['gpu_vram_gb'])}G",
        "n": row["gpu_count"],
        "status": row["status"] + (f" {free} free" if free is not None else ""),
        "price": f"{shown} {row['currency']}/{unit}{per}",
        f"true/h {row['cost_currency']}": _money(row["true_hourly"]),
        f"true/month {row['cost_currency']}": _money(row["true_monthly"]),
        "region": row["region"],
        "age": age_label(row),
    }


def _rows(costed: list[Any], fmt: OutputFormat) -> tuple[list[dict[str, Any]], list[str] | None]:
    now = datetime.now(UTC)
    rows = []
    for c in costed:
        row = c.as_row()
        row["age"] = human_age(row["observed_at"], now)
        rows.append(row)
    if fmt is OutputFormat.TABLE:
        return [table_row(r) for r in rows], None
    return rows, OFFER_COLUMNS + JSON_EXTRA


def provider_rows(db: Path, *, details: bool = False) -> list[dict[str, Any]]:
    """Known providers (from the spiders) joined with their run history, if a DB exists."""
    from flows.providers import provider_infos
    from gpurent.billing_facts import facts_for, unknown_facts

    status: dict[str, dict[str, Any]] = {}
    if db.exists():
        from warehouse.queries import provider_status

        with reader(db) as con:
            status = {r["provider"]: r for r in provider_status(con).iter_rows(named=True)}
    now = datetime.now(UTC)
    rows = []
    for name, info in provider_infos().items():
        st = status.get(name, {})
        row: dict[str, Any] = {
            "provider": name,
            "home": info.home,
            "needs_browser": info.needs_browser,
            "auth_env": list(info.auth_env),
            "last_status": st.get("last_status"),
            "last_offers": st.get("last_offers"),
            "last_quarantined": st.get("last_quarantined"),
            "last_run_at": st.get("last_run_at"),
            "age": human_age(st.get("last_run_at"), now),
            "good_data_from": st.get("last_good_at"),
            "good_data_age": human_age(st.get("last_good_at"), now),
            "message": st.get("last_message"),
        }
        if details:
            row["min_poll_interval_s"] = info.min_poll_interval_s
            row["billing_facts"] = [f.as_row() for f in facts_for(name)]
            row["unknown_facts"] = [k.value for k in unknown_facts(name)]
        rows.append(row)
    return rows


HoursOption = Annotated[
    Decimal,
    typer.Option(
        "--hours-per-month", help="Hours you run the card a month (730 = always on).", min=0
    ),
]
StorageOption = Annotated[
    Decimal, typer.Option("--storage-gb", help="Storage you keep, GB (per-GB fees).", min=0)
]
EgressOption = Annotated[
    Decimal, typer.Option("--egress-gb", help="Outbound traffic a month, GB.", min=0)
]


def register(app: typer.Typer) -> None:
    @app.command()
    def offers(
        gpu: Annotated[
            str | None, typer.Option("--gpu", help="Canonical GPU model, e.g. 'RTX 4090'.")
        ] = None,
        min_vram: Annotated[
            int | None, typer.Option("--min-vram", help="Minimum VRAM per card, GB.")
        ] = None,
        provider: Annotated[
            str | None, typer.Option("--provider", help="Only this provider.")
        ] = None,
        in_stock: Annotated[
            bool, typer.Option("--in-stock", help="Only in_stock and low offers.")
        ] = False,
        currency: CurrencyOption = None,
        hours_per_month: HoursOption = Decimal(730),
        storage_gb: StorageOption = Decimal(50),
        egress_gb: EgressOption = Decimal(0),
        session_hours: SessionOption = None,
        boot_minutes: BootOption = Decimal(0),
        db: DbOption = None,
        fmt: FormatOption = OutputFormat.TABLE,
    ) -> None:
        """List the latest offers of every provider (sold-out and unknown ones too)."""
        from warehouse.costed import costed_latest_offers

        display = normalise_currency(currency) or load_settings().currency
        profile = usage_profile(
            hours_per_month, storage_gb, egress_gb, 1, session_hours, boot_minutes
        )
        with reader(db) as con:
            costed = costed_latest_offers(
                con,
                profile,
                display_currency=display,
                gpu_model=gpu,
                min_vram_gb=min_vram,
                provider=provider,
                in_stock_only=in_stock,
            )
        rows, columns = _rows(costed, fmt)
        render(
            rows,
            fmt,
            columns=columns,
            title=f"latest offers ({profile.describe()})",
            empty_message="No offers match. Has a crawl run? Try `gpurent providers`.",
        )

    @app.command()
    def cheapest(
        min_vram: Annotated[int, typer.Option("--min-vram", help="Minimum VRAM per card, GB.")],
        gpus: Annotated[int, typer.Option("--gpus", min=1, help="Cards you need.")] = 1,
        hours_per_month: HoursOption = Decimal(730),
        storage_gb: StorageOption = Decimal(50),
        egress_gb: EgressOption = Decimal(0),
        session_hours: SessionOption = None,
        boot_minutes: BootOption = Decimal(0),
        currency: CurrencyOption = None,
        limit: Annotated[int, typer.Option("--limit", min=1, help="Rows to show.")] = 10,
        db: DbOption = None,
        fmt: FormatOption = OutputFormat.TABLE,
    ) -> None:
        """The cheapest in-stock offers with at least --min-vram GB per card, by true monthly cost.

        Only offers whose provider says they can be rented now (in_stock or low) are ranked:
        sold-out offers and offers of unknown stock are left out. Ties go to the lower true
        hourly cost.
        """
        from warehouse.costed import costed_latest_offers

        display = normalise_currency(currency) or load_settings().currency
        profile = usage_profile(
            hours_per_month, storage_gb, egress_gb, gpus, session_hours, boot_minutes
        )
        with reader(db) as con:
            costed = costed_latest_offers(
                con, profile, display_currency=display, min_vram_gb=min_vram, in_stock_only=True
            )
        rows, columns = _rows(costed[:limit], fmt)
        render(
            rows,
            fmt,
            columns=columns,
            title=f"cheapest in-stock, >= {min_vram} GB x {gpus} ({profile.describe()})",
            empty_message="No in-stock offer fits. Try a lower --min-vram, or crawl again.",
        )

    @app.command()
    def providers(
        details: Annotated[
            bool,
            typer.Option(
                "--details", help="Also show each provider's billing facts, with source and date."
            ),
        ] = False,
        db: DbOption = None,
        fmt: FormatOption = OutputFormat.TABLE,
    ) -> None:
        """Every provider gpurent knows, with its last run: status, offers, age, and why it failed.

        `last_status` is how the last run ended; `good_data_from` is when the data still shown
        by `offers` and `cheapest` was fetched (the last good run).
        """
        rows = provider_rows(resolve_db(db), details=details)
        if fmt is not OutputFormat.TABLE:
            render(rows, fmt, title="providers")
            return
        table_rows = [
            {
                k: v
                for k, v in r.items()
                if k not in ("billing_facts", "unknown_facts", "last_run_at", "good_data_from")
            }
            | {"auth_env": ", ".join(r["auth_env"])}
            for r in rows
        ]
        render(table_rows, fmt, title="providers")
        if details:
            console = Console()
            for r in rows:
                # Unknown questions are listed as such: unknown is not "none".
                facts = r["billing_facts"] + [
                    {"fact": kind, "value": "unknown (no source on file)"}
                    for kind in r["unknown_facts"]
                ]
                render(
                    facts,
                    fmt,
                    columns=["fact", "value", "used_in_cost", "source", "as_of"],
                    title=f"{r['provider']}: billing facts",
                    console=console,
                )

    @app.command()
    def explain(
        provider: Annotated[str, typer.Argument(help="Provider name, as `gpurent providers`.")],
        offer_key: Annotated[
            str, typer.Argument(help="The offer's key (the offer_key field of `offers -f json`).")
        ],
        gpus: Annotated[int, typer.Option("--gpus", min=1, help="Cards you need.")] = 1,
        hours_per_month: HoursOption = Decimal(730),
        storage_gb: StorageOption = Decimal(50),
        egress_gb: EgressOption = Decimal(0),
        session_hours: SessionOption = None,
        boot_minutes: BootOption = Decimal(0),
        currency: CurrencyOption = None,
        db: DbOption = None,
        fmt: FormatOption = OutputFormat.TABLE,
    ) -> None:
        """How one offer's true cost is made: price, add-on fees, billing terms, plan chosen.

        Every line can be recomputed by hand. The provider's billing terms (granularity,
        minimum rental, when billing starts) come from `gpurent providers --details`; terms
        not on file are named, with what was assumed instead.
        """
        from warehouse.costed import cost_offer, fx_table_for
        from warehouse.queries import latest_offers

        display = normalise_currency(currency) or load_settings().currency
        profile = usage_profile(
            hours_per_month, storage_gb, egress_gb, gpus, session_hours, boot_minutes
        )
        with reader(db) as con:
            frame = latest_offers(con, provider=provider)
            rows = [r for r in frame.iter_rows(named=True) if r["offer_key"] == offer_key]
            if not rows:
                raise typer.BadParameter(
                    f"no latest offer {offer_key!r} of {provider!r}; "
                    f"list them with `gpurent offers --provider {provider} -f json`",
                    param_hint="OFFER_KEY",
                )
            costed = cost_offer(rows[0], profile, display_currency=display, fx=fx_table_for(con))
        if costed is None:
            typer.echo(f"{provider}/{offer_key} cannot supply {gpus} GPU(s).", err=True)
            raise typer.Exit(1)
        cost = costed.cost
        if fmt is OutputFormat.TABLE:
            console = Console(highlight=False)
            console.print(f"{provider} {offer_key}", markup=False)
            console.print(cost.explain(), markup=False)
            return
        row = costed.as_row() | {
            "explanation": list(cost.lines),
            "unknown_terms": list(cost.unknown_terms),
            "not_counted": [
                {"fee_type": n.fee.fee_type.value, "reason": n.reason} for n in cost.not_counted
            ],
        }
        render([row], fmt, title="explain")

    @app.command()
    def quarantine(
        provider: Annotated[
            str | None, typer.Option("--provider", help="Only this provider.")
        ] = None,
        limit: Annotated[int, typer.Option("--limit", min=1)] = 50,
        db: DbOption = None,
        fmt: FormatOption = OutputFormat.TABLE,
    ) -> None:
        """What was set aside instead of loaded (unknown GPU names, unparseable prices), and why."""
        from warehouse.queries import quarantine_rows

        with reader(db) as con:
            frame = quarantine_rows(con, provider=provider, limit=limit)
        render(frame.to_dicts(), fmt, title="quarantine", empty_message="Nothing quarantined.")
        if fmt is OutputFormat.TABLE and frame.height:
            Console().print(
                "[dim]Each row is input a provider sent that gpurent would not guess about.[/]"
            )
