"""In-stock offers that fit a placement, with speed and cost per token, ranked by an objective.

Reads the warehouse only through ``warehouse.costed.costed_latest_offers`` (the house plan:
sizing imports warehouse queries, never flows or spiders). An offer is kept when the
provider says it can be rented now (in_stock or low), it supplies the cards a placement
needs, and the per-GPU recommendation fits the card's usable memory; for each offer the
fewest cards that fit are used. Only offers their provider's latest run confirmed count,
unless ``include_stale`` (rule of truth 11: stale rows are ranked only on request).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from gpurent_core.catalog import GpuSku, get_catalog
from gpurent_core.costing import UsageProfile
from sizing.objective import Objective
from sizing.placement import Placement, fits_card, sku_usable_gib, usable_gib
from sizing.speed import DecodeSpeed, cost_per_million_tokens, decode_speed

if TYPE_CHECKING:  # the warehouse (DuckDB, Polars) loads only when offers are ranked
    import duckdb

    from warehouse.costed import CostedOffer


@dataclass(frozen=True)
class RankedOffer:
    """A costed offer that fits, with the placement it would run and its speed."""

    costed: CostedOffer
    placement: Placement
    sku: GpuSku | None
    usable_gib: float
    speed: DecodeSpeed | None
    cost_per_million_tokens: Decimal | None

    @property
    def tokens_per_s(self) -> float | None:
        return self.speed.tokens_per_s if self.speed else None

    @property
    def label(self) -> str:
        o = self.costed.offer
        vram = "?" if o["gpu_vram_gb"] is None else o["gpu_vram_gb"]
        return f"{o['provider']} {o['gpu_model']} {vram}GB x{self.costed.gpus_rented}"

    def as_row(self) -> dict[str, Any]:
        o, c = self.costed.offer, self.costed.cost
        return {
            "provider": o["provider"],
            "offer_key": o["offer_key"],
            "gpu_model": o["gpu_model"],
            "gpu_vram_gb": o["gpu_vram_gb"],
            "gpu_count": self.costed.gpus_rented,
            "tensor_parallel": self.placement.tensor_parallel,
            "usable_gib_per_gpu": self.usable_gib,
            "need_gib_per_gpu": round(self.placement.estimate.per_gpu_gib, 2),
            "status": o["status"],
            "available_count": o["available_count"],
            "price": o["price"],
            "currency": o["currency"],
            "billing_unit": o["billing_unit"],
            "price_basis": o["price_basis"],
            "true_hourly": c.hourly_display,
            "true_monthly": c.monthly_display,
            "cost_currency": c.display_currency,
            "tokens_per_s": round(self.tokens_per_s, 1) if self.tokens_per_s else None,
            "decode_bound": self.speed.bound.value if self.speed else None,
            "cost_per_million_tokens": self.cost_per_million_tokens,
            "region": o["region"],
            "observed_at": o["observed_at"],
            # Not confirmed by its provider's latest run: its last good state, age_s old.
            "stale": self.stale,
            "age_s": o.get("age_s"),
            "url": o["url"],
        }

    @property
    def stale(self) -> bool:
        """Its provider's latest run did not confirm it (``latest_offers.stale``)."""
        return bool(self.costed.offer.get("stale") or False)


def offer_sku(offer: Mapping[str, Any]) -> GpuSku | None:
    """The catalog SKU of a stored offer. When the form factor is unknown and the model has
    several at that VRAM (A800 80GB PCIe/SXM), the slowest one: speed is then not overstated."""
    catalog = get_catalog()
    form = offer.get("gpu_form_factor")
    if form:
        exact = catalog.find(offer["gpu_model"], offer["gpu_vram_gb"], form)
        if exact is not None:
            return exact
    same_size = [
        s for s in catalog.variants(offer["gpu_model"]) if s.vram_gb == offer["gpu_vram_gb"]
    ]
    if not same_size:
        return None
    return min(same_size, key=lambda s: (s.mem_bandwidth_gbps is None, s.mem_bandwidth_gbps or 0))


def rank_key(objective: Objective, offer: RankedOffer) -> tuple[Any, ...]:
    c = offer.costed.cost
    ident = (offer.costed.offer["provider"], offer.costed.offer["offer_key"])
    if objective is Objective.HOURLY:
        return (c.hourly_display, c.monthly_display, *ident)
    if objective is Objective.PER_TOKEN:
        per_token = offer.cost_per_million_tokens
        missing = per_token is None
        return (missing, per_token or Decimal(0), c.hourly_display, *ident)
    return (c.monthly_display, c.hourly_display, *ident)


def fitting_offers(
    con: duckdb.DuckDBPyConnection,
    placements: Sequence[Placement],
    *,
    objective: Objective,
    display_currency: str,
    usage: UsageProfile | None = None,
    include_stale: bool = False,
) -> list[RankedOffer]:
    """Every in-stock offer that fits one of ``placements``, ranked by ``objective``.

    Each placement is costed with ``usage`` (default: ``UsageProfile()``) for its own card
    count: storage, egress, short sessions and boot time count as on every other surface.
    Offers their provider's latest run did not confirm come only with ``include_stale``
    (marked: ``RankedOffer.stale``).
    """
    from warehouse.costed import costed_latest_offers

    chosen: dict[tuple[str, str], RankedOffer] = {}
    for placement in placements:
        if not placement.fits:
            continue
        degree = placement.tensor_parallel
        profile = replace(usage or UsageProfile(), gpus=degree)
        costed = costed_latest_offers(
            con,
            profile,
            display_currency=display_currency,
            in_stock_only=True,
            min_vram_gb=smallest_nominal_vram(placement),
            include_stale=include_stale,
        )
        for offer in costed:
            key = (offer.offer["provider"], offer.offer["offer_key"])
            if key in chosen:  # already fits with fewer cards
                continue
            ranked = _fit(offer, placement)
            if ranked is not None:
                chosen[key] = ranked
    return sorted(chosen.values(), key=lambda r: rank_key(objective, r))


def smallest_nominal_vram(placement: Placement) -> int:
    """The least nominal VRAM (GB) a card can have and still fit ``placement``.

    A card's usable memory never exceeds its nominal size (measured, or 0.97 x nominal;
    ``sizing.placement.usable_gib``, a test keeps it so), so cards below this cannot fit:
    the warehouse leaves them out before anything is costed. ``_fit`` still decides."""
    return max(0, math.ceil(placement.estimate.per_gpu_gib))


def _fit(offer: CostedOffer, placement: Placement) -> RankedOffer | None:
    row = offer.offer
    free = row["available_count"]
    if free is not None and int(free) == 0:
        return None  # listed, but the provider says no card is free
    if offer.gpus_rented < placement.tensor_parallel:
        return None
    if row["gpu_vram_gb"] is None:
        return None  # unknown VRAM never counts as fitting: it may be the small variant
    sku = offer_sku(row)
    usable = sku_usable_gib(sku) if sku else usable_gib(row["gpu_model"], int(row["gpu_vram_gb"]))
    if not fits_card(placement.estimate, usable):
        return None
    est = placement.estimate
    # Decode speed means nothing for a training run: rank it by time cost only.
    speed = (
        None
        if est.workload.is_training
        else decode_speed(est.arch, est.precision, est.workload, sku, placement.tensor_parallel)
    )
    per_token = (
        cost_per_million_tokens(offer.cost.hourly_display, speed.tokens_per_s) if speed else None
    )
    return RankedOffer(offer, placement, sku, usable, speed, per_token)


__all__ = ["Objective", "RankedOffer", "fitting_offers", "rank_key"]
