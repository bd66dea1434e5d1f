"""Weaving a good run loaded late: between two runs of its provider already woven.

A backfill (``gpurent load`` of a feed kept while the warehouse was busy, a run recorded on
another machine) arrives after later runs. Its snapshot must read back exactly, and so must
every later run's. The versions covering its place (closed ones in ``offer_versions``, open
ones in ``current_offers``) are compared with its offers: those it no longer sees, or sees
changed, are cut at its place and, where they went on past the next run, continued from
that run under new ids (an open version stays open in current_offers, under its new id);
what it sees new or changed gets a version from its place to the next run. What a late run
could not read (warehouse.unread, staged by the caller) it keeps uncut and records stale for
its place only (up to the next run); the last-seen time it records for them is the one the
run before it had for them. (Where the provider lists only what has capacity, a late run
keeps what it no longer lists stale too, rather than cut a sold-out version into the past.)
A late run that sees an offer during a stale stretch splits the stretch around its place
(docs/history.md).

The run's offers are those warehouse.feed staged (OFFERS_TABLE, hashed), as for a run
loaded in order.
"""

from __future__ import annotations

from datetime import datetime

import duckdb

from warehouse.db import fetch_one
from warehouse.duck_sql import run_sql
from warehouse.feed import OFFERS_TABLE
from warehouse.history import (
    CONTENT_FIELDS,
    IDENTITY_COLUMNS,
    IDENTITY_FIELDS,
    STATE_FIELDS,
    STORED_IDENTITIES,
    VERSION_COLUMNS,
    WeaveResult,
    count,
    identity_hash,
    next_ids,
    store,
    store_new_sets,
)
from warehouse.offer_hashes import content_hash
from warehouse.unread import kept, sold_out

__all__ = ["LATE_TABLES", "drop_late_tables", "weave_late"]

_TEMP = "_gpurent_late_"
_COVER = f"{_TEMP}cover"
_OPENED = f"{_TEMP}opened"
_CLOSED = f"{_TEMP}closed"
_NEW = f"{_TEMP}new"
_IDS = f"{_TEMP}ids"
LATE_TABLES = (_COVER, _OPENED, _CLOSED, _NEW, _IDS)


def drop_late_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Free the temporary tables of the last late weave (outside a transaction)."""
    for name in LATE_TABLES:
        con.execute(f"DROP TABLE IF EXISTS {name}")


# A version holding at the run's place (alias c) that the run did not read, or that lies
# where not listed means sold out: kept uncut, stale for the place.
_KEPT = f"({kept('c')} OR {sold_out('c')})"

# A closed version's fields, from its identity and its state.
_FIELDS_HASH = (
    "hash(" + ", ".join(f"{'i' if c in IDENTITY_FIELDS else 'v'}.{c}" for c in CONTENT_FIELDS) + ")"
)
# The versions holding a place in a provider's history, with their key and content hash:
# closed ones, and the open ones (current_offers) that began at or before the place.
_COVER_SQL = f"""
SELECT v.version_id, v.identity_id, v.valid_from, v.valid_to,
    {", ".join(f"v.{c}" for c in STATE_FIELDS)}, v.fee_set_id, v.plan_set_id,
    i.offer_key, {content_hash(_FIELDS_HASH, "fs.set_hash", "ps.set_hash")} AS content_hash,
    false AS open
FROM offer_versions AS v
JOIN offer_identities AS i ON i.identity_id = v.identity_id
LEFT JOIN (SELECT DISTINCT fee_set_id, set_hash FROM addon_fee_sets) AS fs
    ON fs.fee_set_id = v.fee_set_id
LEFT JOIN (SELECT DISTINCT plan_set_id, set_hash FROM price_plan_sets) AS ps
    ON ps.plan_set_id = v.plan_set_id
WHERE v.provider = $p AND v.valid_from <= $at
  AND coalesce(v.valid_to, 'infinity'::TIMESTAMPTZ) > $at
UNION ALL
SELECT version_id, identity_id, valid_from, NULL, {", ".join(STATE_FIELDS)}, fee_set_id,
    plan_set_id, offer_key, content_hash, true
