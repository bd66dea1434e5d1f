"""The offer as the cost engine sees it: the fields it reads, whether it fits, and its
headline price per hour.

Fit. An offer is rented as listed: ``gpu_count`` cards. When the profile wants more cards
than that (``profile.gpus > gpu_count``), ``true_cost`` raises ``DoesNotFit`` and the caller
filters the offer out. This holds for both price bases: a per-GPU price is multiplied by the
offer's ``gpu_count``, never by the profile's, because the offer is what is rented (spiders
list each rentable card count as its own offer).

Headline per hour. The published price converted exactly to one hour (per-second and
per-minute prices scale up; day/week/month/year package prices are divided by their hours),
times ``gpu_count`` when the basis is ``gpu``. ``price_per_gpu_hour`` is the same per card.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING

from gpurent_core.billing_facts import BillingTerms, terms_for
from gpurent_core.cost.money import quantize_money
from gpurent_core.enums import BillingUnit, PriceBasis, PriceKind
from gpurent_core.terms import Fee, Plan
from gpurent_core.units import hourly_rate

if TYPE_CHECKING:
    from gpurent_core.model import OfferRecord


class DoesNotFit(ValueError):
    """The profile wants more GPUs than the offer has."""


@dataclass(frozen=True)
class CostInput:
    """The fields of an offer the cost engine needs (an OfferRecord without the pydantic)."""

    price: Decimal
    currency: str
    billing_unit: BillingUnit
    price_basis: PriceBasis
    price_kind: PriceKind = PriceKind.ON_DEMAND
    gpu_count: int = 1
    fees: Sequence[Fee] = ()
    plans: Sequence[Plan] = ()
    terms: BillingTerms = field(default_factory=BillingTerms)
    """How the provider meters: granularity, minimum rental, when billing starts."""

    def __post_init__(self) -> None:
        if not isinstance(self.price, Decimal) or not self.price.is_finite() or self.price < 0:
            raise ValueError(f"price must be a finite Decimal >= 0, got {self.price!r}")
        if self.gpu_count < 1:
            raise ValueError(f"gpu_count must be >= 1, got {self.gpu_count}")
        object.__setattr__(self, "fees", tuple(self.fees))
        object.__setattr__(self, "plans", tuple(self.plans))

    @classmethod
    def from_offer(cls, offer: OfferRecord) -> CostInput:
        return cls(
            price=offer.price,
            currency=offer.currency,
            billing_unit=offer.billing_unit,
            price_basis=offer.price_basis,
            price_kind=offer.price_kind,
            gpu_count=offer.gpu_count,
            fees=offer.fees,
            plans=offer.plans,
            terms=terms_for(offer.provider),
        )


def headline_hourly(inp: CostInput) -> Fraction:
    """The published price per hour for the whole offer (x gpu_count when per GPU)."""
    multiplier = inp.gpu_count if inp.price_basis is PriceBasis.GPU else 1
    return hourly_rate(inp.price, inp.billing_unit) * multiplier


def per_gpu_hour(price: Decimal, unit: BillingUnit, basis: PriceBasis, gpu_count: int) -> Fraction:
    """The published price per hour and card, exact."""
    per_hour = hourly_rate(price, unit)
    return per_hour / gpu_count if basis is PriceBasis.INSTANCE else per_hour


def price_per_gpu_hour(
    price: Decimal, unit: BillingUnit, basis: PriceBasis, gpu_count: int
) -> Decimal:
    """Published price per hour, divided by the cards when the price is per instance."""
    if gpu_count < 1:
        raise ValueError(f"gpu_count must be >= 1, got {gpu_count}")
    return quantize_money(per_gpu_hour(price, unit, basis, gpu_count))
