"""Provider prices published as integers in a fraction of the currency unit.

Several APIs avoid decimals by publishing an integer count of a small unit:
AutoDL ``payg_price: 2720`` is 2720/1000 CNY per hour, Lambda
``price_cents_per_hour: 129`` is 129/100 USD per hour. Converting through float
would turn 2.72 into 2.7200000000000002, so the division here is exact Decimal
arithmetic and refuses a scale that cannot divide exactly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, Inexact, InvalidOperation, localcontext

from gpurent_core.model import BillingUnit

CENTS = 100
"""1/100 of the currency unit (Lambda ``price_cents_per_hour``, Shadeform ``hourly_price``)."""
MILLI = 1_000
"""1/1000 of the currency unit (AutoDL ``payg_price``: 2720 is ¥2.72)."""
MILLICENT = 100_000
"""Matpool ``priceMillicent``: "not yuan"; 1 yuan = 100,000 millicent (inferred, PROVIDERS A3)."""

AUTODL_PRICE_SCALE = MILLI
LAMBDA_PRICE_SCALE = CENTS
MATPOOL_PRICE_SCALE = MILLICENT
PPIO_PRICE_SCALE = 100_000
"""PPIO ``price``: skypilot divides it by 100000 to get the hourly price."""


MAX_AMOUNT = Decimal(10) ** 8
"""No GPU price or fee reaches 100 million of a currency per unit; a larger number is a misread
or a placeholder, and would not fit the warehouse's fee column (DECIMAL(18,10))."""
MAX_DIGITS = 30
"""Significant digits an amount may carry: more is noise, and Decimal arithmetic would round."""
MIN_EXPONENT = -12
"""The smallest non-zero amount is 10**MIN_EXPONENT: per-second prices need 1E-8, and a
1E-403 is a misread that would also print in exponent form."""

# Exact arithmetic for amounts already bounded by MAX_AMOUNT and MAX_DIGITS: an inexact
# result is refused rather than rounded.
_EXACT_PRECISION = 60
_PLAIN_VALUE = re.compile(r"[0-9]+(?:\.[0-9]+)?|\.[0-9]+")


