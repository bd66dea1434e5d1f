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

A run loaded in order (the usual case, ``weave_in_order``) compares its offers with the open
versions. When the provider has none yet (its first run), there is nothing to compare:
the feed's offers go straight into ``current_offers``, read from the file in the same
statement that types them. Otherwise the run's offers are first reduced to their hashes,
compared, the closed versions moved out, and only the new or changed offers typed again
into ``current_offers``. A run loaded late, between two runs already woven (a backfill),
goes through ``warehouse.history_late``.

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

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

import duckdb

from warehouse.db import fetch_one
from warehouse.feed import REREAD_FEW, FeedOutcome, Target, run_sql
from warehouse.feed_lists import PRIMED_FEES, PRIMED_PLANS
from warehouse.feed_schema import FEE_ITEM_FIELDS, PLAN_ITEM_FIELDS
from warehouse.offer_hashes import (
    CONTENT_FIELDS,
    IDENTITY_FIELDS,
    content_hash,
    fields_hash,
    hashed,
    identity_hash,
)
from warehouse.unread import Unread, drop_unread, kept, sold_out


class OfferRows(Protocol):
    """Where a run's typed offer rows come from (warehouse.feed.FeedRows / TableRows)."""

    def execute(
        self,
        con: duckdb.DuckDBPyConnection,
        sql: str,
        params: dict[str, Any] | None = None,
        *,
        where: str | None = None,
        only: list[int] | None = None,
    ) -> list[tuple[Any, ...]]: ...


ReadInto = Callable[[Target], FeedOutcome]
"""Reads the run's feed into a target (warehouse.feed.read_into, bound to its feed)."""

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
# The fields of one fee / plan of a list, seq first (as the staged offers' lists hold them).
FEE_FIELDS = FEE_ITEM_FIELDS
PLAN_FIELDS = PLAN_ITEM_FIELDS

# The lists as fee_set_lists / plan_set_lists and the read side give them: structs ordered
# by seq (seq is the first field, so list_sort orders by it).
FEE_LIST = "list_sort(list({" + ", ".join(f"'{c}': {c}" for c in FEE_FIELDS) + "}))"
PLAN_LIST = "list_sort(list({" + ", ".join(f"'{c}': {c}" for c in PLAN_FIELDS) + "}))"


# Identities already stored, by hash (one id per hash; the smallest, should two exist).
STORED_IDENTITIES = (
    "(SELECT identity_hash, min(identity_id) AS identity_id FROM offer_identities"
    " GROUP BY identity_hash)"
)


def store(
    con: duckdb.DuckDBPyConnection,
    table: str,
    sql: str,
    params: dict[str, Any] | None = None,
    *,
    rows: OfferRows | None = None,
    where: str | None = None,
    only: list[int] | None = None,
) -> None:
    """Every write of a weave: ``sql`` changes ``table`` (through ``rows`` when it reads a
    run's offers as ``{rows}``). One seam, so tests can make a write fail."""
    if rows is None:
        run_sql(con, sql, params)
    else:
        rows.execute(con, sql, params, where=where, only=only)


_TEMP = "_gpurent_hist_"
_SEEN = f"{_TEMP}seen"
_COVER = f"{_TEMP}cover"
_OPENED = f"{_TEMP}opened"
_CLOSED = f"{_TEMP}closed"
_FRESH = f"{_TEMP}fresh"
_LISTS = f"{_TEMP}lists"
_SOLD = f"{_TEMP}sold"
TEMP_TABLES = (_SEEN, _COVER, _OPENED, _CLOSED, _FRESH, _LISTS, _SOLD)
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


@dataclass(frozen=True)
class RunOffers:
    """What a run's feed held, once woven: its offers and their fee and plan rows, and the
    earliest observation time among them (None: no offers, nothing woven)."""

    offers: int
    fees: int
    plans: int
    observed_at: datetime | None
    weave: WeaveResult


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

# A new open version from a run's offer row ``o`` (hashed): $vtop / $itop are the ids
# numbered past (next_ids), ``version`` and ``identity`` their expressions.
_CURRENT_SELECT = """
SELECT o.provider, o.offer_key, {version}, {identity}, $at::TIMESTAMPTZ, o.content_hash,
    {content}, o.fee_hash, o.plan_hash, o.fee_set_id, o.plan_set_id, o._line, o.observed_at
"""


