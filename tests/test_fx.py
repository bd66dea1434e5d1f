"""The dated FX table: lookups by date, derived inverses, overrides from GPURENT_FX."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpurent_core.fx import (
    DEFAULT_RATES,
    FX_ENV_VAR,
    FxError,
    FxParseError,
    FxRate,
    FxRateMissing,
    FxTable,
    load_fx_table,
    parse_fx_overrides,
)

D = Decimal
NOV = date(2026, 11, 1)
DEC = date(2026, 12, 1)


def table() -> FxTable:
    return FxTable(
        [
            FxRate("USD", "CNY", D("7.20"), NOV, "test nov"),
            FxRate("USD", "CNY", D("7.10"), DEC, "test dec"),
            FxRate("EUR", "USD", D("1.08"), NOV, "test eur"),
        ]
    )


def test_latest_rate_on_or_before_the_date() -> None:
    fx = table()
    assert fx.rate("USD", "CNY").rate == D("7.10")
    assert fx.rate("USD", "CNY", date(2026, 11, 30)).rate == D("7.20")
    assert fx.rate("USD", "CNY", NOV).source == "test nov"
    assert fx.rate("USD", "CNY", DEC).rate_date == DEC


def test_no_rate_before_the_first_date_is_an_error_naming_the_fix() -> None:
    with pytest.raises(FxRateMissing, match="GPURENT_FX"):
        table().rate("USD", "CNY", date(2026, 10, 31))
    with pytest.raises(LookupError):
        table().rate("GBP", "JPY")


def test_inverse_is_derived_with_12_significant_digits() -> None:
    used = table().rate("CNY", "USD")
    # 1 / 7.10 = 0.14084507042253521...
    assert used.rate == D("0.140845070423")
    assert used.derived is True
    assert used.base == "CNY" and used.quote == "USD"
    assert used.rate_date == DEC
    assert "inverse of USD/CNY 7.10" in used.source
    assert table().rate("USD", "EUR").rate == D("0.925925925926")  # 1/1.08


def test_stored_direction_is_not_marked_derived() -> None:
    assert table().rate("EUR", "USD").derived is False


def test_more_recent_inverse_beats_older_direct_and_ties_go_to_direct() -> None:
    fx = table().with_rates([FxRate("CNY", "USD", D("0.125"), date(2026, 12, 15), "newer")])
    assert fx.rate("USD", "CNY").rate == D("8")  # inverse of the newer CNY/USD
    assert fx.rate("USD", "CNY", DEC).rate == D("7.10")
    tie = table().with_rates([FxRate("CNY", "USD", D("0.125"), DEC, "same day")])
    assert tie.rate("USD", "CNY").rate == D("7.10")
    assert tie.rate("CNY", "USD").rate == D("0.125")


def test_same_pair_same_date_the_later_given_wins() -> None:
    fx = table().with_rates([FxRate("USD", "CNY", D("7.3"), DEC, "override")])
    assert fx.rate("USD", "CNY").rate == D("7.3")
    assert fx.rates[-1].source == "override"
    assert len(fx.rates) == 4


def test_same_currency_is_rate_one() -> None:
    used = FxTable().rate("CNY", "CNY", NOV)
    assert used.rate == 1 and used.rate_date == NOV
    amount, used = FxTable().convert(D("12.34"), "USD", "USD")
    assert amount == D("12.34") and used.rate == 1


def test_convert_is_exact_and_returns_the_rate() -> None:
    amount, used = table().convert(D("544.123456"), "USD", "CNY", NOV)
    assert amount == D("3917.6888832")  # 544.123456 x 7.20
    assert used.rate == D("7.20") and used.rate_date == NOV


def test_fx_rate_validates() -> None:
    with pytest.raises(FxError):
        FxRate("usd", "CNY", D("7"), NOV, "x")
    with pytest.raises(FxError):
        FxRate("USD", "CNY", D("0"), NOV, "x")
    with pytest.raises(FxError):
        FxRate("USD", "CNY", D("NaN"), NOV, "x")
    with pytest.raises(FxError):
        FxRate("USD", "CNY", 7.1, NOV, "x")  # type: ignore[arg-type]


def test_default_table_covers_the_documented_pairs_and_says_it_is_a_default() -> None:
    fx = FxTable.default()
    assert fx.rates == DEFAULT_RATES
    for base, quote in [("USD", "CNY"), ("EUR", "USD"), ("EUR", "CNY"), ("CNY", "USD")]:
        used = fx.rate(base, quote)
        assert used.rate > 0
        assert "default" in used.source and "GPURENT_FX" in used.source


def test_parse_overrides() -> None:
    rates = parse_fx_overrides(" USD/CNY=7.20 , EUR/USD=1.08", rate_date=DEC)
    assert [(r.base, r.quote, r.rate, r.rate_date) for r in rates] == [
        ("USD", "CNY", D("7.20"), DEC),
        ("EUR", "USD", D("1.08"), DEC),
    ]
    assert all(r.source == FX_ENV_VAR for r in rates)
    assert parse_fx_overrides("", rate_date=DEC) == []
    assert parse_fx_overrides("   ", rate_date=DEC) == []


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("USD/CNY=7,20", "item 2"),
        ("usd/cny=7.2", "capital"),
        ("USD/CNY=", "item 1"),
        ("USD-CNY=7.2", "item 1"),
        ("USD/CNY=1e3", "item 1"),
        ("USD/CNY=-1", "item 1"),
        ("USD/CNY=.5", "item 1"),
        ("USD/CNY=7.2,", "item 2"),
        ("USD/CNY=7.2,,EUR/USD=1.1", "item 2"),
        ("USD/USD=1", "itself"),
        ("USD/CNY=0", "not > 0"),
        ("USD/CNY=0.000", "not > 0"),
        ("USD/CNY=7.2,USD/CNY=7.3", "repeats"),
        ("USD/CNY=7.2,CNY/USD=0.14", "repeats"),
    ],
)
def test_parse_overrides_is_strict(spec: str, message: str) -> None:
    with pytest.raises(FxParseError, match=message):
        parse_fx_overrides(spec, rate_date=DEC)


def test_load_fx_table_applies_env_overrides_over_defaults() -> None:
    today = date(2026, 12, 5)
    fx = load_fx_table({FX_ENV_VAR: "USD/CNY=7.50"}, today=today)
    used = fx.rate("USD", "CNY")
    assert used.rate == D("7.50") and used.source == FX_ENV_VAR and used.rate_date == today
    # An override has no date: it is the rate of past days too, so a day's converted
    # figure does not change with the day it is computed on.
    assert fx.rate("USD", "CNY", date(2026, 11, 28)).rate == D("7.50")
    assert fx.rate("USD", "CNY", date(2020, 1, 1)).rate == D("7.50")
    assert load_fx_table({}, today=today).rates == DEFAULT_RATES


def test_load_fx_table_reads_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FX_ENV_VAR, "EUR/CNY=8.00")
    assert load_fx_table().rate("EUR", "CNY").rate == D("8.00")
    monkeypatch.setenv(FX_ENV_VAR, "EUR/CNY=eight")
    with pytest.raises(FxParseError, match="GPURENT_FX"):
        load_fx_table()


_amounts = st.decimals(min_value=0, max_value=10_000, places=6, allow_nan=False)
_rates = st.decimals(min_value=D("0.0001"), max_value=D("10000"), places=4, allow_nan=False)


@given(amount=_amounts, rate=_rates.filter(lambda r: r > 0))
def test_round_trip_through_fx_is_within_a_millionth(amount: Decimal, rate: Decimal) -> None:
    fx = FxTable([FxRate("USD", "CNY", rate, NOV, "prop")])
    there, _ = fx.convert(amount, "USD", "CNY")
    back, used = fx.convert(there, "CNY", "USD")
    assert used.derived
    assert abs(back - amount) <= D("0.000001")


@given(
    amount=st.decimals(min_value=0, max_value=10**12, places=6, allow_nan=False),
    twos=st.integers(min_value=-6, max_value=6),
    fives=st.integers(min_value=-6, max_value=6),
)
def test_round_trip_with_an_exactly_invertible_rate_is_exact(
    amount: Decimal, twos: int, fives: int
) -> None:
    rate = D(2) ** twos * D(5) ** fives  # 1/rate terminates within 12 digits
    fx = FxTable([FxRate("EUR", "USD", rate, NOV, "prop")])
    there, _ = fx.convert(amount, "EUR", "USD")
    back, _ = fx.convert(there, "USD", "EUR")
    assert back == amount


# ---------------------------------------------------------------- one value per currency


def test_a_pair_of_two_other_currencies_is_the_product_of_their_usd_rates() -> None:
    fx = FxTable.default()
    used = fx.rate("EUR", "CNY")
    assert used.rate == D("8.236") and used.derived  # 1.16 x 7.10
    assert "EUR/USD 1.16 x USD/CNY 7.10" in used.source
    assert fx.rate("CNY", "EUR").rate == D("0.121418164158")  # 1 / 8.236, 12 digits


def test_an_override_of_usd_moves_every_pair_with_it() -> None:
    """The docs' own example: EUR/CNY follows the overrides, not a built-in rate."""
    fx = load_fx_table({FX_ENV_VAR: "USD/CNY=7.20,EUR/USD=1.08"}, today=DEC)
    assert fx.rate("EUR", "CNY").rate == D("7.776")


