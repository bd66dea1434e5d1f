"""Weaving a good run into the change history and the latest state.

A good run of a provider is a snapshot of everything it lists. Versions change only at good
runs: the run closes the versions it no longer sees, or sees changed, and opens versions for
what is new or changed. Unchanged offers cost nothing, so history grows with change, not
with polls. Runs that do not feed the state (failed, layout_changed, empty) never come here.

Where versions live (migration 14, docs/history.md):

- an **open** version (the offer's state now) is a row of ``current_offers``, whole: its
  identity and state fields, set ids and hashes. Reading the latest state costs the same at
  any age of the history, and a run's new offers are written once, into this one table;
- a **closed** version is a row of ``offer_versions``: what moves (stock, free count, price
  terms, fee and plan lists by id), pointing at its identity in ``offer_identities`` (key,
  GPU, name, region, URL, stored once). A version moves there when it closes.

``version_rows`` (history_views.sql) reads both as one.

A run loaded in order (the usual case, ``weave_in_order``) compares its staged offers
(warehouse.feed.OFFERS_TABLE, hashed) with the open versions by hash: closed versions move
out, new fee and plan lists are stored, and the new or changed offers go into
``current_offers``. A provider's first run is the same comparison with nothing open. A run
loaded late, between two runs already woven (a backfill), goes through
``warehouse.history_late``.

What a run does not list is closed, whatever its status (rule of truth 10), except what it
could not read (warehouse.unread: a failed page or request, a quarantined item whose key
is known): those offers keep their open versions, unchanged, and are marked stale:
``current_offers.last_seen_at`` holds when the last run that saw them observed them
(NULL: the current run saw it), and ``stale_spans`` records the stretch of runs they stayed
stale, so a past run's snapshot says what that run really saw. A later run that lists the
offer makes it fresh again; a later run that reads its source and no longer lists it closes
it. Under a prefix where the provider lists only what has capacity, an offer it no longer
lists gets a ``sold_out`` version instead of closing (rule 11: identity never follows stock).

Called by warehouse.load inside its transaction; every write goes through ``store``, so a
failure anywhere rolls the whole run back.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import duckdb

from warehouse.db import fetch_one
from warehouse.duck_sql import run_sql
from warehouse.feed import OFFERS_TABLE
from warehouse.feed_schema import FEE_ITEM_FIELDS, PLAN_ITEM_FIELDS
from warehouse.offer_hashes import (
    CONTENT_FIELDS,
    IDENTITY_FIELDS,
    content_hash,
    fields_hash,
    identity_hash,
)
from warehouse.unread import UNREAD_TABLE, drop_unread, kept, sold_out

STATE_FIELDS = tuple(c for c in CONTENT_FIELDS if c not in IDENTITY_FIELDS)
IDENTITY_COLUMNS = ("identity_id", "provider", "offer_key", "identity_hash", *IDENTITY_FIELDS)
VERSION_COLUMNS = (
    "version_id", "provider", "identity_id", "valid_from", "valid_to", *STATE_FIELDS,
    "fee_set_id", "plan_set_id",
)  # fmt: skip
CURRENT_COLUMNS = (
    "provider", "offer_key", "version_id", "identity_id", "valid_from", "content_hash",
    *CONTENT_FIELDS, "fee_hash", "plan_hash", "fee_set_id", "plan_set_id", "feed_line",
    "observed_at",
)  # fmt: skip

# Identities already stored, by hash (one id per hash; the smallest, should two exist).
STORED_IDENTITIES = (
    "(SELECT identity_hash, min(identity_id) AS identity_id FROM offer_identities"
    " GROUP BY identity_hash)"
)
# The stored fee and plan sets, by hash (the same: one id per hash).
_SET_IDS = "(SELECT set_hash, min({id}) AS id FROM {table} GROUP BY set_hash)"
# (kind, set table, its id column, the staged list column, the list's fields)
SETS = (
    ("fee", "addon_fee_sets", "fee_set_id", "fees", FEE_ITEM_FIELDS),
    ("plan", "price_plan_sets", "plan_set_id", "plans", PLAN_ITEM_FIELDS),
)


def store(
    con: duckdb.DuckDBPyConnection, table: str, sql: str, params: dict[str, Any] | None = None
) -> None:
    """Every write of a weave: ``sql`` changes ``table``. One seam, so tests can make a
    write fail."""
    run_sql(con, sql, params)


_TEMP = "_gpurent_hist_"
_COVER = f"{_TEMP}cover"
_OPENED = f"{_TEMP}opened"
_CLOSED = f"{_TEMP}closed"
_FRESH = f"{_TEMP}fresh"
_SOLD = f"{_TEMP}sold"
TEMP_TABLES = (_COVER, _OPENED, _CLOSED, _FRESH, _SOLD, f"{_SOLD}_rows")
_ONE_MICROSECOND = timedelta(microseconds=1)


@dataclass(frozen=True)
class WeaveResult:
    """What one good run changed in the history."""

    opened: int
    closed: int
    continued: int
    """Versions cut by a late run and continued after it (0 for runs loaded in order)."""
    kept: int = 0
    """Open versions the run did not list but could not read either: kept, stale."""
    gone: int = 0
    """Open versions closed because the run, having read their source, no longer lists them."""
    sold_out: int = 0
    """Open versions turned ``sold_out`` because the provider stopped listing them where it
    lists only what has capacity."""


def history_position(
    con: duckdb.DuckDBPyConnection, provider: str, started_at: datetime
) -> datetime:
    """The run's place in its provider's history: ``started_at``, unique per provider.

    Two good runs of one provider starting in the same microsecond cannot both sit at one
    instant; the later-loaded one moves a microsecond on (documented in docs/history.md).
    """
    taken = {
        row[0]
        for row in con.execute(
            "SELECT history_at FROM crawl_runs WHERE provider = ?"
            " AND history_at >= ? AND history_at < ?",
            [provider, started_at, started_at + timedelta(seconds=1)],
        ).fetchall()
    }
    position = started_at
    while position in taken:
        position += _ONE_MICROSECOND
    return position


@dataclass(frozen=True)
class Placement:
    """Where a good run goes in its provider's history."""

    position: datetime
    next_position: datetime | None
    """history_at of the provider's next good run already stored (None: this run is the
    newest, the usual case, and becomes the current state)."""