def _current_insert(version: str, identity: str, source: str) -> str:
    select = _CURRENT_SELECT.format(
        version=version, identity=identity, content=", ".join(f"o.{c}" for c in CONTENT_FIELDS)
    )
    return f"INSERT INTO current_offers ({', '.join(CURRENT_COLUMNS)}) {select} {source}"


# The first run of a provider: every offer opens a version and an identity, numbered by
# its feed line. No join with the stored identities in this statement: DuckDB cannot size a
# stream, and may build its hash table on the feed instead of on the identities (four times
# slower, spilling). (The small joins with the primed lists, warehouse.feed_lists, are
# held as written.)
_INSERT_FIRST = _current_insert(
    "CAST($vtop + o._line AS BIGINT)", "CAST($itop + o._line AS INTEGER)", "FROM {offers} AS o"
)
# ... then, should the provider have had offers stored before (whose versions all closed),
# their identities are found again rather than stored twice.
_REUSE_IDENTITIES = f"""
UPDATE current_offers SET identity_id = i.identity_id
FROM {STORED_IDENTITIES} AS i
WHERE current_offers.provider = $p AND current_offers.valid_from = $at
  AND {identity_hash("current_offers")} = i.identity_hash
"""
_FIRST_STORED = (
    "SELECT feed_line, offer_key FROM current_offers WHERE provider = $p AND valid_from = $at"
)
_FIRST_REMOVE = (
    "DELETE FROM current_offers WHERE provider = $p AND valid_from = $at"
    " AND list_contains($lines, feed_line)"
)
# Later runs: the offers first as hashes (what the comparison needs)...
_SEEN_COLUMNS = (
    "_line INTEGER, offer_key VARCHAR, observed_at TIMESTAMPTZ, content_hash UBIGINT,"
    " identity_hash UBIGINT, fee_hash UBIGINT, plan_hash UBIGINT"
)
_INSERT_SEEN = f"""
INSERT INTO {_SEEN} SELECT _line, offer_key, observed_at, content_hash, identity_hash,
    fee_hash, plan_hash
FROM {{offers}} AS o
"""
# ... then the new and changed ones whole (only their lines are parsed), numbered by their
# line, and their identities as _OPENED found them (set after: no join with the stream).
_INSERT_OPENED = _current_insert(
    "CAST($vtop + o._line AS BIGINT)", "0", f"FROM {hashed('{rows}')} AS o"
)
_OPENED_IDENTITIES = f"""
UPDATE current_offers SET identity_id = n.identity_id FROM {_OPENED} AS n
WHERE current_offers.provider = $p AND current_offers.valid_from = $at
  AND current_offers.feed_line = n._line
"""


