"""Buy or rent, the arithmetic (``gpurent_core.cost.ownership``): owning a card over years
against renting it by the hour, and the hours a day at which the two cost the same."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from gpurent_core.cost.money import quantize_money
from gpurent_core.cost.ownership import (
    DAYS_A_YEAR,
    BadFigure,
    Owning,
    break_even,
    compare,
    renting_cost,
)

D = Decimal
CENT = D("0.01")


def money(low: str, high: str, places: int = 2) -> st.SearchStrategy[Decimal]:
    return st.decimals(min_value=D(low), max_value=D(high), places=places)


hours_a_day = money("0.25", "24", 2).filter(lambda h: h > 0)


@st.composite
def ownings(draw: st.DrawFn) -> Owning:
    price = draw(money("100", "1000000"))
    return Owning(
        price=price,
        resale=draw(money("0", "1").map(lambda share: (price * share).quantize(CENT))),
        card_watts=D(draw(st.integers(min_value=40, max_value=1500))),
        host_watts=D(draw(st.integers(min_value=0, max_value=800))),
        power_price=draw(money("0", "5", 4)),
        years=draw(st.integers(min_value=1, max_value=10)),
    )


def a_known_card() -> Owning:
    """An RTX 4090 at 15,000, 450 W and a 150 W host, 0.60 a kWh, for 3 years."""
    return Owning(
        price=D(15000), resale=D(0), card_watts=D(450), host_watts=D(150),
        power_price=D("0.6"), years=3,
    )  # fmt: skip


def test_a_known_card_worked_by_hand() -> None:
    owning = a_known_card()
    found = compare(owning, D(8), D("1.75"))
    # 8 h x 365 d x 3 y = 8760 h; 0.6 kW x 8760 h = 5256 kWh; x 0.60 = 3153.60
    assert found.hours == D(8760)
    assert found.energy_kwh == D(5256)
    assert found.power_cost == D("3153.6")
    assert found.own_cost == D("18153.6")
    assert found.rent_cost == D("15330")  # 1.75 x 8760
    assert found.saving == D("15330") - D("18153.6")
    # 15000 / (1095 x (1.75 - 0.36)) = 15000 / 1522.05
    exact = Fraction(15000) / (1095 * (Fraction(175, 100) - Fraction(36, 100)))
    assert found.break_even_hours_per_day == D(round(exact * 10**9)).scaleb(-9)
    assert D("9.85") < found.break_even_hours_per_day < D("9.86")


@given(ownings(), hours_a_day)
def test_at_the_break_even_hours_both_cost_the_same_within_a_cent(
    owning: Owning, target: Decimal
) -> None:
    # A rental price whose break-even is near ``target``: the answer's own figure is read
    # back, rounded as it is given, and both costs are worked out at it.
    rate = quantize_money(
        owning.power_per_hour + owning.capital / (DAYS_A_YEAR * owning.years * Fraction(target))
    )
    assume(rate > 0)
    point = compare(owning, D(1), rate).break_even_hours_per_day
    assume(point is not None and 0 < point <= 24)
    assert point is not None
    at = compare(owning, point, rate)
    assert at.rent_cost is not None and at.saving is not None
    assert abs(at.own_cost - at.rent_cost) <= CENT
    assert abs(at.saving) <= CENT
    # And exactly, before any rounding.
    exact = break_even(owning, rate)
    assert exact is not None
    if exact <= 24:
        assert owning.cost(exact) == renting_cost(rate, exact, owning.years)


@given(ownings(), money("0.01", "100", 4), hours_a_day, hours_a_day)
def test_more_hours_make_owning_relatively_cheaper(
    owning: Owning, rate: Decimal, one: Decimal, other: Decimal
) -> None:
    fewer, more = sorted((one, other))
    assume(fewer < more)

    def own_per_rent(hours: Decimal) -> Fraction:
        return owning.cost(hours) / renting_cost(rate, hours, owning.years)

    # Owning's cost over renting's falls with use (the price is spread over more hours) ...
    assert own_per_rent(more) <= own_per_rent(fewer)
    if owning.capital > 0:
        assert own_per_rent(more) < own_per_rent(fewer)
    # ... and the two sides of the break-even are where they should be.
    point = break_even(owning, rate)
    low, high = compare(owning, fewer, rate), compare(owning, more, rate)
    assert low.saving is not None and high.saving is not None
    if point is None:
        assert low.saving <= 0 and high.saving <= 0  # renting never costs more
    else:
        assert (low.saving > 0) == (Fraction(fewer) > point) or low.saving == 0
        assert high.saving >= low.saving


@given(ownings(), money("0", "1"), money("0", "1"), hours_a_day, money("0.01", "100", 4))
def test_resale_lowers_the_cost_of_owning(
    owning: Owning, share: Decimal, other: Decimal, hours: Decimal, rate: Decimal
) -> None:
    less, more = sorted((share, other))
    assume(less < more)

    def sold_at(part: Decimal) -> Owning:
        return Owning(
            price=owning.price, resale=(owning.price * part).quantize(CENT),
            card_watts=owning.card_watts, host_watts=owning.host_watts,
            power_price=owning.power_price, years=owning.years,
        )  # fmt: skip

    cheap, dear = sold_at(more), sold_at(less)
    assume(cheap.resale > dear.resale)
    # Exactly the difference in resale, whatever the use.
    assert dear.cost(hours) - cheap.cost(hours) == Fraction(cheap.resale - dear.resale)
    assert compare(cheap, hours, rate).own_cost < compare(dear, hours, rate).own_cost
    # So owning breaks even sooner (or at all).
    later, sooner = break_even(dear, rate), break_even(cheap, rate)
    if later is not None:
        assert sooner is not None and sooner < later


def test_owning_never_catches_up_when_an_hour_rented_costs_no_more_than_its_power() -> None:
    owning = a_known_card()  # 0.6 kW at 0.60: 0.36 an hour of power
    assert break_even(owning, D("0.36")) is None
    assert break_even(owning, D("0.10")) is None
    found = compare(owning, D(24), D("0.36"))
    assert found.break_even_hours_per_day is None and found.saving is not None
    assert found.saving < 0  # renting is cheaper at any use
    assert break_even(owning, D("0.37")) is not None


def test_no_rate_is_no_renting_figure() -> None:
    found = compare(a_known_card(), D(8), None)
    assert found.rent_cost is None and found.saving is None
    assert found.break_even_hours_per_day is None
    assert found.own_cost == D("18153.6")


def test_a_break_even_beyond_a_day_is_said_as_it_is() -> None:
    # 1.00 a card-hour against 0.36 of power: 15000 / (1095 x 0.64) = 21.4 h; at 0.50: 97.8 h.
    within = compare(a_known_card(), D(8), D("1.00")).break_even_hours_per_day
    assert within is not None and within < 24
    beyond = compare(a_known_card(), D(8), D("0.50")).break_even_hours_per_day
    assert beyond is not None and beyond > 24


@pytest.mark.parametrize(
    ("change", "name"),
    [
        ({"price": D(0)}, "price"),
        ({"price": D(-1)}, "price"),
        ({"resale": D(-1)}, "resale"),
        ({"resale": D(15001)}, "resale"),
        ({"card_watts": D(0)}, "card_watts"),
        ({"host_watts": D(-1)}, "host_watts"),
        ({"power_price": D("-0.1")}, "power_price"),
        ({"years": 0}, "years"),
        ({"price": 15000.0}, "price"),  # money is never a float
        ({"power_price": D("NaN")}, "power_price"),
    ],
)
def test_figures_it_cannot_take_are_refused_by_name(change: dict[str, object], name: str) -> None:
    fields: dict[str, object] = {
        "price": D(15000), "resale": D(0), "card_watts": D(450), "host_watts": D(150),
        "power_price": D("0.6"), "years": 3,
    }  # fmt: skip
    with pytest.raises(BadFigure) as refused:
        Owning(**(fields | change))  # type: ignore[arg-type]
    assert refused.value.name == name and name in str(refused.value)


@pytest.mark.parametrize("hours", [D(0), D("-1"), D("24.01")])
def test_hours_a_day_beyond_a_day_or_none_are_refused(hours: Decimal) -> None:
    with pytest.raises(BadFigure) as refused:
        compare(a_known_card(), hours, D(1))
    assert refused.value.name == "hours_per_day"
    with pytest.raises(BadFigure):
        renting_cost(D(0), D(8), 3)
