"""`gpurent size --compare-api` as tables: the APIs serving the model, each offer's cost of a
request under the load given, and the one-sentence verdict (``sizing.api_comparison``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.text import Text

from gpurent.cli.output import OutputFormat, render
from sizing.api_comparison import plain_money, verdict

API_COLUMNS = ("api", "model", "serves", "in/M", "out/M", "per request", "as of", "source")
OFFER_COLUMNS = (
    "provider",
    "card",
    "per hour used",
    "req/h full",
    "use",
    "per request",
    "in/M",
    "out/M",
    "break-even use",
)


def print_rent_or_api(doc: Mapping[str, Any], console: Console) -> None:
    currency = doc["currency"]
    render(
        [_api_row(r) for r in doc["apis"]],
        OutputFormat.TABLE,
        columns=list(API_COLUMNS),
        title=f"serverless APIs serving the model (per request in {currency})",
        empty_message=doc["apis_reason"] or "no API price could be set in this currency",
        console=console,
    )
    for row in doc["apis_apart"]:
        line = f"· {row['provider']} {row['api_model']}: set apart: {row['why']}"
        console.print(Text(line, style="dim"))
    if doc["old_prices"]:
        console.print(
            Text(
                f"· {doc['old_prices']} API price(s) read over 180 days ago (marked old): "
                "check their source or run `gpurent api-prices refresh`",
                style="yellow",
            )
        )
    if doc["offers"]:
        render(
            [_offer_row(r) for r in doc["offers"]],
            OutputFormat.TABLE,
            columns=list(OFFER_COLUMNS),
            title=f"renting, at {doc['load']} (full load: {doc['full_load']}; {currency})",
            console=console,
        )
    console.print(Text(verdict(doc), style="bold"))
    if not doc["every_offer"]:
        console.print(
            Text(
                "· --objective per-token ranks every fitting offer by this cost (the cheapest "
                "a request at any use)",
                style="dim",
            )
        )


def _api_row(row: Mapping[str, Any]) -> dict[str, Any]:
    model = row["model"] if row["relation"] == "same" else f"{row['model']} (equivalent)"
    as_of = row["as_of"] + (" (old)" if row["old"] else "")
    unit = row["price_currency"]
    return {
        "api": f"{row['provider']} {row['api_model']}",
        "model": model,
        "serves": row["served_as"] or "unsaid",
        "in/M": f"{plain_money(row['input_per_million'])} {unit}",
        "out/M": f"{plain_money(row['output_per_million'])} {unit}",
        "per request": plain_money(row["per_request"]),
        "as of": as_of,
        "source": row["source"],
    }


def _offer_row(row: Mapping[str, Any]) -> dict[str, Any]:
    card = f"{row['card']} x{row['gpu_count']}"
    if "per_request" not in row:
        return {
            "provider": row["provider"],
            "card": card,
            "per hour used": _hour(row),
        } | {"per request": row["why"]}
    rentals = f" on {row['rentals']} rentals" if row["rentals"] > 1 else ""
    share = row.get("break_even_utilisation")
    return {
        "provider": row["provider"],
        "card": card,
        "per hour used": _hour(row),
        "req/h full": f"{row['capacity_per_hour']:,.0f}",
        "use": f"{row['utilisation'] * 100:.1f} %{rentals}",
        "per request": plain_money(row["per_request"]),
        "in/M": plain_money(row["per_million_input"]),
        "out/M": plain_money(row["per_million_output"]),
        "break-even use": "" if share is None else f"{share * 100:.1f} %",
    }


def _hour(row: Mapping[str, Any]) -> str:
    hour = row.get("per_hour_used")
    return "" if hour is None else f"{hour:.2f}"