def weave_in_order(
    con: duckdb.DuckDBPyConnection,
    read_into: ReadInto,
    *,
    provider: str,
    position: datetime,
    unread: Unread | None = None,
    empty_is_whole: bool = False,
) -> tuple[FeedOutcome, RunOffers]:
    """Read the run's feed (``read_into``) and weave it at ``position``, after every run
    stored for ``provider``: the newest state. Offers the run does not list are closed,
    except what ``unread`` (and the feed's quarantine lines) say it could not read: those
    stay as they were, stale. A feed with no offer changes nothing (rule of truth 3) unless
    ``empty_is_whole``: the listing was read and holds no offer (every item skipped for a
    named reason). The caller writes crawl_runs and current_runs.
    """
    vtop, itop = next_ids(con)
    params = {"p": provider, "at": position, "vtop": vtop, "itop": itop}
    first = fetch_one(con, "SELECT count(*) FROM current_offers WHERE provider = ?", [provider])
    if not first or not first[0]:
        outcome = read_into(
            Target(
                _INSERT_FIRST,
                _FIRST_STORED,
                _FIRST_REMOVE,
                params,
                lists_once=True,
            )
        )
        known = fetch_one(
            con, "SELECT count(*) FROM offer_identities WHERE provider = ?", [provider]
        )
        if outcome.offers and known and known[0]:
            store(con, "current_offers", _REUSE_IDENTITIES, params)
        seen = "(SELECT * FROM current_offers WHERE provider = $p AND valid_from = $at)"
        weave = WeaveResult(opened=outcome.offers, closed=0, continued=0)
        woven = bool(outcome.offers)
    else:
        con.execute(f"CREATE OR REPLACE TEMP TABLE {_SEEN} ({_SEEN_COLUMNS})")
        outcome = read_into(
            Target(
                _INSERT_SEEN,
                f"SELECT _line, offer_key FROM {_SEEN}",
                f"DELETE FROM {_SEEN} WHERE list_contains($lines, _line)",
                params,
                lists_once=True,
            )
        )
        seen = _SEEN
        woven = bool(outcome.offers) or empty_is_whole
        weave = WeaveResult(0, 0, 0)
        if woven:
            (unread or Unread()).stage(con, outcome.quarantine.get_column("offer_key"))
            weave = _weave_changes(con, outcome, params)
    if not woven:
        return outcome, RunOffers(0, 0, 0, None, weave)
    store_new_sets(con, outcome.rows, params)
    # What the run listed is fresh, and so is what it turned sold out (listed, in the
    # provider's words); what is left open unseen was not read: stale.
    listed = f"(SELECT offer_key FROM {seen})"
    if seen == _SEEN:
        listed = f"(SELECT offer_key FROM {_SEEN} UNION ALL SELECT offer_key FROM {_SOLD})"
    mark_stale(con, provider, position, seen=listed, kept=weave.kept)
    fees, plans, observed_at = _run_totals(con, seen, params)
    return outcome, RunOffers(outcome.offers, fees, plans, observed_at, weave)


def _weave_changes(
    con: duckdb.DuckDBPyConnection, outcome: FeedOutcome, params: dict[str, Any]
) -> WeaveResult:
    """Compare the run's offers (_SEEN) with the open versions: move out what closed, and
    type again into current_offers only what is new or changed."""
    run_sql(
        con,
        f"""
        CREATE OR REPLACE TEMP TABLE {_COVER} AS
        SELECT version_id, offer_key, content_hash, identity_id,
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
        SELECT c.version_id, c.offer_key, o.status <> 'sold_out' AS turn
        FROM {_COVER} AS c
        JOIN current_offers AS o ON o.provider = $p AND o.version_id = c.version_id
        WHERE c.offer_key NOT IN (SELECT offer_key FROM {_SEEN})
          AND NOT {kept("c")} AND {sold_out("c")}
        """,
        params,
    )
    run_sql(
        con,
        f"""
        CREATE OR REPLACE TEMP TABLE {_CLOSED} AS
        SELECT c.version_id, s.offer_key IS NULL AS gone FROM {_COVER} AS c
        LEFT JOIN {_SEEN} AS s ON s.offer_key = c.offer_key
        WHERE (s.offer_key IS NULL AND NOT {kept("c")} AND NOT {sold_out("c")})
           OR s.content_hash <> c.content_hash
        """,
        params,
    )
    # New and changed offers, with their ids: the identity of the open version when the
    # identity fields did not change, else a stored one with that hash, else a new one.
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
            FROM {_SEEN} AS s
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
        f" (SELECT count(*) FILTER (turn) FROM {_SOLD}),"
        f" (SELECT count(*) FROM {_COVER} WHERE offer_key NOT IN"
        f" (SELECT offer_key FROM {_SEEN}))",
    ) or (0, 0, 0, 0, 0)
    opened, closed, gone, turned, unseen = (int(x) for x in counts)
    if closed:
        close_versions(con, f"SELECT version_id FROM {_CLOSED}", params)
    if turned:
        _turn_sold_out(con, params | {"lines": outcome.lines})
    if opened:
        lines = [int(r[0]) for r in con.execute(f"SELECT _line FROM {_OPENED}").fetchall()]
        # Few lines (warehouse.feed.REREAD_FEW): read them where the first scan found them;
        # many: stream the file again.
        few = len(lines) * REREAD_FEW <= outcome.lines
        store(
            con,
            "current_offers",
            _INSERT_OPENED,
            params,
            rows=outcome.rows,
            where=None if few else f"line IN (SELECT _line FROM {_OPENED})",
            only=lines if few else None,
        )
        store(con, "current_offers", _OPENED_IDENTITIES, params)
    return WeaveResult(
        opened=opened + turned,
        closed=closed + turned,
        continued=0,
        kept=unseen - gone - count(con, _SOLD),
        gone=gone,
        sold_out=turned,
    )


