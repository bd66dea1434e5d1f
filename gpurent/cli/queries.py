"""Read commands over the warehouse: offers, cheapest, providers, quarantine."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gpurent import api
from gpurent.api.names import close_matches, human_age
from gpurent.cli.api_errors import as_usage_errors
from gpurent.cli.common import (
    DbOption,
    DisplayCurrencyOption,
    FormatOption,
    GpusOption,
    ProviderOption,
    reader,
    resolve_db,
)
from gpurent.cli.errors import refuse
from gpurent.cli.host_options import (
    HOST_OPTION_OF,
    HostingOption,
    InterconnectOption,
    MinCudaOption,
    MinRamPerGpuOption,
    MinReliabilityOption,
    MinVcpusPerGpuOption,
    WideOption,
    host_cell,
    host_words,
    unpublished_note,
)
from gpurent.cli.output import OutputFormat, output_console, render
from gpurent.cli.usage_options import (
    IncludeSpotOption,
    IncludeStaleOption,
    spot_note,
    stale_note,
    usage_options,
)

if TYPE_CHECKING:
    from gpurent_core.cost.usage import UsageProfile

__all__ = ["close_matches"]  # re-exported: older callers find it here

# fmt: off
OFFER_COLUMNS = [
    "provider", "offer_id", "gpu_model", "gpu_vram_gb", "gpu_form_factor", "gpu_count",
    "status", "available_count", "price", "currency", "billing_unit", "price_basis",
    "true_hourly", "true_monthly", "cost_currency", "region", "age", "url",
]
JSON_EXTRA = [
    "offer_key", "price_kind", "native_true_hourly", "native_true_monthly",
    "price_per_gpu_hour", "monthly_plan", "fx_rate", "fx_date", "observed_at", "stale", "age_s",
    "run_id", "rentable", "storage_price_unknown", "egress_price_unknown",
    # What the host publishes (gpurent_core.host.HOST_FIELDS): empty where it does not.
    "cuda_version", "driver_version", "interconnect", "nvlink_gbps", "host_reliability",
    "hosting", "max_rental_hours", "vcpus_per_gpu", "ram_gb_per_gpu", "disk_gb_per_gpu",
    "fees", "plans",
]
# fmt: on
# The table marks what the true cost leaves out or what cannot be rented as listed.
STORAGE_MARK = "*"
STORAGE_NOTE = (
    f"{STORAGE_MARK} storage price unknown: the provider's feed lists no storage fee, "
    "so the storage asked for is not in the true cost (see `gpurent explain`)."
)
YEAR_MARK = "‡"
YEAR_NOTE = (
    f"{YEAR_MARK} a year's package, paid up front: its month is a twelfth of it "
    "(`gpurent explain` shows the year's price)."
)
EGRESS_MARK = "†"
EGRESS_NOTE = (
    f"{EGRESS_MARK} traffic price unknown: neither the offer nor the provider's billing facts "
    "say what outbound traffic costs, so the --egress-gb asked for is not in the true cost."
)
QUARANTINE_WIDTH = 80


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


def age_label(row: dict[str, Any]) -> str:
    """How old the row is; a stale one (its provider's last run could not see it) says so."""
    age = str(row["age"]).removesuffix(" ago")
    return f"stale {age}" if row.get("stale") else age


def status_label(row: dict[str, Any]) -> str:
    """Status and free cards; "1/2 free" when fewer cards are free than the offer rents (not
    rentable as listed, ``gpurent_core.cost.stock.rentable``)."""
    from gpurent_core.enums import StockStatus

    free = row["available_count"]
    if free is None:
        return str(row["status"])
    if StockStatus(row["status"]).rentable and int(free) < int(row["gpu_count"]):
        return f"{row['status']} {free}/{row['gpu_count']} free"
    return f"{row['status']} {free} free"


def table_row(row: dict[str, Any]) -> dict[str, Any]:
    """A compact line for people; JSON and CSV keep every field at full precision."""
    per = "/gpu" if row["price_basis"] == "gpu" else ""
    price = row["price"]
    shown = f"{price:.4f}".rstrip("0").rstrip(".") if price.as_tuple().exponent < -4 else str(price)
    unit = UNIT_ABBREV.get(row["billing_unit"], row["billing_unit"])
    mark = f" {STORAGE_MARK}" if row.get("storage_price_unknown") else ""
    mark += f" {EGRESS_MARK}" if row.get("egress_price_unknown") else ""
    # A month that is a twelfth of a year paid up front is no monthly price: said.
    year = f" {YEAR_MARK}" if _a_year(str(row.get("monthly_plan", ""))) else ""
    # A spot, member or commitment price is another bargain than pay-as-you-go: said.
    kind = "" if row.get("price_kind", "on_demand") == "on_demand" else f" {row['price_kind']}"
    return {
        "provider": row["provider"],
        # What `gpurent explain ID` takes: rows that read alike are told apart by it.
        "id": row["offer_id"],
        # "H100 SXM 80G" where the model comes in several form factors and the offer says.
        "gpu": api.names.gpu_label(row["gpu_model"], row["gpu_vram_gb"], row["gpu_form_factor"]),
        "n": row["gpu_count"],
        "status": status_label(row),
        "price": f"{shown} {row['currency']}/{unit}{per}{kind}",
        f"true/h {row['cost_currency']}": _money(row["true_hourly"]) + mark,
        f"true/month {row['cost_currency']}": _money(row["true_monthly"]) + mark + year,
        "region": row["region"],
        "age": age_label(row),
    }


def _a_year(monthly_plan: str) -> bool:
    """The month is paid through a year's package ("0.083333 x year (commitment)")."""
    return " x year (" in monthly_plan


def storage_footnote(costed: Sequence[Any]) -> str | None:
    """The table's notes on the rows marked ``STORAGE_MARK``, ``EGRESS_MARK`` or
    ``YEAR_MARK``, when there are any."""
    notes = [
        note
        for note, unknown in (
            (STORAGE_NOTE, any(c.cost.storage_price_unknown for c in costed)),
            (EGRESS_NOTE, any(c.cost.egress_price_unknown for c in costed)),
            (YEAR_NOTE, any(_a_year(c.monthly_plan) for c in costed)),
        )
        if unknown
    ]
    return "\n".join(notes) or None


def cards_note(left_out: int, gpus: int) -> str | None:
    """The line under an answer for ``gpus`` cards that left per-card offers out because no
    free count shows that many cards on one machine (None when it left none)."""
    if left_out <= 0:
        return None
    offers = "offer" if left_out == 1 else "offers"
    return f"{left_out} per-card {offers} left out: no free count shows {gpus} cards on one machine"


def answer_footnote(
    found: api.OfferList,
    fmt: OutputFormat,
    *,
    gpus: int = 1,
    host: dict[str, Any] | None = None,
) -> str | None:
    """The table's notes: rows whose storage price is unknown, how many stale offers the
    answer left out, how many per-card offers cannot be seen to hold ``gpus`` cards, and
    how many offers do not publish a host attribute ``host`` (the host options asked)
    filters on. JSON and CSV keep stdout to their rows: the counts go to stderr."""
    counts = [
        n
        for n in (
            stale_note(found.stale_left_out),
            cards_note(found.cards_left_out, gpus),
            spot_note(getattr(found, "spot_left_out", 0)),
            unpublished_note(getattr(found, "unpublished_left_out", 0), host or {}),
            unconvertible_note(found),
        )
        if n
    ]
    if counts and fmt is not OutputFormat.TABLE:
        for line in counts:
            typer.echo(line, err=True)
        counts = []
    notes = [n for n in (storage_footnote(found), fx_footnote(found), *counts) if n]
    return "\n".join(notes) or None


def unconvertible_note(found: Any) -> str | None:
    """How many offers were left out for a currency no rate converts, and how to add one."""
    left = getattr(found, "unconvertible_left_out", 0)
    if not left:
        return None
    codes = ", ".join(found.unconvertible_currencies)
    first = found.unconvertible_currencies[0] if found.unconvertible_currencies else "XXX"
    return (
        f"{left} offer(s) left out: priced in {codes}, which no exchange rate converts "
        f'(GPURENT_FX="{first}/USD=<rate>" adds one)'
    )


def fx_footnote(costed: Sequence[Any]) -> str | None:
    """Which exchange rates the rows' costs were converted at (None when none was): a
    ranking across currencies is only as good as its rate, so the table says which."""
    rates = sorted(
        {
            f"{r.pair} {format(r.rate, 'f')} of {r.rate_date.isoformat()}"
            for c in costed
            if (r := c.cost.fx_rate) is not None
        }
    )
    return f"converted at {'; '.join(rates)} (the source: `gpurent explain`)" if rates else None


def _with_note(empty: str, footnote: str | None) -> str:
    """An empty table prints its message and no footnote: the stale count goes with it."""
    return f"{empty}\n{footnote}" if footnote else empty


def _rows(
    found: list[api.Offer],
    fmt: OutputFormat,
    host: dict[str, Any] | None = None,
    *,
    wide: bool = False,
) -> tuple[list[dict[str, Any]], list[str] | None]:
    now = datetime.now(UTC)
    rows = []
    for offer in found:
        # JSON and CSV carry fees[] and plans[]: what the README says a reader recomputes from.
        row = offer.as_row(terms=fmt is not OutputFormat.TABLE)
        row["age"] = human_age(row["observed_at"], now)
        rows.append(row)
    if fmt is OutputFormat.TABLE:
        # The host attributes filtered on (all of them with --wide) get a column of their
        # own; the others stay in JSON and CSV (the table keeps to 80 columns).
        if wide or (host and any(v is not None for v in host.values())):
            return [
                table_row(r) | {"host": host_cell(r, host or {}, every=wide)} for r in rows
            ], None
        return [table_row(r) for r in rows], None
    return rows, OFFER_COLUMNS + JSON_EXTRA


def _skipped_text(skipped: dict[str, int]) -> str:
    """'not_a_gpu_offer 1, no_public_price 2' (items that are no offer, by kind)."""
    return ", ".join(f"{kind} {n}" for kind, n in sorted(skipped.items()))


def provider_rows(db: Path, *, details: bool = False) -> list[dict[str, Any]]:
    """Known providers with their last run (``gpurent.api.providers``), as rows."""
    from gpurent_core.billing_facts import facts_for, unknown_facts

    now = datetime.now(UTC)
    rows = []
    with as_usage_errors():
        states = api.providers(db=db)
    for st in states:
        row: dict[str, Any] = {
            "provider": st.provider,
            "home": st.home,
            "needs_browser": st.needs_browser,
            "auth_env": list(st.auth_env),
            "last_status": st.last_status,
            "last_offers": st.last_offers,
            "last_quarantined": st.last_quarantined,
            "last_run_at": st.last_run_at,
            "age": human_age(st.last_run_at, now),
            "good_data_from": st.good_data_from,
            "good_data_age": human_age(st.good_data_from, now),
            "stale_offers": st.stale_offers,
            "oldest_shown_at": st.oldest_shown_at,
            # The table's one cell for both: how many are shown unconfirmed, and how old.
            "stale": (
                f"{st.stale_offers}, oldest seen {human_age(st.oldest_shown_at, now)}"
                if st.stale_offers
                else ""
            ),
            "message": st.message,
        }
        if details:
            row["skipped"] = st.last_skipped
            row["min_poll_interval_s"] = st.min_poll_interval_s
            row["billing_facts"] = [f.as_row() for f in facts_for(st.provider)]
            row["unknown_facts"] = [k.value for k in unknown_facts(st.provider)]
        rows.append(row)
    return rows


# The commands of this module; the console script (gpurent.cli.app) adds them to its app.
app = typer.Typer()

GPU_HELP = (
    "GPU model, read as a provider's name is ('4090', 'RTX 4090', 'A100 80G'; see `gpurent "
    "normalize gpu`). A form factor narrows to it ('H100 SXM', 'H100 PCIe'): offers that do "
    "not say theirs are left out."
)


@app.command()
@usage_options
def offers(
    gpu: Annotated[
        str | None,
        typer.Option(
            "--gpu",
            help=GPU_HELP,
        ),
    ] = None,
    min_vram: Annotated[
        int | None, typer.Option("--min-vram", help="Minimum VRAM per card, GB.", min=0)
    ] = None,
    provider: ProviderOption = None,
    in_stock: Annotated[
        bool,
        typer.Option(
            "--in-stock",
            help="Only offers that can be rented now: in_stock or low, with every card of "
            "the offer free when the provider gives a free count.",
        ),
    ] = False,
    limit: Annotated[
        int | None,
        typer.Option("--limit", min=1, help="Rows to show. Default: all.", show_default=False),
    ] = None,
    currency: DisplayCurrencyOption = None,
    db: DbOption = None,
    fmt: FormatOption = OutputFormat.TABLE,
    include_stale: IncludeStaleOption = False,
    min_cuda: MinCudaOption = None,
    interconnect: InterconnectOption = None,
    min_reliability: MinReliabilityOption = None,
    hosting: HostingOption = None,
    min_vcpus_per_gpu: MinVcpusPerGpuOption = None,
    min_ram_per_gpu: MinRamPerGpuOption = None,
    wide: WideOption = False,
    *,
    usage: UsageProfile,
) -> None:
    """List the latest offers of every provider (sold-out and unknown ones too).

    Offers their provider's latest run did not confirm are listed with their last good
    state and age ("stale 2h"); --in-stock leaves them out (an unconfirmed row is not in
    stock now) and says how many, unless --include-stale.

    The host options (--min-cuda, --interconnect, --min-reliability, --hosting,
    --min-vcpus-per-gpu, --min-ram-per-gpu) keep offers whose host publishes a value that
    meets them; the table then shows those values in a host column, and says how many
    offers were left out for not publishing one; --wide shows every host attribute there.
    JSON and CSV always carry every host attribute (empty where the provider does not
    publish it).
    """
    host = {
        "min_cuda": min_cuda,
        "interconnect": interconnect,
        "min_reliability": min_reliability,
        "hosting": hosting,
        "min_vcpus_per_gpu": min_vcpus_per_gpu,
        "min_ram_gb_per_gpu": min_ram_per_gpu,
    }
    with as_usage_errors(**HOST_OPTION_OF):
        name = api.names.read_gpu(gpu) if gpu is not None else None
        shown = api.offers(
            gpu=gpu,
            min_vram=min_vram,
            provider=provider,
            in_stock=in_stock,
            limit=limit,
            usage=usage,
            currency=currency,
            db=db,
            include_stale=True if include_stale else None,
            **_api_host(host),
        )
    _refuse_blind(shown)
    rows, columns = _rows(shown, fmt, host, wide=wide)
    asked = [
        *([f"--gpu {name.describe()}"] if name else []),
        *([f"--min-vram {min_vram}"] if min_vram is not None else []),
        *([f"--provider {provider.strip().lower()}"] if provider else []),
        *(["--in-stock"] if in_stock else []),
        *host_words(host),
    ]
    empty = (
        f"No latest offer matches {' '.join(asked)}. Try fewer filters, or `gpurent providers`."
        if asked
        else "No offers yet. Has a crawl run? Try `gpurent providers`."
    )
    footnote = answer_footnote(shown, fmt, host=host)
    render(
        rows,
        fmt,
        columns=columns,
        title=f"latest offers ({usage.describe()})",
        empty_message=_with_note(empty, footnote),
        footnote=footnote,
    )


@app.command()
@usage_options
def cheapest(
    min_vram: Annotated[int, typer.Option("--min-vram", help="Minimum VRAM per card, GB.", min=0)],
    gpus: GpusOption = 1,
    gpu: Annotated[str | None, typer.Option("--gpu", help=GPU_HELP)] = None,
    currency: DisplayCurrencyOption = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="Rows to show.")] = 10,
    db: DbOption = None,
    fmt: FormatOption = OutputFormat.TABLE,
    include_stale: IncludeStaleOption = False,
    include_spot: IncludeSpotOption = False,
    min_cuda: MinCudaOption = None,
    interconnect: InterconnectOption = None,
    min_reliability: MinReliabilityOption = None,
    hosting: HostingOption = None,
    min_vcpus_per_gpu: MinVcpusPerGpuOption = None,
    min_ram_per_gpu: MinRamPerGpuOption = None,
    wide: WideOption = False,
    *,
    usage: UsageProfile,
) -> None:
    """The cheapest in-stock offers with at least --min-vram GB per card, by true monthly cost.

    Only offers whose provider says they can be rented now (in_stock or low, with every
    card of the offer free when it gives a free count) are ranked: sold-out offers,
    offers of unknown stock and a machine with fewer free cards than it rents are left
    out. The storage asked for is counted on every provider, through the cheapest way it
    sells storage. Ties go to the lower true hourly cost.

    Only offers their provider's latest run confirmed are ranked: an offer a partial run
    could not read, or every offer of a provider whose latest run failed, is left out and
    counted under the table, unless --include-stale (then marked "stale" with its age).

    With --gpus N, a per-card offer counts only where its free count shows N cards on one
    machine (a card price says nothing of how many a machine has, nor does a count of a
    region's or a platform's free cards: only AutoDL, GPUShare, Lanyun and TensorDock count
    per machine); the ones left out for that are counted under the table too.

    Spot prices (interruptible: the provider may take the machine back at any time) are
    left out and counted under the table: their month is no month's rent. --include-spot
    ranks them too, their price marked "spot".

    The host options (--min-cuda, --interconnect, --min-reliability, --hosting,
    --min-vcpus-per-gpu, --min-ram-per-gpu) rank only offers whose host publishes a value
    that meets them; the offers left out for not publishing one are counted under the table.
    --wide adds a host column with every attribute the host publishes.
    """
    host = {
        "min_cuda": min_cuda,
        "interconnect": interconnect,
        "min_reliability": min_reliability,
        "hosting": hosting,
        "min_vcpus_per_gpu": min_vcpus_per_gpu,
        "min_ram_gb_per_gpu": min_ram_per_gpu,
    }
    with as_usage_errors(**HOST_OPTION_OF):
        shown = api.cheapest(
            min_vram,
            gpus=gpus,
            gpu=gpu,
            limit=limit,
            usage=usage,
            currency=currency,
            db=db,
            include_stale=include_stale,
            include_spot=include_spot,
            **_api_host(host),
        )
    _refuse_blind(shown)
    rows, columns = _rows(shown, fmt, host, wide=wide)
    footnote = answer_footnote(shown, fmt, gpus=gpus, host=host)
    render(
        rows,
        fmt,
        columns=columns,
        title=f"cheapest in-stock{_gpu_words(gpu)}, >= {min_vram} GB x {gpus} "
        f"({api.with_gpus(usage, gpus).describe()})",
        empty_message=_with_note(
            "No in-stock offer fits. Try a lower --min-vram, or crawl again.", footnote
        ),
        footnote=footnote,
    )