FROM current_offers WHERE provider = $p AND valid_from <= $at
"""


def weave_late(
    con: duckdb.DuckDBPyConnection,
    *,
    provider: str,
    position: datetime,
    next_position: datetime,
    observed_at: datetime | None,
) -> WeaveResult:
    """Record the snapshot of a good run at ``position``, before the run already stored at
    ``next_position``: its offers as warehouse.feed staged them (OFFERS_TABLE, one
    provider; ``observed_at``: the run's observation time). The run's unread set must be
    staged (warehouse.unread): what it could not read stays uncut, stale; the rest it does
    not list is cut."""
    vtop, itop = next_ids(con)
    params = {"p": provider, "at": position, "next": next_position, "vtop": vtop, "itop": itop}
    run_sql(con, f"CREATE OR REPLACE TEMP TABLE {_COVER} AS {_COVER_SQL}", params)
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE {_OPENED} AS
        SELECT s._line, s.offer_key, s.content_hash, s.identity_hash, s.fee_hash, s.plan_hash
        FROM {OFFERS_TABLE} AS s LEFT JOIN {_COVER} AS c ON c.offer_key = s.offer_key
        WHERE c.offer_key IS NULL OR c.content_hash <> s.content_hash
        """
    )
    run_sql(
        con,
        f"""
        CREATE OR REPLACE TEMP TABLE {_CLOSED} AS
        SELECT c.* FROM {_COVER} AS c
        LEFT JOIN {OFFERS_TABLE} AS s ON s.offer_key = c.offer_key
        WHERE (s.offer_key IS NULL AND NOT {_KEPT}) OR s.content_hash <> c.content_hash
        """,
        params,
    )
    unseen = _unseen(con)
    _store_identities(con, params)
    store_new_sets(con)

    closed = count(con, _CLOSED)
    gone = closed - count(
        con, f"(SELECT 1 FROM {_CLOSED} WHERE offer_key IN (SELECT offer_key FROM {OFFERS_TABLE}))"
    )
    if closed:
        # Closed versions are cut at the run; open ones move out of current_offers with it
        # (their continuation stays there, below).
        store(
            con,
            "offer_versions",
            f"UPDATE offer_versions SET valid_to = $at WHERE provider = $p"
            f" AND version_id IN (SELECT version_id FROM {_CLOSED} WHERE NOT open)",
            params,
        )
        store(
            con,
            "offer_versions",
            f"""
            INSERT INTO offer_versions ({", ".join(VERSION_COLUMNS)})
            SELECT version_id, $p, identity_id, valid_from, $at::TIMESTAMPTZ,
                {", ".join(STATE_FIELDS)}, fee_set_id, plan_set_id
            FROM {_CLOSED} WHERE open
            """,
            params,
        )
    # The states this run opens (up to the next run), and the cut versions that went on
    # past the next run, continued from it unchanged, all under new ids.
    run_sql(
        con,
        f"""
        CREATE OR REPLACE TEMP TABLE {_NEW} AS
        SELECT CAST($vtop + row_number() OVER (ORDER BY continued, _line, offer_key)
            AS BIGINT) AS version_id, *
        FROM (
            SELECT o.offer_key, i.identity_id, $at::TIMESTAMPTZ AS valid_from,
                $next::TIMESTAMPTZ AS valid_to, {", ".join(f"r.{c}" for c in STATE_FIELDS)},
                fs.fee_set_id, ps.plan_set_id, false AS continued, o._line
            FROM {_OPENED} AS o
            JOIN {OFFERS_TABLE} AS r ON r._line = o._line
            JOIN (SELECT DISTINCT identity_hash, identity_id FROM {_IDS}) AS i
                ON i.identity_hash = o.identity_hash
            LEFT JOIN (SELECT DISTINCT set_hash, fee_set_id FROM addon_fee_sets) AS fs
                ON fs.set_hash = o.fee_hash
            LEFT JOIN (SELECT DISTINCT set_hash, plan_set_id FROM price_plan_sets) AS ps
                ON ps.set_hash = o.plan_hash
            UNION ALL
            SELECT offer_key, identity_id, $next::TIMESTAMPTZ, valid_to,
                {", ".join(STATE_FIELDS)}, fee_set_id, plan_set_id, true, NULL
            FROM {_CLOSED}
            WHERE valid_to IS NULL OR valid_to > $next
        )
        """,
        params,
    )
    counts = fetch_one(
        con,
        f"SELECT count(*) FILTER (NOT continued),"
        f" count(*) FILTER (continued AND valid_to IS NULL) FROM {_NEW}",
    ) or (0, 0)
    opened, continued_open = int(counts[0]), int(counts[1])
    continued = count(con, _NEW) - opened
    if opened or continued - continued_open:
        store(
            con,
            "offer_versions",
            f"""
            INSERT INTO offer_versions ({", ".join(VERSION_COLUMNS)})
            SELECT version_id, $p, identity_id, valid_from, valid_to,
                {", ".join(STATE_FIELDS)}, fee_set_id, plan_set_id
            FROM {_NEW} WHERE NOT continued OR valid_to IS NOT NULL
            """,
            params,
        )
    if continued_open:
        # Open versions that were cut and continued live on, open, under new ids.
        store(
            con,
            "current_offers",
            f"""
            UPDATE current_offers AS co SET version_id = n.version_id,
                valid_from = n.valid_from
            FROM {_NEW} AS n
            WHERE n.continued AND n.valid_to IS NULL
              AND co.provider = $p AND co.offer_key = n.offer_key
            """,
            params,
        )
    _split_stale_spans(con, provider, position, next_position, observed_at)
    if unseen:
        _record_late_stale(con, provider, position, next_position)
    return WeaveResult(opened=opened, closed=closed, continued=continued, kept=unseen, gone=gone)