def _turn_sold_out(con: duckdb.DuckDBPyConnection, params: dict[str, Any]) -> None:
    """The open versions _SOLD turns: each closes, and a version like it but ``sold_out``
    (no free card where a count was given) opens at the run, numbered past the run's
    lines (``$lines``), with the run's observation time."""
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
    columns = {
        "version_id": "CAST($vtop + $lines + row_number() OVER (ORDER BY c.offer_key) AS BIGINT)",
        "valid_from": "$at::TIMESTAMPTZ",
        "content_hash": content_hash(fields_hash("c"), "c.fee_hash", "c.plan_hash"),
        "feed_line": "NULL::INTEGER",
        "observed_at": f"coalesce((SELECT min(observed_at) FROM {_SEEN}), $at::TIMESTAMPTZ)",
    }
    select = ", ".join(columns.get(name, f"c.{name}") for name in CURRENT_COLUMNS)
    store(
        con,
        "current_offers",
        f"INSERT INTO current_offers ({', '.join(CURRENT_COLUMNS)}) SELECT {select}"
        f" FROM {copies} AS c",
        params,
    )
    con.execute(f"DROP TABLE {copies}")


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


def store_new_sets(con: duckdb.DuckDBPyConnection, rows: OfferRows, params: dict[str, Any]) -> None:
    """The fee and plan lists of the run's new open versions that no earlier run had, under
    new ids (rows per fee, and the list whole for the read side), then the set ids of the
    new versions that came without them.

    Rows read with their lists primed (warehouse.feed_lists) came with their set ids: the
    primed sets they point at are stored from the primed lists. Others (read the exact way,
    or typed again) get theirs here; their lists are read again from one offer line per
    new list. No row that came with its ids is updated (a large insert updated even in part
    is written again at COMMIT)."""
    run = "provider = $p AND valid_from = $at"
    found = fetch_one(
        con,
        "SELECT count(*) FROM duckdb_tables() WHERE temporary AND table_name = ?",
        [PRIMED_FEES],
    )
    primed = bool(found and found[0])
    fresh = {}
    for kind, table, id_column, primed_table in (
        ("fee", "addon_fee_sets", "fee_set_id", PRIMED_FEES),
        ("plan", "price_plan_sets", "plan_set_id", PRIMED_PLANS),
    ):
        if primed:
            run_sql(
                con,
                f"""
                CREATE OR REPLACE TEMP TABLE {_FRESH} AS
                SELECT set_id AS {id_column}, set_hash, items FROM {primed_table}
                WHERE set_id IN (
                    SELECT DISTINCT {id_column} FROM current_offers
                    WHERE {run} AND {id_column} IS NOT NULL
                ) AND set_id NOT IN (SELECT {id_column} FROM {table})
                QUALIFY row_number() OVER (PARTITION BY set_id ORDER BY text_hash) = 1
                """,
                params,
            )
            write_sets(con, kind, _FRESH)
        fresh[kind] = [
            int(r[0])
            for r in run_sql(
                con,
                f"""
                SELECT min(feed_line) FROM current_offers
                WHERE {run} AND {id_column} IS NULL AND {kind}_hash IS NOT NULL
                  AND {kind}_hash NOT IN (SELECT set_hash FROM {table})
                GROUP BY {kind}_hash ORDER BY 1
                """,
                params,
            )
        ]
    lines = sorted(set(fresh["fee"]) | set(fresh["plan"]))
    if lines:
        con.execute(f"DROP TABLE IF EXISTS {_LISTS}")
        rows.execute(
            con,
            f"CREATE TEMP TABLE {_LISTS} AS SELECT _line, fee_hash, plan_hash, fees, plans"
            f" FROM {hashed('{rows}')} AS o",
            only=lines,
        )
    for kind, table, id_column, lists in (
        ("fee", "addon_fee_sets", "fee_set_id", "fees"),
        ("plan", "price_plan_sets", "plan_set_id", "plans"),
    ):
        if fresh[kind]:
            _store_sets(con, kind, table, id_column, lists, fresh[kind])
        # The run's new versions without set ids point at their sets (known or just stored).
        store(
            con,
            "current_offers",
            f"""
            UPDATE current_offers SET {id_column} = s.{id_column}
            FROM (SELECT set_hash, min({id_column}) AS {id_column} FROM {table}
                  GROUP BY set_hash) AS s
            WHERE current_offers.provider = $p AND current_offers.valid_from = $at
              AND current_offers.{id_column} IS NULL
              AND current_offers.{kind}_hash = s.set_hash
            """,
            params,
        )


