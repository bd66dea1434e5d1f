"""Weaving a good run loaded late: between two runs of its provider already woven.

A backfill (``gpurent load`` of a feed kept while the warehouse was busy, a run recorded on
another machine) arrives after later runs. Its snapshot must read back exactly, and so must
every later run's: the history must be the one loading the runs in order gives.

The rule: the late run meets each later run as that run really looked. Where the late run
changes what an offer is (lists it new or changed, or reads its source and no longer lists
it), that change holds through the later runs that could not read the offer (its stale
stretch there; for an offer no later run had, the later run's stored unread scope,
``unread_scopes``), and ends at the first later run that looked at it: one that listed it,
or read its source and did not list it. So:

- versions holding at the run's place (closed ones in ``offer_versions``, open ones in
  ``current_offers``) that it no longer sees, or sees changed, are cut at its place and,
  where they went on past that first look, continued from it (an open version stays open
  in current_offers, under a new id);
- what it sees new or changed gets a version from its place to that first look (open, and
  stale, when no later run looked; merged with the version the look opened when that has
  the same content), stale over the later runs that kept it, last seen by this run;
- an offer it no longer lists is gone over the later runs that kept it: their stale
  stretch goes.

What a late run could not read (warehouse.unread, staged by the caller) it keeps uncut and
records stale for its place only (up to the next run); the last-seen time it records for
them is the one the run before it had for them. (Where the provider lists only what has
capacity, a late run keeps what it no longer lists stale too, rather than cut a sold-out
version into the past; and a later run's sold-out-unlisted prefix counts as a look that
ends the late run's change, without replaying the sold-out version it would have made.)
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
    CURRENT_COLUMNS,
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
_RUNS = f"{_TEMP}runs"
_ENDS = f"{_TEMP}ends"
_MERGED = f"{_TEMP}merged"
LATE_TABLES = (_COVER, _OPENED, _CLOSED, _NEW, _IDS, _RUNS, _ENDS, _MERGED)
_FOREVER = "'infinity'::TIMESTAMPTZ"


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


def _versions_sql(closed: str, current: str) -> str:
    """A provider's versions with their key and content hash: closed ones (alias v, with
    their identity i) where ``closed`` holds, open ones (current_offers) where ``current``
    holds."""
    return f"""
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
    WHERE v.provider = $p AND {closed}
    UNION ALL
    SELECT version_id, identity_id, valid_from, NULL, {", ".join(STATE_FIELDS)}, fee_set_id,
        plan_set_id, offer_key, content_hash, true
    FROM current_offers WHERE provider = $p AND {current}
    """


# The versions holding the run's place: closed ones, and the open ones (current_offers)
# that began at or before it.
_COVER_SQL = _versions_sql(
    f"v.valid_from <= $at AND coalesce(v.valid_to, {_FOREVER}) > $at", "valid_from <= $at"
)
# The offers whose state the run changes: listed new or changed, or no longer listed.
_CHANGED = f"(SELECT offer_key FROM {_OPENED} UNION SELECT offer_key FROM {_CLOSED})"


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
    not list is cut. What it changes holds until the first later run that looked at the
    offer (module docstring)."""
    vtop, itop = next_ids(con)
    seen = observed_at or position
    params = {
        "p": provider, "at": position, "next": next_position, "seen": seen, "vtop": vtop,
        "itop": itop,
    }  # fmt: skip
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
    # Read before anything is written: where each change ends, and the versions it joins.
    _find_ends(con, params)
    unseen = _unseen(con)
    _store_identities(con, params)
    store_new_sets(con)

    closed = count(con, _CLOSED)
    gone = closed - count(
        con, f"(SELECT 1 FROM {_CLOSED} WHERE offer_key IN (SELECT offer_key FROM {OFFERS_TABLE}))"
    )
    if closed:
        # Closed versions are cut at the run; open ones move out of current_offers with it
        # (their continuation stays there, below; one no later run looked at has none).
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
        store(
            con,
            "current_offers",
            f"""
            DELETE FROM current_offers WHERE provider = $p AND version_id IN (
                SELECT c.version_id FROM {_CLOSED} AS c JOIN {_ENDS} AS e USING (offer_key)
                WHERE c.open AND e.end_at IS NULL
            )
            """,
            params,
        )
    # The states this run opens (up to the first later run that looked at the offer, none
    # for those that join the version that look opened), and the cut versions that went on
    # past that look, continued from it unchanged, all under new ids.
    run_sql(
        con,
        f"""
        CREATE OR REPLACE TEMP TABLE {_NEW} AS
        SELECT CAST($vtop + row_number() OVER (ORDER BY continued, _line, offer_key)
            AS BIGINT) AS version_id, *
        FROM (
            SELECT o.offer_key, i.identity_id, $at::TIMESTAMPTZ AS valid_from,
                e.end_at AS valid_to, {", ".join(f"r.{c}" for c in STATE_FIELDS)},
                fs.fee_set_id, ps.plan_set_id, false AS continued, o._line
            FROM {_OPENED} AS o
            JOIN {_ENDS} AS e ON e.offer_key = o.offer_key
            JOIN {OFFERS_TABLE} AS r ON r._line = o._line
            JOIN (SELECT DISTINCT identity_hash, identity_id FROM {_IDS}) AS i
                ON i.identity_hash = o.identity_hash
            LEFT JOIN (SELECT DISTINCT set_hash, fee_set_id FROM addon_fee_sets) AS fs
                ON fs.set_hash = o.fee_hash
            LEFT JOIN (SELECT DISTINCT set_hash, plan_set_id FROM price_plan_sets) AS ps
                ON ps.set_hash = o.plan_hash
            WHERE o.offer_key NOT IN (SELECT offer_key FROM {_MERGED})
            UNION ALL
            SELECT c.offer_key, c.identity_id, e.end_at, c.valid_to,
                {", ".join(f"c.{f}" for f in STATE_FIELDS)}, c.fee_set_id, c.plan_set_id,
                true, NULL
            FROM {_CLOSED} AS c JOIN {_ENDS} AS e ON e.offer_key = c.offer_key
            WHERE e.end_at IS NOT NULL AND coalesce(c.valid_to, {_FOREVER}) > e.end_at
        )
        """,
        params,
    )
    counts = fetch_one(
        con,
        f"SELECT count(*) FILTER (NOT continued),"
        f" count(*) FILTER (valid_to IS NULL),"
        f" count(*) FILTER (continued AND valid_to IS NULL) FROM {_NEW}",
    ) or (0, 0, 0)
    opened, still_open, continued_open = (int(x) for x in counts)
    continued = count(con, _NEW) - opened
    if count(con, _NEW) - still_open:
        store(
            con,
            "offer_versions",
            f"""
            INSERT INTO offer_versions ({", ".join(VERSION_COLUMNS)})
            SELECT version_id, $p, identity_id, valid_from, valid_to,
                {", ".join(STATE_FIELDS)}, fee_set_id, plan_set_id
            FROM {_NEW} WHERE valid_to IS NOT NULL
            """,
            params,
        )
    if still_open - continued_open:
        _open_stale(con, params)
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
    if count(con, _MERGED):
        _merge(con, params)
    _split_stale_spans(con, params)
    _record_changed_stale(con, params)
    if unseen:
        _record_late_stale(con, provider, position, next_position)
    return WeaveResult(opened=opened, closed=closed, continued=continued, kept=unseen, gone=gone)


