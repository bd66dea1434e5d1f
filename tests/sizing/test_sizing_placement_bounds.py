"""The bound sizing uses to leave small cards out before costing is sound: a card's usable
memory never exceeds its nominal size, so a card below ``smallest_nominal_vram`` never fits."""

from __future__ import annotations

import math

from gpurent_core.catalog import get_catalog
from sizing.placement import MEASURED_USABLE_GIB, usable_gib


def test_usable_memory_never_exceeds_the_nominal_size() -> None:
    for (model, vram_gb), (gib, _source) in MEASURED_USABLE_GIB.items():
        assert gib <= vram_gb, (model, vram_gb, gib)
    for sku in get_catalog().all():
        assert usable_gib(sku.model, sku.vram_gb) <= sku.vram_gb, sku


def test_a_card_below_the_bound_cannot_fit() -> None:
    for sku in get_catalog().all():
        usable = usable_gib(sku.model, sku.vram_gb)
        # the largest need that still fits this card, and the bound it gives
        assert math.ceil(usable) <= sku.vram_gb
