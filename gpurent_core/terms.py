"""An offer's add-on fees and price plans as the cost engine reads them: plain and frozen.

The feed carries fees and plans as `gpurent_core.model.AddonFee` / `PricePlan` (pydantic:
each field checked on its way into the feed). Everything that only reads them back (the
cost engine, the warehouse's stored lists, the billing facts) takes `FeeTerms` and
`PlanTerms` instead: the same fields, the same defaults, the same order (a test keeps them
in step with the records), without pydantic, which would otherwise cost a read command
~100 ms of start-up (issue 13). A record is accepted wherever terms are (`Fee`, `Plan`).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, TypeAlias

from gpurent_core.enums import BillingUnit, FeeBasis, FeeType, PriceBasis, PriceKind

if TYPE_CHECKING:
    from gpurent_core.model import AddonFee, PricePlan


@dataclass(frozen=True)
class FeeTerms:
    """One add-on fee of an offer (the fields of `AddonFee`, documented there)."""

    fee_type: FeeType
    amount: Decimal
    currency: str
    unit: BillingUnit | None = None
    basis: FeeBasis = FeeBasis.INSTANCE
    quantity: Decimal | None = None
    included_quantity: Decimal | None = None
    mandatory: bool = False
    charged_while_stopped: bool | None = None
    note: str | None = None


@dataclass(frozen=True)
class PlanTerms:
    """One more way to rent the offer (the fields of `PricePlan`, documented there)."""

    price: Decimal
    currency: str
    billing_unit: BillingUnit
    price_basis: PriceBasis
    price_kind: PriceKind


Fee: TypeAlias = "FeeTerms | AddonFee"
"""What the cost engine reads as a fee: terms, or the feed's record itself."""
Plan: TypeAlias = "PlanTerms | PricePlan"
