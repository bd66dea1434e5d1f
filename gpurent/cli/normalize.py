"""`gpurent normalize gpu|price|availability`: run the normalisers on text, one JSON line each.

Useful to check how a spelling seen on a provider page will be read before writing a
spider for it, and to feed a column of cells through with ``-`` (one input per line on
stdin). Every input gives exactly one line, an error included, so outputs line up with
inputs; the exit status stays 0 because an unreadable input is data, not a failure.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from typing import Annotated, Any

import typer

from gpurent_core.enums import BillingUnit

TextsArg = Annotated[
    list[str],
    typer.Argument(help="Texts to normalise, or a single '-' to read one per line from stdin."),
]


def _inputs(texts: list[str]) -> Iterator[str]:
    if texts == ["-"]:
        # Blank lines are skipped: a trailing newline or spacing between blocks is not input.
        for line in sys.stdin:
            line = line.rstrip("\r\n")
            if line.strip():
                yield line
        return
    yield from texts


def _emit(objects: Iterable[dict[str, Any]]) -> None:
    for obj in objects:
        typer.echo(json.dumps(obj, ensure_ascii=False))


def _price_json(raw: str, currency: str | None, unit: BillingUnit | None) -> dict[str, Any]:
    from gpurent_core.normalize.price import PriceParseError, parse_price

    try:
        price = parse_price(raw, default_currency=currency, default_unit=unit)
    except PriceParseError as exc:
        return {"input": raw, "error": exc.reason}
    return {
        "input": raw,
        "amount": format(price.amount, "f"),
        "currency": price.currency,
        "unit": price.unit.value,
        "basis": price.basis,
    }


def price(
    texts: TextsArg,
    currency: Annotated[
        str | None,
        typer.Option("--currency", help="Currency (ISO 4217) for prices that do not show one."),
    ] = None,
    unit: Annotated[
        BillingUnit | None,
        typer.Option("--unit", help="Billing unit for prices that do not show one."),
    ] = None,
) -> None:
    """Read prices: {"input","amount","currency","unit","basis"} or {"input","error"}."""
    if currency is not None and not (len(currency) == 3 and currency.isalpha()):
        raise typer.BadParameter("expected a 3-letter ISO 4217 code", param_hint="--currency")
    code = currency.upper() if currency else None
    _emit(_price_json(raw, code, unit) for raw in _inputs(texts))


def availability(texts: TextsArg) -> None:
    """Read stock text: {"input","status","available_count"}; unrecognised text is unknown,
    impossible text ("9 free of 8") is {"input","error"}."""
    from gpurent_core.normalize.availability import AvailabilityParseError, parse_availability

    def one(raw: str) -> dict[str, Any]:
        try:
            found = parse_availability(raw)
        except AvailabilityParseError as exc:
            return {"input": raw, "error": exc.reason}
        return {
            "input": raw,
            "status": found.status.value,
            "available_count": found.available_count,
        }

    _emit(one(raw) for raw in _inputs(texts))


def gpu(
    texts: TextsArg,
    vram_gb: Annotated[
        int | None,
        typer.Option("--vram-gb", min=1, help="VRAM per card in GB, when the name lacks it."),
    ] = None,
) -> None:
    """Resolve GPU names to the catalog identity, or say why not."""
    # Imported here so that price/availability keep working if the catalog cannot load.
    from gpurent_core.normalize.gpu import UnresolvedGpuName, identity_as_json, resolve_gpu

    def one(raw: str) -> dict[str, Any]:
        try:
            return dict(identity_as_json(raw, resolve_gpu(raw, vram_gb=vram_gb)))
        except UnresolvedGpuName as exc:
            return dict(identity_as_json(raw, exc))

    _emit(one(raw) for raw in _inputs(texts))


# The commands of this module; the console script (gpurent.cli.app) adds them to its app.
app = typer.Typer()

group = typer.Typer(
    name="normalize",
    help="Normalise GPU names, prices and stock text; prints one JSON object per input.",
    no_args_is_help=True,
)
group.command("gpu")(gpu)
group.command("price")(price)
group.command("availability")(availability)
app.add_typer(group, name="normalize")
