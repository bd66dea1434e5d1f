"""Billing-unit arithmetic: how many hours each published unit stands for.

Exact fractions, so converting a price from one unit to another and back returns
the same Decimal. A month is 730 hours (8760 / 12), the convention most clouds use
for "monthly equivalent" figures; a year is 8760 hours (365 days).
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

from gpurent_core.enums import BillingUnit

HOURS_PER_UNIT: dict[BillingUnit, Fraction] = {
    BillingUnit.SECOND: Fraction(1, 3600),
    BillingUnit.MINUTE: Fraction(1, 60),
    BillingUnit.HOUR: Fraction(1),
    BillingUnit.DAY: Fraction(24),
    BillingUnit.WEEK: Fraction(168),
    BillingUnit.MONTH: Fraction(730),
    BillingUnit.YEAR: Fraction(8760),
}

HOURS_PER_MONTH = HOURS_PER_UNIT[BillingUnit.MONTH]


def to_fraction(value: Decimal | int | str) -> Fraction:
    return Fraction(Decimal(value))


def convert_rate(amount: Fraction, from_unit: BillingUnit, to_unit: BillingUnit) -> Fraction:
    """A rate of ``amount`` per ``from_unit`` expressed per ``to_unit`` (exact)."""
    return amount * HOURS_PER_UNIT[to_unit] / HOURS_PER_UNIT[from_unit]


def hourly_rate(amount: Decimal | Fraction, unit: BillingUnit) -> Fraction:
    """Price per hour for a price quoted per ``unit``."""
    value = amount if isinstance(amount, Fraction) else to_fraction(amount)
    return convert_rate(value, unit, BillingUnit.HOUR)