def _find_ends(con: duckdb.DuckDBPyConnection, params: dict[str, object]) -> None:
    """For each offer whose state the run changes (_CHANGED), the first later run that
    looked at it (_ENDS.end_at; NULL: none did). A later run did not look at an offer it
    kept stale (its stale stretch holds it there), nor at one it had no version of and
    could not read (its unread scope, unread_scopes, names it): such a run would have kept
    the run's new state too, had the runs come in order. And the versions, starting at that
    look, that hold the very state this run lists (_MERGED): the run's version joins them.
    """
    run_sql(
        con,
        f"""
        CREATE OR REPLACE TEMP TABLE {_RUNS} AS
        SELECT run_id, history_at, row_number() OVER (ORDER BY history_at) AS n
        FROM crawl_runs WHERE provider = $p AND history_at > $at
        """,
        params,
    )
    # (Keys by equality, prefixes one by one, as warehouse.unread does.)
    scoped = f"""
        SELECT k.offer_key, r.n, r.history_at
        FROM {_CHANGED} AS k
        JOIN unread_scopes AS u ON u.provider = $p AND NOT u.sold_out AND {{match}}
        JOIN {_RUNS} AS r ON r.run_id = u.run_id
    """
    run_sql(
        con,
        f"""
        CREATE OR REPLACE TEMP TABLE {_ENDS} AS
        WITH unread AS (
            {scoped.format(match="NOT u.prefix AND u.key = k.offer_key")}
            UNION ALL
            {scoped.format(match="u.prefix AND starts_with(k.offer_key, u.key)")}
        ),
        kept_by AS (
            SELECT DISTINCT offer_key, n FROM (
                SELECT sp.offer_key, r.n
                FROM stale_spans AS sp
                JOIN {_RUNS} AS r ON sp.stale_from <= r.history_at
                    AND coalesce(sp.stale_to, {_FOREVER}) > r.history_at
                WHERE sp.provider = $p AND sp.offer_key IN {_CHANGED}
                UNION ALL
                SELECT u.offer_key, u.n FROM unread AS u
                WHERE NOT EXISTS (
                    SELECT 1 FROM version_rows AS v
                    WHERE v.provider = $p AND v.offer_key = u.offer_key
                      AND v.valid_from <= u.history_at
                      AND coalesce(v.valid_to, {_FOREVER}) > u.history_at
                )
            )
        ),
        -- How many runs right after this one kept the offer, one after the other.
        kept_run AS (
            SELECT offer_key, max(n) AS n FROM (
                SELECT offer_key, n, row_number() OVER (PARTITION BY offer_key ORDER BY n) AS i
                FROM kept_by
            ) WHERE n = i GROUP BY offer_key
        )
        SELECT k.offer_key, r.history_at AS end_at
        FROM {_CHANGED} AS k
        LEFT JOIN kept_run AS c ON c.offer_key = k.offer_key
        LEFT JOIN {_RUNS} AS r ON r.n = coalesce(c.n, 0) + 1
        """,
        params,
    )
    versions = _versions_sql(
        f"i.offer_key IN (SELECT offer_key FROM {_OPENED}) AND v.valid_from > $at",
        f"offer_key IN (SELECT offer_key FROM {_OPENED}) AND valid_from > $at",
    )
    run_sql(
        con,
        f"""
        CREATE OR REPLACE TEMP TABLE {_MERGED} AS
        SELECT v.offer_key, v.version_id, v.open, o._line
        FROM ({versions}) AS v
        JOIN {_ENDS} AS e ON e.offer_key = v.offer_key AND e.end_at = v.valid_from
        JOIN {_OPENED} AS o ON o.offer_key = v.offer_key AND o.content_hash = v.content_hash
        """,
        params,
    )


