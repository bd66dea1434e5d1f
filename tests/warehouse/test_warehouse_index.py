"""The daily price index: hand-computed examples, properties, and the warehouse read."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from fractions import Fraction

import duckdb
import pytest
from hypothesis import given
from hypothesis import strategies as st
from wh_kit import FeedKit

from gpurent_core.fx import FxRate, FxTable
from gpurent_core.model import BillingUnit, PriceBasis, PriceKind, RunStatus, StockStatus
from warehouse.index import (
    METHOD_VERSION,
    cap_weights,
    compute_index,
    median,
    price_index,
)
from warehouse.load import load_run

D = Decimal


def quotes(**by_provider: list[str]) -> list[tuple[str, Decimal]]:
    return [(p, D(x)) for p, prices in by_provider.items() for x in prices]


def test_three_providers_weigh_equally_whatever_their_offer_counts() -> None:
    # a: median of 2, 3, 10 = 3; b: 4; c: median of 5, 6 = 5.5; (3 + 4 + 5.5) / 3 = 4.1666...
    value = compute_index(quotes(a=["2", "3", "10"], b=["4"], c=["5", "6"]))
    assert value.index_price == D("4.166667")
    assert (value.n_offers, value.n_providers) == (6, 3)
    assert value.used == ("a", "b", "c")
    assert value.screened_out == () and value.withheld_reason is None


def test_with_four_or_more_providers_an_outlier_is_screened() -> None:
    # medians 2.0 2.1 2.2 2.4 9.0: centre 2.2, deviations 0.2 0.1 0 0.2 6.8, MAD 0.2,
    # limit 3 x 1.4826 x 0.2 = 0.88956: e (6.8 away) goes; (2.0 + 2.1 + 2.2 + 2.4) / 4 = 2.175
    value = compute_index(quotes(a=["2.0"], b=["2.2"], c=["2.4"], d=["2.1"], e=["9.0"]))
    assert value.index_price == D("2.175000")
    assert value.screened_out == ("e",)
    assert value.n_providers == 5 and value.used == ("a", "b", "c", "d")


def test_three_providers_are_never_screened() -> None:
    value = compute_index(quotes(a=["2"], b=["2.1"], c=["90"]))
    assert value.screened_out == ()
    assert value.index_price == D("31.366667")  # 94.1 / 3


def test_when_most_quotes_agree_exactly_nobody_is_an_outlier() -> None:
    # MAD 0: the rule cannot measure spread, so it screens nothing; (2 + 2 + 2 + 5) / 4
    value = compute_index(quotes(a=["2"], b=["2"], c=["2"], d=["5"]))
    assert value.screened_out == ()
    assert value.index_price == D("2.750000")


@pytest.mark.parametrize(
    ("given_quotes", "reason"),
    [
        ([], "no in-stock on-demand quote"),
        (quotes(a=["1", "2", "3"]), "only 1 provider quotes (a)"),
    ],
)
def test_fewer_than_two_providers_withhold_the_index(
    given_quotes: list[tuple[str, Decimal]], reason: str
) -> None:
    value = compute_index(given_quotes)
    assert value.index_price is None
    assert value.withheld_reason is not None and value.withheld_reason.startswith(reason)
    assert value.n_offers == len(given_quotes)


def test_median_is_exact() -> None:
    assert median([D("1"), D("2")]) == D("1.5")
    assert median([D("0.00000001"), D("0.00000002")]) == D("0.000000015")
    assert median([D("3"), D("1"), D("2")]) == D("2")


def test_the_cap_moves_excess_weight_to_the_others() -> None:
    third = Fraction(1, 3)
    assert cap_weights({"a": Fraction(1), "b": Fraction(1), "c": Fraction(1)}, Fraction(2, 5)) == {
        "a": third, "b": third, "c": third,
    }  # fmt: skip
    assert cap_weights({"a": Fraction(8), "b": Fraction(1), "c": Fraction(1)}, Fraction(2, 5)) == {
        "a": Fraction(2, 5), "b": Fraction(3, 10), "c": Fraction(3, 10),
    }  # fmt: skip
    # a is capped, then b gets too much of a's excess and is capped in turn.
    capped = cap_weights({"a": Fraction(5), "b": Fraction(4), "c": Fraction(1)}, Fraction(2, 5))
    assert capped == {"a": Fraction(2, 5), "b": Fraction(2, 5), "c": Fraction(1, 5)}
    with pytest.raises(ValueError):
        cap_weights({"a": Fraction(1), "b": Fraction(1)}, Fraction(2, 5))


PRICES = st.decimals(min_value=D("0.05"), max_value=D("500"), places=2)
QUOTES = st.dictionaries(
    st.sampled_from(["a", "b", "c", "d", "e", "f"]),
    st.lists(PRICES, min_size=1, max_size=5),
    max_size=6,
)


def flat(by_provider: dict[str, list[Decimal]]) -> list[tuple[str, Decimal]]:
    return [(p, x) for p, xs in by_provider.items() for x in xs]


@given(by_provider=QUOTES, data=st.data())
def test_duplicating_a_providers_offers_does_not_move_the_index(
    by_provider: dict[str, list[Decimal]], data: st.DataObject
) -> None:
    if not by_provider:
        return
    who = data.draw(st.sampled_from(sorted(by_provider)))
    times = data.draw(st.integers(min_value=2, max_value=4))
    louder = {**by_provider, who: by_provider[who] * times}
    before, after = compute_index(flat(by_provider)), compute_index(flat(louder))
    assert after.index_price == before.index_price
    assert (after.used, after.screened_out) == (before.used, before.screened_out)


@given(by_provider=QUOTES, k=st.decimals(min_value=D("0.1"), max_value=D("20"), places=2))
def test_scaling_every_price_by_k_scales_the_index_by_k(
    by_provider: dict[str, list[Decimal]], k: Decimal
) -> None:
    base = compute_index(flat(by_provider))
    scaled = compute_index([(p, x * k) for p, x in flat(by_provider)])
    assert (scaled.used, scaled.screened_out) == (base.used, base.screened_out)
    if base.index_price is None:
        assert scaled.index_price is None
        return
    assert scaled.index_price is not None
    # Both are rounded to 6 places: k x (half a unit) plus half a unit at most.
    assert abs(scaled.index_price - k * base.index_price) <= max(k, D(1)) * D("0.000001")


@given(by_provider=QUOTES)
def test_the_index_lies_within_the_provider_medians_it_used(
    by_provider: dict[str, list[Decimal]],
) -> None:
    value = compute_index(flat(by_provider))
    if value.index_price is None:
        assert len(by_provider) < 2
        return
    medians = [median(by_provider[p]) for p in value.used]
    assert min(medians) - D("0.000001") <= value.index_price <= max(medians) + D("0.000001")


# ---------------------------------------------------------------- from the warehouse

FX = FxTable([FxRate("USD", "CNY", D("7.10"), date(2026, 1, 1), "test")])


@pytest.fixture
def two_days(con: duckdb.DuckDBPyConnection, kit: FeedKit) -> duckdb.DuckDBPyConnection:
    """2026-11-01 (runs at 09:00 and 10:00 UTC) and 2026-11-02 (acme only, 09:00)."""
    a1, z1, o1 = kit.run(1), kit.run(1, provider="zeta"), kit.run(1, provider="omega")
    load_run(con, a1, kit.write("a1", [
        kit.offer(a1, "h1", price=D("2.00")),
        kit.offer(a1, "h2", price=D("1.00"), status=StockStatus.SOLD_OUT),
        kit.offer(a1, "h3", price=D("4.00"), price_basis=PriceBasis.INSTANCE, gpu_count=2),
        kit.offer(a1, "g1", gpu_model="RTX 4090", gpu_vram_gb=24, price=D("0.40")),
    ]))  # fmt: skip
    load_run(con, z1, kit.write("z1", [
        kit.offer(z1, "h", price=D("21.30"), currency="CNY", fees=(), plans=()),
    ]))  # fmt: skip
    load_run(con, o1, kit.write("o1", [
        kit.offer(o1, "spot", price=D("0.50"), price_kind=PriceKind.SPOT),
        kit.offer(o1, "gone", price=D("9.00"), status=StockStatus.SOLD_OUT),
    ]))  # fmt: skip
    # Later that day acme's h1 goes up and h3 sells out: the day's last quotes count.
    a2 = kit.run(2)
    load_run(con, a2, kit.write("a2", [
        kit.offer(a2, "h1", price=D("3.00")),
        kit.offer(a2, "h2", price=D("1.00"), status=StockStatus.SOLD_OUT),
        kit.offer(a2, "h3", price=D("4.00"), price_basis=PriceBasis.INSTANCE, gpu_count=2,
                  status=StockStatus.SOLD_OUT),
        kit.offer(a2, "g1", gpu_model="RTX 4090", gpu_vram_gb=24, price=D("0.40")),
    ]))  # fmt: skip
    load_run(con, kit.run(2, RunStatus.FAILED, provider="zeta"), None)
    a3 = kit.run(25)
    load_run(con, a3, kit.write("a3", [kit.offer(a3, "h1", price=D("3.00"))]))
    return con


def rows_by_key(frame: object) -> dict[tuple[date, str, str], dict[str, object]]:
    import polars as pl

    assert isinstance(frame, pl.DataFrame)
    return {(r["date"], r["gpu_model"], r["currency"]): r for r in frame.iter_rows(named=True)}


def test_price_index_by_day_gpu_and_currency(two_days: duckdb.DuckDBPyConnection) -> None:
    rows = rows_by_key(price_index(two_days, fx=FX))
    day1, day2 = date(2026, 11, 1), date(2026, 11, 2)
    usd = rows[(day1, "H100", "USD")]
    # acme: h1's last in-stock quote 3.00, h3 2.00 per GPU (4.00 for 2 cards, in stock at
    # 09:00): median 2.50. zeta: 21.30 CNY = 3.00 USD. omega: spot only, not quoting.
    assert usd["index_price"] == D("2.750000")
    assert (usd["n_offers"], usd["n_providers"], usd["n_observed"]) == (3, 2, 6)
    # in stock at some good poll of the day: h1, h3, zeta's h, omega's spot = 4 of 6
    assert usd["in_stock_share"] == D("0.6667")
    assert usd["method_version"] == METHOD_VERSION and usd["withheld_reason"] is None
    cny = rows[(day1, "H100", "CNY")]
    assert cny["index_price"] == D("19.525000")  # (2.50 x 7.10 + 21.30) / 2
    assert cny["gpu_vram_gb"] == 80

    # Day 2: only acme ran. zeta's last good state is not "seen" that day, and the day-1
    # figure is not carried forward.
    later = rows[(day2, "H100", "USD")]
    assert later["index_price"] is None
    assert "only 1 provider quotes (acme)" in str(later["withheld_reason"])
    assert (later["n_providers"], later["n_observed"]) == (1, 1)
    lone = rows[(day1, "RTX 4090", "USD")]
    assert lone["index_price"] is None and lone["in_stock_share"] == D("1.0000")
    assert sorted({k[0] for k in rows}) == [day1, day2]


def test_price_index_filters(two_days: duckdb.DuckDBPyConnection) -> None:
    only = price_index(two_days, gpu_model="rtx 4090", currencies=["USD"], fx=FX)
    assert only["gpu_model"].unique().to_list() == ["RTX 4090"]
    assert only["currency"].unique().to_list() == ["USD"]
    second = price_index(two_days, start=date(2026, 11, 2), fx=FX)
    assert second["date"].unique().to_list() == [date(2026, 11, 2)]
    assert price_index(two_days, start=date(2026, 12, 1), fx=FX).is_empty()


def test_an_empty_warehouse_has_no_index(con: duckdb.DuckDBPyConnection) -> None:
    frame = price_index(con)
    assert frame.is_empty() and "index_price" in frame.columns


def test_days_before_the_first_rate_use_the_table_rate(
    con: duckdb.DuckDBPyConnection, kit: FeedKit
) -> None:
    later_rate = FxTable([FxRate("USD", "CNY", D("8"), date(2027, 1, 1), "test")])
    for provider, price in (("acme", "1.00"), ("zeta", "3.00")):
        run = kit.run(1, provider=provider)
        offer = kit.offer(run, "x", price=D(price), billing_unit=BillingUnit.HOUR)
        load_run(con, run, kit.write(provider, [offer]))
    row = price_index(con, currencies=["CNY"], fx=later_rate).row(0, named=True)
    assert row["index_price"] == D("16.000000")  # (8 + 24) / 2
