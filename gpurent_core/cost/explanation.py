"""The breakdown of a true cost that a reader can recompute by hand.

The engine keeps the exact figures of each costing (``Working``); the text is written from
them only when it is asked for (``TrueCost.explain()`` / ``TrueCost.lines``), so that
ranking thousands of offers builds no strings. Every line shows the numbers it is made of:
the headline price per hour, each fee on its quantity and hours, every way of renting the
month that was considered (and the plans that were not), what was not counted and why, the
billing terms that were assumed, and the FX rate into the display currency.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from gpurent_core.billing_facts import duration_text
from gpurent_core.cost.fees import (
    GB_PER_TB,
    TRAFFIC,
    FeeCost,
    SkippedFee,
    StorageRoute,
    egress_unknown,
)
from gpurent_core.cost.metering import Metered
from gpurent_core.cost.money import money, num
from gpurent_core.cost.offer import CostInput
from gpurent_core.cost.plans import Candidate, Packages, plan_allowed
from gpurent_core.cost.usage import UsageProfile
from gpurent_core.enums import BillingUnit, FeeBasis, FeeType, PriceBasis
from gpurent_core.fx import FxRate
from gpurent_core.units import HOURS_PER_UNIT


@dataclass(frozen=True)
class Working:
    """The exact figures of one costing, kept so that the explanation can be written later."""

    inp: CostInput
    profile: UsageProfile
    include_member: bool
    base_hourly: Fraction
    per_gpu_hour: Fraction
    fee_costs: tuple[FeeCost, ...]
    skipped: tuple[SkippedFee, ...]
    route: StorageRoute
    metered: Metered
    candidates: tuple[Candidate, ...]
    best: Candidate
    hourly: Fraction
    monthly: Fraction
    unknown_terms: tuple[str, ...]
    display: str
    fx_rate: FxRate | None


def explanation_lines(w: Working) -> tuple[str, ...]:
    """The breakdown, line by line, in the order ``gpurent explain`` prints it."""
    inp, ccy = w.inp, w.inp.currency
    per_gpu = f" x {inp.gpu_count} gpu" if inp.price_basis is PriceBasis.GPU else " (whole offer)"
    per_unit = (
        ""
        if inp.billing_unit is BillingUnit.HOUR
        else f" / {num(HOURS_PER_UNIT[inp.billing_unit])} h"
    )
    lines = [
        f"Profile: {w.profile.describe()}.",
        f"Hourly ({ccy}):",
        f"  headline {inp.price_kind.value} {num(inp.price)} {ccy}/{inp.billing_unit.value}"
        f"{per_unit}{per_gpu} = {money(w.base_hourly)}/h"
        f" ({money(w.per_gpu_hour)} per GPU-hour over {inp.gpu_count} gpu)",
    ]
    lines += [f"  {line}" for c in w.fee_costs if (line := _fee_hourly(c, w)) is not None]
    lines.append(f"  = {money(w.hourly)} {ccy}/h")
    lines.append(f"Monthly ({ccy}), cheapest way to rent {num(w.metered.used)} h:")
    lines.append(f"  {_candidate(w.best, w)}")
    lines += [f"    (also considered: {_candidate(c, w)})" for c in w.candidates if c is not w.best]
    lines += [
        f"    (not considered: plan {p.price_kind.value} {num(p.price)} {p.currency}"
        f"/{p.billing_unit.value}: {p.price_kind.value} plans do not count"
        f"{' beside an ' + inp.price_kind.value + ' price' if p.price_kind.value == 'spot' else ''})"
        for p in inp.plans
        if not plan_allowed(p.price_kind, w.include_member, inp.price_kind)
    ]
    lines += [f"  {_fee_monthly(c, w)}" for c in w.fee_costs]
    lines.append(f"  = {money(w.monthly)} {ccy}/month")
    lines += [f"Not counted: {s.fee.fee_type.value} ({s.reason})" for s in w.skipped]
    note = _storage_note(w.route, w)
    if note:
        lines.append(note)
    if egress_unknown(w.inp, w.profile):
        lines.append(
            f"Egress price unknown: the feed lists no traffic fee and the provider's billing "
            f"facts do not say what traffic costs, so the {num(w.profile.egress_gb_per_month)}"
            " GB a month asked for are not counted."
        )
    if w.unknown_terms:
        lines.append(f"Billing terms not on file, assumed: {'; '.join(w.unknown_terms)}.")
    if w.fx_rate is not None:
        factor = Fraction(w.fx_rate.rate)
        lines.append(
            f"In {w.display}: x {w.fx_rate.describe()}: {money(w.hourly * factor)} "
            f"{w.display}/h, {money(w.monthly * factor)} {w.display}/month"
        )
    return tuple(lines)


def _fx_note(amount: object, currency: str, fx: FxRate | None) -> str:
    return "" if fx is None else f" [from {amount} {currency} at {fx.describe()}]"


# ---------------------------------------------------------------- fees


def _quantity_label(c: FeeCost, w: Working) -> str:
    fee, basis, q = c.fee, c.fee.basis, c.quantity
    if fee.quantity is not None:
        label = f"{num(fee.quantity)} {basis.value}"
    elif basis is FeeBasis.INSTANCE:
        label = "1 instance"
    elif basis is FeeBasis.GPU:
        label = f"{w.inp.gpu_count} gpu"
    else:
        if fee.fee_type is FeeType.EGRESS:
            volume_gb, what = w.profile.egress_gb_per_month, "egress GB"
        else:
            volume_gb, what = w.profile.storage_gb, "storage GB"
        label = f"{num(volume_gb)} {what}"
        if basis is FeeBasis.TB:
            label = f"{num(q.chosen)} TB ({label} / {GB_PER_TB})"
    if q.included is not None:
        return f"{num(q.billable)} {basis.value} (= max(0, {label} - {num(q.included)} included))"
    return label


def _fee_shown(c: FeeCost) -> tuple[str, str]:
    """The fee's amount as shown (as published when not converted) and its FX note."""
    if c.fx is None:
        return num(c.fee.amount), ""
    return num(c.amount), _fx_note(num(c.fee.amount), c.fee.currency, c.fx)