def place_run(con: duckdb.DuckDBPyConnection, provider: str, started_at: datetime) -> Placement:
    """The run's position, and the next good run after it if it arrives late."""
    row = fetch_one(con, "SELECT history_at FROM current_runs WHERE provider = ?", [provider])
    if row is None or started_at > row[0]:
        return Placement(started_at, None)  # after every stored run: no clash possible
    position = history_position(con, provider, started_at)
    following = fetch_one(
        con,
        "SELECT min(history_at) FROM crawl_runs WHERE provider = ? AND history_at > ?",
        [provider, position],
    )
    return Placement(position, following[0] if following else None)


def advance_current_run(
    con: duckdb.DuckDBPyConnection,
    *,
    provider: str,
    run_id: str,
    started_at: datetime,
    finished_at: datetime,
    observed_at: datetime,
    position: datetime,
) -> None:
    """Make the run the provider's current run (call for the newest run only)."""
    con.execute("DELETE FROM current_runs WHERE provider = ?", [provider])
    con.execute(
        "INSERT INTO current_runs (provider, run_id, started_at, finished_at, observed_at,"
        " history_at) VALUES (?, ?, ?, ?, ?, ?)",
        [provider, run_id, started_at, finished_at, observed_at, position],
    )


def next_ids(con: duckdb.DuckDBPyConnection) -> tuple[int, int]:
    """The largest version and identity ids in use, open versions included: new ones are
    numbered past them (ids only identify; gaps are allowed)."""
    row = fetch_one(
        con,
        """
        SELECT greatest((SELECT coalesce(max(version_id), 0) FROM offer_versions),
                        (SELECT coalesce(max(version_id), 0) FROM current_offers)),
               greatest((SELECT coalesce(max(identity_id), 0) FROM offer_identities),
                        (SELECT coalesce(max(identity_id), 0) FROM current_offers))
        """,
    )
    return (int(row[0]), int(row[1])) if row else (0, 0)


# ---------------------------------------------------------------- a run loaded in order


