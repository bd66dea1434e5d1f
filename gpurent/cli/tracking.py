"""Tracking over time: `gpurent index show|export`, `history`, `rank` and `demo`.

All read the change history in the warehouse (warehouse.index, warehouse.trends); `demo`
writes a fresh database of synthetic history (flows.demo).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date, datetime
from decimal import Decimal
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from gpurent.cli.common import (
    CurrencyOption,
    DbOption,
    FormatOption,
    ProviderOption,
    normalise_currency,
    resolve_db,
    settings,
    writable_db,
)
from gpurent.cli.errors import refuse
from gpurent.cli.output import OutputFormat, render
from gpurent_core.defaults import DEFAULT_INDEX_METHOD
from gpurent_core.enums import IndexMethod

if TYPE_CHECKING:
    from rich.progress import TaskID

    from gpurent_core.catalog import GpuSku

SHOW_DAYS = 30
"""Days `index show` lists when not given --from."""

# The demo's defaults, repeated here so `--help` loads without importing the crawl stack.
DEFAULT_DAYS = 30
DEFAULT_POLLS_PER_DAY = 3
DEFAULT_SEED = 20261101

RANK_COLUMNS = [
    "perf_rank", "heat_rank", "gpu_model", "gpu_vram_gb", "form_factor", "figures_of",
    "mem_bandwidth_gbps", "compute_tflops", "compute_basis", "bf16_dense_tflops",
    "fp8_dense_tflops", "fp8", "interconnect", "in_stock_share", "unknown_stock", "free_cards",
    "median_true_hourly", "trend_7d", "cost_currency", "providers", "providers_in_stock",
    "offers", "stale_left_out",
]  # fmt: skip

GpuOption = Annotated[
    str | None, typer.Option("--gpu", help="Canonical GPU model, e.g. 'RTX 4090'.")
]
FromOption = Annotated[
    datetime | None,
    typer.Option(
        "--from", formats=["%Y-%m-%d"], help="First UTC day (YYYY-MM-DD).", show_default=False
    ),
]
ToOption = Annotated[
    datetime | None,
    typer.Option(
        "--to", formats=["%Y-%m-%d"], help="Last UTC day (YYYY-MM-DD).", show_default=False
    ),
]
MethodOption = Annotated[
    IndexMethod,
    typer.Option(
        "--method",
        help="Index method: gpi-3 (gpi-2 counting only offers rentable as listed, one vote "
        "per supplier), gpi-2 (per GPU, form factor, price kind and market, with quartiles) "
        "or gpi-1 (per GPU, on demand); docs/price-index.md. Each row carries it.",
    ),
]
IndexCurrencyOption = Annotated[
    str | None,
    typer.Option(
        "--currency",
        help="Index currency (CNY, USD, EUR, or one GPURENT_FX adds). Default: gpi-2 and gpi-3 "
        "give each market in its "
        "own (CN in CNY, intl in USD), gpi-1 both.",
        show_default=False,
    ),
]


class HistoryView(StrEnum):
    """What `gpurent history` lists."""

    DAY = "day"
    """One row per UTC day and provider: polls, offers, free share, prices per GPU-hour."""
    OFFER = "offer"
    """Every state of every offer: valid from / to, stock, free count, price."""
    PATTERN = "pattern"
    """When cards are usually free, by hour (Asia/Shanghai and UTC), per provider."""
    FORECAST = "forecast"
    """The restock forecast: chances within 1/6/24 h, median wait, spells behind them."""


def gpu_label(model: str, vram_gb: int | None) -> str:
    """ "H100 80G"; "H20 ?G" when the VRAM is unknown (the name leaves it open)."""
    return f"{model} {'?' if vram_gb is None else vram_gb}G"


def _day(value: datetime | None) -> date | None:
    return value.date() if value is not None else None


def _span(start: datetime | None, end: datetime | None) -> tuple[date | None, date | None]:
    """--from and --to as days; refused in one line when --from comes after --to (an empty
    answer would blame the GPU's name or the history)."""
    first, last = _day(start), _day(end)
    if first is not None and last is not None and first > last:
        raise typer.BadParameter(f"{first} is after --to {last}", param_hint="--from")
    return first, last


def index_rows(
    db: Path | None,
    *,
    gpu: str | None,
    currency: str | None,
    start: date | None,
    end: date | None,
    last_days: int | None = None,
    method: IndexMethod = DEFAULT_INDEX_METHOD,
) -> list[dict[str, Any]]:
    """Index rows of ``method`` (``gpurent.api.index``); with ``last_days`` and no
    ``start``, only that many days up to the end."""
    from gpurent import api
    from gpurent.cli.api_errors import as_usage_errors

    with as_usage_errors():
        points = api.index(
            gpu=gpu, currency=currency, start=start, end=end, last_days=last_days, db=db,
            method=method,
        )  # fmt: skip
    return [point.as_row() for point in points]


def index_columns(method: IndexMethod) -> list[str]:
    """The columns of ``method``'s rows, in export order (``gpurent.api.market``)."""
    from gpurent.api.market import index_columns as columns

    return list(columns(method))


def index_csv(rows: list[dict[str, Any]], columns: list[str]) -> str:
    """The rows as CSV text: fixed columns, "\\n" line ends, Decimals as written (their
    places fixed by the method), nothing from the time or place of the run."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_csv_cell(row.get(c)) for c in columns])
    return buf.getvalue()


def write_index_csv(
    rows: list[dict[str, Any]], out: Path, *, excel_bom: bool, columns: list[str]
) -> None:
    """CSV, UTF-8; a byte-order mark first only when asked (Excel wants one to read UTF-8)."""
    text = index_csv(rows, columns)
    out.write_bytes(text.encode("utf-8-sig" if excel_bom else "utf-8"))


DUCKDB_MAGIC = b"DUCK"
"""What a DuckDB database file holds at bytes 8-11 (its header's magic)."""


def check_out_path(out: Path, db: Path | None = None) -> None:
    """Refuse, in one line (exit 2) and before any work, an --out that cannot be written as
    given: a folder, or a file in a folder that does not exist. A mistyped folder is not
    created: the file would land somewhere the user does not look. Nor is a database
    written over, the warehouse above all (``--out`` given its path turned it into a CSV):
    an existing CSV is replaced, as an export again is meant to."""
    from gpurent.api.warehouse import resolve_db

    if out.is_dir():
        refuse(f"--out {out} is a folder: give the CSV file's path (e.g. {out / 'index.csv'})")
    folder = out.parent
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        refuse(f"--out {out}: the folder {folder} {what}; create it first or choose another path")
    warehouse = resolve_db(db).resolve()
    target = out.resolve()
    if target in (warehouse, warehouse.with_name(warehouse.name + ".wal")):
        refuse(f"--out {out} is the warehouse itself: choose another file for the CSV")
    if target.is_file() and (target.suffix == ".wal" or _is_duckdb(target)):
        refuse(f"--out {out} is a DuckDB database: it is not written over; choose a CSV path")


def _is_duckdb(path: Path) -> bool:
    try:
        with path.open("rb") as head:
            return head.read(12)[8:12] == DUCKDB_MAGIC
    except OSError:
        return False


def _csv_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, date):
        return value.isoformat()
    return str(value)


def _money(value: Decimal | None) -> str:
    return "" if value is None else f"{value:,.2f}"


def rank_rows(db: Path | None, currency: str) -> tuple[list[dict[str, Any]], int]:
    """Per GPU and form factor with an offer its provider's latest look confirmed: the
    catalog's performance beside the latest state's rental heat, and how many stale offers
    the heat left out (rule of truth 11). perf_rank orders by the dense 16-bit compute
    figure sizing uses (BF16 tensor, else FP16 tensor, else FP32 on cards without tensor
    cores), then bandwidth; a card whose compute the catalog does not know has no perf_rank
    and comes last, never ranked as if it had none."""
    from gpurent.cli.common import reader
    from warehouse.trends import rental_heat

    with reader(db) as con:
        heat = rental_heat(con, display_currency=currency, by_form_factor=True)
    rows = []
    for h in heat.rows:
        sku = rank_sku(h["gpu_model"], h["gpu_vram_gb"], h["form_factor"])
        rows.append(
            {
                "gpu_model": h["gpu_model"],
                "gpu_vram_gb": h["gpu_vram_gb"],
                "form_factor": h["form_factor"],
                "figures_of": sku.label if sku else None,
                "mem_bandwidth_gbps": sku.mem_bandwidth_gbps if sku else None,
                "compute_tflops": sku.compute_tflops if sku else None,
                "compute_basis": sku.compute_basis if sku else None,
                "bf16_dense_tflops": sku.bf16_dense_tflops if sku else None,
                "fp8_dense_tflops": sku.fp8_dense_tflops if sku else None,
                "fp8": sku.fp8 if sku else None,
                "interconnect": sku.interconnect if sku else None,
                **{
                    k: v
                    for k, v in h.items()
                    if k not in ("gpu_model", "gpu_vram_gb", "form_factor")
                },
            }
        )
    # Performance: known compute first, fastest first; unknown apart, after them, unranked.
    known = sorted(
        (r for r in rows if r["compute_tflops"] is not None),
        key=lambda r: (-r["compute_tflops"], -(r["mem_bandwidth_gbps"] or 0)),
    )
    unknown = [r for r in rows if r["compute_tflops"] is None]
    for n, r in enumerate(known, start=1):
        r["perf_rank"] = n
    for r in unknown:
        r["perf_rank"] = None
    # Heat: the scarcest first, among cards some offer's stock is known of; a card whose
    # offers all leave stock unknown is not scarce, it is unknown: unranked, last.
    told = [r for r in rows if r["in_stock_share"] is not None]
    by_heat = sorted(told, key=lambda r: (r["in_stock_share"], -r["offers"]))
    for n, r in enumerate(by_heat, start=1):
        r["heat_rank"] = n
    for r in rows:
        if r["in_stock_share"] is None:
            r["heat_rank"] = None
    return known + unknown, heat.stale_left_out


def rank_stale_note(left_out: int) -> str | None:
    """The line under `rank` that left stale offers out, worded as `cheapest` words its own
    (gpurent.cli.usage_options.stale_note); `rank` has no switch to add them: `offers` lists
    them, marked stale with their age. None when it left none out."""
    if left_out <= 0:
        return None
    offers = "offer" if left_out == 1 else "offers"
    return (
        f"{left_out} {offers} not confirmed by their provider's latest run left out "
        "(`gpurent offers` lists them, marked stale)"
    )


def rank_sku(model: str, vram_gb: int | None, form_factor: str | None) -> GpuSku | None:
    """The catalog card whose figures a rank row shows. Where the listing leaves the VRAM or
    form factor open (A100 80G: PCIe or SXM), the slowest it can be, so that no card is
    ranked above what it may be; None when one of those lacks a figure (unknown, not
    guessed)."""
    from gpurent_core.catalog import get_catalog

    candidates = [
        s
        for s in get_catalog().variants(model)
        if (vram_gb is None or s.vram_gb == vram_gb)
        and (form_factor is None or (s.form_factor or "").casefold() == form_factor.casefold())
    ]
    if len(candidates) == 1:
        return candidates[0]
    if not candidates or any(
        s.compute_tflops is None or s.mem_bandwidth_gbps is None for s in candidates
    ):
        return None
    return min(candidates, key=lambda s: (s.compute_tflops, s.mem_bandwidth_gbps))


def rank_gpu(row: dict[str, Any]) -> str:
    """The card as the rank table shows it: "H100 SXM 80G"; "A100 80G (form ?)" where the
    model comes in several form factors and the offers do not say which."""
    from gpurent.api.names import gpu_label as labelled
    from gpurent.api.names import several_form_factors

    text = labelled(row["gpu_model"], row["gpu_vram_gb"], row["form_factor"])
    if row["form_factor"] is None and several_form_factors(row["gpu_model"]):
        text += " (form ?)"
    return text


def _rank_compute(row: dict[str, Any]) -> str:
    value, basis = row["compute_tflops"], row["compute_basis"]
    if value is None:
        return "?"
    return f"{value}" + ("" if basis == "bf16" else f" ({str(basis).upper()})")


DEMO_STAGES = {
    "crawl": "crawling the recordings (providers)",
    "polls": "loading synthetic polls",
}


@contextmanager
def demo_progress(console: Console) -> Iterator[Callable[[str, int, int], None]]:
    """A rich progress display (one bar per demo stage) and the callback that feeds it."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    tasks: dict[str, TaskID] = {}
    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    ) as bars:

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bars.add_task(DEMO_STAGES.get(stage, stage), total=total)
            bars.update(tasks[stage], completed=done, total=total)

        yield update


# The commands of this module; the console script (gpurent.cli.app) adds them to its app.
app = typer.Typer()

index_app = typer.Typer(
    help="The daily GPU price index (method in docs/price-index.md).",
    no_args_is_help=True,
)
app.add_typer(index_app, name="index")


@index_app.command("show")
def index_show(
    gpu: GpuOption = None,
    currency: IndexCurrencyOption = None,
    start: FromOption = None,
    end: ToOption = None,
    method: MethodOption = DEFAULT_INDEX_METHOD,
    db: DbOption = None,
    fmt: FormatOption = OutputFormat.TABLE,
) -> None:
    """Show the index: per UTC day and GPU (gpi-2, gpi-3: and form factor, price kind, market).

    Without --from, the last 30 days of history (`index export` writes it all).
    """
    first, last = _span(start, end)
    rows = index_rows(
        db, gpu=gpu, currency=currency, start=first, end=last, last_days=SHOW_DAYS,
        method=method,
    )  # fmt: skip
    if fmt is OutputFormat.TABLE and method is not IndexMethod.GPI_1:
        render([index_cells(r) for r in rows], fmt,
               title=f"GPU price index {method.value} (per GPU-hour)",
               empty_message="No index yet: the warehouse has no good runs in that range.")  # fmt: skip
        return
    if fmt is OutputFormat.TABLE:
        shown = [
            {
                "date": r["date"],
                "gpu": gpu_label(r["gpu_model"], r["gpu_vram_gb"]),
                "index": "withheld" if r["index_price"] is None else f"{r['index_price']:,.4f}",
                "ccy": r["currency"],
                "offers": r["n_offers"],
                "providers": r["n_providers"],
                "in stock": f"{r['in_stock_share']:.0%}",
                "note": r["withheld_reason"]
                or (f"screened: {r['screened_out']}" if r["screened_out"] else ""),
            }
            for r in rows
        ]
        render(shown, fmt, title="GPU price index (per GPU-hour)",
               empty_message="No index yet: the warehouse has no good runs in that range.")  # fmt: skip
        return
    render(rows, fmt, columns=index_columns(method))


def index_cells(r: dict[str, Any]) -> dict[str, Any]:
    """One table row of a gpi-2 or gpi-3 index row: the card with its form factor ("H100 SXM 80G";
    "RTX 4090 24G (form ?)" where the offers do not state it, a row of its own)."""
    model, vram, form = r["gpu_model"], r["gpu_vram_gb"], r["gpu_form_factor"]
    size = f"{'?' if vram is None else vram}G"
    quartiles = "" if r["p25"] is None else f"{r['p25']:,.4f}-{r['p75']:,.4f}"
    return {
        "date": r["date"],
        "gpu": f"{model} {form} {size}" if form else f"{model} {size} (form ?)",
        "kind": r["price_kind"].replace("_", "-"),
        "mkt": r["market"],
        "index": "withheld" if r["index_price"] is None else f"{r['index_price']:,.4f}",
        "p25-p75": quartiles,
        "ccy": r["currency"],
        "prov": r["n_providers"],
        "stock": f"{r['in_stock_share']:.0%}",
        "note": r["withheld_reason"] or "",
    }  # the offers and the rest: --format json or csv


@index_app.command("export")
def index_export(
    out: Annotated[Path, typer.Option("--out", help="CSV file to write.")],
    start: FromOption = None,
    end: ToOption = None,
    currency: IndexCurrencyOption = None,
    gpu: GpuOption = None,
    method: MethodOption = DEFAULT_INDEX_METHOD,
    excel_bom: Annotated[
        bool, typer.Option("--excel-bom", help="Start with a UTF-8 byte-order mark (Excel).")
    ] = False,
    db: DbOption = None,
) -> None:
    """Write the index as CSV: one row per date, GPU and currency (gpi-2, gpi-3: and form
    factor, price kind, market), UTF-8, with its method_version on every row.

    The same history gives the same bytes. The folder of --out must exist: it is not
    created."""
    check_out_path(out, db)
    first, last = _span(start, end)
    rows = index_rows(db, gpu=gpu, currency=currency, start=first, end=last, method=method)
    write_index_csv(rows, out, excel_bom=excel_bom, columns=index_columns(method))
    dates = sorted({r["date"] for r in rows})
    span = f"{dates[0]} .. {dates[-1]}" if dates else "no dates"
    Console(stderr=True).print(f"wrote {len(rows)} rows ({len(dates)} dates, {span}) to {out}")


@app.command()
def history(
    gpu: Annotated[
        str,
        typer.Option(
            "--gpu",
            help="GPU model, read as a provider's name is ('4090', 'RTX 4090', 'A100 80G': a "
            "size picks that size; see `gpurent normalize gpu`).",
        ),
    ],
    vram: Annotated[
        int | None, typer.Option("--vram", min=1, help="Only this VRAM size, GB.")
    ] = None,
    provider: ProviderOption = None,
    by: Annotated[
        HistoryView, typer.Option("--by", help="day, offer, pattern or forecast.")
    ] = HistoryView.DAY,
    region: Annotated[
        str | None,
        typer.Option("--region", help="Restock forecast: only offers whose region has this."),
    ] = None,
    gpus: Annotated[
        int,
        typer.Option("--gpus", min=1, help="Restock forecast: cards needed from one offer."),
    ] = 1,
    start: FromOption = None,
    end: ToOption = None,
    currency: CurrencyOption = None,
    db: DbOption = None,
    fmt: FormatOption = OutputFormat.TABLE,
) -> None:
    """Prices and availability of a GPU over time, and when it is usually free.

    Availability counts good polls only, and only those that could tell: a poll is free
    when an offer it read was in stock; not free when it read every offer of the card
    listed and none was, or when the listing it read whole no longer named the card (a
    marketplace drops a rented card). A failed crawl is not a sold-out market, and a poll
    that kept an offer of the card stale, read its stock as unknown, or set aside an item
    it could not even name (which may have been the card) is no evidence either way. A
    pattern ("usually free 02:00-07:00") needs at least 24 polls over 7 days of a
    provider, and each hour at least 2 polls on 2 different days; below that it says "not
    enough history (N polls over D days)". Every pattern says how many polls back it.
    --by offer shows each offer's states as the polls saw them: a stretch it was kept
    stale is a row of its own, "not_confirmed".

    The restock forecast (last line; `--by forecast` for every provider) gives the chance
    the card is rentable again within 1, 6 and 24 h and the median wait, from its sold-out
    spells (confirmed polls only), by provider and hour of week; below 5 spells it says
    "not enough history". --region and --gpus narrow the forecast only; --from and --to do
    not narrow it (it reads every spell on record).
    """
    from gpurent import api
    from gpurent.cli.api_errors import as_usage_errors
    from gpurent.cli.common import reader
    from warehouse import trends

    # The name is read as `offers` reads it (suggestions for an unknown one), before the
    # warehouse is opened; a size in the name ("A100 80G") is --vram unless that is given.
    with as_usage_errors():
        name = api.names.read_gpu(gpu)
    gpu, vram = name.model, vram if vram is not None else name.vram_gb
    if name.form_factor is not None:
        # The history is kept by model and size: it cannot tell form factors apart yet.
        typer.secho(
            f"note: history does not tell form factors apart: showing every {gpu} "
            f"{'' if vram is None else f'{vram}G '}offer, not only {name.form_factor}",
            err=True,
            fg="yellow",
        )
    label = f"{gpu} {vram}G" if vram else gpu
    first, last = _span(start, end)
    code = normalise_currency(currency)  # refused before the warehouse is opened
    with reader(db) as con:
        # A provider as `offers` reads it too: a typo is refused with close names.
        provider = api.names.resolve_provider(con, provider) if provider is not None else None
        polls = trends.poll_availability(
            con, gpu_model=gpu, vram_gb=vram, provider=provider, start=first, end=last
        )
        patterns = trends.availability_patterns(polls)
        restock = restock_of(con, gpu=gpu, vram=vram, provider=provider, region=region, gpus=gpus)
        rows: list[dict[str, Any]]
        if by is HistoryView.FORECAST:
            rows = [f.as_row() for f in (restock, *restock.providers)]
        elif by is HistoryView.OFFER:
            rows = trends.offer_changes(
                con, gpu_model=gpu, vram_gb=vram, provider=provider, start=first, end=last
            ).to_dicts()
        elif by is HistoryView.DAY:
            rows = trends.daily_history(
                con,
                gpu_model=gpu,
                vram_gb=vram,
                provider=provider,
                start=first,
                end=last,
                currency=code,
            )
        else:
            rows = [
                {
                    "provider": p.provider,
                    "timezone": p.timezone,
                    "polls": p.polls,
                    "days": p.days,
                    "enough_history": p.enough_history,
                    "usually_free": p.free_hours,
                    "summary": p.summary(label),
                    "free_share_by_hour": list(p.by_hour),
                    "free_share_by_hour_of_week": list(p.by_hour_of_week),
                    "polls_by_hour": list(p.polls_by_hour),
                    "days_by_hour": list(p.days_by_hour),
                    "polls_by_hour_of_week": list(p.polls_by_hour_of_week),
                    "days_by_hour_of_week": list(p.days_by_hour_of_week),
                }
                for p in patterns
            ]
    if fmt is not OutputFormat.TABLE:
        render(rows, fmt)
        return
    if by is HistoryView.PATTERN:
        rows = [{k: v for k, v in r.items() if not k.endswith(("_by_hour", "_by_hour_of_week"))}
                for r in rows]  # fmt: skip
    if by is HistoryView.FORECAST:
        rows = [forecast_cells(f) for f in (restock, *restock.providers)]
    render(rows, fmt, title=f"{label}: history by {by.value}",
           empty_message=f"No history of {label} yet (check the name with `gpurent gpus`).")  # fmt: skip
    console = Console()
    for p in patterns:
        if by not in (HistoryView.PATTERN, HistoryView.FORECAST):
            console.print(p.summary(label), markup=False, highlight=False)
    console.print(forecast_sentence(restock, label), markup=False, highlight=False)


def restock_of(
    con: Any, *, gpu: str, vram: int | None, provider: str | None, region: str | None, gpus: int
) -> Any:
    """The restock forecast (``gpurent.api.RestockForecast``) on an open connection."""
    from datetime import UTC

    from gpurent.api.forecast import forecast_from
    from gpurent_core.forecast import spells_from_polls
    from warehouse.forecast import card_polls

    polls = card_polls(
        con, gpu_model=gpu, vram_gb=vram, regions=(region,) if region else (), gpus=gpus
    )
    return forecast_from(
        polls, spells_from_polls(polls), gpu_model=gpu, vram_gb=vram, provider=provider,
        region=region, gpus=gpus, at=datetime.now(UTC),
    )  # fmt: skip


def _pct(value: float | None, spells: int) -> str:
    return f"- ({spells})" if value is None else f"{value:.0%} ({spells})"


def forecast_cells(f: Any) -> dict[str, Any]:
    """One table row of the restock forecast: each chance with its spells behind it."""
    wait = "-"
    if f.enough_history:
        wait = f"over {f.longest_h:g} h" if f.median_wait_h is None else f"{f.median_wait_h:g} h"
    return {
        "provider": f.provider or "all providers",
        "now": f.state_now.replace("_", " "),
        "1 h": _pct(f.within_1h, f.spells_1h),
        "6 h": _pct(f.within_6h, f.spells_6h),
        "24 h": _pct(f.within_24h, f.spells_24h),
        "median wait": wait,
        "spells": f.spells if f.provider is None else f"{f.provider_spells} of {f.spells}",
        "note": "" if f.enough_history else "not enough history",
    }


def forecast_sentence(f: Any, label: str) -> str:
    """ "Restock forecast for H100 80G: 35% within 1 h, ...; expected wait about 3 h, from
    41 sold-out spells" (or "not enough history (...)")."""
    where = f" at {f.provider}" if f.provider else ""
    if not f.enough_history:
        return f"Restock forecast for {label}{where}: {f.summary}"
    now = ""
    if f.state_now == "sold_out" and f.sold_out_h:
        now = f" (sold out for {f.sold_out_h:g} h)"
    return f"Restock forecast for {label}{where}{now}: {f.chances}; {f.summary}"


@app.command()
def rank(
    currency: CurrencyOption = None,
    db: DbOption = None,
    fmt: FormatOption = OutputFormat.TABLE,
) -> None:
    """Two rankings side by side: performance (catalog) and rental heat (latest state).

    One row per card and form factor listed (H100 PCIe and SXM apart). perf_rank orders by
    the dense 16-bit TFLOPS sizing uses (BF16, else FP16, else FP32 without tensor cores);
    a card the catalog has no compute figure for is "?" and comes last. heat_rank puts the
    scarcest GPU first (lowest share in stock of the offers whose stock is known; offers
    of unknown stock are counted apart, unknown_stock, never as sold out: a card none of
    whose offers says is "?" and comes last). free_cards are the cards surely
    free: machines' free counts added up, a count of a pool (a region's, a data centre's, a
    platform's, which several offers repeat) once per provider and region.
    median_true_hourly is the median price of a card-hour, as `tco` prices renting: offers
    that can be rented now on demand (spot, member and committed prices left out), always
    on as each sells it (a month package where cheaper), no storage or traffic; trend_7d
    is its change over seven days.

    Only offers their provider's latest run confirmed count: stale ones (that run failed or
    could not read them) are left out and counted under the table (on stderr with --format
    json or csv, where each row has its stale_left_out).
    """
    display = normalise_currency(currency) or settings().currency
    rows, stale = rank_rows(db, display)
    note = rank_stale_note(stale)
    if fmt is not OutputFormat.TABLE:
        # JSON and CSV keep stdout to their rows, as `cheapest` does: the count goes to stderr.
        if note:
            typer.echo(note, err=True)
        render(rows, fmt, columns=RANK_COLUMNS)
        return
    empty = (
        "No offer confirmed by its provider's latest run to rank."
        if stale
        else "No offers yet: run `gpurent crawl --replay` or `gpurent demo`."
    )
    # An empty table prints its message and no footnote: the stale count goes with it.
    render(rank_table(rows, display), fmt, title="performance vs rental heat",
           empty_message=f"{empty}\n{note}" if note else empty, footnote=note)  # fmt: skip


def _share(share: Decimal | float | None, unknown: int) -> str:
    """The share in stock of the offers whose stock is known, with how many are not
    ("40% (+3 ?)"); "?" when none is."""
    if share is None:
        return "?"
    return f"{share:.0%}" + (f" (+{unknown} ?)" if unknown else "")


def rank_table(rows: list[dict[str, Any]], display: str) -> list[dict[str, Any]]:
    """The rank rows as the table shows them."""
    return [
        {
            "perf": "?" if r["perf_rank"] is None else r["perf_rank"],
            "heat": "?" if r["heat_rank"] is None else r["heat_rank"],
            "gpu": rank_gpu(r),
            "16-bit TF": _rank_compute(r),
            "GB/s": "?" if r["mem_bandwidth_gbps"] is None else r["mem_bandwidth_gbps"],
            "FP8": {True: "yes", False: "no", None: ""}[r["fp8"]],
            "in stock": _share(r["in_stock_share"], r["unknown_stock"]),
            "free": r["free_cards"],
            f"{display}/h": _money(r["median_true_hourly"]),
            "7d": "" if r["trend_7d"] is None else f"{r['trend_7d']:+.1%}",
            "prov": r["providers"],
        }
        for r in rows
    ]


@app.command()
def demo(
    days: Annotated[int, typer.Option("--days", min=1, help="Days of history.")] = DEFAULT_DAYS,
    polls_per_day: Annotated[
        int, typer.Option("--polls-per-day", min=1, max=24, help="Polls a day.")
    ] = DEFAULT_POLLS_PER_DAY,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the variations.")] = DEFAULT_SEED,
    db: DbOption = None,
) -> None:
    """Build a month of SYNTHETIC history in a fresh database, so index, history and rank
    show something on first run.

    The offers are the bundled recordings, crawled once for real; how they move over
    the past days (price drift, stock flips, the odd failed run) is generated, seeded.
    Today's poll is the recordings as crawled. Never mix this with real data: the
    database must not exist yet.
    """
    from flows.demo import DemoError, build_demo_history

    path = resolve_db(db)
    if path.exists():  # refused before the crawl and its first line: one line, exit 2
        refuse(f"{path} already exists: the demo builds a fresh database")
    writable_db(path)
    console = Console(stderr=True)
    console.print(f"crawling the bundled recordings, then {days} days of synthetic polls ...")
    try:
        with demo_progress(console) as progress:
            summary = build_demo_history(
                path, days=days, polls_per_day=polls_per_day, seed=seed, progress=progress
            )
    except DemoError as exc:
        refuse(str(exc))
    console.print(
        f"demo database {summary.db}: {len(summary.providers)} providers "
        f"({', '.join(summary.providers)}), {summary.first_day} .. {summary.last_day}, "
        f"{summary.runs} runs ({summary.failed_runs} synthetic failures), "
        f"{summary.offers_per_poll} offers a poll. The history is synthetic.",
        markup=False,
        highlight=False,
    )
