"""The usage profile a cost is for: how the user will rent.

Hours a month (730 = always on), the length of one session and the boot paid in each,
storage kept, traffic out, cards wanted, and whether the instance and its disks are kept
between sessions. Every costed surface builds one (``gpurent.api.profile``) and the engine
reads nothing else of the user; it lives apart so that callers which only pass a profile
along (the warehouse, sizing, the dashboard) need not load the engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from gpurent_core.cost.money import num
from gpurent_core.defaults import (
    DEFAULT_BOOT_MINUTES,
    DEFAULT_EGRESS_GB,
    DEFAULT_HOURS_PER_MONTH,
    DEFAULT_STORAGE_GB,
)
from gpurent_core.units import HOURS_PER_MONTH

LIMITS: tuple[tuple[str, int, str], ...] = (
    ("storage_gb", 1_000_000, "GB (a petabyte)"),
    ("egress_gb_per_month", 10_000_000, "GB a month"),
    ("boot_minutes", 24 * 60, "minutes (a day)"),
)
"""The largest figure each usage number takes."""
SHORTEST_SESSION_H = Decimal("0.0001")
"""A session shorter than this (0.36 s) is a typo: 1e-30 h made 7e32 sessions a month."""


@dataclass(frozen=True)
class UsageProfile:
    """How the user will rent: hours a month, storage, traffic, cards wanted."""

    hours_per_month: Decimal = DEFAULT_HOURS_PER_MONTH
    """Hours the instance runs in a month; 730 = always on. 0 < hours <= 730."""
    storage_gb: Decimal = DEFAULT_STORAGE_GB
    """Storage the user keeps (GB), charged by per-GB storage fees."""
    egress_gb_per_month: Decimal = DEFAULT_EGRESS_GB
    """Outbound traffic a month (GB)."""
    keep_disks_while_stopped: bool = True
    """Keep the instance (and its disks) between sessions instead of releasing it."""
    gpus: int = 1
    """How many cards the user wants; offers with fewer do not fit."""
    session_hours: Decimal | None = None
    """Length of one working session (start to stop); None: the month's hours in one go."""
    boot_minutes: Decimal = DEFAULT_BOOT_MINUTES
    """Minutes from power-on to ready, paid each session where billing starts at power-on."""

    def __post_init__(self) -> None:
        for name in ("hours_per_month", "storage_gb", "egress_gb_per_month", "boot_minutes"):
            object.__setattr__(self, name, self._check_number(name, getattr(self, name)))
        # Past these a figure is a typo, not a use: 1e20 GB of storage overflowed the money
        # arithmetic into a raw error, or printed a true monthly of 31 digits.
        for name, most, unit in LIMITS:
            if getattr(self, name) > most:
                raise ValueError(f"{name} is at most {most:,} {unit}, got {getattr(self, name)}")
        if not 0 < self.hours_per_month <= HOURS_PER_MONTH:
            raise ValueError(f"hours_per_month must be in (0, 730], got {self.hours_per_month}")
        if self.gpus < 1:
            raise ValueError(f"gpus must be >= 1, got {self.gpus}")
        if self.session_hours is not None:
            session = self._check_number("session_hours", self.session_hours)
            if session < SHORTEST_SESSION_H:
                raise ValueError(f"session_hours is at least {SHORTEST_SESSION_H} h, got {session}")
            if not 0 < session <= self.hours_per_month:
                raise ValueError(
                    f"session_hours must be > 0 and at most hours_per_month "
                    f"({self.hours_per_month}), got {session}"
                )
            object.__setattr__(self, "session_hours", session)

    @staticmethod
    def _check_number(name: str, value: object) -> Decimal:
        if isinstance(value, float) or not isinstance(value, Decimal | int):
            raise TypeError(f"{name} must be a Decimal (never float), got {value!r}")
        value = Decimal(value)
        if not value.is_finite() or value < 0:
            raise ValueError(f"{name} must be a finite number >= 0, got {value}")
        return value

    def describe(self) -> str:
        kept = (
            "disks kept while stopped" if self.keep_disks_while_stopped else "released when stopped"
        )
        sessions = (
            f", sessions of {num(self.session_hours)} h" if self.session_hours is not None else ""
        )
        boot = f", {num(self.boot_minutes)} min boot" if self.boot_minutes else ""
        return (
            f"{num(self.hours_per_month)} h/month{sessions}{boot}, storage "
            f"{num(self.storage_gb)} GB, egress {num(self.egress_gb_per_month)} GB/month, "
            f"{self.gpus} GPU(s), {kept}"
        )