def weave_in_order(
    con: duckdb.DuckDBPyConnection, *, provider: str, position: datetime
) -> WeaveResult:
    """Weave the staged run (OFFERS_TABLE) at ``position``, after every run stored for
    ``provider``: the newest state. Offers the run does not list are closed, except what
    the staged unread set (warehouse.unread) says it could not read: those stay as they
    were, stale; and under a sold-out-unlisted prefix, they turn sold out. The caller
    writes crawl_runs and current_runs."""
    vtop, itop = next_ids(con)
    params = {"p": provider, "at": position, "vtop": vtop, "itop": itop}
    seen = f"(SELECT offer_key FROM {OFFERS_TABLE})"
    run_sql(
        con,
        f"""
        CREATE OR REPLACE TEMP TABLE {_COVER} AS
        SELECT version_id, offer_key, content_hash, identity_id, status,
            {identity_hash("c")} AS identity_hash
        FROM current_offers AS c WHERE provider = $p
        """,
        params,
    )
    # The open versions the run does not list: kept when it could not read them (stale),
    # turned sold out under a prefix where the provider lists only what has capacity
    # (``turn`` when not sold out already), else gone. Changed ones close too.
    run_sql(
        con,
        f"""
        CREATE OR REPLACE TEMP TABLE {_SOLD} AS
        SELECT version_id, offer_key, status <> 'sold_out' AS turn FROM {_COVER} AS c
        WHERE offer_key NOT IN {seen} AND NOT {kept("c")} AND {sold_out("c")}
        """,
    )
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE {_CLOSED} AS
        SELECT c.version_id, s.offer_key IS NULL AS gone FROM {_COVER} AS c
        LEFT JOIN {OFFERS_TABLE} AS s ON s.offer_key = c.offer_key
        WHERE (s.offer_key IS NULL AND NOT {kept("c")} AND NOT {sold_out("c")})
           OR s.content_hash <> c.content_hash
        """
    )
    # New and changed offers, with their identity: the open version's when the identity
    # fields did not change, else a stored one with that hash, else a new one.
    run_sql(
        con,
        f"""
        CREATE OR REPLACE TEMP TABLE {_OPENED} AS
        SELECT _line, coalesce(identity_id, CAST($itop + sum(
            CASE WHEN identity_id IS NULL THEN 1 ELSE 0 END
        ) OVER (ORDER BY _line ROWS UNBOUNDED PRECEDING) AS INTEGER)) AS identity_id
        FROM (
            SELECT s._line,
                CASE WHEN c.identity_hash = s.identity_hash THEN c.identity_id
                     ELSE i.identity_id END AS identity_id
            FROM {OFFERS_TABLE} AS s
            LEFT JOIN {_COVER} AS c ON c.offer_key = s.offer_key
            LEFT JOIN {STORED_IDENTITIES} AS i ON i.identity_hash = s.identity_hash
            WHERE c.offer_key IS NULL OR c.content_hash <> s.content_hash
        )
        """,
        params,
    )
    counts = fetch_one(
        con,
        f"SELECT (SELECT count(*) FROM {_OPENED}), (SELECT count(*) FROM {_CLOSED}),"
        f" (SELECT count(*) FILTER (gone) FROM {_CLOSED}),"
        f" (SELECT count(*) FILTER (turn) FROM {_SOLD}), (SELECT count(*) FROM {_SOLD}),"
        f" (SELECT count(*) FROM {_COVER} WHERE offer_key NOT IN {seen})",
    ) or (0, 0, 0, 0, 0, 0)
    opened, closed, gone, turned, unlisted, unseen = (int(x) for x in counts)
    if closed:
        close_versions(con, f"SELECT version_id FROM {_CLOSED}", params)
    if turned:
        _turn_sold_out(con, params)
    if opened:
        store_new_sets(con)
        _open_versions(con, params)
    # What the run listed is fresh, and so is what it turned sold out (listed, in the
    # provider's words); what is left open unseen was not read: stale.
    listed = f"(SELECT offer_key FROM {OFFERS_TABLE} UNION ALL SELECT offer_key FROM {_SOLD})"
    kept_stale = unseen - gone - unlisted
    mark_stale(con, provider, position, seen=listed, kept=kept_stale)
    return WeaveResult(
        opened=opened + turned,
        closed=closed + turned,
        continued=0,
        kept=kept_stale,
        gone=gone,
        sold_out=turned,
    )


def _open_versions(con: duckdb.DuckDBPyConnection, params: dict[str, Any]) -> None:
    """The new and changed offers (_OPENED) into current_offers, each numbered by its line
    and pointing at its fee and plan sets (stored by then)."""
    columns = {
        "version_id": "CAST($vtop + o._line AS BIGINT)",
        "identity_id": "n.identity_id",
        "valid_from": "$at::TIMESTAMPTZ",
        "fee_set_id": "fs.id",
        "plan_set_id": "ps.id",
        "feed_line": "o._line",
    }
    select = ", ".join(columns.get(c, f"o.{c}") for c in CURRENT_COLUMNS)
    store(
        con,
        "current_offers",
        f"""
        INSERT INTO current_offers ({", ".join(CURRENT_COLUMNS)})
        SELECT {select}
        FROM {OFFERS_TABLE} AS o
        JOIN {_OPENED} AS n ON n._line = o._line
        LEFT JOIN {_SET_IDS.format(id="fee_set_id", table="addon_fee_sets")} AS fs
            ON fs.set_hash = o.fee_hash
        LEFT JOIN {_SET_IDS.format(id="plan_set_id", table="price_plan_sets")} AS ps
            ON ps.set_hash = o.plan_hash
        """,
        params,
    )


def _turn_sold_out(con: duckdb.DuckDBPyConnection, params: dict[str, Any]) -> None:
    """The open versions _SOLD turns: each closes, and a version like it but ``sold_out``
    (no free card where a count was given) opens at the run, numbered past the run's lines,
    with the run's observation time."""
    copies = f"{_SOLD}_rows"
    run_sql(
        con,
        f"""
        CREATE OR REPLACE TEMP TABLE {copies} AS
        SELECT * REPLACE (
            'sold_out' AS status,
            CASE WHEN available_count IS NULL THEN NULL ELSE 0 END AS available_count
        )
        FROM current_offers
        WHERE provider = $p AND version_id IN (SELECT version_id FROM {_SOLD} WHERE turn)
        """,
        params,
    )
    close_versions(con, f"SELECT version_id FROM {_SOLD} WHERE turn", params)
    past_lines = f"(SELECT coalesce(max(_line), 0) FROM {OFFERS_TABLE})"
    columns = {
        "version_id": f"CAST($vtop + {past_lines} + row_number() OVER (ORDER BY c.offer_key)"
        " AS BIGINT)",
        "valid_from": "$at::TIMESTAMPTZ",
        "content_hash": content_hash(fields_hash("c"), "c.fee_hash", "c.plan_hash"),
        "feed_line": "NULL::INTEGER",
        "observed_at": f"coalesce((SELECT min(observed_at) FROM {OFFERS_TABLE}), $at::TIMESTAMPTZ)",
    }
    select = ", ".join(columns.get(name, f"c.{name}") for name in CURRENT_COLUMNS)
    store(
        con,
        "current_offers",
        f"INSERT INTO current_offers ({', '.join(CURRENT_COLUMNS)}) SELECT {select}"
        f" FROM {copies} AS c",
        params,
    )


