"""Defaults that help texts show before any setting is read, declared once.

Kept apart from ``gpurent_core.config`` so that showing them reads no setting (command
start-up).
"""

from __future__ import annotations

from decimal import Decimal

from gpurent_core.units import HOURS_PER_MONTH

DEFAULT_CURRENCY = "CNY"
"""Display currency for costs and rankings when GPURENT_CURRENCY is not set."""

# The usage a cost is for, unless the user says otherwise (``cost.usage.UsageProfile``).
DEFAULT_HOURS_PER_MONTH = Decimal(HOURS_PER_MONTH.numerator) / HOURS_PER_MONTH.denominator
"""Always on: the whole month (730 hours, 8760 / 12, as ``gpurent_core.units`` says)."""
DEFAULT_STORAGE_GB = Decimal(50)
"""Storage kept, GB: about a model's weights and a dataset."""
DEFAULT_EGRESS_GB = Decimal(0)
DEFAULT_BOOT_MINUTES = Decimal(0)
