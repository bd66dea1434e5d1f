"""Add-on fees: which count, on what quantity, per hour and per month; and where the
profile's storage is paid.

Which add-ons count. Mandatory fees, plus traffic fees (egress/ingress) whatever their
``mandatory`` flag, because traffic is billed whenever it happens and the profile says how
much happens, plus the storage the profile asks for (below). Other optional fees, and fees
the engine cannot price, are listed in ``TrueCost.not_counted`` with the reason, never
silently dropped.

Storage. The profile's ``storage_gb`` is paid for on every offer, beyond any free
allowance, so that providers whose storage is an optional add-on do not look cheaper than
those that bill it with the instance. The fees that take it are the offer's *sized* storage
fees: type system_disk / data_disk / storage_stopped, basis gb or tb, no fixed quantity.

* When a sized disk fee (system_disk / data_disk) is mandatory, the storage is priced
  through the mandatory ones (as any mandatory fee) and optional storage fees stay optional.
  A mandatory storage_stopped fee alone prices only the stopped hours: the running ones
  follow the rules below (the optional disks, else unknown).
* Otherwise, when the offer sells storage as optional disks (sized system_disk or
  data_disk fees), the GB go on the cheapest of them: the one with the lowest monthly cost
  for the profile (ties: lower hourly, then the earlier fee); the others are not counted.
  Asking for 0 GB counts none.
* Otherwise (no sized storage fee at all) the storage price is unknown:
  ``TrueCost.storage_price_unknown`` is set (when storage_gb > 0) and the explanation says
  so. It is never priced as free silently.

Traffic. The profile's ``egress_gb_per_month`` is paid through the offer's egress fees.
Where it has none, the traffic is free only when the provider's billing facts say what
traffic costs (``BillingTerms.egress_stated``: "none", or platform fees); otherwise its price
is unknown (``egress_unknown``: ``TrueCost.egress_price_unknown``, said by the explanation).

Quantity a fee is charged on (``quantity`` is always for the whole offer, not per GPU):

* basis ``instance``: ``quantity`` or 1;  basis ``gpu``: ``quantity`` or the offer's
  ``gpu_count``;  basis ``vcpu`` / ``gib_ram``: ``quantity`` (required: without it the fee is
  not counted, since the profile does not choose CPUs or RAM);
* basis ``gb`` / ``tb``: ``quantity`` when the offer fixes the size, else the profile's
  ``storage_gb`` (storage fees) or ``egress_gb_per_month`` (egress fees; the profile has no
  ingress volume, so ingress fees are not counted). 1 TB = 1000 GB;
* then the free allowance: ``max(0, quantity - included_quantity)``.

Per hour and per month, for a fee of ``amount`` per ``unit``:

* time-based fee (``unit`` set): per hour = amount x quantity / hours in unit. In the month
  it accrues for the hours used (``hours_per_month``), except: fees ``charged_while_stopped``
  accrue for the whole month (730 h) when ``keep_disks_while_stopped``, and so do fees
  whose ``charged_while_stopped`` is unknown (None: counted as charged, never the cheap
  reading, and the explanation says it was assumed); a fee per month (or year) not known to
  stop with the instance is a subscription, paid for the whole month whatever the use;
  fees of type ``storage_stopped`` (billed only while stopped) accrue for the stopped hours
  (730 - used) when disks are kept, otherwise not at all, and add nothing to the running
  hourly figure.
* volume fee (traffic, no ``unit``): per month = amount x volume; it is not an hourly rate,
  so the hourly figure carries it spread over the hours used (monthly / hours_per_month).
  A traffic fee quoted per time unit is not counted (it makes no sense to price).
* any other fee without ``unit`` is a one-off charge per rental, counted once a month and
  spread per hour like traffic (one rental a month is the assumption).

Fees in another currency are converted into the offer's currency through the FX table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

from gpurent_core.cost.money import Converter, num
from gpurent_core.cost.offer import CostInput
from gpurent_core.cost.usage import UsageProfile
from gpurent_core.enums import FeeBasis, FeeType
from gpurent_core.fx import FxRate
from gpurent_core.terms import Fee
from gpurent_core.units import HOURS_PER_MONTH, HOURS_PER_UNIT, to_fraction

GB_PER_TB = 1000
TRAFFIC = frozenset({FeeType.EGRESS, FeeType.INGRESS})
_STORAGE = frozenset({FeeType.SYSTEM_DISK, FeeType.DATA_DISK, FeeType.STORAGE_STOPPED})
_DISKS = frozenset({FeeType.SYSTEM_DISK, FeeType.DATA_DISK})
_PER_SIZE = frozenset({FeeBasis.GB, FeeBasis.TB})

Charge = Literal["once", "used", "kept", "subscription", "stopped", "released"]
"""The hours a fee accrues for in the month: ``once`` (no unit: per month or per rental),
the hours ``used``, 730 h ``kept`` while stopped, a whole-month ``subscription``, the
``stopped`` hours (730 - used), or none (``released``)."""


@dataclass(frozen=True)
class SkippedFee:
    """A fee left out of the totals, and why."""

    fee: Fee
    reason: str


@dataclass(frozen=True)
class Quantity:
    """What a fee is charged on: the quantity before and after its free allowance."""

    billable: Fraction
    chosen: Fraction
    """The fee's fixed quantity, 1 instance, the offer's cards, or the profile's volume."""
    included: Fraction | None
    """The free allowance, when the fee has one."""