def _store_sets(
    con: duckdb.DuckDBPyConnection,
    kind: str,
    table: str,
    id_column: str,
    lists: str,
    lines: list[int],
) -> None:
    top = fetch_one(con, f"SELECT coalesce(max({id_column}), 0) FROM {table}")
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE {_FRESH} AS
        SELECT CAST($top + dense_rank() OVER (ORDER BY {kind}_hash) AS INTEGER) AS {id_column},
            {kind}_hash AS set_hash, {lists} AS items
        FROM (
            SELECT DISTINCT ON ({kind}_hash) {kind}_hash, {lists} FROM {_LISTS}
            WHERE list_contains($lines, _line) AND {kind}_hash IS NOT NULL
              AND {kind}_hash NOT IN (SELECT set_hash FROM {table})
            ORDER BY {kind}_hash, _line
        )
        """,
        {"top": int(top[0]) if top else 0, "lines": lines},
    )
    write_sets(con, kind, _FRESH)


def write_sets(con: duckdb.DuckDBPyConnection, kind: str, fresh: str) -> None:
    """Store the new fee (``kind`` "fee") or plan lists of table ``fresh`` (id, set_hash,
    items): a row per fee or plan, and the list whole, once per set, for the read side
    (latest_offers joins it)."""
    table, id_column, fields, lists = (
        ("addon_fee_sets", "fee_set_id", FEE_FIELDS, "fees")
        if kind == "fee"
        else ("price_plan_sets", "plan_set_id", PLAN_FIELDS, "plans")
    )
    item = ", ".join(f"item.{c}" for c in fields)
    store(
        con,
        table,
        f"""
        INSERT INTO {table} ({id_column}, set_hash, {", ".join(fields)})
        SELECT {id_column}, set_hash, {item}
        FROM (SELECT {id_column}, set_hash, unnest(items) AS item FROM {fresh})
        ORDER BY {id_column}, item.seq
        """,
    )
    store(
        con,
        f"{kind}_set_lists",
        f"INSERT INTO {kind}_set_lists ({id_column}, {lists})"
        f" SELECT {id_column}, items FROM {fresh} ORDER BY {id_column}",
    )


def _run_totals(
    con: duckdb.DuckDBPyConnection, seen: str, params: dict[str, Any]
) -> tuple[int, int, datetime | None]:
    """The run's fee and plan rows (by the size of each offer's sets) and its earliest
    observation."""
    row = run_sql(
        con,
        f"""
        SELECT coalesce(sum(f.n), 0), coalesce(sum(p.n), 0), min(s.observed_at)
        FROM {seen} AS s
        LEFT JOIN (SELECT set_hash, count(*) AS n FROM addon_fee_sets GROUP BY set_hash) AS f
            ON f.set_hash = s.fee_hash
        LEFT JOIN (SELECT set_hash, count(*) AS n FROM price_plan_sets GROUP BY set_hash) AS p
            ON p.set_hash = s.plan_hash
        """,
        params,
    )[0]
    observed_at = row[2] if isinstance(row[2], datetime) else None
    return int(row[0]), int(row[1]), observed_at


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
    # saw, a third of a second at a million, to change nothing when nothing was stale.)
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


def drop_weave_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Free the temporary tables of the last weave (outside a transaction)."""
    from warehouse.history_late import LATE_TABLES

    for name in (*TEMP_TABLES, *LATE_TABLES):
        con.execute(f"DROP TABLE IF EXISTS {name}")
    drop_unread(con)


def count(con: duckdb.DuckDBPyConnection, table: str) -> int:
    row = fetch_one(con, f"SELECT count(*) FROM {table}")
    return int(row[0]) if row else 0
