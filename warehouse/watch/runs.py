"""The good runs a watch has not evaluated yet, and the offers each of them saw.

Only ``ok`` and ``partial`` runs with offers feed the alert state: a failed, auth_required or
layout_changed run never fires or re-arms anything (rules of truth 2 and 7); its poll is
skipped as if it had not happened. A partial run counts only for the offers it saw: an
offer it kept without seeing (stale, rule 10) or did not list is "not observed this poll",
neither in nor absent, so it never fires, confirms or re-arms on what the run missed.
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
    """An ``ok`` run: what it does not list is absent. False for a partial run."""


def good_runs_after(
    con: duckdb.DuckDBPyConnection,
    provider: str,
    *,
    after: RunRef | None,
    not_before: datetime,
) -> list[RunRef]:
    """The provider's ok and partial runs later than ``after`` that started at or after
    ``not_before`` (the watch's creation), oldest first. A run that stored no offers is
    never good (rule of truth 3: zero offers is a layout problem, not "all sold out")."""
    floor = not_before if after is None else max(not_before, after.started_at)
    rows = con.execute(
        """
        SELECT started_at, finished_at, run_id, status FROM crawl_runs
        WHERE provider = ? AND list_contains(?, status) AND offers > 0 AND started_at >= ?
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
