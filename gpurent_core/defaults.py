"""Defaults that help texts show before any setting is read, declared once.

Kept apart from ``gpurent_core.config`` so that showing them does not load
pydantic-settings (command start-up).
"""

from __future__ import annotations

from decimal import Decimal

DEFAULT_CURRENCY = "CNY"
"""Display currency for costs and rankings when GPURENT_CURRENCY is not set."""

# The usage a cost is for, unless the user says otherwise (``costing.UsageProfile``).
DEFAULT_HOURS_PER_MONTH = Decimal(730)
"""Always on: a month is 730 hours (8760 / 12, ``gpurent_core.units``)."""
DEFAULT_STORAGE_GB = Decimal(50)
"""Storage kept, GB: about a model's weights and a dataset."""
DEFAULT_EGRESS_GB = Decimal(0)
DEFAULT_BOOT_MINUTES = Decimal(0)