def _unseen(con: duckdb.DuckDBPyConnection) -> int:
    """The versions holding at the run's place that it did not list but keeps."""
    row = fetch_one(
        con,
        f"SELECT count(*) FROM {_COVER} AS c"
        f" WHERE offer_key NOT IN (SELECT offer_key FROM {OFFERS_TABLE}) AND {_KEPT}",
    )
    return int(row[0]) if row else 0


def _store_identities(con: duckdb.DuckDBPyConnection, params: dict[str, object]) -> None:
    """The identities of the versions this run opens: those stored, those of open versions
    (stored now, as the run's versions are closed ones), or new ones."""
    run_sql(
        con,
        f"""
        CREATE OR REPLACE TEMP TABLE {_IDS} AS
        SELECT identity_hash, coalesce(identity_id, CAST($itop + row_number() OVER (
            PARTITION BY identity_id IS NULL ORDER BY _line) AS INTEGER)) AS identity_id,
            _line, known
        FROM (
            SELECT o.identity_hash, o._line,
                coalesce(i.identity_id, c.identity_id) AS identity_id,
                i.identity_id IS NOT NULL AS known
            FROM (SELECT identity_hash, min(_line) AS _line FROM {_OPENED}
                  GROUP BY identity_hash) AS o
            LEFT JOIN {STORED_IDENTITIES} AS i ON i.identity_hash = o.identity_hash
            LEFT JOIN (
                SELECT {identity_hash("c")} AS identity_hash, min(identity_id) AS identity_id
                FROM current_offers AS c WHERE provider = $p GROUP BY ALL
            ) AS c ON c.identity_hash = o.identity_hash
        )
        """,
        params,
    )
    store(
        con,
        "offer_identities",
        f"""
        INSERT INTO offer_identities ({", ".join(IDENTITY_COLUMNS)})
        SELECT n.identity_id, r.provider, r.offer_key, n.identity_hash,
            {", ".join(f"r.{c}" for c in IDENTITY_FIELDS)}
        FROM {_IDS} AS n JOIN {OFFERS_TABLE} AS r ON r._line = n._line
        WHERE NOT n.known ORDER BY n.identity_id
        """,
    )
    # Open versions about to be cut keep their identity: store it beside the moved rows.
    store(
        con,
        "offer_identities",
        f"""
        INSERT INTO offer_identities ({", ".join(IDENTITY_COLUMNS)})
        SELECT c.identity_id, c.provider, c.offer_key, {identity_hash("c")},
            {", ".join(f"c.{f}" for f in IDENTITY_FIELDS)}
        FROM current_offers AS c
        WHERE c.provider = $p AND c.offer_key IN (SELECT offer_key FROM {_CLOSED} WHERE open)
          AND c.identity_id NOT IN (SELECT identity_id FROM offer_identities)
        """,
        params,
    )


