"""History read back as trends: per offer, per poll, per day, by hour of week; rental heat."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import duckdb
import polars as pl
import pytest
from wh_kit import T0, FeedKit

from gpurent_core.cost.usage import UsageProfile
from gpurent_core.model import PriceBasis, RunStatus, StockStatus
from warehouse.load import load_run
from warehouse.trends import (
    _ranges,
    availability_patterns,
    daily_history,
    offer_changes,
    poll_availability,
    rental_heat,
)

D = Decimal


@pytest.fixture
def flips(con: duckdb.DuckDBPyConnection, kit: FeedKit) -> duckdb.DuckDBPyConnection:
    """acme's two H100 offers over four polls (one failed) and zeta's A100 (not H100)."""
    r1, r2, r4 = kit.run(1), kit.run(2), kit.run(4)
    load_run(con, r1, kit.write("r1", [
        kit.offer(r1, "a"),
        kit.offer(r1, "b", status=StockStatus.SOLD_OUT, available_count=0),
    ]))  # fmt: skip
    load_run(con, r2, kit.write("r2", [
        kit.offer(r2, "a", status=StockStatus.SOLD_OUT, available_count=0),
        kit.offer(r2, "b", status=StockStatus.SOLD_OUT, available_count=0),
    ]))  # fmt: skip
    load_run(con, kit.run(3, RunStatus.FAILED), None)  # not a poll of the market
    load_run(con, r4, kit.write("r4", [
        kit.offer(r4, "a", available_count=2, price=D("4.00"), price_basis=PriceBasis.INSTANCE,
                  gpu_count=2),
    ]))  # fmt: skip
    z1 = kit.run(1, provider="zeta")
    load_run(con, z1, kit.write("z1", [kit.offer(z1, "x", gpu_model="A100")]))
    return con


def test_poll_availability_counts_each_good_poll(flips: duckdb.DuckDBPyConnection) -> None:
    polls = poll_availability(flips, gpu_model="h100")
    assert polls.rows() == [
        ("acme", T0 + timedelta(hours=1), 2, 1, 3),
        ("acme", T0 + timedelta(hours=2), 2, 0, 0),
        ("acme", T0 + timedelta(hours=4), 1, 1, 2),
    ]
    assert poll_availability(flips, gpu_model="A100")["provider"].to_list() == ["zeta"]
    assert poll_availability(flips, gpu_model="B200").is_empty()


def test_offer_changes_list_every_state(flips: duckdb.DuckDBPyConnection) -> None:
    changes = offer_changes(flips, gpu_model="H100", provider="acme")
    assert changes.select("offer_key", "valid_from", "valid_to", "status").rows() == [
        ("a", T0 + timedelta(hours=1), T0 + timedelta(hours=2), "in_stock"),
        ("a", T0 + timedelta(hours=2), T0 + timedelta(hours=4), "sold_out"),
        ("a", T0 + timedelta(hours=4), None, "in_stock"),
        ("b", T0 + timedelta(hours=1), T0 + timedelta(hours=4), "sold_out"),
    ]
    assert changes["price_per_gpu_hour"].to_list() == [D("2.49"), D("2.49"), D("2"), D("2.49")]


def test_daily_history_per_provider(flips: duckdb.DuckDBPyConnection) -> None:
    (row,) = daily_history(flips, gpu_model="H100")
    assert row == {
        "date": date(2026, 11, 1),
        "provider": "acme",
        "polls": 3,
        "offers_seen": 2,
        "offers_in_stock": 1,
        "free_share": 0.6667,  # free at polls 1 and 4, not 2
        "min_per_gpu_hour": D("2.000000"),  # a's last in-stock quote: 4.00 for 2 cards
        "median_per_gpu_hour": D("2.000000"),
        "currency": "USD",
    }
    (cny,) = daily_history(flips, gpu_model="H100", currency="CNY")
    assert cny["currency"] == "CNY" and cny["min_per_gpu_hour"] > D("10")


def hourly_polls(free_hours_shanghai: set[int], days: int = 7) -> pl.DataFrame:
    start = datetime(2026, 11, 2, 0, 0, tzinfo=UTC)  # a Monday
    rows = []
    for h in range(days * 24):
        at = start + timedelta(hours=h)
        free = (at.hour + 8) % 24 in free_hours_shanghai
        rows.append(("autodl", at, 3, 1 if free else 0, 2 if free else 0))
    return pl.DataFrame(
        rows,
        schema={"provider": pl.String(), "polled_at": pl.Datetime("us", "UTC"),
                "listed": pl.Int64(), "free_offers": pl.Int64(), "free_cards": pl.Int64()},
        orient="row",
    )  # fmt: skip


def test_availability_pattern_in_both_zones() -> None:
    shanghai, utc = availability_patterns(hourly_polls({2, 3, 4, 5, 6}))
    assert shanghai.sentence("RTX 4090") == (
        "RTX 4090 on autodl is usually free 02:00-07:00 (Asia/Shanghai)"
    )
    assert utc.sentence("RTX 4090") == "RTX 4090 on autodl is usually free 18:00-23:00 (UTC)"
    assert shanghai.by_hour[3] == 1.0 and shanghai.by_hour[12] == 0.0
    # A week of hourly polls is one poll per hour of week: too few to say anything there.
    assert len(shanghai.by_hour_of_week) == 168
    assert set(shanghai.by_hour_of_week) == {None}
    (twice, _) = availability_patterns(hourly_polls({2, 3, 4, 5, 6}, days=14))
    assert twice.by_hour_of_week[24 + 3] == 1.0  # Tuesday 03:00 Shanghai
    assert twice.by_hour_of_week[24 * 6 + 12] == 0.0  # Sunday noon
    assert shanghai.polls == 168


def test_pattern_sentences_for_never_and_always() -> None:
    (never, _) = availability_patterns(hourly_polls(set()))
    assert never.sentence("H20") == (
        "H20 on autodl is rarely free: at most 0% of polls in any hour (Asia/Shanghai)"
    )
    (always, _) = availability_patterns(hourly_polls(set(range(24))))
    assert always.sentence("H20") == "H20 on autodl is usually free at any hour (Asia/Shanghai)"


@pytest.mark.parametrize(
    ("hours", "text"),
    [
        ({2, 3, 4}, "02:00-05:00"),
        ({22, 23, 0, 1}, "22:00-02:00"),
        ({0, 5, 23}, "05:00-06:00, 23:00-01:00"),
        (set(), ""),
    ],
)
def test_hour_ranges(hours: set[int], text: str) -> None:
    assert _ranges([h in hours for h in range(24)]) == text


def test_rental_heat_and_its_seven_day_trend(con: duckdb.DuckDBPyConnection, kit: FeedKit) -> None:
    then, now = kit.run(1), kit.run(1 + 24 * 8)
    hourly = {"plans": ()}  # no month plan: the hour is the hourly price (see below)
    load_run(con, then, kit.write("then", [
        kit.offer(then, "a", **hourly), kit.offer(then, "b", **hourly)
    ]))  # fmt: skip
    load_run(con, now, kit.write("now", [
        kit.offer(now, "a", price=D("2.99"), **hourly),
        kit.offer(now, "b", status=StockStatus.SOLD_OUT, available_count=None, **hourly),
        kit.offer(now, "c", gpu_model="RTX 4090", gpu_vram_gb=24, available_count=None),
    ]))  # fmt: skip
    moment = now.started_at + timedelta(hours=1)
    rows = {
        r["gpu_model"]: r
        for r in rental_heat(con, display_currency="USD", now=moment, profile=UsageProfile()).rows
    }
    h100 = rows["H100"]
    assert (h100["offers"], h100["in_stock_share"], h100["free_cards"]) == (2, 0.5, 3)
    assert (h100["providers"], h100["providers_in_stock"]) == (1, 1)
    # The price of a card-hour, as `tco` prices renting: no storage (the 50 GB of the
    # profile would add 0.004109589 an hour on offers that publish a disk price only).
    assert h100["median_true_hourly"] == D("2.990000")
    assert h100["trend_7d"] == ((D("2.99") - D("2.49")) / D("2.49")).quantize(D("0.0001"))
    rtx = rows["RTX 4090"]
    assert rtx["free_cards"] is None  # in stock, count not given: unknown, not zero
    assert rtx["trend_7d"] is None  # nothing a week ago
