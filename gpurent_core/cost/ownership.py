"""Buy or rent: what owning a card costs over a period against renting it by the hour, and
the use (hours a day) at which the two cost the same.

Exact ``Fraction`` arithmetic, money in and out as ``Decimal`` (never float), rounded once,
at the end: money to 6 places as the engine rounds it (``money.quantize_money``), hours a
day to 9 places, so that the two costs at the break-even agree to well under a cent.

A year is 365 days (8760 hours, ``gpurent_core.units``). Used ``h`` hours a day for ``Y``
years, the card runs ``H = h * 365 * Y`` hours, and

* owning costs ``price - resale + (card W + host W) / 1000 * H * power price per kWh``:
  the card bought once, sold at the end, and the machine's power while the card works (off
  the rest of the day: idle draw, repairs, space and cooling beyond the host's watts are not
  counted);
* renting costs ``rate per card-hour * H``: only the hours used are paid.

They are equal at ``h* = (price - resale) / (365 * Y * (rate - kW * power price))``; above
``h*`` owning is cheaper, below it renting. When an hour rented costs no more than the
power of an hour owned, owning never catches up and there is no ``h*``. An ``h*`` above 24
is said as it is: more hours a day than a day has (renting is cheaper at any use).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from gpurent_core.cost.money import quantize_money
from gpurent_core.enums import BillingUnit
from gpurent_core.units import HOURS_PER_UNIT, to_fraction

HOURS_A_DAY = HOURS_PER_UNIT[BillingUnit.DAY]
DAYS_A_YEAR = HOURS_PER_UNIT[BillingUnit.YEAR] / HOURS_A_DAY
"""365: a year of 8760 hours (``gpurent_core.units``)."""
HOURS_PLACES = 9
"""Decimal places of an hours-a-day figure."""
_WATTS_PER_KW = 1000


class BadFigure(ValueError):
    """A figure the comparison cannot take (a price at or below 0, more than 24 hours a
    day...); ``name`` is the figure's own name, as its keyword."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        self.name = name


def _exact(name: str, value: object) -> Fraction:
    """``value`` (a Decimal or int, never a float) as an exact fraction, or BadFigure."""
    if isinstance(value, bool) or not isinstance(value, Decimal | int):
        raise BadFigure(name, f"{name} must be a Decimal (never float), got {value!r}")
    if isinstance(value, Decimal) and not value.is_finite():
        raise BadFigure(name, f"{name} must be a finite number, got {value}")
    return to_fraction(value)


def hours_figure(value: Fraction) -> Decimal:
    """Hours a day rounded to ``HOURS_PLACES`` places, half-even, exactly."""
    scale = 10**HOURS_PLACES
    return Decimal(round(value * scale)).scaleb(-HOURS_PLACES)


@dataclass(frozen=True)
class Owning:
    """Owning one card: bought at ``price``, sold at ``resale`` after ``years``, drawing
    ``card_watts`` (its board power) and ``host_watts`` (its share of the rest of the
    machine) while it works, at ``power_price`` a kWh. Money in one currency."""

    price: Decimal
    resale: Decimal
    card_watts: Decimal
    host_watts: Decimal
    power_price: Decimal
    years: int

    def __post_init__(self) -> None:
        price = _exact("price", self.price)
        resale = _exact("resale", self.resale)
        if price <= 0:
            raise BadFigure("price", f"price must be above 0, got {self.price}")
        if not 0 <= resale <= price:
            raise BadFigure(
                "resale",
                f"resale must be between 0 and the price ({self.price}), got {self.resale}",
            )
        if _exact("card_watts", self.card_watts) <= 0:
            raise BadFigure("card_watts", f"card_watts must be above 0, got {self.card_watts}")
        if _exact("host_watts", self.host_watts) < 0:
            raise BadFigure("host_watts", f"host_watts must be 0 or more, got {self.host_watts}")
        if _exact("power_price", self.power_price) < 0:
            raise BadFigure("power_price", f"power_price must be 0 or more, got {self.power_price}")
        if isinstance(self.years, bool) or not isinstance(self.years, int) or self.years < 1:
            raise BadFigure("years", f"years must be a whole number of 1 or more, got {self.years}")

    @property
    def kilowatts(self) -> Fraction:
        """The card and its share of the host, in kW."""
        return (to_fraction(self.card_watts) + to_fraction(self.host_watts)) / _WATTS_PER_KW

    @property
    def power_per_hour(self) -> Fraction:
        """What an hour of work costs in power."""
        return self.kilowatts * to_fraction(self.power_price)

    @property
    def capital(self) -> Fraction:
        """Price less resale: what owning costs before the first hour of power."""
        return to_fraction(self.price) - to_fraction(self.resale)

    def hours(self, hours_per_day: Decimal | Fraction) -> Fraction:
        """Hours the card works over the period, ``hours_per_day`` a day."""
        return _hours_a_day(hours_per_day) * DAYS_A_YEAR * self.years

    def cost(self, hours_per_day: Decimal | Fraction) -> Fraction:
        """What owning costs over the period, used ``hours_per_day`` a day (exact)."""
        return self.capital + self.power_per_hour * self.hours(hours_per_day)