def _split_stale_spans(
    con: duckdb.DuckDBPyConnection,
    provider: str,
    position: datetime,
    next_position: datetime | None,
    seen: datetime | None,
) -> None:
    """A late run that lists an offer inside one of its stale stretches: the stretch is cut
    at the run and, where it went on past the next run, continued from there. Seen
    unchanged, the continuation was last seen by this run; seen changed, the state that
    continues is the old one, still last seen when it was.
    """
    params = {"p": provider, "at": position, "next": next_position, "seen": seen}
    run_sql(
        con,
        f"""
        INSERT INTO stale_spans (provider, offer_key, stale_from, stale_to, last_seen_at)
        SELECT sp.provider, sp.offer_key, $next, sp.stale_to,
            CASE WHEN c.content_hash = s.content_hash THEN $seen ELSE sp.last_seen_at END
        FROM stale_spans AS sp
        JOIN {OFFERS_TABLE} AS s ON s.offer_key = sp.offer_key
        JOIN {_COVER} AS c ON c.offer_key = sp.offer_key
        WHERE sp.provider = $p AND sp.stale_from < $at
          AND coalesce(sp.stale_to, 'infinity'::TIMESTAMPTZ) > $next
        """,
        params,
    )
    run_sql(
        con,
        f"""
        UPDATE stale_spans SET stale_to = $at
        WHERE provider = $p AND stale_from < $at
          AND coalesce(stale_to, 'infinity'::TIMESTAMPTZ) > $at
          AND offer_key IN (SELECT offer_key FROM {OFFERS_TABLE})
        """,
        params,
    )
    # A stale offer of the current state seen, unchanged, by the late run: seen later.
    run_sql(
        con,
        f"""
        UPDATE current_offers AS co SET last_seen_at = greatest(co.last_seen_at, $seen)
        FROM {OFFERS_TABLE} AS s
        WHERE co.provider = $p AND co.last_seen_at IS NOT NULL
          AND s.offer_key = co.offer_key AND s.content_hash = co.content_hash
        """,
        params,
    )


def _record_late_stale(
    con: duckdb.DuckDBPyConnection,
    provider: str,
    position: datetime,
    next_position: datetime | None,
) -> None:
    """A late partial run: the versions holding at its place that it did not list are stale
    there, up to the next run, unless a stretch already covers the place (the offer was
    stale at the run before too). Otherwise the run before saw it: last seen then."""
    run_sql(
        con,
        f"""
        WITH prev AS (
            SELECT observed_at FROM crawl_runs
            WHERE provider = $p AND history_at < $at
            ORDER BY history_at DESC LIMIT 1
        )
        INSERT INTO stale_spans (provider, offer_key, stale_from, stale_to, last_seen_at)
        SELECT $p, c.offer_key, $at, $next, prev.observed_at
        FROM {_COVER} AS c, prev
        WHERE c.offer_key NOT IN (SELECT offer_key FROM {OFFERS_TABLE}) AND {_KEPT}
          AND NOT EXISTS (
            SELECT 1 FROM stale_spans AS sp
            WHERE sp.provider = $p AND sp.offer_key = c.offer_key AND sp.stale_from < $at
              AND coalesce(sp.stale_to, 'infinity'::TIMESTAMPTZ) > $at
          )
        """,
        {"p": provider, "at": position, "next": next_position},
    )