def close_versions(
    con: duckdb.DuckDBPyConnection, version_ids: str, params: dict[str, Any]
) -> None:
    """Close the open versions ``version_ids`` (a query) of provider ``$p`` at ``$at``:
    each moves from current_offers to offer_versions, its identity stored if it is not."""
    where = f"provider = $p AND version_id IN ({version_ids})"
    store(
        con,
        "offer_identities",
        f"""
        INSERT INTO offer_identities ({", ".join(IDENTITY_COLUMNS)})
        SELECT identity_id, provider, offer_key, {identity_hash("c")},
            {", ".join(f"c.{f}" for f in IDENTITY_FIELDS)}
        FROM current_offers AS c
        WHERE {where} AND identity_id NOT IN (SELECT identity_id FROM offer_identities)
        """,
        params,
    )
    store(
        con,
        "offer_versions",
        f"""
        INSERT INTO offer_versions ({", ".join(VERSION_COLUMNS)})
        SELECT version_id, provider, identity_id, valid_from, $at::TIMESTAMPTZ,
            {", ".join(STATE_FIELDS)}, fee_set_id, plan_set_id
        FROM current_offers WHERE {where}
        """,
        params,
    )
    store(con, "current_offers", f"DELETE FROM current_offers WHERE {where}", params)


def store_new_sets(con: duckdb.DuckDBPyConnection) -> None:
    """The fee and plan lists of the staged offers that no earlier run had, under new ids.
    (An offer seen unchanged points at a stored set already: these are the lists of the
    versions about to open.)"""
    for kind, table, id_column, column, _ in SETS:
        top = fetch_one(con, f"SELECT coalesce(max({id_column}), 0) FROM {table}")
        con.execute(
            f"""
            CREATE OR REPLACE TEMP TABLE {_FRESH} AS
            SELECT CAST($top + row_number() OVER (ORDER BY set_hash) AS INTEGER) AS id,
                set_hash, items
            FROM (
                SELECT {kind}_hash AS set_hash, any_value({column}) AS items
                FROM {OFFERS_TABLE}
                WHERE {kind}_hash IS NOT NULL
                  AND {kind}_hash NOT IN (SELECT set_hash FROM {table})
                GROUP BY {kind}_hash
            )
            """,
            {"top": int(top[0]) if top else 0},
        )
        write_sets(con, kind, _FRESH)