def renting_cost(
    rate: Decimal | Fraction, hours_per_day: Decimal | Fraction, years: int
) -> Fraction:
    """What renting costs over ``years`` at ``rate`` a card-hour, ``hours_per_day`` a day."""
    hourly = rate if isinstance(rate, Fraction) else _exact("rent_price", rate)
    if hourly <= 0:
        raise BadFigure("rent_price", f"rent_price must be above 0, got {rate}")
    return hourly * _hours_a_day(hours_per_day) * DAYS_A_YEAR * years


def break_even(owning: Owning, rate: Decimal | Fraction) -> Fraction | None:
    """Hours a day at which owning and renting at ``rate`` cost the same over the period
    (exact); None when an hour rented costs no more than an hour's power (owning never
    catches up)."""
    hourly = rate if isinstance(rate, Fraction) else _exact("rent_price", rate)
    margin = hourly - owning.power_per_hour
    if margin <= 0:
        return None
    return owning.capital / (DAYS_A_YEAR * owning.years * margin)


def _hours_a_day(value: Decimal | Fraction) -> Fraction:
    hours = value if isinstance(value, Fraction) else _exact("hours_per_day", value)
    if not 0 < hours <= HOURS_A_DAY:
        raise BadFigure(
            "hours_per_day", f"hours_per_day must be above 0 and at most 24, got {value}"
        )
    return hours


@dataclass(frozen=True)
class Comparison:
    """Owning against renting over the period, every figure rounded once (money to 6
    places, hours a day to 9). The renting figures are None without a rate."""

    hours: Decimal
    """Hours the card works over the period."""
    energy_kwh: Decimal
    power_cost: Decimal
    own_cost: Decimal
    own_per_hour: Decimal
    """Owning's cost over its hours of work."""
    rent_cost: Decimal | None
    saving: Decimal | None
    """Renting's cost less owning's: what owning saves (below 0: what it costs more)."""
    break_even_hours_per_day: Decimal | None
    """None without a rate, or when owning never catches up (``break_even``)."""


def compare(owning: Owning, hours_per_day: Decimal, rate: Decimal | None) -> Comparison:
    """``owning`` against renting at ``rate`` a card-hour (None: no rate known)."""
    hours = owning.hours(hours_per_day)
    own = owning.cost(hours_per_day)
    rent = renting_cost(rate, hours_per_day, owning.years) if rate is not None else None
    point = break_even(owning, to_fraction(rate)) if rate is not None else None
    return Comparison(
        hours=quantize_money(hours),
        energy_kwh=quantize_money(owning.kilowatts * hours),
        power_cost=quantize_money(owning.power_per_hour * hours),
        own_cost=quantize_money(own),
        own_per_hour=quantize_money(own / hours),
        rent_cost=None if rent is None else quantize_money(rent),
        saving=None if rent is None else quantize_money(rent - own),
        break_even_hours_per_day=None if point is None else hours_figure(point),
    )