BLIND = (
    "no provider has a good run on record (every run failed, or none ran): nothing is known "
    "of the market yet, so no answer is given; `gpurent providers` says why, `gpurent crawl` "
    "reads it"
)


def _refuse_blind(shown: Any) -> None:
    """An empty answer from a warehouse that holds no offer at all is no answer (never
    "none fits" while blind): one line on stderr and exit 1, in every format, so a script
    reading `[]` cannot take it for an empty market."""
    if not shown and not shown.market_seen:
        refuse(BLIND, code=1)


def _api_host(host: dict[str, Any]) -> dict[str, Any]:
    """The host options as the API's keywords (enum choices as their values)."""
    return {k: getattr(v, "value", v) for k, v in host.items()}


def _gpu_words(gpu: str | None) -> str:
    """ " H100 SXM" for a title, when the answer is narrowed to a card."""
    return f" {api.names.read_gpu(gpu).describe()}" if gpu is not None else ""


@app.command()
def providers(
    details: Annotated[
        bool,
        typer.Option(
            "--details",
            help="Also show what each provider's last run skipped (by kind) and its billing "
            "facts, with source and date.",
        ),
    ] = False,
    db: DbOption = None,
    fmt: FormatOption = OutputFormat.TABLE,
) -> None:
    """Every provider gpurent knows, with its last run: status, offers, age, and why it failed.

    `last_status` is how the last run ended; `good_data_from` is when the run the data
    shown by `offers` comes from finished (the last good run); `stale` counts the offers
    still shown that the latest look did not confirm (kept by a partial run, or all of them
    after a failed one: never ranked) and how long ago the oldest of them was seen.
    """
    rows = provider_rows(resolve_db(db), details=details)
    if fmt is not OutputFormat.TABLE:
        render(rows, fmt, title="providers")
        return
    table_rows = [
        {
            k: v
            for k, v in r.items()
            if k
            not in (
                "billing_facts",
                "unknown_facts",
                "last_run_at",
                "good_data_from",
                "stale_offers",
                "oldest_shown_at",
            )
        }
        | {"auth_env": ", ".join(r["auth_env"])}
        | ({"skipped": _skipped_text(r["skipped"])} if details else {})
        for r in rows
    ]
    render(table_rows, fmt, title="providers")
    if details:
        console = output_console()
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
@usage_options
def explain(
    provider: Annotated[
        str,
        typer.Argument(
            help="The offer's id (the id column of `offers` and `cheapest`, e.g. gp-3kq7xw2), "
            "or the provider's name (as `gpurent providers`) followed by OFFER_KEY.",
            metavar="ID | PROVIDER",
        ),
    ],
    offer_key: Annotated[
        str | None,
        typer.Argument(
            help="The offer's key (the offer_key field of `offers -f json`), after PROVIDER.",
            metavar="[OFFER_KEY]",
            show_default=False,
        ),
    ] = None,
    gpus: GpusOption = 1,
    currency: DisplayCurrencyOption = None,
    db: DbOption = None,
    fmt: FormatOption = OutputFormat.TABLE,
    *,
    usage: UsageProfile,
) -> None:
    """How one offer's true cost is made: price, add-on fees, billing terms, plan chosen.

    Name the offer by its id (`gpurent explain gp-3kq7xw2`, as the answers list it) or by
    provider and key (`gpurent explain gpushare 35889`). Every line can be recomputed by
    hand. The provider's billing terms (granularity, minimum rental, when billing starts)
    come from `gpurent providers --details`; terms not on file are named, with what was
    assumed instead.
    """
    with as_usage_errors(provider="PROVIDER" if offer_key is not None else "ID", offer_id="ID"):
        answer = api.explain(provider, offer_key, gpus=gpus, usage=usage, currency=currency, db=db)
    offer = answer.offer
    if offer is None:
        typer.echo(f"{answer.provider}/{answer.offer_key} cannot supply {gpus} GPU(s).", err=True)
        raise typer.Exit(1)
    cost = offer.cost
    if fmt is OutputFormat.TABLE:
        console = output_console()
        card = api.names.gpu_label(offer.gpu_model, offer.gpu_vram_gb, offer.gpu_form_factor)
        console.print(
            f"{answer.provider} {answer.offer_key} (id {offer.offer_id}): {card}", markup=False
        )
        console.print(cost.explain(), markup=False)
        if offer.url:
            # The page (or, for an API, the endpoint) the provider lists the offer at.
            console.print(f"Listed at: {offer.url}", markup=False)
        for caveat in answer.caveats:  # stale, not rentable now: the API's own words
            console.print(caveat, markup=False)
        return
    row = offer.as_row() | {
        "explanation": list(cost.lines),
        "unknown_terms": list(cost.unknown_terms),
        "not_counted": [
            {"fee_type": n.fee.fee_type.value, "reason": n.reason} for n in cost.not_counted
        ],
    }
    render([row], fmt, title="explain")


