"""A watch, which offers it concerns, and how one observed offer reads for it (pure)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any

from gpurent_core.cost.stock import rentable
from gpurent_core.cost.usage import UsageProfile
from gpurent_core.enums import PriceKind
from gpurent_core.fx import FxError, FxTable
from gpurent_core.model import StockStatus
from warehouse.costed import CostedOffer, cost_offer
from warehouse.watch.machine import Reading, Signal


def fits_vram(offer: Mapping[str, Any], min_vram_gb: int) -> bool:
    """The offer states at least ``min_vram_gb`` per card; an unknown VRAM never fits."""
    vram = offer.get("gpu_vram_gb")
    return vram is not None and int(vram) >= min_vram_gb


class PricePer(StrEnum):
    """What a stored price cap is compared with (the ``watches.price_per`` column).

    Always the price of the WHOLE rental that gets the watch its cards: a cap given per card
    is stored multiplied by the watch's card count (``CapUnit.stored``), so the comparison
    needs no second column and "2.5 per card-hour for 2 cards" is exactly "5 per hour".
    """

    HOUR = "hour"
    """The true hourly cost (add-ons included) of what is rented for the watch's cards."""
    MONTH = "month"
    """The true monthly cost (730 hours, cheapest valid plan, add-ons included) of it."""