def _fee_hourly(c: FeeCost, w: Working) -> str | None:
    name, ccy = c.fee_type.value, w.inp.currency
    if c.charge == "once":
        used = num(w.metered.used)
        return f"+ {name} {money(c.monthly)} / {used} h = {money(c.hourly)}/h"
    if c.charge in ("stopped", "released"):
        return None  # billed only while stopped: nothing on the running hour
    assert c.fee.unit is not None
    shown, fx_note = _fee_shown(c)
    unit_hours = HOURS_PER_UNIT[c.fee.unit]
    per_unit = "" if unit_hours == 1 else f" / {num(unit_hours)} h"
    return (
        f"+ {name} {shown} {ccy}/{c.fee.unit.value} x {_quantity_label(c, w)}{per_unit}"
        f" = {money(c.hourly)}/h{fx_note}"
    )


def _fee_monthly(c: FeeCost, w: Working) -> str:
    name, ccy = c.fee_type.value, w.inp.currency
    shown, fx_note = _fee_shown(c)
    label = _quantity_label(c, w)
    if c.fee.unit is None:
        kind = "per month" if c.fee_type in TRAFFIC else "once a month (one-off per rental)"
        return f"+ {name} {shown} {ccy} x {label} {kind} = {money(c.monthly)}{fx_note}"
    used = num(w.metered.used)
    why = {
        "stopped": "stopped hours, 730 - used",
        "released": "released",
        "subscription": f"the whole month, {used} h used",
        "kept": "730 h, kept while stopped",
        "used": f"{used} h used",
        "once": "",
    }[c.charge]
    if c.assumed is not None:
        why += ": assumed charged while stopped"
    units = num(c.charged_hours / HOURS_PER_UNIT[c.fee.unit])
    return (
        f"+ {name} {shown} {ccy}/{c.fee.unit.value} x {label}"
        f" x {units} {c.fee.unit.value} ({why}) = {money(c.monthly)}{fx_note}"
    )


def _storage_note(route: StorageRoute, w: Working) -> str:
    gb = num(w.profile.storage_gb)
    if route.unknown:
        return (
            f"Storage price unknown: the feed lists no per-GB storage fee for the running "
            f"hours, so the {gb} GB asked for are not counted."
        )
    if route.chosen is not None:
        name = w.inp.fees[route.chosen].fee_type.value
        return (
            f"Storage: the {gb} GB asked for are counted on the optional {name} fee, "
            "the cheapest way this offer sells storage."
        )
    return ""


# ---------------------------------------------------------------- the month


def _metered_how(m: Metered) -> str:
    if m.hours == m.used:
        return f"{num(m.used)} h used"
    parts = [f"{num(m.session)} h"]
    if m.boot:
        parts.append("boot free" if m.boot_free else f"{num(m.boot)} h boot")
    if m.rounded_to is not None:
        assert m.granularity_s is not None
        parts.append(
            f"rounded up to {num(m.rounded_to)} h, billed per {duration_text(m.granularity_s)}"
        )
    if m.raised_to_minimum is not None:
        parts.append(f"raised to the {num(m.raised_to_minimum)} h minimum")
    return f"{num(m.sessions)} session(s) x {num(m.per_session)} h billed ({', '.join(parts)})"


def _packages_how(p: Packages, unit: str) -> str:
    if p.sessions is None:
        return f"ceil({num(p.used)} h / {num(p.unit_hours)} h), used back to back"
    if p.per_session is not None:
        return f"{p.sessions} sessions of {num(p.session)} h, {p.per_session} {unit}s each"
    return f"{p.sessions} sessions of {num(p.session)} h spread over the month, {p.held} per {unit}"


def _candidate(c: Candidate, w: Working) -> str:
    how: str
    if c.way == "reserved":
        how = "reserved: all 730 h"
    elif c.way == "metered":
        how = _metered_how(w.metered)
    elif c.way == "year":
        how = "year pro-rated: 1/12"
    else:
        assert c.packages is not None
        how = _packages_how(c.packages, c.unit.value)
    inp = w.inp
    shown = num(c.native) if c.fx is not None else num(c.price)
    fx_note = _fx_note(num(c.price), c.currency, c.fx)
    per_gpu = f" x {inp.gpu_count} gpu" if c.basis is PriceBasis.GPU else ""
    return (
        f"{c.source} {c.kind.value}: {shown} {inp.currency}/{c.unit.value}{per_gpu}"
        f" x {num(c.units)} {c.unit.value} ({how}) = {money(c.cost)}{fx_note}"
    )
