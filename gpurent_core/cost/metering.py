"""The hours a metered price (per second, minute or hour) is paid for in a month.

Hours billed follow the provider's billing terms (``CostInput.terms``, from the billing
facts) and the profile's sessions: the month's hours are ``hours_per_month / session_hours``
sessions (one session when the profile does not say); each session is billed for its
length, plus ``boot_minutes`` unless the provider starts billing only when the instance is
ready, rounded up to the billing granularity, and at least the minimum rental. Unknown terms
meter exactly, with no minimum, and bill the boot (the explanation says which terms were
unknown). Session counts may be fractional: they are an average, not a calendar.

They depend only on the profile and the terms, so the engine works them out once per offer
and every metered way of renting it reads the same figure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from gpurent_core.billing_facts import BillingStart, BillingTerms
from gpurent_core.cost.usage import UsageProfile
from gpurent_core.enums import BillingUnit
from gpurent_core.units import to_fraction

METERED = frozenset({BillingUnit.SECOND, BillingUnit.MINUTE, BillingUnit.HOUR})
"""Billing units paid for by the time used (the others are bought whole)."""

UNKNOWN_START = "when billing starts (boot counted)"
UNKNOWN_GRANULARITY = "billing granularity (metered exactly)"
UNKNOWN_MINIMUM = "minimum rental (none assumed)"


@dataclass(frozen=True)
class Metered:
    """Hours a metered price is paid for in the month, and each step that gave them."""

    hours: Fraction
    """Hours billed in the month: sessions x per_session."""
    used: Fraction
    """Hours the profile uses in the month."""
    sessions: Fraction
    session: Fraction
    """Length of one session as used (the month's hours when no sessions are given)."""
    per_session: Fraction
    """Hours billed per session, after boot, rounding and the minimum."""
    boot: Fraction
    """Boot hours of each session (0: none); billed unless ``boot_free``."""
    boot_free: bool
    granularity_s: int | None
    rounded_to: Fraction | None
    """Per-session hours once rounded up to the granularity, when rounding changed them."""
    raised_to_minimum: Fraction | None
    """The minimum rental the session was raised to, when it was."""
    unknown: tuple[str, ...]
    """Billing terms that were unknown and so assumed (exact metering, boot billed)."""


@lru_cache(maxsize=256)
def metered_hours(profile: UsageProfile, terms: BillingTerms) -> Metered:
    """Hours billed for ``profile``'s use under ``terms`` (rules: module docstring).

    Cached: a ranking asks it for the same profile and a handful of providers' terms
    thousands of times, and both are frozen values (the answer holds only fractions).
    """
    used = to_fraction(profile.hours_per_month)
    session = to_fraction(profile.session_hours) if profile.session_hours is not None else used
    unknown: list[str] = []
    per_session = session
    boot = to_fraction(profile.boot_minutes) / 60
    boot_free = terms.starts is BillingStart.READY
    if boot and not boot_free:
        per_session += boot
        if terms.starts is None:
            unknown.append(UNKNOWN_START)
    rounded_to: Fraction | None = None
    if terms.granularity_s is not None:
        step = Fraction(terms.granularity_s, 3600)
        rounded = math.ceil(per_session / step) * step
        if rounded != per_session:
            rounded_to = rounded
        per_session = rounded
    else:
        unknown.append(UNKNOWN_GRANULARITY)
    raised: Fraction | None = None
    if terms.minimum_s is not None:
        minimum = Fraction(terms.minimum_s, 3600)
        if per_session < minimum:
            raised = per_session = minimum
    else:
        unknown.append(UNKNOWN_MINIMUM)
    sessions = used / session
    return Metered(
        hours=sessions * per_session,
        used=used,
        sessions=sessions,
        session=session,
        per_session=per_session,
        boot=boot,
        boot_free=boot_free,
        granularity_s=terms.granularity_s,
        rounded_to=rounded_to,
        raised_to_minimum=raised,
        unknown=tuple(unknown),
    )
