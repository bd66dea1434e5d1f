"""Defaults that help texts show before any setting is read, declared once.

Kept apart from ``gpurent_core.config`` so that showing them reads no setting (command
start-up).
"""

from __future__ import annotations

from decimal import Decimal

from gpurent_core.enums import IndexMethod
from gpurent_core.units import HOURS_PER_MONTH

DEFAULT_CURRENCY = "CNY"
"""Display currency for costs and rankings when GPURENT_CURRENCY is not set."""
DEFAULT_INDEX_METHOD = IndexMethod.GPI_3
"""The price index method read when none is named (gpi-1 and gpi-2 stay computable)."""

# The usage a cost is for, unless the user says otherwise (``cost.usage.UsageProfile``).
DEFAULT_HOURS_PER_MONTH = Decimal(HOURS_PER_MONTH.numerator) / HOURS_PER_MONTH.denominator
"""Always on: the whole month (730 hours, 8760 / 12, as ``gpurent_core.units`` says)."""
DEFAULT_STORAGE_GB = Decimal(50)
"""Storage kept, GB: about a model's weights and a dataset."""
DEFAULT_EGRESS_GB = Decimal(0)
DEFAULT_BOOT_MINUTES = Decimal(0)

# Buy or rent (`gpurent tco`, ``gpurent.api.tco``; docs/cost.md "Buy or rent").
DEFAULT_TCO_YEARS = 3
"""Years owning a card is compared with renting it over, unless --years says otherwise."""
DEFAULT_HOST_WATTS_PER_GPU = Decimal(150)
"""Watts the rest of the machine draws per card while the card works (CPU, memory, disks,
fans, and the power supply's losses): an assumption, not a measurement, for a desktop or
workstation. Bounds from published figures (docs/cost.md "Buy or rent"): an 80 PLUS
Platinum supply loses about 8% at half load (92% efficient), some 50 W on a 450 W card and
its host; an 8-GPU data-centre server (NVIDIA DGX H100: up to 10.2 kW with eight 700 W
GPUs) spends about 575 W a card on the rest."""
