"""The cost engine: the true hourly and monthly cost of one offer for a usage profile.

``true_cost`` puts the parts together: the headline per hour (``offer``), the add-on fees
and the storage (``fees``), the cheapest way of renting the month (``plans``, over the
hours ``metering`` bills), then the display currency. It computes numbers only; the
explanation is written from the same exact figures when it is asked for (``explanation``).

True hourly = headline per hour + the add-ons per hour.

True monthly = the cheapest single way the offer allows to rent ``hours_per_month``
(``plans``), plus the monthly add-ons.

The display currency converts both through the FX table (rate as of ``on``); every figure
is rounded once, at the end, to 6 places.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from fractions import Fraction
from functools import cached_property

from gpurent_core.cost.explanation import Working, explanation_lines
from gpurent_core.cost.fees import (
    FeeCost,
    SkippedFee,
    StorageRoute,
    egress_unknown,
    fee_cost,
    storage_route,
)
from gpurent_core.cost.metering import METERED, Metered, metered_hours
from gpurent_core.cost.money import Converter, quantize_money
from gpurent_core.cost.offer import CostInput, DoesNotFit, headline_hourly, per_gpu_hour
from gpurent_core.cost.plans import Candidate, ChosenPlan, candidates, cheapest
from gpurent_core.cost.usage import UsageProfile
from gpurent_core.enums import FeeType, PriceKind
from gpurent_core.fx import FxRate, FxTable
from gpurent_core.units import to_fraction


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
    working: Working = field(repr=False, compare=False)
    """The exact figures the explanation is written from (``explanation``)."""
    not_counted: tuple[SkippedFee, ...] = ()
    storage_price_unknown: bool = False
    """The profile asks for storage and the offer lists no per-GB storage fee: not counted."""
    egress_price_unknown: bool = False
    """The profile asks for outbound traffic, the offer lists no egress fee and the
    provider's billing facts do not say what traffic costs: not counted (``egress_unknown``)."""
    unknown_terms: tuple[str, ...] = ()
    """Billing terms of the provider that were not on file, and what was assumed instead."""

    @property
    def per_hour_used_display(self) -> Decimal:
        """What an hour of the profile's use really costs, in the display currency: the true
        monthly over the profile's hours, so a day or month package, a minimum rental and
        the billing granularity are in it (``hourly`` is the listed rate plus add-ons, the
        price of an hour metered alone). The figure every per-hour comparison uses: buy or
        rent, the market's median, cost per token, rent or API."""
        return quantize_money(
            to_fraction(self.monthly_display) / to_fraction(self.profile.hours_per_month)
        )

    @cached_property
    def lines(self) -> tuple[str, ...]:
        """The breakdown line by line, written on first use."""
        return explanation_lines(self.working)

    def explain(self) -> str:
        """A breakdown a reader can recompute by hand."""
        return "\n".join(self.lines)


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
    conv = Converter(fx, on)
    return _result(_work(inp, profile, conv, display_currency or inp.currency, include_member))


def _work(
    inp: CostInput, profile: UsageProfile, conv: Converter, display: str, include_member: bool
) -> Working:
    """Every exact figure of the cost, in the order the rules take them."""
    route = storage_route(inp, profile, conv)
    fee_costs, skipped = _fees(inp, profile, conv, route)
    # Billed hours depend only on the profile and the terms: worked out once per offer.
    metered = metered_hours(profile, inp.terms)
    options = tuple(candidates(inp, profile, metered, conv, include_member))
    best = cheapest(list(options))
    base_hourly = headline_hourly(inp)
    return Working(
        inp=inp,
        profile=profile,
        include_member=include_member,
        base_hourly=base_hourly,
        per_gpu_hour=per_gpu_hour(inp.price, inp.billing_unit, inp.price_basis, inp.gpu_count),
        fee_costs=fee_costs,
        skipped=skipped,
        route=route,
        metered=metered,
        candidates=options,
        best=best,
        hourly=base_hourly + sum((c.hourly for c in fee_costs), Fraction(0)),
        monthly=best.cost + sum((c.monthly for c in fee_costs), Fraction(0)),
        unknown_terms=_unknown_terms(metered, options, fee_costs),
        display=display,
        fx_rate=conv.rate(inp.currency, display),
    )


def _result(w: Working) -> TrueCost:
    """The figures rounded once, to 6 places, native and in the display currency."""
    factor = to_fraction(w.fx_rate.rate) if w.fx_rate is not None else Fraction(1)
    return TrueCost(
        currency=w.inp.currency,
        base_hourly=quantize_money(w.base_hourly),
        hourly=quantize_money(w.hourly),
        monthly=quantize_money(w.monthly),
        price_per_gpu_hour=quantize_money(w.per_gpu_hour),
        plan=_chosen(w.best),
        addons_hourly=_by_type(w.fee_costs, lambda c: c.hourly),
        addons_monthly=_by_type(w.fee_costs, lambda c: c.monthly),
        display_currency=w.display,
        hourly_display=quantize_money(w.hourly * factor),
        monthly_display=quantize_money(w.monthly * factor),
        price_per_gpu_hour_display=quantize_money(w.per_gpu_hour * factor),
        fx_rate=w.fx_rate,
        profile=w.profile,
        working=w,
        not_counted=w.skipped,
        storage_price_unknown=w.route.unknown,
        egress_price_unknown=egress_unknown(w.inp, w.profile),
        unknown_terms=w.unknown_terms,
    )


def _fees(
    inp: CostInput, profile: UsageProfile, conv: Converter, route: StorageRoute
) -> tuple[tuple[FeeCost, ...], tuple[SkippedFee, ...]]:
    """Every fee of the offer, counted or skipped with the reason, in the offer's order."""
    counted: list[FeeCost] = []
    skipped: list[SkippedFee] = []
    for index, fee in enumerate(inp.fees):
        if index in route.passed_over:
            skipped.append(SkippedFee(fee, route.passed_over[index]))
        elif index == route.chosen and route.chosen_cost is not None:
            counted.append(route.chosen_cost)
        elif isinstance(result := fee_cost(fee, inp, profile, conv), str):
            skipped.append(SkippedFee(fee, result))
        else:
            counted.append(result)
    return tuple(counted), tuple(skipped)


def _by_type(
    costs: tuple[FeeCost, ...], figure: Callable[[FeeCost], Fraction]
) -> dict[FeeType, Decimal]:
    """One total per fee type, in the order the types first appear, rounded once."""
    totals: dict[FeeType, Fraction] = {}
    for cost in costs:
        totals[cost.fee_type] = totals.get(cost.fee_type, Fraction(0)) + figure(cost)
    return {k: quantize_money(v) for k, v in totals.items()}


def _unknown_terms(
    metered: Metered, options: tuple[Candidate, ...], fee_costs: tuple[FeeCost, ...]
) -> tuple[str, ...]:
    """The billing terms assumed: the metering ones when a metered price was considered,
    then each fee's unknown 'charged while stopped'."""
    metered_options = any(c.unit in METERED and c.kind is not PriceKind.COMMITMENT for c in options)
    return (metered.unknown if metered_options else ()) + tuple(
        c.assumed for c in fee_costs if c.assumed is not None
    )


def _chosen(best: Candidate) -> ChosenPlan:
    return ChosenPlan(
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


def rank_key(tc: TrueCost) -> tuple[Decimal, Decimal]:
    """Sort key: true monthly, then true hourly, both in the display currency."""
    return (tc.monthly_display, tc.hourly_display)
