"""A crawler machine whose clock is off cannot reorder history (audit L1, L3): a run whose
times fall outside the fan-out's own window (jobs sent .. outcomes fetched) is stored as a
failed look in that window, so it neither stays "the latest look" with what it saw nor hides
the good runs that follow."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from flows.clock import CLOCK_TOLERANCE, clock_error, refuse_untimely
from flows.nightly import load_and_track
from tests.reliability.rel_kit import T0, make_outcome
from warehouse.db import connect
from warehouse.queries import latest_offers, provider_status

PROVIDER = "lambda"


def test_times_within_the_window_and_its_slack_are_trusted(tmp_path: Path) -> None:
    outcome = make_outcome(tmp_path, "run-1", PROVIDER, 1)  # 30 s from T0
    sent, fetched = T0, T0 + timedelta(minutes=2)
    assert clock_error(outcome, sent, fetched) is None
    # Within the slack either way: a clock a little off is no reason to lose a run.
    slack = CLOCK_TOLERANCE - timedelta(seconds=1)
    assert clock_error(outcome, sent + slack, fetched) is None
    assert clock_error(outcome, sent, outcome.finished_at - slack) is None


def test_clock_errors_say_which_way(tmp_path: Path) -> None:
    outcome = make_outcome(tmp_path, "run-1", PROVIDER, 1, hour=2)  # stamped T0 + 2 h
    ahead = clock_error(outcome, T0, T0 + timedelta(minutes=5))
    assert ahead is not None and "ahead" in ahead and "NTP" in ahead
    behind = clock_error(outcome, T0 + timedelta(hours=3), T0 + timedelta(hours=4))
    assert behind is not None and "behind" in behind


def test_a_run_from_a_clock_ahead_does_not_outlive_the_next_run(tmp_path: Path) -> None:
    """Machine A (clock 2 h ahead) sees 5 offers at 10:00; machine B (clock right) sees 3 at
    11:00. Loaded in true order, B's run is the latest look: A's 2 extra offers are gone."""
    db = tmp_path / "gpurent.duckdb"
    feeds = tmp_path / "feeds"
    a = make_outcome(feeds, "run-a", PROVIDER, 5, hour=2)  # really started at T0
    first = refuse_untimely([a], T0 - timedelta(seconds=5), T0 + timedelta(minutes=5))
    assert first[0].refused is not None
    assert (first[0].started_at, first[0].finished_at) == (
        T0 - timedelta(seconds=5),
        T0 + timedelta(minutes=5),
    )
    b = make_outcome(feeds, "run-b", PROVIDER, 3, hour=1)
    second = refuse_untimely([b], T0 + timedelta(hours=1), T0 + timedelta(hours=1, minutes=5))
    assert second == [b]

    report = load_and_track(db, [*first, *second])
    assert [s.status for s in report.summaries] == ["failed", "ok"]
    assert "crawler clock" in report.summaries[0].message
    con = connect(db)
    try:
        latest = latest_offers(con)
        assert latest.height == 3 and not latest["stale"].any()
        assert set(latest["run_id"]) == {"run-b"}
        status = provider_status(con).row(0, named=True)
        assert (status["last_run_id"], status["last_status"]) == ("run-b", "ok")
    finally:
        con.close()
    assert a.feed_path.is_file()  # nothing lost: the feed stays where it was put


def test_a_failed_run_from_a_clock_ahead_does_not_hide_newer_good_data(tmp_path: Path) -> None:
    """ok at 10:00, a failure at 11:00 stamped 13:00, ok at 12:00: the good run at 12:00
    is the latest look, its offers confirmed (before: all stale, provider 'failed')."""
    db = tmp_path / "gpurent.duckdb"
    feeds = tmp_path / "feeds"
    r1 = make_outcome(feeds, "run-1", PROVIDER, 4, hour=0)
    broken = make_outcome(feeds, "run-2", PROVIDER, 0, hour=3)
    broken = replace(broken, returncode=1, report_path=feeds / "missing.run.json")
    r3 = make_outcome(feeds, "run-3", PROVIDER, 4, hour=2)
    windows = [
        (T0 - timedelta(seconds=1), T0 + timedelta(minutes=5)),
        (T0 + timedelta(hours=1), T0 + timedelta(hours=1, minutes=5)),
        (T0 + timedelta(hours=2), T0 + timedelta(hours=2, minutes=5)),
    ]
    checked = [
        refuse_untimely([o], sent, fetched)[0]
        for o, (sent, fetched) in zip((r1, broken, r3), windows, strict=True)
    ]
    assert [o.refused is not None for o in checked] == [False, True, False]
    report = load_and_track(db, checked)
    assert [s.status for s in report.summaries] == ["ok", "failed", "ok"]
    con = connect(db)
    try:
        latest = latest_offers(con)
        assert latest.height == 4 and not latest["stale"].any()
        assert provider_status(con).row(0, named=True)["last_status"] == "ok"
    finally:
        con.close()


def test_a_resumed_fan_out_takes_its_outcomes_from_when_its_id_was_minted() -> None:
    """A fan-out resumed under the same run id finds outcomes crawled before this attempt
    sent anything: on time for the id, not a clock behind."""
    from flows.clock import window_start
    from flows.nightly import new_run_id

    sent = T0 + timedelta(hours=3)
    assert window_start("20261101T080000Z-abc123", sent) == T0  # minted at T0
    assert window_start("my-own-id", sent) == sent  # an id given by hand: from the send
    assert window_start(new_run_id(), sent) == sent  # minted now, after this send time
