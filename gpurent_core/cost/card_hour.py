"""The market's price of a card-hour: one definition for every figure that sets renting a
card against something else (`gpurent tco`'s buy or rent, `gpurent rank`'s median).

* **Which offers quote it**: those the caller found rentable now (confirmed by their
  provider's latest run, every card of the unit free), listed **on demand**: an offer
  listed at a spot (can be taken back), member or committed price is another bargain, not
  the price of a card. The packages an on-demand offer also sells (包日/包周/包月, stored
  as plans) are ways to rent that card, and count where they make the hours cheaper.
* **What an hour costs**: the card and its mandatory add-ons, with **no storage and no
  traffic** (an owner's disks and line are not counted either, and with storage asked for,
  offers whose storage price is unknown would come cheaper than those that publish one);
  for the **hours asked**, as they would be rented: the true monthly of that use over its
  hours (``TrueCost.per_hour_used_display``), so a month package (包月) that makes
  always-on use cheaper than the hourly rate is in it, and so is a minimum rental that makes
  a short day dearer. Per card.
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal
from fractions import Fraction

from gpurent_core.cost.usage import UsageProfile
from gpurent_core.enums import PriceKind
from gpurent_core.units import HOURS_PER_MONTH, to_fraction

HOURS_A_DAY = 24
QUOTED_KIND = PriceKind.ON_DEMAND
"""The one price kind that quotes a card-hour."""


def card_hour_profile(hours_per_day: Decimal | None = None) -> UsageProfile:
    """The use a card-hour is priced for: ``hours_per_day`` every day (one session a day),
    always on when None or 24; no storage, no traffic."""
    if hours_per_day is None or hours_per_day >= HOURS_A_DAY:
        return UsageProfile(storage_gb=Decimal(0), egress_gb_per_month=Decimal(0))
    monthly = to_fraction(hours_per_day) * HOURS_PER_MONTH / HOURS_A_DAY
    hours = (Decimal(monthly.numerator) / Decimal(monthly.denominator)).quantize(
        Decimal("0.000001"), rounding=ROUND_HALF_EVEN
    )
    return UsageProfile(
        hours_per_month=hours,
        session_hours=min(hours_per_day, hours),
        storage_gb=Decimal(0),
        egress_gb_per_month=Decimal(0),
    )


def card_hour_use(profile: UsageProfile) -> UsageProfile:
    """``profile``'s hours and sessions, with no storage and no traffic: the use a market
    figure (``rank``'s median) prices a card-hour for."""
    return UsageProfile(
        hours_per_month=profile.hours_per_month,
        session_hours=profile.session_hours,
        boot_minutes=profile.boot_minutes,
        storage_gb=Decimal(0),
        egress_gb_per_month=Decimal(0),
    )


def card_hour_rate(monthly: Decimal, profile: UsageProfile, cards: int) -> Fraction:
    """One card's hour, from the offer's true monthly for ``profile``."""
    return to_fraction(monthly) / to_fraction(profile.hours_per_month) / cards


def quotes_card_hour(price_kind: str | PriceKind) -> bool:
    return PriceKind(price_kind) is QUOTED_KIND
