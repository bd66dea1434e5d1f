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

from gpurent.model import BillingUnit

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


def plain_decimal(value: Decimal) -> Decimal:
    """Drop trailing zeros without switching to exponent form (10.000 -> 10, 2.720 -> 2.72)."""
    if value == value.to_integral_value():
        return value.quantize(Decimal(1))
    return value.normalize()


def from_minor_units(value: int | str | Decimal, per_unit: int) -> Decimal:
    """``value`` counted in 1/``per_unit`` of a currency unit, as an exact Decimal amount.

    >>> from_minor_units(2720, 1000)
    Decimal('2.72')

    Raises ValueError for a non-positive scale, a non-numeric or non-finite value, or a
    scale that does not divide ``value`` exactly (a rounded price would be a made-up one).
    """
    if isinstance(per_unit, bool) or not isinstance(per_unit, int) or per_unit <= 0:
        raise ValueError(f"per_unit must be a positive integer, got {per_unit!r}")
    if isinstance(value, (bool, float)):
        # A float has already lost the exact value; bool is an int by accident.
        raise ValueError(
            f"minor-unit value must be int, str or Decimal, got {type(value).__name__}"
        )
    try:
        amount = Decimal(value.strip() if isinstance(value, str) else value)
    except InvalidOperation as exc:
        raise ValueError(f"not a number: {value!r}") from exc
    if not amount.is_finite():
        raise ValueError(f"not a finite number: {value!r}")
    digits = len(str(per_unit)) - 1
    if per_unit == 10**digits:
        # Powers of ten only move the decimal point: exact whatever the precision.
        return plain_decimal(amount.scaleb(-digits))
    with localcontext() as ctx:
        ctx.prec = 60
        ctx.traps[Inexact] = True
        try:
            return plain_decimal(amount / per_unit)
        except Inexact as exc:
            raise ValueError(f"{value} / {per_unit} has no exact decimal value") from exc


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
    return from_minor_units(match["value"], field.per_unit), field