def write_sets(con: duckdb.DuckDBPyConnection, kind: str, fresh: str) -> None:
    """Store the new fee (``kind`` "fee") or plan lists of table ``fresh`` (id, set_hash,
    items): a row per fee or plan, and the list whole, once per set, for the read side
    (latest_offers joins it)."""
    _, table, id_column, lists, fields = next(s for s in SETS if s[0] == kind)
    if not count(con, fresh):
        return
    item = ", ".join(f"item.{c}" for c in fields)
    store(
        con,
        table,
        f"""
        INSERT INTO {table} ({id_column}, set_hash, {", ".join(fields)})
        SELECT id, set_hash, {item}
        FROM (SELECT id, set_hash, unnest(items) AS item FROM {fresh})
        ORDER BY id, item.seq
        """,
    )
    store(
        con,
        f"{kind}_set_lists",
        f"INSERT INTO {kind}_set_lists ({id_column}, {lists})"
        f" SELECT id, items FROM {fresh} ORDER BY id",
    )


def mark_stale(
    con: duckdb.DuckDBPyConnection,
    provider: str,
    position: datetime,
    *,
    seen: str,
    kept: int,
) -> None:
    """After an in-order run: what it listed (``seen``, a query of offer keys) is fresh;
    what is still open without being listed (``kept`` offers) was not read by the run (the
    weave closed the rest), so it is stale.

    Runs before advance_current_run, so current_runs still names the run that saw the
    offers whose last_seen_at is NULL: its observation time is when they were last seen.
    A stale offer keeps the time it first went stale through further runs that miss it.
    """
    params = {"p": provider, "at": position}
    if kept:  # (else the UPDATE would hash every key the run saw to change nothing)
        run_sql(
            con,
            f"""
            UPDATE current_offers
            SET last_seen_at = (SELECT observed_at FROM current_runs WHERE provider = $p)
            WHERE provider = $p AND last_seen_at IS NULL AND offer_key NOT IN {seen}
            """,
            params,
        )
    # Offers seen again are fresh. (Asked first: the UPDATE would hash every key the run
    # saw to change nothing when nothing was stale.)
    stale = fetch_one(
        con,
        "SELECT count(*) FROM current_offers WHERE provider = ? AND last_seen_at IS NOT NULL",
        [provider],
    )
    if stale and stale[0]:
        run_sql(
            con,
            f"""
            UPDATE current_offers SET last_seen_at = NULL
            WHERE provider = $p AND last_seen_at IS NOT NULL AND offer_key IN {seen}
            """,
            params,
        )
    # Stretches end where the offer is no longer stale (seen again, or closed by an ok run)...
    run_sql(
        con,
        """
        UPDATE stale_spans SET stale_to = $at
        WHERE provider = $p AND stale_to IS NULL AND offer_key NOT IN (
            SELECT offer_key FROM current_offers WHERE provider = $p AND last_seen_at IS NOT NULL
        )
        """,
        params,
    )
    # ... and begin where it went stale.
    run_sql(
        con,
        """
        INSERT INTO stale_spans (provider, offer_key, stale_from, stale_to, last_seen_at)
        SELECT provider, offer_key, $at, NULL, last_seen_at FROM current_offers
        WHERE provider = $p AND last_seen_at IS NOT NULL AND offer_key NOT IN (
            SELECT offer_key FROM stale_spans WHERE provider = $p AND stale_to IS NULL
        )
        """,
        params,
    )


def record_unread_scope(con: duckdb.DuckDBPyConnection, provider: str, run_id: str) -> None:
    """Keep the staged unread set (warehouse.unread) of a good run woven into the history,
    in ``unread_scopes`` (migration 21). A run loaded later but placed before this one
    reads it (warehouse.history_late): an offer this run could not read is kept by it,
    stale, whatever state the late run gives it, as if the runs had come in order. (A run
    that read everything writes nothing.)"""
    if not count(con, UNREAD_TABLE):
        return
    store(
        con,
        "unread_scopes",
        f"INSERT INTO unread_scopes (provider, run_id, key, prefix, sold_out)"
        f" SELECT $p, $run, key, prefix, sold_out FROM {UNREAD_TABLE} ORDER BY ALL",
        {"p": provider, "run": run_id},
    )


def drop_weave_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Free the temporary tables of the last weave (outside a transaction)."""
    for name in TEMP_TABLES:
        con.execute(f"DROP TABLE IF EXISTS {name}")
    drop_unread(con)


def count(con: duckdb.DuckDBPyConnection, table: str) -> int:
    row = fetch_one(con, f"SELECT count(*) FROM {table}")
    return int(row[0]) if row else 0
