"""A watch, which offers it concerns, and how one observed offer reads for it (pure)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any

from gpurent.costing import UsageProfile
from gpurent.fx import FxError, FxTable
from gpurent.model import StockStatus
from warehouse.costed import CostedOffer, cost_offer
from warehouse.watch.machine import Reading, Signal


def fits_vram(offer: Mapping[str, Any], min_vram_gb: int) -> bool:
    """The offer states at least ``min_vram_gb`` per card; an unknown VRAM never fits."""
    vram = offer.get("gpu_vram_gb")
    return vram is not None and int(vram) >= min_vram_gb


class PricePer(StrEnum):
    """What a watch's price cap is compared with."""

    HOUR = "hour"
    """The true hourly cost (add-ons included) of the watch's cards."""
    MONTH = "month"
    """The true monthly cost (730 hours, cheapest valid plan, add-ons included)."""


@dataclass(frozen=True)
class Watch:
    """What a user asked to be told about (one row of ``watches``)."""

    watch_id: int
    created_at: datetime
    gpu_model: str | None
    min_vram_gb: int | None
    gpu_count: int
    max_price: Decimal | None
    currency: str | None
    price_per: PricePer | None
    providers: tuple[str, ...]
    regions: tuple[str, ...]
    notify_urls: tuple[str, ...]

    def __post_init__(self) -> None:
        if self.gpu_model is None and self.min_vram_gb is None:
            raise ValueError("a watch needs a GPU model or a minimum VRAM")
        if self.gpu_count < 1:
            raise ValueError(f"gpu_count must be at least 1, got {self.gpu_count}")
        capped = (self.max_price is not None, self.currency is not None, self.price_per is not None)
        if len(set(capped)) != 1:
            raise ValueError("a price cap needs max_price, currency and price_per together")
        if self.max_price is not None and self.max_price <= 0:
            raise ValueError(f"max_price must be positive, got {self.max_price}")
        if not self.notify_urls:
            raise ValueError("a watch needs at least one notification URL")

    def covers_provider(self, provider: str) -> bool:
        return not self.providers or provider in self.providers

    def matches(self, offer: Mapping[str, Any]) -> bool:
        """The offer is of the kind watched (GPU, VRAM, provider, region), whatever its stock.

        Regions match as case-insensitive substrings, because providers spell them their
        own way ("西北B区", "Texas, US", "no-luster-1").
        """
        if self.gpu_model is not None and (
            str(offer["gpu_model"]).casefold() != self.gpu_model.casefold()
        ):
            return False
        if self.min_vram_gb is not None and not fits_vram(offer, self.min_vram_gb):
            return False
        if not self.covers_provider(str(offer["provider"])):
            return False
        if self.regions:
            region = str(offer.get("region") or "").casefold()
            if not any(r.casefold() in region for r in self.regions):
                return False
        return True

    def profile(self) -> UsageProfile:
        """The usage the true price is computed for: the watch's cards, always on, 50 GB."""
        return UsageProfile(gpus=self.gpu_count)

    def describe(self) -> str:
        parts = [self.gpu_model or "any GPU"]
        if self.min_vram_gb is not None:
            parts.append(f">= {self.min_vram_gb} GB")
        parts.append(f"x{self.gpu_count}")
        if self.max_price is not None:
            per = self.price_per.value if self.price_per else "hour"
            parts.append(f"<= {self.max_price} {self.currency}/{per}")
        if self.providers:
            parts.append("at " + ", ".join(self.providers))
        if self.regions:
            parts.append("in " + ", ".join(self.regions))
        return " ".join(parts)


@dataclass(frozen=True)
class Assessment:
    """How an offer reads for a watch, with the cost that decided it (None when not costed)."""

    reading: Reading
    cost: CostedOffer | None


def assess(
    watch: Watch,
    offer: Mapping[str, Any],
    *,
    fx: FxTable | None,
) -> Assessment:
    """The reading of one listed offer for ``watch`` (see ``machine`` for the signals).

    The true price is computed in the watch's currency when it has a cap (an FX rate that
    is missing makes the reading UNKNOWN, not out), else in the offer's own currency.
    """
    if not watch.matches(offer):
        return Assessment(Reading(Signal.OUT_STOCK), None)
    status = StockStatus(offer["status"])
    if status is StockStatus.UNKNOWN:
        return Assessment(Reading(Signal.UNKNOWN), None)
    if not status.rentable:
        return Assessment(Reading(Signal.OUT_STOCK), None)
    display = watch.currency or str(offer["currency"])
    try:
        costed = cost_offer(offer, watch.profile(), display_currency=display, fx=fx)
    except FxError:
        return Assessment(Reading(Signal.UNKNOWN), None)
    if costed is None:  # cannot supply the watch's cards
        return Assessment(Reading(Signal.OUT_STOCK), None)
    if watch.max_price is not None:
        price = (
            costed.cost.monthly_display
            if watch.price_per is PricePer.MONTH
            else costed.cost.hourly_display
        )
        if price > watch.max_price:
            return Assessment(Reading(Signal.OUT_PRICE), costed)
    free = offer.get("available_count")
    covers = free is not None and int(free) >= watch.gpu_count
    return Assessment(Reading(Signal.IN, covers=covers), costed)
