"""The good runs a watch has not evaluated yet, and the offers each of them saw.

Only ``ok`` runs feed the alert state: a failed, partial, auth_required or layout_changed
run never fires or re-arms anything (rules of truth 2 and 7); its poll is skipped as if it
had not happened, so "two consecutive good polls" means two consecutive ``ok`` runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import duckdb

from gpurent.model import RunStatus
from warehouse import queries


@dataclass(frozen=True, order=True)
class RunRef:
    """A provider run, ordered as the latest-state views order runs."""

    started_at: datetime
    finished_at: datetime
    run_id: str


def good_runs_after(
    con: duckdb.DuckDBPyConnection,
    provider: str,
    *,
    after: RunRef | None,
    not_before: datetime,
) -> list[RunRef]:
    """The provider's ``ok`` runs later than ``after`` that started at or after
    ``not_before`` (the watch's creation), oldest first. A run that stored no offers is
    never good (rule of truth 3: zero offers is a layout problem, not "all sold out")."""
    floor = not_before if after is None else max(not_before, after.started_at)
    rows = con.execute(
        """
        SELECT started_at, finished_at, run_id FROM crawl_runs
        WHERE provider = ? AND status = ? AND offers > 0 AND started_at >= ?
        ORDER BY started_at, finished_at, run_id
        """,
        [provider, RunStatus.OK.value, floor],
    ).fetchall()
    runs = [RunRef(s, f, str(r)) for s, f, r in rows]
    return [r for r in runs if after is None or r > after]


def offers_of_run(
    con: duckdb.DuckDBPyConnection, provider: str, run_id: str
) -> list[dict[str, Any]]:
    """Every offer one run saw, as dicts with ``fees`` and ``plans`` (read back from the
    change history by the warehouse's shared query)."""
    return list(queries.offers_of_run(con, provider, run_id).iter_rows(named=True))
