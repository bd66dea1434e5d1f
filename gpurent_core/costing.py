"""True cost of renting an offer: per hour and per month, add-ons included, in any currency.

Everything is computed with exact ``Fraction`` arithmetic (money in as ``Decimal``, never
float) and rounded once, at the end, to 6 decimal places with ROUND_HALF_EVEN.
A month is 730 hours (``gpurent_core.units``).

Rules
-----

Fit. An offer is rented as listed: ``gpu_count`` cards. When the profile wants more cards
than that (``profile.gpus > gpu_count``), ``true_cost`` raises ``DoesNotFit`` and the caller
filters the offer out. This holds for both price bases: a per-GPU price is multiplied by the
offer's ``gpu_count``, never by the profile's, because the offer is what is rented (spiders
list each rentable card count as its own offer).

Headline per hour. The published price converted exactly to one hour (per-second and
per-minute prices scale up; day/week/month/year package prices are divided by their hours),
times ``gpu_count`` when the basis is ``gpu``. ``price_per_gpu_hour`` is the same per card.

Which add-ons count. Mandatory fees, plus traffic fees (egress/ingress) whatever their
``mandatory`` flag, because traffic is billed whenever it happens and the profile says how
much happens, plus the storage the profile asks for (below). Other optional fees, and fees
the engine cannot price, are listed in ``TrueCost.not_counted`` with the reason, never
silently dropped.

Storage. The profile's ``storage_gb`` is paid for on every offer, beyond any free
allowance, so that providers whose storage is an optional add-on do not look cheaper than
those that bill it with the instance. The fees that take it are the offer's *sized* storage
fees: type system_disk / data_disk / storage_stopped, basis gb or tb, no fixed quantity.

* When a sized storage fee is mandatory, the storage is priced through the mandatory ones
  (as any mandatory fee) and optional storage fees stay optional.
* Otherwise, when the offer sells storage as optional disks (sized system_disk or
  data_disk fees), the GB go on the cheapest of them: the one with the lowest monthly cost
  for the profile (ties: lower hourly, then the earlier fee); the others are not counted.
  Asking for 0 GB counts none.
* Otherwise (no sized storage fee at all) the storage price is unknown:
  ``TrueCost.storage_price_unknown`` is set (when storage_gb > 0) and the explanation says
  so. It is never priced as free silently.

Stock for a unit (``rentable``). An offer of N cards is rented as listed: it is in stock for
a user who needs ``cards_needed`` cards only when its status is in_stock or low, it can
supply the cards (``cards_to_rent``) and the provider's free count, when it gives one,
covers every card rented. A 2-card machine with 1 free card is not in stock. ``cheapest``,
sizing and the watches all read this one function.

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

True hourly = headline per hour + the add-ons per hour above.

True monthly = the cheapest single way the offer allows to rent ``hours_per_month``, plus
the monthly add-ons. Candidates are the headline price (always: it is what the row is, even
if it is a spot or member price) and the ``plans`` of kind ``on_demand`` or ``commitment``
(``member`` too with ``include_member=True``; ``spot`` plans never):

* a price per second/minute/hour is metered: rate x hours billed, except a ``commitment``
  rate per second/minute/hour (a reserved rate, e.g. RunPod's one-month price) which is paid
  for all 730 h of the month. Hours billed follow the provider's billing terms
  (``CostInput.terms``, from the billing facts) and the profile's sessions: the month's
  hours are ``hours_per_month / session_hours`` sessions (one session when the profile does
  not say); each session is billed for its length, plus ``boot_minutes`` unless the provider
  starts billing only when the instance is ready, rounded up to the billing granularity,
  and at least the minimum rental. Unknown terms meter exactly, with no minimum, and bill
  the boot (the explanation says which terms were unknown). Session counts may be
  fractional: they are an average, not a calendar;
* a day/week/month package is bought whole, as many as the use needs: one stretch of use
  (no sessions given) fills them back to back, ceil(hours / hours in unit); sessions are
  taken as spread evenly over the month, so a package holds only the sessions that start
  and end within it (``_packages``);
* a year package is pro-rated to a month: price / 12 (a year covers any monthly hours; the
  minimum picks it only when the hours make it worthwhile).

The minimum wins; ties go to the earlier candidate (headline first, then plans in order).
Plans and fees in another currency are converted into the offer's currency through the FX
table (rate as of ``on``); the display currency likewise.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import ROUND_HALF_EVEN, Context, Decimal
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Literal

from gpurent_core.billing_facts import BillingStart, BillingTerms, duration_text, terms_for
from gpurent_core.defaults import (
    DEFAULT_BOOT_MINUTES,
    DEFAULT_EGRESS_GB,
    DEFAULT_HOURS_PER_MONTH,
    DEFAULT_STORAGE_GB,
)
from gpurent_core.enums import (
    BillingUnit,
    FeeBasis,
    FeeType,
    PriceBasis,
    PriceKind,
    StockStatus,
)
from gpurent_core.fx import FxRate, FxTable, load_fx_table
from gpurent_core.terms import Fee, Plan
from gpurent_core.units import HOURS_PER_MONTH, HOURS_PER_UNIT, hourly_rate, to_fraction

if TYPE_CHECKING:
    from gpurent_core.model import OfferRecord

MONEY_PLACES = 6
GB_PER_TB = 1000
_METERED = frozenset({BillingUnit.SECOND, BillingUnit.MINUTE, BillingUnit.HOUR})
_TRAFFIC = frozenset({FeeType.EGRESS, FeeType.INGRESS})
_STORAGE = frozenset({FeeType.SYSTEM_DISK, FeeType.DATA_DISK, FeeType.STORAGE_STOPPED})
_DISKS = frozenset({FeeType.SYSTEM_DISK, FeeType.DATA_DISK})
_PER_SIZE = frozenset({FeeBasis.GB, FeeBasis.TB})
# Non-terminating counts in explanations (730/24 days) are shown to 6 significant digits.
_SHOWN_CONTEXT = Context(prec=6, rounding=ROUND_HALF_EVEN)


class DoesNotFit(ValueError):
    """The profile wants more GPUs than the offer has."""


def quantize_money(value: Fraction | Decimal | int) -> Decimal:
    """Round to 6 decimal places, half-even, exactly (no float, no context precision limit)."""
    frac = value if isinstance(value, Fraction) else to_fraction(value)
    scaled = round(frac * 10**MONEY_PLACES)  # Fraction.__round__ is half-even
    return Decimal(scaled).scaleb(-MONEY_PLACES)


@dataclass(frozen=True)
class UsageProfile:
    """How the user will rent: hours a month, storage, traffic, cards wanted."""

    hours_per_month: Decimal = DEFAULT_HOURS_PER_MONTH
    """Hours the instance runs in a month; 730 = always on. 0 < hours <= 730."""
    storage_gb: Decimal = DEFAULT_STORAGE_GB
    """Storage the user keeps (GB), charged by per-GB storage fees."""
    egress_gb_per_month: Decimal = DEFAULT_EGRESS_GB
    """Outbound traffic a month (GB)."""
    keep_disks_while_stopped: bool = True
    """Keep the instance (and its disks) between sessions instead of releasing it."""
    gpus: int = 1
    """How many cards the user wants; offers with fewer do not fit."""
    session_hours: Decimal | None = None
    """Length of one working session (start to stop); None: the month's hours in one go."""
    boot_minutes: Decimal = DEFAULT_BOOT_MINUTES
    """Minutes from power-on to ready, paid each session where billing starts at power-on."""

    def __post_init__(self) -> None:
        for name in ("hours_per_month", "storage_gb", "egress_gb_per_month", "boot_minutes"):
            object.__setattr__(self, name, self._check_number(name, getattr(self, name)))
        if not 0 < self.hours_per_month <= HOURS_PER_MONTH:
            raise ValueError(f"hours_per_month must be in (0, 730], got {self.hours_per_month}")
        if self.gpus < 1:
            raise ValueError(f"gpus must be >= 1, got {self.gpus}")
        if self.session_hours is not None:
            session = self._check_number("session_hours", self.session_hours)
            if not 0 < session <= self.hours_per_month:
                raise ValueError(
                    f"session_hours must be > 0 and at most hours_per_month "
                    f"({self.hours_per_month}), got {session}"
                )
            object.__setattr__(self, "session_hours", session)

    @staticmethod
    def _check_number(name: str, value: object) -> Decimal:
        if isinstance(value, float) or not isinstance(value, Decimal | int):
            raise TypeError(f"{name} must be a Decimal (never float), got {value!r}")
        value = Decimal(value)
        if not value.is_finite() or value < 0:
            raise ValueError(f"{name} must be a finite number >= 0, got {value}")
        return value

    def describe(self) -> str:
        kept = (
            "disks kept while stopped" if self.keep_disks_while_stopped else "released when stopped"
        )
        sessions = (
            f", sessions of {_num(self.session_hours)} h" if self.session_hours is not None else ""
        )
        boot = f", {_num(self.boot_minutes)} min boot" if self.boot_minutes else ""
        return (
            f"{_num(self.hours_per_month)} h/month{sessions}{boot}, storage "
            f"{_num(self.storage_gb)} GB, egress {_num(self.egress_gb_per_month)} GB/month, "
            f"{self.gpus} GPU(s), {kept}"
        )


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