def _open_stale(con: duckdb.DuckDBPyConnection, params: dict[str, object]) -> None:
    """The states this run opens that no later run looked at: open, in current_offers,
    stale (the later runs kept them), last seen by this run."""
    columns = {
        "version_id": "n.version_id",
        "identity_id": "n.identity_id",
        "valid_from": "$at::TIMESTAMPTZ",
        "fee_set_id": "n.fee_set_id",
        "plan_set_id": "n.plan_set_id",
        "feed_line": "o._line",
    }
    select = ", ".join(columns.get(c, f"o.{c}") for c in CURRENT_COLUMNS)
    store(
        con,
        "current_offers",
        f"""
        INSERT INTO current_offers ({", ".join(CURRENT_COLUMNS)}, last_seen_at)
        SELECT {select}, $seen::TIMESTAMPTZ
        FROM {_NEW} AS n JOIN {OFFERS_TABLE} AS o ON o._line = n._line
        WHERE NOT n.continued AND n.valid_to IS NULL
        """,
        params,
    )


def _merge(con: duckdb.DuckDBPyConnection, params: dict[str, object]) -> None:
    """The versions the first later look opened with the state this run lists (_MERGED)
    begin at this run instead: in order, this run opened them and the look saw them
    unchanged (an open one now comes from this run's feed line)."""
    store(
        con,
        "offer_versions",
        f"UPDATE offer_versions SET valid_from = $at WHERE provider = $p"
        f" AND version_id IN (SELECT version_id FROM {_MERGED} WHERE NOT open)",
        params,
    )
    store(
        con,
        "current_offers",
        f"""
        UPDATE current_offers AS co SET valid_from = $at, feed_line = o._line,
            observed_at = o.observed_at
        FROM {_MERGED} AS m JOIN {OFFERS_TABLE} AS o ON o._line = m._line
        WHERE m.open AND co.provider = $p AND co.version_id = m.version_id
        """,
        params,
    )


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


