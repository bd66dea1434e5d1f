"""Billing terms in the cost engine: granularity, minimum rental, billed boot time.

Hand-computed examples first, then properties. The terms come from the billing facts in
production (``gpurent_core.billing_facts.terms_for``); here they are given directly.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpurent_core.billing_facts import BillingStart, BillingTerms
from gpurent_core.cost.engine import true_cost
from gpurent_core.cost.offer import CostInput
from gpurent_core.cost.usage import UsageProfile
from gpurent_core.model import BillingUnit, PriceBasis, PriceKind, PricePlan

D = Decimal
HOURLY = BillingTerms(granularity_s=3600)
PER_SECOND = BillingTerms(granularity_s=1, minimum_s=0, starts=BillingStart.POWER_ON)


def offer(terms: BillingTerms, price: str = "2.00", **kw: object) -> CostInput:
    args: dict[str, object] = {
        "price": D(price),
        "currency": "CNY",
        "billing_unit": BillingUnit.HOUR,
        "price_basis": PriceBasis.INSTANCE,
        "terms": terms,
    }
    args.update(kw)
    return CostInput(**args)  # type: ignore[arg-type]


def use(hours: str, session: str | None = None, boot_minutes: str = "0") -> UsageProfile:
    return UsageProfile(
        hours_per_month=D(hours),
        storage_gb=D(0),
        session_hours=D(session) if session is not None else None,
        boot_minutes=D(boot_minutes),
    )


def test_hourly_granularity_rounds_each_session_up() -> None:
    # 100 h in sessions of 2.5 h: 40 sessions, each billed 3 h = 120 h x 2.00 = 240.
    tc = true_cost(offer(HOURLY), use("100", "2.5"))
    assert tc.plan.units == D("120")
    assert tc.monthly == D("240.000000")
    assert "40 session(s) x 3 h billed (2.5 h, rounded up to 3 h, billed per 1 h)" in tc.explain()
    # The hourly rate a renter is quoted does not change; the month does.
    assert tc.hourly == D("2.000000")


def test_per_second_billing_charges_the_hours_used() -> None:
    tc = true_cost(offer(PER_SECOND), use("100", "2.5"))
    assert (tc.plan.units, tc.monthly) == (D("100"), D("200.000000"))
    assert "100 h used" in tc.explain()
    assert tc.unknown_terms == ()


def test_minimum_rental_raises_short_sessions() -> None:
    # 10 h in 20-minute sessions (30 of them) with a one-hour minimum: 30 h billed.
    terms = BillingTerms(granularity_s=60, minimum_s=3600, starts=BillingStart.READY)
    tc = true_cost(offer(terms), use("10", "0.3333333333333333333333333333"))
    assert tc.plan.units == pytest.approx(D(30), abs=D("0.0001"))
    assert "raised to the 1 h minimum" in tc.explain()


def test_minimum_rental_leaves_long_sessions_alone() -> None:
    terms = BillingTerms(granularity_s=60, minimum_s=3600, starts=BillingStart.READY)
    assert true_cost(offer(terms), use("100", "5")).plan.units == D("100")


@pytest.mark.parametrize(
    ("starts", "billed"),
    [(BillingStart.POWER_ON, D("110")), (BillingStart.READY, D("100")), (None, D("110"))],
)
def test_boot_is_billed_unless_billing_starts_when_ready(
    starts: BillingStart | None, billed: Decimal
) -> None:
    # 20 sessions of 5 h, 30 minutes of boot each: 10 h more where power-on is billed.
    terms = BillingTerms(granularity_s=1, minimum_s=0, starts=starts)
    tc = true_cost(offer(terms), use("100", "5", boot_minutes="30"))
    assert tc.plan.units == billed
    unknown = " ".join(tc.unknown_terms)
    assert ("when billing starts" in unknown) is (starts is None)


def test_unknown_terms_meter_exactly_and_say_so() -> None:
    tc = true_cost(offer(BillingTerms()), use("100", "2.5"))
    assert tc.plan.units == D("100")
    assert any("granularity" in t for t in tc.unknown_terms)
    assert any("minimum" in t for t in tc.unknown_terms)
    assert "Billing terms not on file, assumed:" in tc.explain()


def test_packages_and_reserved_rates_ignore_session_rounding() -> None:
    month = PricePlan(
        price=D("900"),
        currency="CNY",
        billing_unit=BillingUnit.MONTH,
        price_basis=PriceBasis.INSTANCE,
        price_kind=PriceKind.COMMITMENT,
    )
    # Hourly would be 730 sessions x 1 h (0.1 h rounded up) = 1460; the month package wins.
    tc = true_cost(offer(HOURLY, plans=(month,)), use("73", "0.1"))
    assert tc.plan.billing_unit is BillingUnit.MONTH and tc.monthly == D("900.000000")
    assert "730 session(s) x 1 h billed" in tc.explain()


def test_continuous_use_rounds_the_month_once() -> None:
    # No sessions given: the month's 100.5 h are one stretch, billed 101 h at hourly steps.
    assert true_cost(offer(HOURLY), use("100.5")).plan.units == D("101")


def test_session_longer_than_the_month_is_refused() -> None:
    with pytest.raises(ValueError, match="session_hours"):
        use("10", "11")
    with pytest.raises(ValueError, match="session_hours"):
        use("10", "0")
    with pytest.raises(TypeError):
        UsageProfile(session_hours=2.5)  # type: ignore[arg-type]


def test_profile_describes_sessions_and_boot() -> None:
    text = use("100", "2.5", boot_minutes="3").describe()
    assert "sessions of 2.5 h" in text and "3 min boot" in text


# ------------------------------------------------------------------ properties

_granularity = st.sampled_from([1, 60, 600, 3600])
_hours = st.decimals(min_value=D("0.5"), max_value=730, places=1, allow_nan=False)
_fraction_of_month = st.decimals(min_value=D("0.01"), max_value=1, places=2, allow_nan=False)
_boot = st.decimals(min_value=0, max_value=30, places=0, allow_nan=False)
_minimum = st.sampled_from([None, 0, 600, 3600])


@settings(max_examples=200, deadline=None)
@given(
    hours=_hours,
    share=_fraction_of_month,
    boot=_boot,
    g=_granularity,
    minimum=_minimum,
    starts=st.sampled_from([None, *BillingStart]),
)
def test_property_billed_hours_never_below_hours_used(
    hours: Decimal,
    share: Decimal,
    boot: Decimal,
    g: int,
    minimum: int | None,
    starts: BillingStart | None,
) -> None:
    session = max(D("0.01"), (hours * share).quantize(D("0.01")))
    prof = UsageProfile(hours_per_month=hours, session_hours=session, boot_minutes=boot)
    terms = BillingTerms(granularity_s=g, minimum_s=minimum, starts=starts)
    tc = true_cost(offer(terms), prof)
    assert tc.plan.units >= hours - D("0.000001")


@settings(max_examples=200, deadline=None)
@given(hours=_hours, share=_fraction_of_month, fine=_granularity, factor=st.integers(1, 12))
def test_property_coarser_granularity_never_costs_less(
    hours: Decimal, share: Decimal, fine: int, factor: int
) -> None:
    session = max(D("0.01"), (hours * share).quantize(D("0.01")))
    prof = UsageProfile(hours_per_month=hours, session_hours=session)
    fine_cost = true_cost(offer(BillingTerms(granularity_s=fine)), prof)
    coarse_cost = true_cost(offer(BillingTerms(granularity_s=fine * factor)), prof)
    assert coarse_cost.monthly >= fine_cost.monthly


@settings(max_examples=100, deadline=None)
@given(hours=_hours, share=_fraction_of_month)
def test_property_per_second_billing_is_exact_for_whole_seconds(
    hours: Decimal, share: Decimal
) -> None:
    # Hours with one decimal and sessions with two are whole seconds: nothing to round.
    session = max(D("0.01"), (hours * share).quantize(D("0.01")))
    prof = UsageProfile(hours_per_month=hours, session_hours=session)
    assert true_cost(offer(PER_SECOND), prof).plan.units == hours


def day_plan(price: str = "43.72", unit: BillingUnit = BillingUnit.DAY) -> PricePlan:
    return PricePlan(
        price=D(price),
        currency="CNY",
        billing_unit=unit,
        price_basis=PriceBasis.INSTANCE,
        price_kind=PriceKind.COMMITMENT,
    )


def test_day_packages_hold_only_the_sessions_that_fit_in_them() -> None:
    # 200 h in 4 h sessions: 50 sessions, one every 14.6 h over the month. A day package
    # bought at a session's start holds it and the next (14.6 h later, done by 18.6 h):
    # 25 days, not the 9 that back-to-back use would need. The metered price wins.
    tc = true_cost(offer(PER_SECOND, price="1.98", plans=(day_plan(),)), use("200", "4"))
    assert tc.plan.billing_unit is BillingUnit.HOUR and tc.monthly == D("396.000000")
    assert "plan commitment: 43.72 CNY/day x 25 day (50 sessions of 4 h spread over the" in (
        tc.explain()
    )
    # The same hours in one stretch fill 9 days back to back, and the days win.
    whole = true_cost(offer(PER_SECOND, price="1.98", plans=(day_plan(),)), use("200"))
    assert whole.plan.billing_unit is BillingUnit.DAY and whole.plan.units == D("9")
    assert "ceil(200 h / 24 h), used back to back" in whole.explain()


def test_a_session_longer_than_a_package_takes_several_and_a_month_holds_them_all() -> None:
    two_days = true_cost(offer(PER_SECOND, plans=(day_plan("10"),)), use("300", "30"))
    assert two_days.plan.units == D("20")  # 10 sessions of 30 h, 2 days each
    month = true_cost(
        offer(PER_SECOND, plans=(day_plan("300", BillingUnit.MONTH),)), use("200", "4")
    )
    assert month.plan.units == D("1")


@settings(max_examples=200, deadline=None)
@given(
    hours=st.integers(min_value=1, max_value=730),
    session=st.integers(min_value=1, max_value=730),
    unit=st.sampled_from([BillingUnit.DAY, BillingUnit.WEEK, BillingUnit.MONTH]),
)
def test_property_packages_never_fewer_than_back_to_back_nor_more_than_the_month(
    hours: int, session: int, unit: BillingUnit
) -> None:
    from gpurent_core.units import HOURS_PER_UNIT

    session = min(session, hours)
    tc = true_cost(
        offer(PER_SECOND, price="1000", plans=(day_plan("1", unit),)), use(str(hours), str(session))
    )
    assert tc.plan.billing_unit is unit
    size = HOURS_PER_UNIT[unit]
    back_to_back = -(-hours // size)
    whole_month = -(-730 // size)
    sessions_spread = -(-hours // session) * -(-session // size)
    assert back_to_back <= tc.plan.units <= max(back_to_back, min(whole_month, sessions_spread))
