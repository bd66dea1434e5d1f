"""`gpurent api-prices ...`: serverless APIs' per-token prices for open models (``list``) and
the refresh of OpenRouter's list (``refresh``), over ``gpurent.api.api_prices`` and
``gpurent.api.refresh_api_prices``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from gpurent import api
from gpurent.cli.api_errors import as_usage_errors
from gpurent.cli.common import DbOption, FormatOption, check_db_file, resolve_db, writable_db
from gpurent.cli.output import OutputFormat, output_console, render
from sizing.api_prices import OLD_AFTER_DAYS

# Every field, for programs (json, csv); the table keeps what a person compares.
COLUMNS = [
    "provider", "api_model", "model", "relation", "input_per_million", "output_per_million",
    "currency", "served_as", "as_of", "age_days", "old", "origin", "source", "note",
]  # fmt: skip
# What a person compares first comes first: on a narrow terminal the API's id is cut off last.
TABLE_COLUMNS = [
    "model",
    "provider",
    "in/M",
    "out/M",
    "currency",
    "served as",
    "as of",
    "api model",
]

api_prices_app = typer.Typer(
    help="Serverless APIs' per-token prices for open models: the dated, sourced table "
    "shipped with gpurent, and OpenRouter's public list (refresh).",
    no_args_is_help=True,
)


LIST_HELP = f"""API prices per million prompt and generated tokens, each with its date and source.

The table shipped with gpurent, and the list `gpurent api-prices refresh` keeps beside the
warehouse (--db). A price read more than {OLD_AFTER_DAYS} days ago is flagged old: API prices
move within months.
"""


@api_prices_app.command("list", help=LIST_HELP)
def list_(
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="Only the prices of this catalog model (`gpurent models`), or of a model of "
            "its very architecture (shown as equivalent).",
            show_default=False,
        ),
    ] = None,
    db: DbOption = None,
    fmt: FormatOption = OutputFormat.TABLE,
) -> None:
    """List the API prices (help: LIST_HELP)."""
    path = resolve_db(db)
    check_db_file(path)  # a folder, or a file that is not a warehouse: said in one line
    with as_usage_errors(model="--model", db="--db"):
        listed = api.api_prices(model, db=path)
    rows = [p.as_row() for p in listed]
    if fmt is not OutputFormat.TABLE:
        render(rows, fmt, columns=COLUMNS)
        return
    title = "API prices per million tokens" + (f" serving {model}" if model else "")
    render(
        [_table_row(r) for r in rows],
        fmt,
        columns=TABLE_COLUMNS,
        title=title,
        empty_message=f"no API price for {model}" if model else "no API price",
        footnote=_footnote(rows),
    )


def _table_row(row: dict[str, Any]) -> dict[str, Any]:
    model = row["model"] + ("\n(equivalent)" if row["relation"] == "equivalent" else "")
    age = f"{row['age_days']}d" + (" old" if row["old"] else "")
    owner, _, name = row["api_model"].rpartition("/")
    return {
        "model": model,
        "provider": row["provider"],
        "in/M": row["input_per_million"],
        "out/M": row["output_per_million"],
        "currency": row["currency"],
        "served as": row["served_as"] or "",
        "as of": f"{row['as_of'].isoformat()}\n{age}",
        # Two lines (owner, name): the id holds digits, so it never folds by itself.
        "api model": f"{owner}/\n{name}" if owner else name,
    }


def _footnote(rows: list[dict[str, Any]]) -> str | None:
    if not rows:
        return None
    old = sum(1 for r in rows if r["old"])
    said = [
        "Each price is as its source showed it on the day `as of`; sources, origins and notes: "
        "--format json or csv."
    ]
    if old:
        said.append(
            f"{old} price(s) read more than {OLD_AFTER_DAYS} days ago: marked old, check the source."
        )
    return " ".join(said)


@api_prices_app.command("refresh")
def refresh(
    db: DbOption = None,
    # A value-taking option, as every `--replay` of the command line (a bare `--replay` is
    # read as `--replay=`); here only the bundled recording can be served.
    replay: Annotated[
        str | None,
        typer.Option(
            "--replay",
            help="Read the bundled recording of the list from a local replay server instead "
            "(offline; invented values, as `gpurent crawl --replay`).",
            metavar="",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Read OpenRouter's public model list again and keep its prices beside the warehouse.

    OpenRouter lists every model it serves with its price per token in USD (no key needed).
    The prices of the models gpurent's catalog holds (`gpurent models`) are kept beside the
    warehouse (--db), dated today, replacing the list kept before. A model whose name
    reaches only another catalog model, or none, is counted and not kept; a router's
    variable price and an unreadable one are skipped. When the list cannot be read (no
    answer, an empty list, a changed layout) the list kept before stays as it was.
    """
    if replay:
        raise typer.BadParameter(
            "reads only the bundled recording: give --replay alone", param_hint="--replay"
        )
    path: Path = writable_db(db)  # the list goes beside it: refused first if it cannot
    answer = api.refresh_api_prices(path, replay=replay is not None)
    said = [
        f"Kept {len(answer.written)} OpenRouter price(s) of {answer.models_read} model(s) read, "
        f"as of {answer.fetched_at.date().isoformat()}, in {answer.path}."
    ]
    words = {"not_in_catalog": "not in the catalog", "another_model": "another model"}
    if answer.unmatched_counts:
        counts = (f"{n} {words.get(k, k)}" for k, n in answer.unmatched_counts.items())
        said.append(f"Not kept: {', '.join(counts)}.")
    if answer.skipped:
        counts = (f"{n} {k.replace('_', ' ')}" for k, n in sorted(answer.skipped.items()))
        said.append(f"Skipped in the list: {', '.join(counts)}.")
    out = output_console()
    for line in said:
        out.print(line, markup=False, highlight=False)


app = typer.Typer()
app.add_typer(api_prices_app, name="api-prices")
