"""`gpurent tco`: buy or rent. What owning a card costs over years (price, power, resale)
against renting the same card at the tracked price, and the hours a day at which the two
cost the same (``gpurent.api.tco``)."""

from __future__ import annotations

import json
import sys
from decimal import Decimal
from typing import Annotated, Any

import typer
from rich.text import Text

# Typer carries its own copy of Click: its ParamType is the one Typer's options accept.
from typer import _click as click

from gpurent import api
from gpurent.cli.api_errors import as_usage_errors
from gpurent.cli.common import DbOption, FormatOption
from gpurent.cli.output import OutputFormat, output_console, render, to_jsonable
from gpurent.cli.usage_options import NUMBER, NonNegativeDecimal
from gpurent_core.defaults import DEFAULT_CURRENCY, DEFAULT_HOST_WATTS_PER_GPU, DEFAULT_TCO_YEARS

HOURS_A_DAY = 24


class DecimalUpTo(NonNegativeDecimal):
    """A number from 0 to ``max``, read exactly (the bound where Click keeps its own)."""

    def __init__(self, most: int) -> None:
        self.max = most

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> Decimal:
        number = super().convert(value, param, ctx)
        if number > self.max:
            self.fail(f"{value} is more than {self.max}", param, ctx)
        return number


# The API's keywords -> this command's options (its refusals name the option to fix).
OPTIONS = {
    "price": "--price",
    "hours_per_day": "--hours-per-day",
    "power_price": "--power-price",
    "years": "--years",
    "resale": "--resale",
    "watts": "--watts",
    "host_watts": "--host-watts",
    "rent_price": "--rent-price",
}


def _money(value: Decimal | None) -> str:
    return "" if value is None else f"{value:,.2f}"


def _amount(value: Decimal) -> str:
    """A quantity for people, grouped, to 2 places without trailing zeros ("8,760")."""
    text = f"{value:,.2f}"
    return text.rstrip("0").rstrip(".")