@dataclass(frozen=True)
class ChosenPlan:
    """The way of renting that gives the month its base cost."""

    source: Literal["headline", "plan"]
    billing_unit: BillingUnit
    price_kind: PriceKind
    price_basis: PriceBasis
    price: Decimal
    """As published, in ``currency``, per billing unit and per basis."""
    currency: str
    offer_price: Decimal
    """Per billing unit for the whole offer, in the offer's currency (x gpu_count if per GPU)."""
    units: Decimal
    """Billing units paid for in the month: hours/seconds metered, whole packages, 1/12 year."""
    cost: Decimal
    """offer_price x units, in the offer's currency."""


@dataclass(frozen=True)
class SkippedFee:
    """A fee left out of the totals, and why."""

    fee: Fee
    reason: str


@dataclass(frozen=True)
class TrueCost:
    """What an offer really costs for a usage profile. Money rounded to 6 places."""

    currency: str
    """The offer's (native) currency."""
    base_hourly: Decimal
    """Headline price per hour for the whole offer."""
    hourly: Decimal
    """True hourly: base_hourly + add-ons per hour."""
    monthly: Decimal
    """True monthly: plan.cost + add-ons per month."""
    price_per_gpu_hour: Decimal
    plan: ChosenPlan
    addons_hourly: Mapping[FeeType, Decimal]
    addons_monthly: Mapping[FeeType, Decimal]
    display_currency: str
    hourly_display: Decimal
    monthly_display: Decimal
    price_per_gpu_hour_display: Decimal
    fx_rate: FxRate | None
    """Rate from ``currency`` to ``display_currency``; None when they are the same."""
    profile: UsageProfile
    not_counted: tuple[SkippedFee, ...] = ()
    storage_price_unknown: bool = False
    """The profile asks for storage and the offer lists no per-GB storage fee: not counted."""
    unknown_terms: tuple[str, ...] = ()
    """Billing terms of the provider that were not on file, and what was assumed instead."""
    lines: tuple[str, ...] = field(default=(), repr=False)

    def explain(self) -> str:
        """A breakdown a reader can recompute by hand."""
        return "\n".join(self.lines)


