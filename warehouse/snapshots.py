"""Past states, read back from the change history: what a run saw, what was listed at a time.

A good run's snapshot is the set of versions whose validity holds the run's place in its
provider's history (``history_at``); versions change only at good runs, so this gives back
exactly the offers that run loaded, fees and plans included. Failed and layout_changed runs
saw nothing that was stored: their snapshot is empty, and the state at their time is the
last good run's (rule of truth 2).

A partial run did not see every offer it kept (rule of truth 10): ``stale_spans`` says which
offers were stale at a run. ``offers_at`` gives them, as the latest state did, with
``stale`` true and the time they were last seen; ``offers_of_run`` leaves them out, since
that run did not observe them.

One caveat, by design: a reconstructed row's ``observed_at`` is its run's observation time
(the earliest ``observed_at`` in the run's feed), not each offer's own instant; a stale
row's is the last-seen time of its stale stretch.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import duckdb
import polars as pl

from warehouse.db import query_frame
from warehouse.history import CONTENT_FIELDS

__all__ = ["STATE_COLUMNS", "offers_at", "offers_of_run"]

STATE_COLUMNS = (
    "run_id", "provider", "offer_key", "observed_at", *CONTENT_FIELDS, "run_finished_at",
    "fees", "plans", "stale",
)  # fmt: skip

_STATE_SQL = """
WITH heads AS ({heads})
SELECT
    h.run_id, v.provider, v.offer_key, coalesce(sp.last_seen_at, h.observed_at) AS observed_at,
    {fields},
    h.finished_at AS run_finished_at,
    coalesce(f.fees, []) AS fees,
    coalesce(p.plans, []) AS plans,
    sp.offer_key IS NOT NULL OR NOT h.confirmed AS stale
FROM heads AS h
JOIN version_rows AS v
    ON v.provider = h.provider
    AND v.valid_from <= h.history_at
    AND coalesce(v.valid_to, 'infinity'::TIMESTAMPTZ) > h.history_at
LEFT JOIN stale_spans AS sp
    ON sp.provider = v.provider AND sp.offer_key = v.offer_key
    AND sp.stale_from <= h.history_at
    AND coalesce(sp.stale_to, 'infinity'::TIMESTAMPTZ) > h.history_at
LEFT JOIN fee_set_lists AS f ON f.fee_set_id = v.fee_set_id
LEFT JOIN plan_set_lists AS p ON p.plan_set_id = v.plan_set_id
WHERE v.valid_from <= (SELECT max(history_at) FROM heads) {seen_only}
ORDER BY v.provider, v.gpu_model, v.offer_key
"""
_FIELDS = ", ".join(f"v.{c}" for c in CONTENT_FIELDS)


def _state(
    con: duckdb.DuckDBPyConnection, heads: str, params: list[Any], *, seen_only: bool = False
) -> pl.DataFrame:
    sql = _STATE_SQL.format(
        heads=heads,
        fields=_FIELDS,
        seen_only="AND sp.offer_key IS NULL" if seen_only else "",
    )
    return query_frame(con, sql, params)


def offers_at(
    con: duckdb.DuckDBPyConnection, when: datetime, provider: str | None = None
) -> pl.DataFrame:
    """The latest state as it stood at ``when`` (timezone-aware): per provider, the offers of
    its latest good run started at or before then.

    Columns: STATE_COLUMNS, the ones ``latest_offers`` has but ``age_s``. Providers with
    no good run by then have no rows; offers a partial run kept are there with ``stale``, and
    so is every offer of a provider whose latest run by then (failed, broken) fed no state:
    that look confirmed none of them (rule of truth 11, as ``latest_offers``, migration 17).
    ``offers_at(con, now)`` holds the rows of ``latest_offers``.
    """
    if when.tzinfo is None:
        raise ValueError("when must be timezone-aware (times in the warehouse are UTC)")
    where = "history_at IS NOT NULL AND history_at <= ?"
    params: list[Any] = [when]
    if provider is not None:
        where += " AND provider = ?"
        params.append(provider)
    heads = f"""
        SELECT run_id, provider, observed_at, finished_at, history_at,
            NOT EXISTS (
                SELECT 1 FROM crawl_runs AS r
                WHERE r.provider = g.provider AND r.started_at > g.started_at
                    AND r.started_at <= ?
            ) AS confirmed
        FROM crawl_runs AS g
        WHERE {where}
        QUALIFY row_number() OVER (PARTITION BY provider ORDER BY history_at DESC) = 1
    """
    return _state(con, heads, [when, *params])


def offers_of_run(con: duckdb.DuckDBPyConnection, provider: str, run_id: str) -> pl.DataFrame:
    """Exactly the offers one run of ``provider`` loaded, with fees and plans (STATE_COLUMNS).

    Empty for a run that did not feed the state (failed, layout_changed, no offers) and for
    an unknown run. The offers a partial run kept without seeing them (stale) are left out:
    ``stale`` is always false here.
    """
    heads = """
        SELECT run_id, provider, observed_at, finished_at, history_at, TRUE AS confirmed
        FROM crawl_runs
        WHERE run_id = ? AND provider = ? AND history_at IS NOT NULL
    """
    return _state(con, heads, [run_id, provider], seen_only=True)