_money = st.decimals(min_value=D("0.01"), max_value=D("100000"), places=2, allow_nan=False)


@given(
    prices=st.lists(st.tuples(_money, st.sampled_from(["CNY", "USD", "EUR", "HKD"])), max_size=12),
    usd_cny=st.decimals(min_value=D("5"), max_value=D("9"), places=4),
    eur_usd=st.decimals(min_value=D("0.8"), max_value=D("1.5"), places=4),
    hkd_cny=st.decimals(min_value=D("0.8"), max_value=D("1.0"), places=4),
)
def test_the_cheapest_first_is_the_same_in_every_display_currency(
    prices: list[tuple[Decimal, str]], usd_cny: Decimal, eur_usd: Decimal, hkd_cny: Decimal
) -> None:
    """Whatever the rates, converting prices into one currency or another never swaps
    two of them (beyond the 12-digit rounding of derived rates): each currency has one
    value, in USD."""
    fx = FxTable(
        [
            FxRate("USD", "CNY", usd_cny, NOV, "p"),
            FxRate("EUR", "USD", eur_usd, NOV, "p"),
            FxRate("HKD", "CNY", hkd_cny, NOV, "p"),  # reaches USD through CNY
        ]
    )
    views = {
        shown: [fx.convert(amount, ccy, shown)[0] for amount, ccy in prices]
        for shown in ("CNY", "USD", "EUR", "HKD")
    }
    base = views["USD"]
    for shown, values in views.items():
        factor = fx.rate("USD", shown).rate
        for value, usd in zip(values, base, strict=True):
            assert abs(value - usd * factor) <= abs(usd * factor) * D("1e-10"), shown