# ---------------------------------------------------------------- helpers


def _decimal_places(frac: Fraction) -> int | None:
    """Decimal places of ``frac``'s exact decimal form, or None when it does not terminate."""
    den, twos, fives = frac.denominator, 0, 0
    while den % 2 == 0:
        den, twos = den // 2, twos + 1
    while den % 5 == 0:
        den, fives = den // 5, fives + 1
    return max(twos, fives) if den == 1 else None


def _num(value: Decimal | Fraction | int) -> str:
    """A number for the explanation: Decimals as given; fractions exact when they have a finite
    decimal form (without trailing zeros), else 6 significant digits."""
    if isinstance(value, Decimal | int):
        return format(value, "f")
    places = _decimal_places(value)
    if places is not None:
        scaled = value * 10**places  # an integer, by construction
        text = format(Decimal(scaled.numerator).scaleb(-places), "f")
    else:
        num, den = Decimal(value.numerator), Decimal(value.denominator)
        text = format(_SHOWN_CONTEXT.divide(num, den), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _money(value: Fraction) -> str:
    return format(quantize_money(value), "f")


class _Converter:
    """Converts into one currency, fetching the FX table only when needed."""

    def __init__(self, fx: FxTable | None, on: date | None) -> None:
        self._fx = fx
        self._on = on

    def table(self) -> FxTable:
        if self._fx is None:
            self._fx = load_fx_table()
        return self._fx

    def rate(self, from_ccy: str, to_ccy: str) -> FxRate | None:
        if from_ccy == to_ccy:
            return None
        return self.table().rate(from_ccy, to_ccy, self._on)

    def to(self, amount: Decimal, from_ccy: str, to_ccy: str) -> tuple[Fraction, str]:
        """Exact converted amount and a note for the explanation ('' when same currency)."""
        used = self.rate(from_ccy, to_ccy)
        if used is None:
            return to_fraction(amount), ""
        converted = to_fraction(amount) * to_fraction(used.rate)
        return converted, f" [from {_num(amount)} {from_ccy} at {used.describe()}]"


def _per_gpu_hour(price: Decimal, unit: BillingUnit, basis: PriceBasis, gpu_count: int) -> Fraction:
    per_hour = hourly_rate(price, unit)
    return per_hour / gpu_count if basis is PriceBasis.INSTANCE else per_hour


def price_per_gpu_hour(
    price: Decimal, unit: BillingUnit, basis: PriceBasis, gpu_count: int
) -> Decimal:
    """Published price per hour, divided by the cards when the price is per instance."""
    if gpu_count < 1:
        raise ValueError(f"gpu_count must be >= 1, got {gpu_count}")
    return quantize_money(_per_gpu_hour(price, unit, basis, gpu_count))


# ---------------------------------------------------------------- fit and stock


def cards_to_rent(offer: Mapping[str, Any], wanted: int) -> int | None:
    """Cards the user would rent from ``offer`` (a stored row or an offer record's fields),
    or None when it cannot supply ``wanted`` cards.

    Whole-machine offers (price per instance) are rented as listed. Per-card offers (AutoDL,
    Cudo) rent more cards than listed only when the provider's free count says that many are
    free on the machine: a card price with no free count says nothing of how many cards one
    machine has, so 16 cards are never assumed from it. With no more wanted than listed,
    the listed count is rented.
    """
    count = int(offer["gpu_count"])
    if str(offer["price_basis"]) == PriceBasis.INSTANCE.value:
        return count if count >= wanted else None
    if wanted <= count:
        return count
    free = offer.get("available_count")
    return wanted if free is not None and int(free) >= wanted else None


def rentable(offer: Mapping[str, Any], cards_needed: int = 1) -> bool:
    """Whether ``offer`` can be rented now by someone who needs ``cards_needed`` cards.

    True when its status is in_stock or low, it can supply the cards (``cards_to_rent``) and
    the provider's free count, when it gives one, covers every card rented: an offer of N
    cards with fewer than N free cannot be rented as listed. Unknown stock is never
    rentable. The one rule for ``cheapest``, sizing, the dashboard and the watches.
    """
    if not StockStatus(str(offer["status"])).rentable:
        return False
    cards = cards_to_rent(offer, cards_needed)
    if cards is None:
        return False
    free = offer.get("available_count")
    return free is None or int(free) >= cards


# ---------------------------------------------------------------- add-ons


@dataclass(frozen=True)
class _FeeCost:
    fee_type: FeeType
    hourly: Fraction
    monthly: Fraction
    hourly_line: str | None
    monthly_line: str
    assumed: str | None = None
    """A term of the fee no source gave, and the reading taken (never the cheap one)."""


def _fee_quantity(fee: Fee, inp: CostInput, profile: UsageProfile) -> tuple[Fraction, str] | str:
    """Billable quantity and how it was found, or the reason the fee cannot be priced."""
    basis = fee.basis
    chosen: Fraction
    label: str
    if fee.quantity is not None:
        chosen, label = to_fraction(fee.quantity), f"{_num(fee.quantity)} {basis.value}"
    elif basis is FeeBasis.INSTANCE:
        chosen, label = Fraction(1), "1 instance"
    elif basis is FeeBasis.GPU:
        chosen, label = Fraction(inp.gpu_count), f"{inp.gpu_count} gpu"
    elif basis in (FeeBasis.VCPU, FeeBasis.GIB_RAM):
        return f"per-{basis.value} fee without a fixed quantity"
    else:
        if fee.fee_type is FeeType.INGRESS:
            return "the usage profile has no ingress volume"
        if fee.fee_type is FeeType.EGRESS:
            volume_gb, what = profile.egress_gb_per_month, "egress GB"
        else:
            volume_gb, what = profile.storage_gb, "storage GB"
        chosen = to_fraction(volume_gb)
        label = f"{_num(volume_gb)} {what}"
        if basis is FeeBasis.TB:
            chosen /= GB_PER_TB
            label = f"{_num(chosen)} TB ({label} / {GB_PER_TB})"
    if fee.included_quantity is not None:
        included = to_fraction(fee.included_quantity)
        billable = max(Fraction(0), chosen - included)
        return (
            billable,
            f"{_num(billable)} {basis.value} (= max(0, {label} - {_num(included)} included))",
        )
    return chosen, label


def _sized_storage(fee: Fee) -> bool:
    """A storage fee charged on a size the user chooses (rules: module docstring)."""
    return fee.fee_type in _STORAGE and fee.basis in _PER_SIZE and fee.quantity is None


def _fee_cost(
    fee: Fee,
    inp: CostInput,
    profile: UsageProfile,
    conv: _Converter,
    *,
    storage_route: bool = False,
) -> _FeeCost | str:
    """Cost of one fee, or why it is not counted; ``storage_route``: the optional disk
    chosen to hold the profile's storage, counted as if it were mandatory."""
    if not fee.mandatory and fee.fee_type not in _TRAFFIC and not storage_route:
        return "optional"
    if fee.fee_type in _TRAFFIC and fee.unit is not None:
        return f"traffic fee quoted per {fee.unit.value}"
    found = _fee_quantity(fee, inp, profile)
    if isinstance(found, str):
        return found
    qty, qty_label = found
    amount, fx_note = conv.to(fee.amount, fee.currency, inp.currency)
    shown = _num(amount) if fx_note else _num(fee.amount)  # as published when not converted
    name = fee.fee_type.value
    ccy = inp.currency
    hours_used = to_fraction(profile.hours_per_month)

    if fee.unit is None:
        monthly = amount * qty
        hourly = monthly / hours_used
        kind = "per month" if fee.fee_type in _TRAFFIC else "once a month (one-off per rental)"
        monthly_line = f"+ {name} {shown} {ccy} x {qty_label} {kind} = {_money(monthly)}{fx_note}"
        spread = f"+ {name} {_money(monthly)} / {_num(hours_used)} h = {_money(hourly)}/h"
        return _FeeCost(fee.fee_type, hourly, monthly, spread, monthly_line)

    unit_hours = HOURS_PER_UNIT[fee.unit]
    per_hour = amount * qty / unit_hours
    hourly_line: str | None
    assumed: str | None = None
    if fee.fee_type is FeeType.STORAGE_STOPPED:
        charged = HOURS_PER_MONTH - hours_used if profile.keep_disks_while_stopped else Fraction(0)
        why = "stopped hours, 730 - used" if profile.keep_disks_while_stopped else "released"
        hourly = Fraction(0)
        hourly_line = None
    else:
        stopped = fee.charged_while_stopped
        if stopped is not False and unit_hours >= HOURS_PER_MONTH:
            # Quoted per month (or year) and not known to stop with the instance: a
            # subscription, paid for the whole month however few hours the card runs.
            charged, why = HOURS_PER_MONTH, f"the whole month, {_num(hours_used)} h used"
        elif stopped is not False and profile.keep_disks_while_stopped:
            charged, why = HOURS_PER_MONTH, "730 h, kept while stopped"
        else:
            charged, why = hours_used, f"{_num(hours_used)} h used"
        if stopped is None and charged == HOURS_PER_MONTH and hours_used < HOURS_PER_MONTH:
            why += ": assumed charged while stopped"
            assumed = f"whether the {name} fee is charged while stopped (counted as charged)"
        hourly = per_hour
        per_unit = "" if unit_hours == 1 else f" / {_num(unit_hours)} h"
        hourly_line = (
            f"+ {name} {shown} {ccy}/{fee.unit.value} x {qty_label}{per_unit}"
            f" = {_money(hourly)}/h{fx_note}"
        )
    monthly = per_hour * charged
    monthly_line = (
        f"+ {name} {shown} {ccy}/{fee.unit.value} x {qty_label}"
        f" x {_num(charged / unit_hours)} {fee.unit.value} ({why}) = {_money(monthly)}{fx_note}"
    )
    return _FeeCost(fee.fee_type, hourly, monthly, hourly_line, monthly_line, assumed)


@dataclass(frozen=True)
class _StorageRoute:
    """How the profile's storage is priced on one offer (rules: module docstring)."""

    chosen: int | None = None
    """Index in ``inp.fees`` of the optional disk that holds the storage, if one does."""
    chosen_cost: _FeeCost | None = None
    passed_over: Mapping[int, str] = field(default_factory=dict)
    """Optional disks not chosen, by index, with the reason."""
    unknown: bool = False
    note: str = ""


def _storage_route(inp: CostInput, profile: UsageProfile, conv: _Converter) -> _StorageRoute:
    sized = [(i, f) for i, f in enumerate(inp.fees) if _sized_storage(f)]
    gb = _num(profile.storage_gb)
    if any(f.mandatory for _, f in sized):
        return _StorageRoute()  # priced through the mandatory fees, as any mandatory fee
    disks = [(i, f) for i, f in sized if f.fee_type in _DISKS]
    if not disks:
        if profile.storage_gb > 0:
            return _StorageRoute(
                unknown=True,
                note=f"Storage price unknown: the feed lists no per-GB storage fee, "
                f"so the {gb} GB asked for are not counted.",
            )
        return _StorageRoute()
    if profile.storage_gb == 0:
        return _StorageRoute(passed_over={i: "optional; no storage asked for" for i, _ in disks})
    priced: list[tuple[int, _FeeCost]] = []
    for i, fee in disks:
        cost = _fee_cost(fee, inp, profile, conv, storage_route=True)
        if isinstance(cost, _FeeCost):
            priced.append((i, cost))
    if not priced:
        return _StorageRoute()
    # The cheapest way for the month, the figure the ranking uses; ties as documented.
    best_index, best = min(priced, key=lambda p: (p[1].monthly, p[1].hourly, p[0]))
    name = inp.fees[best_index].fee_type.value
    passed = {
        i: f"optional; the {gb} GB storage is counted on a cheaper {name} fee"
        for i, _ in priced
        if i != best_index
    }
    note = (
        f"Storage: the {gb} GB asked for are counted on the optional {name} fee, "
        "the cheapest way this offer sells storage."
    )
    return _StorageRoute(best_index, best, passed, note=note)


# ---------------------------------------------------------------- metering


@dataclass(frozen=True)
class _Metered:
    """Hours a metered price is paid for in the month, and how they were found."""

    hours: Fraction
    how: str
    unknown: tuple[str, ...]
    """Billing terms that were unknown and so assumed (exact metering, boot billed)."""


def _metered_hours(profile: UsageProfile, terms: BillingTerms) -> _Metered:
    """Hours billed for ``profile``'s use under ``terms`` (rules: module docstring)."""
    used = to_fraction(profile.hours_per_month)
    session = to_fraction(profile.session_hours) if profile.session_hours is not None else used
    sessions = used / session
    unknown: list[str] = []
    per_session = session
    parts = [f"{_num(session)} h"]
    boot = to_fraction(profile.boot_minutes) / 60
    if boot:
        if terms.starts is BillingStart.READY:
            parts.append("boot free")
        else:
            per_session += boot
            parts.append(f"{_num(boot)} h boot")
            if terms.starts is None:
                unknown.append("when billing starts (boot counted)")
    if terms.granularity_s is not None:
        step = Fraction(terms.granularity_s, 3600)
        rounded = math.ceil(per_session / step) * step
        if rounded != per_session:
            parts.append(
                f"rounded up to {_num(rounded)} h, billed per {duration_text(terms.granularity_s)}"
            )
        per_session = rounded
    else:
        unknown.append("billing granularity (metered exactly)")
    if terms.minimum_s is not None:
        minimum = Fraction(terms.minimum_s, 3600)
        if per_session < minimum:
            parts.append(f"raised to the {_num(minimum)} h minimum")
            per_session = minimum
    else:
        unknown.append("minimum rental (none assumed)")
    billed = sessions * per_session
    if billed == used:
        how = f"{_num(used)} h used"
    else:
        how = f"{_num(sessions)} session(s) x {_num(per_session)} h billed ({', '.join(parts)})"
    return _Metered(billed, how, tuple(unknown))


# ---------------------------------------------------------------- plans


@dataclass(frozen=True)
class _Candidate:
    source: Literal["headline", "plan"]
    unit: BillingUnit
    kind: PriceKind
    basis: PriceBasis
    price: Decimal
    currency: str
    offer_price: Fraction
    units: Fraction
    line: str

    @property
    def cost(self) -> Fraction:
        return self.offer_price * self.units


def _candidate(
    source: Literal["headline", "plan"],
    price: Decimal,
    currency: str,
    unit: BillingUnit,
    basis: PriceBasis,
    kind: PriceKind,
    inp: CostInput,
    profile: UsageProfile,
    metered: _Metered,
    conv: _Converter,
) -> _Candidate:
    native, fx_note = conv.to(price, currency, inp.currency)
    shown = _num(native) if fx_note else _num(price)
    multiplier = inp.gpu_count if basis is PriceBasis.GPU else 1
    offer_price = native * multiplier
    unit_hours = HOURS_PER_UNIT[unit]
    if unit in _METERED:
        if kind is PriceKind.COMMITMENT:
            units, how = HOURS_PER_MONTH / unit_hours, "reserved: all 730 h"
        else:
            units, how = metered.hours / unit_hours, metered.how
    elif unit is BillingUnit.YEAR:
        units, how = HOURS_PER_MONTH / unit_hours, "year pro-rated: 1/12"
    else:
        units, how = _packages(profile, unit_hours, unit.value)
    per_gpu = f" x {inp.gpu_count} gpu" if basis is PriceBasis.GPU else ""
    line = (
        f"{source} {kind.value}: {shown} {inp.currency}/{unit.value}{per_gpu}"
        f" x {_num(units)} {unit.value} ({how}) = {_money(offer_price * units)}{fx_note}"
    )
    return _Candidate(source, unit, kind, basis, price, currency, offer_price, units, line)


def _packages(profile: UsageProfile, unit_hours: Fraction, unit: str) -> tuple[Fraction, str]:
    """Whole day/week/month packages that hold the profile's use, and how they were found.

    One stretch of use (no sessions given) fills packages back to back. Sessions are spread
    evenly over the month (a session starts every 730 h / sessions): a package bought at a
    session's start holds that session and every later one that ends before it runs out,
    and a session longer than a package takes several. Never fewer packages than back to
    back, never more than cover the whole month.
    """
    used = to_fraction(profile.hours_per_month)
    back_to_back = math.ceil(used / unit_hours)
    session = to_fraction(profile.session_hours) if profile.session_hours is not None else used
    if session >= used:
        return Fraction(back_to_back), (
            f"ceil({_num(used)} h / {_num(unit_hours)} h), used back to back"
        )
    sessions = math.ceil(used / session)
    if session > unit_hours:
        per_session = math.ceil(session / unit_hours)
        count = sessions * per_session
        how = f"{sessions} sessions of {_num(session)} h, {per_session} {unit}s each"
    else:
        gap = HOURS_PER_MONTH / sessions
        held = math.floor((unit_hours - session) / gap) + 1
        count = math.ceil(sessions / held)
        how = f"{sessions} sessions of {_num(session)} h spread over the month, {held} per {unit}"
    count = max(back_to_back, min(count, math.ceil(HOURS_PER_MONTH / unit_hours)))
    return Fraction(count), how


def _plan_allowed(kind: PriceKind, include_member: bool) -> bool:
    return kind in (PriceKind.ON_DEMAND, PriceKind.COMMITMENT) or (
        include_member and kind is PriceKind.MEMBER
    )


def _candidates(
    inp: CostInput,
    profile: UsageProfile,
    metered: _Metered,
    conv: _Converter,
    include_member: bool,
) -> list[_Candidate]:
    out = [
        _candidate(
            "headline",
            inp.price,
            inp.currency,
            inp.billing_unit,
            inp.price_basis,
            inp.price_kind,
            inp,
            profile,
            metered,
            conv,
        )
    ]
    for plan in inp.plans:
        if _plan_allowed(plan.price_kind, include_member):
            out.append(
                _candidate(
                    "plan",
                    plan.price,
                    plan.currency,
                    plan.billing_unit,
                    plan.price_basis,
                    plan.price_kind,
                    inp,
                    profile,
                    metered,
                    conv,
                )
            )
    return out


# ---------------------------------------------------------------- the engine


def true_cost(
    inp: CostInput,
    profile: UsageProfile,
    *,
    display_currency: str | None = None,
    fx: FxTable | None = None,
    on: date | None = None,
    include_member: bool = False,
) -> TrueCost:
    """True hourly and monthly cost of ``inp`` for ``profile`` (rules: module docstring).

    ``fx`` defaults to the built-in table plus ``GPURENT_FX`` (read only if a conversion is
    needed); ``on`` dates the FX lookups (latest rate when None). Raises ``DoesNotFit`` when
    the profile wants more GPUs than the offer has, ``gpurent_core.fx.FxRateMissing`` when a
    needed rate is absent.
    """
    if profile.gpus > inp.gpu_count:
        raise DoesNotFit(f"profile wants {profile.gpus} GPU(s), the offer has {inp.gpu_count}")
    conv = _Converter(fx, on)
    ccy = inp.currency
    display = display_currency or ccy
    hours_used = to_fraction(profile.hours_per_month)

    base_hourly = hourly_rate(inp.price, inp.billing_unit) * (
        inp.gpu_count if inp.price_basis is PriceBasis.GPU else 1
    )
    per_gpu_hour = _per_gpu_hour(inp.price, inp.billing_unit, inp.price_basis, inp.gpu_count)

    route = _storage_route(inp, profile, conv)
    fee_costs: list[_FeeCost] = []
    skipped: list[SkippedFee] = []
    for index, fee in enumerate(inp.fees):
        if index in route.passed_over:
            skipped.append(SkippedFee(fee, route.passed_over[index]))
            continue
        if index == route.chosen and route.chosen_cost is not None:
            fee_costs.append(route.chosen_cost)
            continue
        result = _fee_cost(fee, inp, profile, conv)
        if isinstance(result, str):
            skipped.append(SkippedFee(fee, result))
        else:
            fee_costs.append(result)

    # Billed hours depend only on the profile and the terms: worked out once per offer.
    metered = _metered_hours(profile, inp.terms)
    candidates = _candidates(inp, profile, metered, conv, include_member)
    best = min(enumerate(candidates), key=lambda pair: (pair[1].cost, pair[0]))[1]
    metered_candidates = any(
        c.unit in _METERED and c.kind is not PriceKind.COMMITMENT for c in candidates
    )
    unknown_terms = (metered.unknown if metered_candidates else ()) + tuple(
        c.assumed for c in fee_costs if c.assumed is not None
    )

    addons_hourly: dict[FeeType, Fraction] = {}
    addons_monthly: dict[FeeType, Fraction] = {}
    for cost in fee_costs:
        addons_hourly[cost.fee_type] = addons_hourly.get(cost.fee_type, Fraction(0)) + cost.hourly
        addons_monthly[cost.fee_type] = (
            addons_monthly.get(cost.fee_type, Fraction(0)) + cost.monthly
        )
    hourly = base_hourly + sum(addons_hourly.values(), Fraction(0))
    monthly = best.cost + sum(addons_monthly.values(), Fraction(0))

    fx_rate = conv.rate(ccy, display)
    factor = to_fraction(fx_rate.rate) if fx_rate is not None else Fraction(1)

    # The explanation, built from the same exact numbers.
    per_gpu = f" x {inp.gpu_count} gpu" if inp.price_basis is PriceBasis.GPU else " (whole offer)"
    per_unit = (
        ""
        if inp.billing_unit is BillingUnit.HOUR
        else f" / {_num(HOURS_PER_UNIT[inp.billing_unit])} h"
    )
    lines = [
        f"Profile: {profile.describe()}.",
        f"Hourly ({ccy}):",
        f"  headline {inp.price_kind.value} {_num(inp.price)} {ccy}/{inp.billing_unit.value}"
        f"{per_unit}{per_gpu} = {_money(base_hourly)}/h"
        f" ({_money(per_gpu_hour)} per GPU-hour over {inp.gpu_count} gpu)",
    ]
    lines += [f"  {c.hourly_line}" for c in fee_costs if c.hourly_line is not None]
    lines.append(f"  = {_money(hourly)} {ccy}/h")
    lines.append(f"Monthly ({ccy}), cheapest way to rent {_num(hours_used)} h:")
    lines.append(f"  {best.line}")
    lines += [f"    (also considered: {c.line})" for c in candidates if c is not best]
    lines += [
        f"    (not considered: plan {p.price_kind.value} {_num(p.price)} {p.currency}"
        f"/{p.billing_unit.value}: {p.price_kind.value} plans do not count)"
        for p in inp.plans
        if not _plan_allowed(p.price_kind, include_member)
    ]
    lines += [f"  {c.monthly_line}" for c in fee_costs]
    lines.append(f"  = {_money(monthly)} {ccy}/month")
    lines += [f"Not counted: {s.fee.fee_type.value} ({s.reason})" for s in skipped]
    if route.note:
        lines.append(route.note)
    if unknown_terms:
        lines.append(f"Billing terms not on file, assumed: {'; '.join(unknown_terms)}.")
    if fx_rate is not None:
        lines.append(
            f"In {display}: x {fx_rate.describe()}: "
            f"{_money(hourly * factor)} {display}/h, {_money(monthly * factor)} {display}/month"
        )

    plan = ChosenPlan(
        source=best.source,
        billing_unit=best.unit,
        price_kind=best.kind,
        price_basis=best.basis,
        price=best.price,
        currency=best.currency,
        offer_price=quantize_money(best.offer_price),
        units=quantize_money(best.units),
        cost=quantize_money(best.cost),
    )
    return TrueCost(
        currency=ccy,
        base_hourly=quantize_money(base_hourly),
        hourly=quantize_money(hourly),
        monthly=quantize_money(monthly),
        price_per_gpu_hour=quantize_money(per_gpu_hour),
        plan=plan,
        addons_hourly={k: quantize_money(v) for k, v in addons_hourly.items()},
        addons_monthly={k: quantize_money(v) for k, v in addons_monthly.items()},
        display_currency=display,
        hourly_display=quantize_money(hourly * factor),
        monthly_display=quantize_money(monthly * factor),
        price_per_gpu_hour_display=quantize_money(per_gpu_hour * factor),
        fx_rate=fx_rate,
        profile=profile,
        not_counted=tuple(skipped),
        storage_price_unknown=route.unknown,
        unknown_terms=unknown_terms,
        lines=tuple(lines),
    )


def rank_key(tc: TrueCost) -> tuple[Decimal, Decimal]:
    """Sort key: true monthly, then true hourly, both in the display currency."""
    return (tc.monthly_display, tc.hourly_display)
