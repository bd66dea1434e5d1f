"""How the user will rent, as the cost engine takes it: the one path from options to a
``UsageProfile`` for every command, the dashboard and programs.

The defaults are declared once, in ``gpurent_core.defaults`` (730 h a month, 50 GB of
storage, no egress, no boot time), and ``UsageProfile`` takes them from there.
"""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING

from gpurent.api.errors import BadUsage
from gpurent_core.defaults import (
    DEFAULT_BOOT_MINUTES,
    DEFAULT_EGRESS_GB,
    DEFAULT_HOURS_PER_MONTH,
    DEFAULT_STORAGE_GB,
)

if TYPE_CHECKING:
    from gpurent_core.cost.usage import UsageProfile

__all__ = [
    "DEFAULT_BOOT_MINUTES",
    "DEFAULT_EGRESS_GB",
    "DEFAULT_HOURS_PER_MONTH",
    "DEFAULT_STORAGE_GB",
    "usage",
    "with_gpus",
]


def usage(
    *,
    hours_per_month: Decimal | int = DEFAULT_HOURS_PER_MONTH,
    storage_gb: Decimal | int = DEFAULT_STORAGE_GB,
    egress_gb: Decimal | int = DEFAULT_EGRESS_GB,
    gpus: int = 1,
    session_hours: Decimal | int | None = None,
    boot_minutes: Decimal | int = DEFAULT_BOOT_MINUTES,
) -> UsageProfile:
    """A usage profile; numbers the engine refuses raise ``BadUsage`` with its reason."""
    from gpurent_core.cost.usage import UsageProfile  # the engine loads when a cost is asked

    try:
        return UsageProfile(
            hours_per_month=Decimal(hours_per_month),
            storage_gb=Decimal(storage_gb),
            egress_gb_per_month=Decimal(egress_gb),
            gpus=gpus,
            session_hours=None if session_hours is None else Decimal(session_hours),
            boot_minutes=Decimal(boot_minutes),
        )
    except (ValueError, TypeError, ArithmeticError) as exc:
        raise BadUsage(str(exc), argument="usage") from exc


def with_gpus(profile: UsageProfile, gpus: int) -> UsageProfile:
    """The same profile for another number of cards (sizing tries several placements)."""
    from dataclasses import replace

    return replace(profile, gpus=gpus)