@dataclass(frozen=True)
class FeeCost:
    """One counted fee: its exact cost per hour and per month, and what made it."""

    fee: Fee
    hourly: Fraction
    monthly: Fraction
    quantity: Quantity
    amount: Fraction
    """The fee's amount in the offer's currency."""
    fx: FxRate | None
    """The rate ``amount`` was converted at; None when the fee is in the offer's currency."""
    charge: Charge
    charged_hours: Fraction
    """Hours it accrues for in the month (0 for a fee without a unit)."""
    assumed: str | None = None
    """A term of the fee no source gave, and the reading taken (never the cheap one)."""

    @property
    def fee_type(self) -> FeeType:
        return self.fee.fee_type


def fee_quantity(fee: Fee, inp: CostInput, profile: UsageProfile) -> Quantity | str:
    """Billable quantity, or the reason the fee cannot be priced (rules: module docstring)."""
    basis = fee.basis
    chosen: Fraction
    if fee.quantity is not None:
        chosen = to_fraction(fee.quantity)
    elif basis is FeeBasis.INSTANCE:
        chosen = Fraction(1)
    elif basis is FeeBasis.GPU:
        chosen = Fraction(inp.gpu_count)
    elif basis in (FeeBasis.VCPU, FeeBasis.GIB_RAM):
        return f"per-{basis.value} fee without a fixed quantity"
    else:
        if fee.fee_type is FeeType.INGRESS:
            return "the usage profile has no ingress volume"
        volume = (
            profile.egress_gb_per_month if fee.fee_type is FeeType.EGRESS else profile.storage_gb
        )
        chosen = to_fraction(volume)
        if basis is FeeBasis.TB:
            chosen /= GB_PER_TB
    if fee.included_quantity is not None:
        included = to_fraction(fee.included_quantity)
        return Quantity(max(Fraction(0), chosen - included), chosen, included)
    return Quantity(chosen, chosen, None)


def sized_storage(fee: Fee) -> bool:
    """A storage fee charged on a size the user chooses (rules: module docstring)."""
    return fee.fee_type in _STORAGE and fee.basis in _PER_SIZE and fee.quantity is None


def fee_cost(
    fee: Fee,
    inp: CostInput,
    profile: UsageProfile,
    conv: Converter,
    *,
    storage_route: bool = False,
) -> FeeCost | str:
    """Cost of one fee, or why it is not counted; ``storage_route``: the optional disk
    chosen to hold the profile's storage, counted as if it were mandatory."""
    if not fee.mandatory and fee.fee_type not in TRAFFIC and not storage_route:
        return "optional"
    if fee.fee_type in TRAFFIC and fee.unit is not None:
        return f"traffic fee quoted per {fee.unit.value}"
    qty = fee_quantity(fee, inp, profile)
    if isinstance(qty, str):
        return qty
    amount, fx = conv.to(fee.amount, fee.currency, inp.currency)
    hours_used = to_fraction(profile.hours_per_month)

    if fee.unit is None:
        monthly = amount * qty.billable
        return FeeCost(fee, monthly / hours_used, monthly, qty, amount, fx, "once", Fraction(0))

    per_hour = amount * qty.billable / HOURS_PER_UNIT[fee.unit]
    charge, charged = _charged_hours(fee, profile, hours_used)
    assumed: str | None = None
    if (
        fee.charged_while_stopped is None
        and fee.fee_type is not FeeType.STORAGE_STOPPED
        and charged == HOURS_PER_MONTH
        and hours_used < HOURS_PER_MONTH
    ):
        assumed = (
            f"whether the {fee.fee_type.value} fee is charged while stopped (counted as charged)"
        )
    hourly = Fraction(0) if charge in ("stopped", "released") else per_hour
    return FeeCost(fee, hourly, per_hour * charged, qty, amount, fx, charge, charged, assumed)