def _split_stale_spans(con: duckdb.DuckDBPyConnection, params: dict[str, object]) -> None:
    """The stale stretches around the run's place. One the run lists the offer in is cut at
    the run and, where it went on past the next run, continued from there; one that began
    at the next run is the same stretch: both are now last seen by this run (the later runs
    kept what this run listed, changed or not). One of an offer the run read and no longer
    lists ends at the run, and its part after the run goes: gone, the later runs that could
    not read it had nothing to keep.
    """
    listed = f"(SELECT offer_key FROM {OFFERS_TABLE})"
    gone = f"(SELECT offer_key FROM {_CLOSED} WHERE offer_key NOT IN {listed})"
    run_sql(
        con,
        f"""
        INSERT INTO stale_spans (provider, offer_key, stale_from, stale_to, last_seen_at)
        SELECT sp.provider, sp.offer_key, $next, sp.stale_to, $seen
        FROM stale_spans AS sp
        WHERE sp.provider = $p AND sp.stale_from < $at
          AND coalesce(sp.stale_to, {_FOREVER}) > $next AND sp.offer_key IN {listed}
        """,
        params,
    )
    run_sql(
        con,
        f"""
        UPDATE stale_spans SET last_seen_at = $seen
        WHERE provider = $p AND stale_from = $next AND offer_key IN {listed}
        """,
        params,
    )
    run_sql(
        con,
        f"""
        UPDATE stale_spans SET stale_to = $at
        WHERE provider = $p AND stale_from < $at
          AND coalesce(stale_to, {_FOREVER}) > $at
          AND (offer_key IN {listed} OR offer_key IN {gone})
        """,
        params,
    )
    run_sql(
        con,
        f"""
        DELETE FROM stale_spans
        WHERE provider = $p AND stale_from = $next AND offer_key IN {gone}
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


def _record_changed_stale(con: duckdb.DuckDBPyConnection, params: dict[str, object]) -> None:
    """An offer new at the run (no version held its place) that the next runs kept, having
    no version of it and not reading it: stale from the next run to the first later run
    that looked at it (or on), last seen by this run. (A changed offer's stretch there is
    the old state's, already stored: _split_stale_spans gives it this run's sighting.)"""
    run_sql(
        con,
        f"""
        INSERT INTO stale_spans (provider, offer_key, stale_from, stale_to, last_seen_at)
        SELECT $p, e.offer_key, $next, e.end_at, $seen
        FROM {_ENDS} AS e
        WHERE coalesce(e.end_at, {_FOREVER}) > $next
          AND e.offer_key IN (SELECT offer_key FROM {_OPENED})
          AND e.offer_key NOT IN (SELECT offer_key FROM {_COVER})
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
    stale at the run before too). Otherwise the run before saw it: last seen then; and a
    stretch that began at the next run (which kept it too) now begins at this run."""
    params = {"p": provider, "at": position, "next": next_position}
    kept_here = f"""(
        SELECT c.offer_key FROM {_COVER} AS c
        WHERE c.offer_key NOT IN (SELECT offer_key FROM {OFFERS_TABLE}) AND {_KEPT}
          AND NOT EXISTS (
            SELECT 1 FROM stale_spans AS sp
            WHERE sp.provider = $p AND sp.offer_key = c.offer_key AND sp.stale_from <= $at
              AND coalesce(sp.stale_to, {_FOREVER}) > $at
          )
    )"""
    run_sql(
        con,
        f"""
        UPDATE stale_spans SET stale_from = $at
        WHERE provider = $p AND stale_from = $next AND offer_key IN {kept_here}
        """,
        params,
    )
    run_sql(
        con,
        f"""
        WITH prev AS (
            SELECT observed_at FROM crawl_runs
            WHERE provider = $p AND history_at < $at
            ORDER BY history_at DESC LIMIT 1
        )
        INSERT INTO stale_spans (provider, offer_key, stale_from, stale_to, last_seen_at)
        SELECT $p, k.offer_key, $at, $next, prev.observed_at
        FROM {kept_here} AS k, prev
        """,
        params,
    )
