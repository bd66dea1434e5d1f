"""The good runs a watch has not evaluated yet, and the offers each of them saw.

Only ``ok`` and ``partial`` runs that fed the latest state feed the alert state: a failed,
auth_required or layout_changed run never fires or re-arms anything (rules of truth 2 and
7); its poll is skipped as if it had not happened. A run counts for what it confirmed
(rules 10 and 11): the offers it saw give readings, the offers it closed (no longer listed
where it read the listing whole) are absent, and the offers it kept without seeing (stale)
are "not observed this poll", neither in nor absent, so they never fire, confirm or re-arm
on what the run missed. An ok run that listed nothing but closed or sold out what it no
longer lists (a listing of only skipped items, or only where nothing has capacity) counts
too: it is a run of the state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import duckdb

from gpurent_core.model import RunStatus
from warehouse import snapshots

WATCHED_STATUSES = (RunStatus.OK.value, RunStatus.PARTIAL.value)


@dataclass(frozen=True, order=True)
class RunRef:
    """A provider run, ordered as the latest-state views order runs."""

    started_at: datetime
    finished_at: datetime
    run_id: str
    complete: bool = field(default=True, compare=False)
    """An ``ok`` run (False for a partial run). Either way, what a run does not list is
    absent unless it kept it stale (``kept_stale``)."""


def good_runs_after(
    con: duckdb.DuckDBPyConnection,
    provider: str,
    *,
    after: RunRef | None,
    not_before: datetime,
) -> list[RunRef]:
    """The provider's ok and partial runs later than ``after`` that started at or after
    ``not_before`` (the watch's creation), oldest first: those that fed the latest state
    (``history_at`` set). Zero offers with no named reason is a layout problem, not "all
    sold out" (rule of truth 3): such a run has no place in the history and is skipped."""
    floor = not_before if after is None else max(not_before, after.started_at)
    rows = con.execute(
        """
        SELECT started_at, finished_at, run_id, status FROM crawl_runs
        WHERE provider = ? AND list_contains(?, status) AND history_at IS NOT NULL
            AND started_at >= ?
        ORDER BY started_at, finished_at, run_id
        """,
        [provider, list(WATCHED_STATUSES), floor],
    ).fetchall()
    runs = [RunRef(s, f, str(r), complete=st == RunStatus.OK.value) for s, f, r, st in rows]
    return [r for r in runs if after is None or r > after]


def offers_of_run(
    con: duckdb.DuckDBPyConnection, provider: str, run_id: str
) -> list[dict[str, Any]]:
    """Every offer one run saw, as dicts with ``fees`` and ``plans`` (read back from the
    change history by the warehouse's shared query; a partial run's stale rows left out)."""
    return list(snapshots.offers_of_run(con, provider, run_id).iter_rows(named=True))


def kept_stale(con: duckdb.DuckDBPyConnection, provider: str, run_id: str) -> set[str]:
    """The offer keys the run kept without seeing them (stale at its place in the history,
    ``stale_spans``): no reading at all, neither in nor absent."""
    rows = con.execute(
        """
        SELECT DISTINCT sp.offer_key
        FROM crawl_runs AS r
        JOIN stale_spans AS sp
            ON sp.provider = r.provider
            AND sp.stale_from <= r.history_at
            AND coalesce(sp.stale_to, 'infinity'::TIMESTAMPTZ) > r.history_at
        WHERE r.run_id = ? AND r.provider = ? AND r.history_at IS NOT NULL
        """,
        [run_id, provider],
    ).fetchall()
    return {str(key) for (key,) in rows}
