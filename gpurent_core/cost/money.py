"""Money for the cost engine: rounding once to 6 places, converting currencies through the
FX table, and writing a number in an explanation.

Kept in one place so that every part of the engine rounds and converts the same way; the
conversion returns the rate it used (not a sentence), so that the explanation can name it
later, and only when it is asked for.
"""

from __future__ import annotations

from datetime import date
from decimal import ROUND_HALF_EVEN, Context, Decimal
from fractions import Fraction

from gpurent_core.fx import FxRate, FxTable, load_fx_table
from gpurent_core.units import to_fraction

MONEY_PLACES = 6
# Non-terminating counts in explanations (730/24 days) are shown to 6 significant digits.
_SHOWN_CONTEXT = Context(prec=6, rounding=ROUND_HALF_EVEN)


def quantize_money(value: Fraction | Decimal | int) -> Decimal:
    """Round to 6 decimal places, half-even, exactly (no float, no context precision limit)."""
    frac = value if isinstance(value, Fraction) else to_fraction(value)
    # round(frac * 10**6), half-even, as Fraction.__round__ does it, without building the
    # scaled Fraction (a gcd each time): this runs a dozen times for every offer costed.
    denominator = frac.denominator
    scaled, remainder = divmod(frac.numerator * 10**MONEY_PLACES, denominator)
    twice = 2 * remainder
    if twice > denominator or (twice == denominator and scaled % 2 == 1):
        scaled += 1
    return Decimal(scaled).scaleb(-MONEY_PLACES)


def _decimal_places(frac: Fraction) -> int | None:
    """Decimal places of ``frac``'s exact decimal form, or None when it does not terminate."""
    den, twos, fives = frac.denominator, 0, 0
    while den % 2 == 0:
        den, twos = den // 2, twos + 1
    while den % 5 == 0:
        den, fives = den // 5, fives + 1
    return max(twos, fives) if den == 1 else None


def num(value: Decimal | Fraction | int) -> str:
    """A number for the explanation: Decimals as given; fractions exact when they have a finite
    decimal form (without trailing zeros), else 6 significant digits."""
    if isinstance(value, Decimal | int):
        return format(value, "f")
    places = _decimal_places(value)
    if places is not None:
        scaled = value * 10**places  # an integer, by construction
        text = format(Decimal(scaled.numerator).scaleb(-places), "f")
    else:
        numerator, denominator = Decimal(value.numerator), Decimal(value.denominator)
        text = format(_SHOWN_CONTEXT.divide(numerator, denominator), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def money(value: Fraction) -> str:
    """An amount for the explanation, rounded as the totals are."""
    return format(quantize_money(value), "f")


class Converter:
    """Converts into one currency, fetching the FX table only when needed."""

    def __init__(self, fx: FxTable | None, on: date | None) -> None:
        self._fx = fx
        self._on = on

    def table(self) -> FxTable:
        if self._fx is None:
            self._fx = load_fx_table()
        return self._fx

    def rate(self, from_ccy: str, to_ccy: str) -> FxRate | None:
        if from_ccy == to_ccy:
            return None
        return self.table().rate(from_ccy, to_ccy, self._on)

    def to(self, amount: Decimal, from_ccy: str, to_ccy: str) -> tuple[Fraction, FxRate | None]:
        """Exact converted amount and the rate used (None when the currency is the same)."""
        used = self.rate(from_ccy, to_ccy)
        if used is None:
            return to_fraction(amount), None
        return to_fraction(amount) * to_fraction(used.rate), used