class AmountError(ValueError):
    """An amount that is not a price: not finite, negative, too large, or not a number at all.

    ``reason`` is one line saying which.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def checked_amount(amount: Decimal, written: object = None) -> Decimal:
    """``amount`` if it can be a price: finite, not negative, below MAX_AMOUNT, at most
    MAX_DIGITS significant digits. Raises AmountError otherwise; ``written`` is what the
    message shows (the amount itself by default)."""
    shown = amount if written is None else written
    if not amount.is_finite():
        raise AmountError(f"not a finite number: {shown!r}")
    if amount.is_signed() and amount != 0:
        raise AmountError(f"negative amount: {shown!r}")
    if amount.adjusted() >= MAX_AMOUNT.adjusted():
        raise AmountError(f"amount too large to be a price: {shown!r}")
    if len(amount.as_tuple().digits) > MAX_DIGITS:
        raise AmountError(f"more than {MAX_DIGITS} significant digits: {shown!r}")
    if amount != 0 and amount.adjusted() < MIN_EXPONENT:
        raise AmountError(f"amount too small to be a price: {shown!r}")
    return abs(amount)  # -0 is 0


def plain_decimal(value: Decimal) -> Decimal:
    """Drop trailing zeros without switching to exponent form (10.000 -> 10, 2.720 -> 2.72).

    Raises AmountError for a value that is not finite, or too long to be kept exactly.
    """
    if not value.is_finite():
        raise AmountError(f"not a finite number: {value!r}")
    with localcontext() as ctx:
        ctx.prec = _EXACT_PRECISION
        ctx.traps[Inexact] = True
        try:
            if value == value.to_integral_value():
                return value.quantize(Decimal(1))
            return value.normalize()
        except (Inexact, InvalidOperation):
            raise AmountError(f"too many digits to keep exactly: {value!r}") from None


def _minor_amount(value: object) -> Decimal:
    """``value`` as an exact, finite, non-negative Decimal count, or AmountError."""
    if isinstance(value, bool | float):
        # A float has already lost the exact value; bool is an int by accident.
        raise AmountError(
            f"minor-unit value must be int, str or Decimal, got {type(value).__name__}"
        )
    if isinstance(value, str):
        # Decimal() also takes "1_000", "١٢", "1e3", "NaN", "-5": none is how a provider
        # writes a count of minor units, so only plain digits pass.
        if not _PLAIN_VALUE.fullmatch(value.strip()):
            raise AmountError(f"not a plain non-negative number: {value!r}")
        return Decimal(value.strip())
    if isinstance(value, int | Decimal):
        return Decimal(value)
    raise AmountError(f"minor-unit value must be int, str or Decimal, got {type(value).__name__}")


def from_minor_units(value: int | str | Decimal, per_unit: int) -> Decimal:
    """``value`` counted in 1/``per_unit`` of a currency unit, as an exact Decimal amount.

    >>> from_minor_units(2720, 1000)
    Decimal('2.72')

    Raises AmountError (a ValueError, never decimal.InvalidOperation or TypeError) for a
    non-positive scale, a value that is not a number (``{}``, ``[]``, ``"abc"``, ``True``),
    not finite, negative or past MAX_AMOUNT once scaled (``1e400``), or a scale that does
    not divide ``value`` exactly (a rounded price would be a made-up one).
    """
    if isinstance(per_unit, bool) or not isinstance(per_unit, int) or per_unit <= 0:
        raise AmountError(f"per_unit must be a positive integer, got {per_unit!r}")
    amount = _minor_amount(value)
    if not amount.is_finite():
        raise AmountError(f"not a finite number: {value!r}")
    if amount.is_signed() and amount != 0:
        raise AmountError(f"negative amount: {value!r}")
    if amount.adjusted() >= MAX_AMOUNT.adjusted() + len(str(per_unit)):
        # Checked before dividing, so a huge exponent never reaches the arithmetic.
        raise AmountError(f"amount too large to be a price: {value!r}")
    with localcontext() as ctx:
        ctx.prec = _EXACT_PRECISION
        ctx.traps[Inexact] = True
        try:
            scaled = amount / per_unit
        except (Inexact, InvalidOperation):
            raise AmountError(f"{value} / {per_unit} has no exact decimal value") from None
    return checked_amount(plain_decimal(scaled), value)


@dataclass(frozen=True, slots=True)
class MinorUnitField:
    """What a known provider integer field means."""

    per_unit: int
    currency: str
    unit: BillingUnit
    basis: str | None


KNOWN_MINOR_UNIT_FIELDS: dict[str, MinorUnitField] = {
    # AutoDL market/instance/snapshot: 1/1000 CNY per hour (PROVIDERS A1). Per card or per
    # machine depends on the endpoint, so the basis is left to the spider.
    "payg_price": MinorUnitField(AUTODL_PRICE_SCALE, "CNY", BillingUnit.HOUR, None),
    "origin_pay_price": MinorUnitField(AUTODL_PRICE_SCALE, "CNY", BillingUnit.HOUR, None),
    # Lambda instance-types: cents per hour for the whole instance type (PROVIDERS B3).
    "price_cents_per_hour": MinorUnitField(LAMBDA_PRICE_SCALE, "USD", BillingUnit.HOUR, "instance"),
    # Matpool market: millicent (1/100000 CNY) per hour (PROVIDERS A3, inferred scale).
    "priceMillicent": MinorUnitField(MATPOOL_PRICE_SCALE, "CNY", BillingUnit.HOUR, None),
    "discountPriceMillicent": MinorUnitField(MATPOOL_PRICE_SCALE, "CNY", BillingUnit.HOUR, None),
}
"""Field names whose integer value has one documented meaning. PPIO's field is just ``price``,
too generic to recognise from text, so it is not listed: use ``PPIO_PRICE_SCALE``."""

_FIELD_LINE = re.compile(
    r"""^\s*["']?(?P<name>[A-Za-z_][A-Za-z0-9_]*)["']?\s*[:=]\s*["']?(?P<value>[0-9]+)["']?\s*,?\s*$"""
)


def parse_minor_unit_field(text: str) -> tuple[Decimal, MinorUnitField] | None:
    """``"payg_price": 2720`` -> (Decimal("2.72"), its field meaning); None for anything else.

    Only exact names from KNOWN_MINOR_UNIT_FIELDS count: an unknown name is not guessed at.
    """
    match = _FIELD_LINE.match(text)
    if match is None:
        return None
    field = KNOWN_MINOR_UNIT_FIELDS.get(match["name"])
    if field is None:
        return None
    # Raises AmountError for a count too large to be a price; the caller reports it.
    return from_minor_units(match["value"], field.per_unit), field