@app.command()
def quarantine(
    provider: ProviderOption = None,
    limit: Annotated[
        int, typer.Option("--limit", min=1, help="Lines at most (--all, json, csv).")
    ] = 50,
    every_line: Annotated[
        bool,
        typer.Option(
            "--all", help="Every quarantined line, newest first, instead of each problem once."
        ),
    ] = False,
    db: DbOption = None,
    fmt: FormatOption = OutputFormat.TABLE,
) -> None:
    """What was set aside instead of loaded (unknown GPU names, unparseable prices), and why.

    The table shows each distinct problem once (provider, the reason without the item's
    own value, how many items had it, when it was last seen); --all lists the lines. JSON
    and CSV give the lines with all their fields, plus their `problem`. Lines are the
    newest --limit (50); a line on stderr says when more were left out.
    """
    from warehouse.queries import problem_of, quarantine_problems, quarantine_rows

    now = datetime.now(UTC)
    with reader(db) as con:
        name = api.names.resolve_provider(con, provider) if provider is not None else None
        if fmt is OutputFormat.TABLE and not every_line:
            problems = quarantine_problems(con, provider=name)
        else:
            # One past the limit: a list cut short says so (a program took 50 for all).
            lines = quarantine_rows(con, provider=name, limit=limit + 1).to_dicts()
    if (every_line or fmt is not OutputFormat.TABLE) and len(lines) > limit:
        lines = lines[:limit]
        typer.echo(
            f"the newest {limit} lines shown; more were set aside: --limit N shows more",
            err=True,
        )
    empty = "Nothing quarantined."
    if fmt is not OutputFormat.TABLE:
        render([r | {"problem": problem_of(r["reason"])} for r in lines], fmt, empty_message=empty)
        return
    note = "Each row is input a provider sent that gpurent would not guess about."
    if every_line:
        table = [
            {
                "provider": r["provider"],
                "offer": r["offer_key"],
                "reason": r["reason"],
                "seen": human_age(r["observed_at"], now),
            }
            for r in lines
        ]
        render(table, fmt, title="quarantine", empty_message=empty, footnote=note)
        return
    table = [
        {
            "provider": p["provider"],
            "problem": p["problem"],
            "items": p["count"],
            "last seen": human_age(p["last_seen"], now),
        }
        for p in problems
    ]
    render(
        table,
        fmt,
        title="quarantine: each problem once (--all: every line)",
        empty_message=empty,
        max_width=QUARANTINE_WIDTH,
        footnote=note,
    )