def _number(value: Decimal) -> str:
    """A figure as given, without trailing zeros ("0.6", "450")."""
    text = format(value, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _rent_how(answer: api.TcoAnswer) -> str:
    if answer.rent_per_card_hour is None:
        return "no price: no confirmed in-stock offer"
    rate = f"{_money(answer.rent_per_card_hour)}/card-hour x {_amount(answer.hours)} h"
    if answer.rent_from == "given":
        return f"{rate} (--rent-price)"
    n = answer.rent_offers
    return f"{rate} (median of {n} offer{'s' if n != 1 else ''})"


def table_rows(answer: api.TcoAnswer) -> list[dict[str, str]]:
    """The answer's parts for people: money rounded (JSON and CSV keep every digit)."""
    money = answer.currency
    resale = (
        f"{_number(answer.resale_share * 100)}% of the price"
        if answer.resale_share is not None
        else ""
    )
    watts = answer.card_watts + answer.host_watts
    power = (
        f"({_number(answer.card_watts)} W card + {_number(answer.host_watts)} W host = "
        f"{_number(watts)} W) x {_amount(answer.hours)} h = {_amount(answer.energy_kwh)} kWh at "
        f"{_number(answer.power_price)}/kWh"
    )
    rows = [
        {"": "purchase", money: _money(answer.purchase_price), "how": ""},
        {"": "resale", money: _money(-answer.resale), "how": resale},
        {"": "power", money: _money(answer.power_cost), "how": power},
        {
            "": "owning",
            money: _money(answer.own_cost),
            "how": f"{_money(answer.own_per_hour)} per hour worked",
        },
        {"": "renting", money: _money(answer.rent_cost), "how": _rent_how(answer)},
    ]
    if answer.saving is not None:
        rows.append({"": "owning saves", money: _money(answer.saving), "how": ""})
    return rows


def verdict(answer: api.TcoAnswer) -> str:
    """The answer in one sentence: which is cheaper at the use given, and the break-even."""
    period = f"over {answer.years} year{'s' if answer.years != 1 else ''}"
    use = f"{_number(answer.hours_per_day)} h a day"
    if answer.rent_per_card_hour is None:
        return (
            f"No confirmed in-stock offer of {answer.gpu} in the warehouse: no rental price to "
            "compare with (no guess is made). Give one with --rent-price, or crawl again."
        )
    if answer.cheaper == "equal":
        head = f"At {use} owning and renting cost the same {period}."
    else:
        other = "renting" if answer.cheaper == "owning" else "owning"
        by = _money(abs(answer.saving)) if answer.saving is not None else ""
        head = (
            f"At {use} {answer.cheaper} is cheaper {period}, by {by} {answer.currency} "
            f"against {other}."
        )
    point = answer.break_even_hours_per_day
    if point is None:
        return (
            f"{head} Owning never catches up: an hour rented ({_money(answer.rent_per_card_hour)} "
            f"{answer.currency}) costs no more than the power of an hour owned."
        )
    if point > HOURS_A_DAY:
        return (
            f"{head} Break-even at {point:.1f} h a day: more than a day has, so renting is "
            f"cheaper at any use {period}."
        )
    return f"{head} Break-even at {point:.1f} h a day: owning is cheaper above it, renting below."


def notes(answer: api.TcoAnswer) -> list[str]:
    """What the answer assumed and left out, one line each."""
    lines = []
    if answer.rent_from == "median":
        offers = "offer" if answer.rent_offers == 1 else "offers"
        providers = "provider" if answer.rent_providers == 1 else "providers"
        lines.append(
            f"Rent: the median price of a card-hour of {answer.rent_offers} {offers} of "
            f"{answer.rent_providers} {providers} that can be rented now, as their provider's "
            f"latest run confirmed them ({_money(answer.rent_lowest)} to "
            f"{_money(answer.rent_highest)} {answer.currency}), rented "
            f"{_number(answer.hours_per_day)} h a day (a day or month package, a minimum "
            "rental counted as the offer sells them): the card and its mandatory add-ons, no "
            "storage or traffic (owning counts no disks or line either)."
        )
    if answer.watts_from == "catalog":
        lines.append(
            f"Board power {_number(answer.card_watts)} W from the GPU catalog (`gpurent gpus`); "
            "the card is counted at full power while it works, off the rest of the day."
        )
    if answer.host_watts_assumed:
        lines.append(
            f"Host {_number(answer.host_watts)} W per card is an assumption (CPU, memory, "
            "disks, fans, power-supply losses): give your own with --host-watts."
        )
    if answer.stale_left_out:
        n = answer.stale_left_out
        lines.append(
            f"{n} offer{'s' if n != 1 else ''} not confirmed by their provider's latest run "
            "left out of the median (a stale row is no price to rent at)."
        )
    if answer.other_kinds_left_out:
        n = answer.other_kinds_left_out
        lines.append(
            f"{n} spot, member or committed offer{'s' if n != 1 else ''} left out: owning is "
            "compared with renting on demand."
        )
    return lines


app = typer.Typer()


@app.command()
def tco(
    gpu: Annotated[
        str,
        typer.Option(
            "--gpu",
            help="The card, read as a provider's name is ('RTX 4090', '4090', 'H100 SXM'; "
            "see `gpurent normalize gpu`).",
        ),
    ],
    price: Annotated[
        Decimal,
        typer.Option(
            "--price", click_type=NUMBER, help="What the card costs to buy, in --currency."
        ),
    ],
    hours_per_day: Annotated[
        Decimal,
        typer.Option(
            "--hours-per-day",
            click_type=DecimalUpTo(HOURS_A_DAY),
            help="Hours a day the card works (above 0, at most 24).",
        ),
    ],
    power_price: Annotated[
        Decimal,
        typer.Option(
            "--power-price", click_type=NUMBER, help="Electricity, per kWh, in --currency."
        ),
    ],
    years: Annotated[
        int, typer.Option("--years", min=1, help="Years owning is compared with renting over.")
    ] = DEFAULT_TCO_YEARS,
    resale: Annotated[
        str | None,
        typer.Option(
            "--resale",
            help="What the card sells for at the end: an amount in --currency (4000), or a "
            "share of the price: a number below 1 (0.3) or a percentage (30%). Default: none.",
            show_default=False,
        ),
    ] = None,
    watts: Annotated[
        Decimal | None,
        typer.Option(
            "--watts",
            click_type=NUMBER,
            help="The card's board power, W. Default: the GPU catalog's (TDP).",
            show_default=False,
        ),
    ] = None,
    host_watts: Annotated[
        Decimal,
        typer.Option(
            "--host-watts",
            click_type=NUMBER,
            help="What the rest of the machine draws per card while it works, W (CPU, "
            "memory, disks, fans, power-supply losses): the default is an assumption "
            "(docs/cost.md).",
        ),
    ] = DEFAULT_HOST_WATTS_PER_GPU,
    rent_price: Annotated[
        Decimal | None,
        typer.Option(
            "--rent-price",
            click_type=NUMBER,
            help="The rental price per card-hour in --currency, by hand (the warehouse is not "
            "read). Default: the median true cost of the card's confirmed in-stock offers.",
            show_default=False,
        ),
    ] = None,
    currency: Annotated[
        str | None,
        typer.Option(
            "--currency",
            help="Currency of --price, --power-price and --rent-price, and of the answer "
            "(tracked rental prices are converted into it). Default: $GPURENT_CURRENCY, else "
            f"{DEFAULT_CURRENCY}.",
            show_default=False,
        ),
    ] = None,
    db: DbOption = None,
    fmt: FormatOption = OutputFormat.TABLE,
) -> None:
    """Buy or rent: the cost of owning a card over --years against renting it, and the
    hours a day at which the two cost the same.

    Owning: the price, less any --resale at the end, plus power while the card works: its
    board power (the GPU catalog's, or --watts) and the host's share (--host-watts, an
    assumption) for --hours-per-day, 365 days a year, at --power-price a kWh.

    Renting the same hours: at the median price of a card-hour of the card's offers that
    can be rented now on demand, as their provider's latest run confirmed them, rented those
    hours a day (as `cheapest` costs it, a day or month package where cheaper; with no
    storage or traffic: owning counts no disks or line either); stale
    rows, sold-out offers and unknown stock never count. With no
    such offer there is no rental price, and it says so; --rent-price gives one by hand.

    The break-even is the hours a day at which both cost the same over the period: owning
    is cheaper above it, renting below.
    """
    with as_usage_errors(**OPTIONS):
        answer = api.tco(
            gpu,
            price,
            hours_per_day=hours_per_day,
            power_price=power_price,
            years=years,
            resale=resale,
            watts=watts,
            host_watts=host_watts,
            rent_price=rent_price,
            currency=currency,
            db=db,
        )
    if fmt is OutputFormat.JSON:
        sys.stdout.write(
            json.dumps(to_jsonable(answer.as_row()), ensure_ascii=False, indent=2) + "\n"
        )
        return
    if fmt is OutputFormat.CSV:
        render([answer.as_row()], fmt)
        return
    console = output_console()
    years_word = "year" if answer.years == 1 else "years"
    render(
        table_rows(answer),
        fmt,
        title=f"buy or rent: {answer.gpu}, {_number(answer.hours_per_day)} h a day for "
        f"{answer.years} {years_word} ({answer.currency})",
        console=console,
    )
    style = "yellow" if answer.rent_per_card_hour is None else "bold"
    console.print(Text(verdict(answer), style=style))
    for line in notes(answer):
        console.print(Text(f"· {line}", style="dim"))
