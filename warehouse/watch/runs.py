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

Only a confirmed absence is absence: a run that quarantined an item without a key
(``blind``) closed the offer that item was, without knowing which one (rule 10 closes it as
a storage rule), so none of its absences is confirmed: an offer it does not list is
unknown at that run, like a stale one. What it listed it saw.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import duckdb

from gpurent_core.model import RunStatus
from warehouse import snapshots

WATCHED_STATUSES = (RunStatus.OK.value, RunStatus.PARTIAL.value)

BLIND_SQL = """EXISTS (
    SELECT 1 FROM quarantine AS q
    WHERE q.run_id = r.run_id AND q.provider = r.provider AND q.offer_key IS NULL
)"""
"""SQL over a ``crawl_runs`` row ``r``: the run quarantined an item without a key, so none
of its absences is confirmed (``RunRef.blind``; warehouse.trends reads the same)."""


@dataclass(frozen=True, order=True)
class RunRef:
    """A provider run, ordered as the latest-state views order runs."""

    started_at: datetime
    finished_at: datetime
    run_id: str
    complete: bool = field(default=True, compare=False)
    """An ``ok`` run (False for a partial run). Either way, what a run does not list is
    absent unless it kept it stale (``kept_stale``) or is ``blind``."""
    blind: bool = field(default=False, compare=False)
    """The run quarantined an item without a key: what it does not list may be that item,
    so no absence at that run is confirmed (no reading, like a stale offer)."""


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
        f"""
        SELECT r.started_at, r.finished_at, r.run_id, r.status, {BLIND_SQL} AS blind
        FROM crawl_runs AS r
        WHERE r.provider = ? AND list_contains(?, r.status) AND r.history_at IS NOT NULL
            AND r.started_at >= ?
        ORDER BY r.started_at, r.finished_at, r.run_id
        """,
        [provider, list(WATCHED_STATUSES), floor],
    ).fetchall()
    runs = [
        RunRef(s, f, str(r), complete=st == RunStatus.OK.value, blind=bool(b))
        for s, f, r, st, b in rows
    ]
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


def confirmed_before(
    con: duckdb.DuckDBPyConnection,
    provider: str,
    offer_keys: set[str],
    *,
    since: datetime,
    before: RunRef,
) -> set[str]:
    """Of ``offer_keys``, those some good run of the provider confirmed, from ``since``
    (the watch's creation) up to ``before`` (excluded): the run saw the offer (a version
    held then and it was not stale), or confirmed its absence (no version held, not stale,
    and the run was not ``blind``). An offer in none of them was never confirmed since the
    watch began: its first confirmed look is its baseline, not a transition."""
    if not offer_keys:
        return set()
    rows = con.execute(
        f"""
        WITH runs AS (
            SELECT r.history_at, {BLIND_SQL} AS blind
            FROM crawl_runs AS r
            WHERE r.provider = $provider AND list_contains($statuses, r.status)
              AND r.history_at IS NOT NULL AND r.started_at >= $since
              AND (r.started_at < $s OR (r.started_at = $s AND (r.finished_at < $f
                   OR (r.finished_at = $f AND r.run_id < $run))))
        ),
        keys AS (SELECT unnest($keys) AS offer_key)
        SELECT DISTINCT k.offer_key
        FROM keys AS k, runs AS x
        WHERE NOT EXISTS (
                SELECT 1 FROM stale_spans AS sp
                WHERE sp.provider = $provider AND sp.offer_key = k.offer_key
                  AND sp.stale_from <= x.history_at
                  AND coalesce(sp.stale_to, 'infinity'::TIMESTAMPTZ) > x.history_at
            )
          AND (NOT x.blind OR EXISTS (
                SELECT 1 FROM version_rows AS v
                WHERE v.provider = $provider AND v.offer_key = k.offer_key
                  AND v.valid_from <= x.history_at
                  AND coalesce(v.valid_to, 'infinity'::TIMESTAMPTZ) > x.history_at
            ))
        """,
        {
            "provider": provider, "statuses": list(WATCHED_STATUSES), "since": since,
            "s": before.started_at, "f": before.finished_at, "run": before.run_id,
            "keys": sorted(offer_keys),
        },
    ).fetchall()  # fmt: skip
    return {str(key) for (key,) in rows}