class CapUnit(StrEnum):
    """What ``--max-price`` is per, as the user writes it (``watch add --per``).

    Every unit is compared with the offer's TRUE price (headline + mandatory add-ons, always
    on, 50 GB kept) for the cards the watch needs, in the watch's currency (FX table):
    "card" units divide that by the watch's ``--count``, "offer" units do not. An offer that
    must be rented whole (8 cards when you need 2) costs the whole machine either way, so its
    price per card you need is the machine's price / 2, not / 8.
    """

    CARD_HOUR = "card-hour"
    """Per card you need, per hour: how providers quote (1.98 CNY/h/gpu). The default."""
    OFFER_HOUR = "offer-hour"
    """Everything you rent to get your cards, per hour."""
    CARD_MONTH = "card-month"
    """Per card you need, per month (730 h)."""
    OFFER_MONTH = "offer-month"
    """Everything you rent to get your cards, per month (730 h)."""

    @classmethod
    def parse(cls, text: str) -> CapUnit:
        """A unit from its name; ``hour`` and ``month`` are the per-card ones (providers
        quote per card), so ``--per hour`` reads as it does on every price list."""
        value = text.strip().lower().replace("_", "-")
        return cls({"hour": "card-hour", "month": "card-month"}.get(value, value))

    @property
    def per(self) -> PricePer:
        hourly = self in (CapUnit.CARD_HOUR, CapUnit.OFFER_HOUR)
        return PricePer.HOUR if hourly else PricePer.MONTH

    @property
    def per_card(self) -> bool:
        return self in (CapUnit.CARD_HOUR, CapUnit.CARD_MONTH)

    def stored(self, value: Decimal, gpu_count: int) -> tuple[Decimal, PricePer]:
        """The cap as stored: for the whole rental of ``gpu_count`` cards."""
        return (value * gpu_count if self.per_card else value), self.per


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
    gpu_form_factor: str | None = None
    """The form factor the GPU name pins down ("H100 SXM": SXM), as offers state theirs;
    None: any. Only with ``gpu_model``: the same model in another form factor is another
    card (an H100 PCIe decodes at 60 % of an SXM's speed)."""
    include_spot: bool = False
    """Spot (interruptible) prices are read too, as ``cheapest --include-spot`` ranks
    them; by default an offer priced spot is another product and never matches."""

    def __post_init__(self) -> None:
        if self.gpu_model is None and self.min_vram_gb is None:
            raise ValueError("a watch needs a GPU model or a minimum VRAM")
        if self.gpu_form_factor is not None and self.gpu_model is None:
            raise ValueError("a form factor is watched only with its GPU model")
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
        """The offer is of the kind watched (GPU, form factor, VRAM, provider, region, and
        not priced spot unless the watch includes spot), whatever its stock.

        An offer that does not state its form factor (``gpu_form_factor`` None) never
        matches a watch that names one: it may be the other card. Regions match as
        case-insensitive substrings, because providers spell them their own way ("西北B区",
        "Texas, US", "no-luster-1").
        """
        if self.gpu_model is not None and (
            str(offer["gpu_model"]).casefold() != self.gpu_model.casefold()
        ):
            return False
        if not self.fits_form_factor(offer):
            return False
        if self.min_vram_gb is not None and not fits_vram(offer, self.min_vram_gb):
            return False
        if not self.covers_provider(str(offer["provider"])):
            return False
        if not self.include_spot and offer.get("price_kind") == PriceKind.SPOT.value:
            return False  # interruptible: another product, as `cheapest` leaves it out
        if self.regions:
            region = str(offer.get("region") or "").casefold()
            if not any(r.casefold() in region for r in self.regions):
                return False
        return True

    def fits_form_factor(self, offer: Mapping[str, Any]) -> bool:
        """The offer's form factor is the one watched (any, when the watch names none); an
        offer that does not state its form factor (None) never matches a watch that names
        one."""
        if self.gpu_form_factor is None:
            return True
        form = offer["gpu_form_factor"]
        return form is not None and str(form).casefold() == self.gpu_form_factor.casefold()

    def gpu_text(self) -> str:
        """The card watched, as the user named it: "H100 SXM", "RTX 4090", "any GPU"."""
        if self.gpu_model is None:
            return "any GPU"
        return " ".join(p for p in (self.gpu_model, self.gpu_form_factor) if p)

    def profile(self) -> UsageProfile:
        """The usage the true price is computed for: the watch's cards, always on, 50 GB."""
        return UsageProfile(gpus=self.gpu_count)

    def cap_text(self) -> str | None:
        """The price cap in words, per card and for the whole rental, e.g.
        "2.5 CNY/card-hour (5 CNY/hour for 2 cards)"; None without a cap."""
        if self.max_price is None or self.price_per is None:
            return None
        unit = self.price_per.value
        whole = f"{_plain(self.max_price)} {self.currency}/{unit}"
        per_card = self.max_price / self.gpu_count
        if per_card != per_card.quantize(Decimal("1e-8")):  # 10 / 3: keep the total
            return f"{whole} for {self.gpu_count} cards"
        card = f"{_plain(per_card)} {self.currency}/card-{unit}"
        return card if self.gpu_count == 1 else f"{card} ({whole} for {self.gpu_count} cards)"

    def describe(self) -> str:
        parts = [self.gpu_text()]
        if self.min_vram_gb is not None:
            parts.append(f">= {self.min_vram_gb} GB")
        parts.append(f"x{self.gpu_count}")
        cap = self.cap_text()
        if cap is not None:
            parts.append(f"<= {cap}")
        if self.providers:
            parts.append("at " + ", ".join(self.providers))
        if self.regions:
            parts.append("in " + ", ".join(self.regions))
        if self.include_spot:
            parts.append("spot included")
        return " ".join(parts)


def _plain(value: Decimal) -> str:
    normalised = value.normalize()
    return format(normalised.quantize(Decimal(1)) if normalised == normalised.to_integral()
                  else normalised, "f")  # fmt: skip


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

    The true price is computed for the cards the watch needs (``cards_to_rent``), in the
    watch's currency when it has a cap (an FX rate that is missing makes the reading
    UNKNOWN, not out), else in the offer's own currency, and compared with the stored cap
    (the whole rental's price: see ``PricePer``). An offer whose free count is below the
    cards it must be rented with is out of stock for the watch, whatever its status says.
    """
    if not watch.matches(offer):
        return Assessment(Reading(Signal.OUT_STOCK), None)
    status = StockStatus(offer["status"])
    if status is StockStatus.UNKNOWN:
        return Assessment(Reading(Signal.UNKNOWN), None)
    if not rentable(offer, watch.gpu_count):  # the one rule: all cards of the unit free
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