def _charged_hours(
    fee: Fee, profile: UsageProfile, hours_used: Fraction
) -> tuple[Charge, Fraction]:
    """The hours a time-based fee accrues for in the month (rules: module docstring)."""
    assert fee.unit is not None
    if fee.fee_type is FeeType.STORAGE_STOPPED:
        if profile.keep_disks_while_stopped:
            return "stopped", HOURS_PER_MONTH - hours_used
        return "released", Fraction(0)
    stopped = fee.charged_while_stopped
    if stopped is not False and HOURS_PER_UNIT[fee.unit] >= HOURS_PER_MONTH:
        # Quoted per month (or year) and not known to stop with the instance: a
        # subscription, paid for the whole month however few hours the card runs.
        return "subscription", HOURS_PER_MONTH
    if stopped is not False and profile.keep_disks_while_stopped:
        return "kept", HOURS_PER_MONTH
    return "used", hours_used


@dataclass(frozen=True)
class StorageRoute:
    """How the profile's storage is priced on one offer (rules: module docstring)."""

    chosen: int | None = None
    """Index in ``inp.fees`` of the optional disk that holds the storage, if one does."""
    chosen_cost: FeeCost | None = None
    passed_over: Mapping[int, str] = field(default_factory=dict)
    """Optional disks not chosen, by index, with the reason."""
    unknown: bool = False
    """The profile asks for storage and the offer has no sized storage fee at all."""


def storage_route(inp: CostInput, profile: UsageProfile, conv: Converter) -> StorageRoute:
    """Where the profile's storage is paid on ``inp`` (rules: module docstring)."""
    sized = [(i, f) for i, f in enumerate(inp.fees) if sized_storage(f)]
    # A mandatory disk fee prices the storage, as any mandatory fee. A storage_stopped fee
    # alone does not: it is billed only while stopped and says nothing of the running hours.
    if any(f.mandatory and f.fee_type in _DISKS for _, f in sized):
        return StorageRoute()
    disks = [(i, f) for i, f in sized if f.fee_type in _DISKS]
    if not disks:
        return StorageRoute(unknown=profile.storage_gb > 0)
    if profile.storage_gb == 0:
        return StorageRoute(passed_over={i: "optional; no storage asked for" for i, _ in disks})
    priced: list[tuple[int, FeeCost]] = []
    for i, fee in disks:
        cost = fee_cost(fee, inp, profile, conv, storage_route=True)
        if isinstance(cost, FeeCost):
            priced.append((i, cost))
    if not priced:
        return StorageRoute()
    # The cheapest way for the month, the figure the ranking uses; ties as documented.
    best_index, best = min(priced, key=lambda p: (p[1].monthly, p[1].hourly, p[0]))
    if len(priced) == 1:
        return StorageRoute(best_index, best)
    gb, name = num(profile.storage_gb), best.fee_type.value
    passed = {
        i: f"optional; the {gb} GB storage is counted on a cheaper {name} fee"
        for i, _ in priced
        if i != best_index
    }
    return StorageRoute(best_index, best, passed)


def egress_unknown(inp: CostInput, profile: UsageProfile) -> bool:
    """The traffic the profile asks for has no known price: the offer lists no egress fee
    and the provider's billing facts do not say what traffic costs. It is then not counted,
    and said, never priced as free silently (a provider that publishes its fee would
    otherwise rank below one that does not)."""
    if profile.egress_gb_per_month <= 0 or inp.terms.egress_stated:
        return False
    return not any(fee.fee_type is FeeType.EGRESS for fee in inp.fees)