def test_an_override_between_two_other_currencies_values_its_base() -> None:
    fx = load_fx_table({FX_ENV_VAR: "EUR/CNY=8.00"}, today=DEC)
    assert fx.rate("EUR", "CNY").rate == D("8")
    assert fx.rate("USD", "CNY").rate == D("7.10"), "CNY keeps its own rate"
    assert fx.rate("EUR", "USD").rate == D("1.12676056338")  # 8.00 / 7.10


def test_an_override_beats_a_dated_rate_of_any_day() -> None:
    stored = FxRate("USD", "CNY", D("7.30"), date(2027, 1, 1), "stored, dated later")
    fx = FxTable([*DEFAULT_RATES, stored]).with_rates(
        parse_fx_overrides("CNY/USD=0.125", rate_date=DEC)
    )
    assert fx.rate("USD", "CNY").rate == D("8"), "the other direction of the override wins too"
    assert fx.rate("USD", "CNY", date(2027, 6, 1)).rate == D("8")


def test_overrides_that_contradict_each_other_are_refused() -> None:
    with pytest.raises(FxParseError, match="contradicts"):
        parse_fx_overrides("USD/CNY=7.20,EUR/USD=1.08,EUR/CNY=8", rate_date=DEC)
    agreeing = parse_fx_overrides("USD/CNY=7.20,EUR/USD=1.08,EUR/CNY=7.776", rate_date=DEC)
    assert FxTable(agreeing).rate("EUR", "CNY").rate == D("7.776")


def test_a_currency_with_no_usd_path_is_missing_and_says_so() -> None:
    with pytest.raises(FxRateMissing, match="against USD"):
        FxTable.default().rate("GBP", "CNY")


def test_the_first_date_a_cross_pair_can_be_converted() -> None:
    fx = FxTable(
        [FxRate("USD", "CNY", D("7.2"), NOV, "a"), FxRate("EUR", "USD", D("1.1"), DEC, "b")]
    )
    assert fx.first_date("EUR", "CNY") == DEC
    assert fx.first_date("USD", "CNY") == NOV
    assert fx.first_date("GBP", "CNY") is None
