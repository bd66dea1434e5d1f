"""SIGKILL during a load, at known points: the warehouse opens, its migrations are intact,
every stored run is whole, and the next load completes (rule of truth 5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from flows.nightly import load_and_track
from tests.reliability.rel_kit import (
    check_integrity,
    feed_keys,
    kill_hard,
    make_outcome,
    start_child_load,
    stored_keys,
    wait_for_line,
)

# Big enough that reading and inserting it takes a while; the kill points do not rely on it.
BIG_FEED = 1500

# (mode of the child, the line to kill it at, whether the run must be stored afterwards)
KILL_POINTS = [
    ("in_transaction", "in-transaction", False),  # inside the open transaction
    ("committed", "committed", True),  # committed, connection not closed (WAL only)
    ("anywhere", "loading", None),  # as soon as the load starts: either outcome, whole
]


@pytest.mark.parametrize(("mode", "marker", "stored"), KILL_POINTS, ids=[k[0] for k in KILL_POINTS])
def test_a_load_killed_at_any_point_leaves_whole_runs_and_the_next_load_completes(
    tmp_path: Path, mode: str, marker: str, stored: bool | None
) -> None:
    db = tmp_path / "gpurent.duckdb"
    feeds = tmp_path / "feeds"
    good = make_outcome(feeds, "run-1", "vastai", 20, hour=1)
    assert load_and_track(db, [good]).busy is None
    before = check_integrity(db)

    big = make_outcome(feeds, "run-2", "vastai", BIG_FEED, hour=2)
    child = start_child_load(mode, db, big)
    try:
        seen = wait_for_line(child, marker)
        assert seen[-1:] == [marker], (seen, child.stderr.read() if child.stderr else "")
    finally:
        kill_hard(child)
    assert child.returncode == -9

    after = check_integrity(db)  # opens, migrations intact, every run whole
    has_run = bool(stored_keys(db, "vastai", "run-2"))
    if stored is not None:
        assert has_run is stored
    assert after.runs == before.runs + has_run
    assert stored_keys(db, "vastai", "run-1") == feed_keys(good)

    # The next load completes: the killed run again (stored once), then a new one.
    # (Another provider: 30 offers against vastai's usual would read as a layout change.)
    later = make_outcome(feeds, "run-3", "cudo", 30, hour=3)
    report = load_and_track(db, [big, later])
    assert report.busy is None and report.manifest is None
    assert [r.state for r in report.runs][1] == "loaded"
    assert stored_keys(db, "vastai", "run-2") == feed_keys(big)
    assert stored_keys(db, "cudo", "run-3") == feed_keys(later)
    assert check_integrity(db).runs == before.runs + 2
