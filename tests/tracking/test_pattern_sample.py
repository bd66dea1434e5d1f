"""Hour-of-week patterns need a minimum sample, and say how many observations back them.

Before: two polls a minute apart, both finding a card free at 02:00, made "usually free
01:00-04:00" (two polls met the per-hour minimum, whatever their days).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl

from gpurent.cli import tracking
from warehouse import trends
from warehouse.trends import availability_patterns

MONDAY = datetime(2026, 11, 2, 0, 0, tzinfo=UTC)
SCHEMA = {"provider": pl.String(), "polled_at": pl.Datetime("us", "UTC"),
          "listed": pl.Int64(), "free_offers": pl.Int64(), "free_cards": pl.Int64()}  # fmt: skip


def polls(times: list[datetime], free: bool = True) -> pl.DataFrame:
    rows = [("autodl", t, 2, int(free), 2 if free else 0) for t in times]
    return pl.DataFrame(rows, schema=SCHEMA, orient="row")


def test_two_polls_a_minute_apart_are_not_a_pattern() -> None:
    at = MONDAY + timedelta(hours=2)
    (utc,) = availability_patterns(polls([at, at + timedelta(minutes=1)]), zones=("UTC",))
    assert utc.free_hours == ""
    assert set(utc.by_hour) == {None} and set(utc.by_hour_of_week) == {None}
    assert (utc.polls, utc.days) == (2, 1)
    assert utc.sentence("RTX 4090") == (
        "RTX 4090 on autodl: not enough history (2 polls over 1 day; a pattern needs 24 polls "
        "over 7 days) (UTC)"
    )
    assert utc.polls_by_hour[2] == 2 and utc.days_by_hour[2] == 1  # the counts still show


def test_many_polls_of_one_day_are_not_a_pattern_either() -> None:
    day = [MONDAY + timedelta(minutes=10 * k) for k in range(144)]  # every 10 minutes
    (utc,) = availability_patterns(polls(day), zones=("UTC",))
    assert not utc.enough_history and utc.free_hours == ""
    assert "not enough history (144 polls over 1 day" in utc.summary("H100")


def test_a_bucket_needs_polls_from_two_days() -> None:
    # A week of polls at 10:00 UTC, plus two polls a minute apart at 02:00 on one day.
    week = [
        MONDAY + timedelta(days=d, hours=10, minutes=m) for d in range(7) for m in (0, 20, 40, 50)
    ]
    burst = [MONDAY + timedelta(hours=2), MONDAY + timedelta(hours=2, minutes=1)]
    (utc,) = availability_patterns(polls(week + burst), zones=("UTC",))
    assert utc.enough_history and (utc.polls, utc.days) == (30, 7)
    assert utc.by_hour[10] == 1.0 and (utc.polls_by_hour[10], utc.days_by_hour[10]) == (28, 7)
    assert utc.by_hour[2] is None and (utc.polls_by_hour[2], utc.days_by_hour[2]) == (2, 1)
    assert utc.free_hours == "09:00-12:00"  # the burst at 02:00 claims nothing
    # Hour of week: Monday 10:00 has 4 polls, all of one day: not enough.
    assert utc.polls_by_hour_of_week[10] == 4 and utc.by_hour_of_week[10] is None
    assert utc.summary("H100") == (
        "H100 on autodl is usually free 09:00-12:00 (UTC), from 30 polls over 7 days"
    )


def test_the_help_states_the_documented_minimums() -> None:
    text = " ".join(Path(tracking.__file__).read_text(encoding="utf-8").split())
    assert f"at least {trends.MIN_HISTORY_POLLS} polls over {trends.MIN_HISTORY_DAYS} days" in text
    assert (
        f"at least {trends.MIN_POLLS_PER_HOUR} polls on {trends.MIN_DAYS_PER_HOUR} different days"
        in text
    )
