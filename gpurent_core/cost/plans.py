"""The ways of renting an offer for the month, and what each costs.

Candidates are the headline price (always: it is what the row is, even if it is a spot or
member price) and the ``plans`` of kind ``on_demand`` or ``commitment`` (``member`` too with
``include_member=True``; ``spot`` plans only beside a spot headline, the same bargain):

* a price per second/minute/hour is metered: rate x hours billed (``metering``), except a
  ``commitment`` rate per second/minute/hour (a reserved rate, e.g. RunPod's one-month
  price) which is paid for all 730 h of the month;
* a day/week/month package is bought whole, as many as the use needs: one stretch of use
  (no sessions given) fills them back to back, ceil(hours / hours in unit); sessions are
  taken as spread evenly over the month, so a package holds only the sessions that start
  and end within it (``packages``);
* a year package is pro-rated to a month: price / 12 (a year covers any monthly hours; the
  minimum picks it only when the hours make it worthwhile).

The minimum wins; ties go to the earlier candidate (headline first, then plans in order).
Plans in another currency are converted into the offer's currency through the FX table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Literal

from gpurent_core.cost.metering import METERED, Metered
from gpurent_core.cost.money import Converter
from gpurent_core.cost.offer import CostInput
from gpurent_core.cost.usage import UsageProfile
from gpurent_core.enums import BillingUnit, PriceBasis, PriceKind
from gpurent_core.fx import FxRate
from gpurent_core.units import HOURS_PER_MONTH, HOURS_PER_UNIT, to_fraction

Way = Literal["metered", "reserved", "year", "packages"]
"""How the units of a candidate were found: metered hours, a reserved rate paid for all
730 h, a year pro-rated to 1/12, or whole packages."""


@dataclass(frozen=True)
class ChosenPlan:
    """The way of renting that gives the month its base cost."""

    source: Literal["headline", "plan"]
    billing_unit: BillingUnit
    price_kind: PriceKind
    price_basis: PriceBasis
    price: Decimal
    """As published, in ``currency``, per billing unit and per basis."""
    currency: str
    offer_price: Decimal
    """Per billing unit for the whole offer, in the offer's currency (x gpu_count if per GPU)."""
    units: Decimal
    """Billing units paid for in the month: hours/seconds metered, whole packages, 1/12 year."""
    cost: Decimal
    """offer_price x units, in the offer's currency."""


@dataclass(frozen=True)
class Packages:
    """Whole packages bought for the month, and how the count was found."""

    count: int
    used: Fraction
    """Hours used in the month."""
    unit_hours: Fraction
    session: Fraction
    sessions: int | None = None
    """None: one stretch of use, packages back to back."""
    per_session: int | None = None
    """Packages each session takes, when a session is longer than one package."""
    held: int | None = None
    """Sessions one package holds, when a session fits in one."""


@dataclass(frozen=True)
class Candidate:
    """One way of renting the month: a price, and the units of it the month pays for."""

    source: Literal["headline", "plan"]
    unit: BillingUnit
    kind: PriceKind
    basis: PriceBasis
    price: Decimal
    currency: str
    native: Fraction
    """``price`` in the offer's currency."""
    fx: FxRate | None
    offer_price: Fraction
    units: Fraction
    way: Way
    packages: Packages | None = None

    @property
    def cost(self) -> Fraction:
        return self.offer_price * self.units


def candidate(
    source: Literal["headline", "plan"],
    price: Decimal,
    currency: str,
    unit: BillingUnit,
    basis: PriceBasis,
    kind: PriceKind,
    inp: CostInput,
    profile: UsageProfile,
    metered: Metered,
    conv: Converter,
) -> Candidate:
    """The month rented at ``price`` per ``unit`` (rules: module docstring)."""
    native, fx = conv.to(price, currency, inp.currency)
    offer_price = native * (inp.gpu_count if basis is PriceBasis.GPU else 1)
    unit_hours = HOURS_PER_UNIT[unit]
    held: Packages | None = None
    way: Way
    if unit in METERED:
        if kind is PriceKind.COMMITMENT:
            units, way = HOURS_PER_MONTH / unit_hours, "reserved"
        else:
            units, way = metered.hours / unit_hours, "metered"
    elif unit is BillingUnit.YEAR:
        units, way = HOURS_PER_MONTH / unit_hours, "year"
    else:
        held = packages(profile, unit_hours)
        units, way = Fraction(held.count), "packages"
    return Candidate(
        source, unit, kind, basis, price, currency, native, fx, offer_price, units, way, held
    )


def packages(profile: UsageProfile, unit_hours: Fraction) -> Packages:
    """Whole day/week/month packages that hold the profile's use.

    One stretch of use (no sessions given) fills packages back to back. Sessions are spread
    evenly over the month (a session starts every 730 h / sessions): a package bought at a
    session's start holds that session and every later one that ends before it runs out,
    and a session longer than a package takes several. Never fewer packages than back to
    back, never more than cover the whole month.
    """
    used = to_fraction(profile.hours_per_month)
    back_to_back = math.ceil(used / unit_hours)
    session = to_fraction(profile.session_hours) if profile.session_hours is not None else used
    if session >= used:
        return Packages(back_to_back, used, unit_hours, session)
    sessions = math.ceil(used / session)
    per_session: int | None = None
    held: int | None = None
    if session > unit_hours:
        per_session = math.ceil(session / unit_hours)
        count = sessions * per_session
    else:
        gap = HOURS_PER_MONTH / sessions
        held = math.floor((unit_hours - session) / gap) + 1
        count = math.ceil(sessions / held)
    count = max(back_to_back, min(count, math.ceil(HOURS_PER_MONTH / unit_hours)))
    return Packages(count, used, unit_hours, session, sessions, per_session, held)


def plan_allowed(kind: PriceKind, include_member: bool, headline: PriceKind) -> bool:
    """Whether a plan of ``kind`` is a way of renting the month of an offer whose headline
    is of kind ``headline``: spot plans only for a spot headline (Vultr's spot rate capped
    at a month is the same bargain as the spot rate itself; beside an on-demand rate it is
    another one)."""
    if kind is PriceKind.SPOT:
        return headline is PriceKind.SPOT
    return kind in (PriceKind.ON_DEMAND, PriceKind.COMMITMENT) or (
        include_member and kind is PriceKind.MEMBER
    )


def candidates(
    inp: CostInput,
    profile: UsageProfile,
    metered: Metered,
    conv: Converter,
    include_member: bool,
) -> list[Candidate]:
    """The headline price, then every plan allowed, in the offer's order."""
    out = [
        candidate(
            "headline",
            inp.price,
            inp.currency,
            inp.billing_unit,
            inp.price_basis,
            inp.price_kind,
            inp,
            profile,
            metered,
            conv,
        )
    ]
    for plan in inp.plans:
        if plan_allowed(plan.price_kind, include_member, inp.price_kind):
            out.append(
                candidate(
                    "plan",
                    plan.price,
                    plan.currency,
                    plan.billing_unit,
                    plan.price_basis,
                    plan.price_kind,
                    inp,
                    profile,
                    metered,
                    conv,
                )
            )
    return out


def cheapest(options: list[Candidate]) -> Candidate:
    """The candidate of the lowest month's cost; ties go to the earlier one."""
    return min(enumerate(options), key=lambda pair: (pair[1].cost, pair[0]))[1]
