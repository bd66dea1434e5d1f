"""Weaving a good run into the change history (offer_versions) and the latest state.

A good run of a provider is a snapshot of everything it lists. Versions change only at good
runs: the run closes the versions it no longer sees, or sees changed, and opens versions for
what is new or changed. Unchanged offers cost nothing, so history grows with change, not
with polls. Runs that do not feed the state (failed, layout_changed, empty) never come here.

What rarely changes about an offer (its key, GPU, name, region, URL) is stored once in
offer_identities; a version holds what moves (stock, free count, price terms, fee and plan
lists by id) and points at its identity. docs/history.md has the measurements behind this.

A partial run (rule of truth 10) saw only part of the listing: what it lists is woven as
above, but the offers it did not see keep their open versions, unchanged, and are marked
stale: ``current_offers.last_seen_at`` holds when the last run that saw them observed them
(NULL: the current run saw it), and ``stale_spans`` records the stretch of runs they stayed
stale, so a past run's snapshot says what that run really saw. A later run that lists the
offer makes it fresh again; a later ``ok`` run that no longer lists it closes it (rule 4).

Runs are usually loaded in order, and then the versions to compare with are simply the open
ones (current_offers). A run loaded late, between two runs already woven (a backfill), is
handled too: versions covering its place are cut at it and, where they went on past the
next run, continued from that run, so every run's snapshot still reads back exactly. A late partial
run keeps the versions it did not see uncut and records them stale for its place only (up
to the next run); the last-seen time it records for them is the one the run before it had
for them. A late run that sees an offer during a stale stretch splits the stretch around
its place (docs/history.md).

Called by warehouse.load inside its transaction; writes through the ``insert`` it is given
(load's own helper), so a failure anywhere rolls the whole run back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import duckdb
import polars as pl

from warehouse.db import fetch_one
from warehouse.feed import FEE_ITEM_FIELDS, OFFERS_TABLE, PLAN_ITEM_FIELDS


@dataclass(frozen=True)
class Rows:
    """Rows to insert, as a query over the load's temporary tables (column names and order
    as the target table's columns given with it)."""

    columns: tuple[str, ...]
    sql: str
    params: Mapping[str, Any] | None = None
    """Values of the query's ``$name`` placeholders."""


InsertFrame = Callable[[duckdb.DuckDBPyConnection, str, "Rows | pl.DataFrame"], int]

# The offer's fields, as in the feed, in table order (ids and observed_at excluded).
CONTENT_FIELDS = (
    "gpu_vendor", "gpu_model", "gpu_vram_gb", "gpu_form_factor", "gpu_count", "raw_gpu_name",
    "status", "available_count", "price", "currency", "billing_unit", "price_basis",
    "price_kind", "region", "url",
)  # fmt: skip
IDENTITY_FIELDS = (
    "gpu_vendor", "gpu_model", "gpu_vram_gb", "gpu_form_factor", "gpu_count", "raw_gpu_name",
    "region", "url",
)  # fmt: skip
STATE_FIELDS = tuple(c for c in CONTENT_FIELDS if c not in IDENTITY_FIELDS)
IDENTITY_COLUMNS = ("identity_id", "provider", "offer_key", "identity_hash", *IDENTITY_FIELDS)
VERSION_COLUMNS = (
    "version_id", "provider", "identity_id", "valid_from", "valid_to", *STATE_FIELDS,
    "fee_set_id", "plan_set_id",
)  # fmt: skip
CURRENT_COLUMNS = (
    "provider", "offer_key", "version_id", "identity_id", "valid_from", "content_hash",
    *CONTENT_FIELDS, "fee_set_id", "plan_set_id",
)  # fmt: skip
# The fields of one fee / plan of a list, seq first (as the staged offers' lists hold them).
FEE_FIELDS = FEE_ITEM_FIELDS
PLAN_FIELDS = PLAN_ITEM_FIELDS

# Hashes: DuckDB's 64-bit hash() of the typed values, the same expressions as
# sql/0003_history.sql (a test keeps them in step). A fee or plan list hashes as the XOR of
# its rows' hashes, seq included, so order counts. hash() is four times cheaper per poll
# than md5 over canonical JSON; it is not promised stable across DuckDB releases, and the
# price of a change there is one extra version per offer after the upgrade, nothing lost.
FEE_SET_HASH = f"bit_xor(hash({', '.join(FEE_FIELDS)}))"
PLAN_SET_HASH = f"bit_xor(hash({', '.join(PLAN_FIELDS)}))"


def list_hash(column: str, fields: tuple[str, ...]) -> str:
    """The set hash of a list column of structs (the staged offers' fees / plans): the same
    value as FEE_SET_HASH / PLAN_SET_HASH over its rows, NULL for an empty list."""
    row = ", ".join(f"x.{c}" for c in fields)
    return f"list_aggregate(list_transform({column}, lambda x: hash({row})), 'bit_xor')"


IDENTITY_HASH = f"hash(o.provider, o.offer_key, {', '.join(f'o.{c}' for c in IDENTITY_FIELDS)})"
CONTENT_HASH = f"hash({', '.join(f'o.{c}' for c in CONTENT_FIELDS)}, o.fee_hash, o.plan_hash)"
# The lists as fee_set_lists / plan_set_lists and the read side give them: structs ordered
# by seq (seq is the first field, so list_sort orders by it; an ORDER BY in the aggregate
# costs more).
FEE_LIST = "list_sort(list({" + ", ".join(f"'{c}': {c}" for c in FEE_FIELDS) + "}))"
PLAN_LIST = "list_sort(list({" + ", ".join(f"'{c}': {c}" for c in PLAN_FIELDS) + "}))"

_STAGE = "_gpurent_hist_stage"
_COVER = "_gpurent_hist_cover"
_OPENED = "_gpurent_hist_opened"
_CLOSED = "_gpurent_hist_closed"
_FRESH = "_gpurent_hist_fresh"
_NEW = "_gpurent_hist_new"
_TEMP_TABLES = (_STAGE, _COVER, _OPENED, _CLOSED, _FRESH, _NEW)

# The run's offers with their hashes (no lists: most offers are unchanged).
_STAGE_SQL = f"""
SELECT
    _line,
    offer_key,
    {CONTENT_HASH} AS content_hash,
    identity_hash,
    fee_hash,
    plan_hash
FROM (
    SELECT *, {IDENTITY_HASH} AS identity_hash,
        {list_hash("o.fees", FEE_FIELDS)} AS fee_hash,
        {list_hash("o.plans", PLAN_FIELDS)} AS plan_hash
    FROM {OFFERS_TABLE} AS o
) AS o
"""

# The versions holding a place in a provider's history, with their key and content hash
# (for a run loaded late; in-order runs read current_offers instead).
_COVER_SQL = f"""
SELECT v.*, i.offer_key, hash(
    {", ".join(f"{'i' if c in IDENTITY_FIELDS else 'v'}.{c}" for c in CONTENT_FIELDS)},
    fs.set_hash, ps.set_hash
) AS content_hash
FROM offer_versions AS v
JOIN offer_identities AS i ON i.identity_id = v.identity_id
LEFT JOIN (SELECT DISTINCT fee_set_id, set_hash FROM addon_fee_sets) AS fs
    ON fs.fee_set_id = v.fee_set_id
LEFT JOIN (SELECT DISTINCT plan_set_id, set_hash FROM price_plan_sets) AS ps
    ON ps.plan_set_id = v.plan_set_id
WHERE v.provider = ? AND v.valid_from <= ? AND coalesce(v.valid_to, 'infinity'::TIMESTAMPTZ) > ?
"""

_ONE_MICROSECOND = timedelta(microseconds=1)


@dataclass(frozen=True)
class WeaveResult:
    """What one good run changed in the history."""

    opened: int
    closed: int
    continued: int
    """Versions cut by a late run and continued after it (0 for runs loaded in order)."""
    kept: int = 0
    """Open versions a partial run did not see, kept unchanged and marked stale."""


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


def weave_run(
    con: duckdb.DuckDBPyConnection,
    *,
    provider: str,
    position: datetime,
    next_position: datetime | None,
    insert: InsertFrame,
    keep_unseen: bool = False,
) -> WeaveResult:
    """Record the snapshot of a good run at ``position`` (``next_position`` as ``place_run``
    found it): its offers, with their fee and plan lists, as warehouse.feed staged them
    (OFFERS_TABLE, one provider).

    ``keep_unseen`` (a partial run): offers the run does not list stay as they were, stale,
    instead of being closed.

    The run's crawl_runs row must already be written with ``history_at = position``;
    current_runs is the caller's to update. All of it runs in DuckDB: no row comes back to
    Python, so memory does not follow the feed's size on the Python side.
    """
    in_order = next_position is None
    params = {"p": provider, "at": position, "next": next_position}
    con.execute(f"CREATE OR REPLACE TEMP TABLE {_STAGE} AS {_STAGE_SQL}")
    if in_order:
        # The open versions; current_offers has them at a cost independent of history.
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE {_COVER} AS"
            " SELECT version_id, offer_key, content_hash FROM current_offers WHERE provider = ?",
            [provider],
        )
    else:
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE {_COVER} AS {_COVER_SQL}",
            [provider, position, position],
        )
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE {_OPENED} AS
        SELECT s.* FROM {_STAGE} AS s
        LEFT JOIN {_COVER} AS c ON c.offer_key = s.offer_key
        WHERE c.offer_key IS NULL OR c.content_hash <> s.content_hash
        """
    )
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE {_CLOSED} AS
        SELECT c.* FROM {_COVER} AS c
        LEFT JOIN {_STAGE} AS s ON s.offer_key = c.offer_key
        WHERE (s.offer_key IS NULL AND NOT $keep) OR s.content_hash <> c.content_hash
        """,
        {"keep": keep_unseen},
    )
    kept = _unseen_count(con) if keep_unseen else 0
    # Only an opened state can carry an identity or a list that no earlier state had.
    tops = fetch_one(
        con,
        "SELECT (SELECT coalesce(max(identity_id), 0) FROM offer_identities),"
        " (SELECT coalesce(max(fee_set_id), 0) FROM addon_fee_sets),"
        " (SELECT coalesce(max(plan_set_id), 0) FROM price_plan_sets)",
    ) or (0, 0, 0)
    _store_new_identities(con, int(tops[0]), insert)
    _store_new_sets(con, "fee", "addon_fee_sets", "fee_set_id", int(tops[1]), insert)
    _store_new_sets(con, "plan", "price_plan_sets", "plan_set_id", int(tops[2]), insert)

    closed, low, high = _count_range(con)
    if closed:
        # The BETWEEN lets zone maps skip row groups: ids grow with inserts.
        con.execute(
            "UPDATE offer_versions SET valid_to = $at WHERE version_id BETWEEN $low AND $high"
            f" AND version_id IN (SELECT version_id FROM {_CLOSED})",
            {"at": position, "low": low, "high": high},
        )
    # The states this run opens and, after a late run, the cut versions that went on past
    # the next run, continued from it unchanged, all under new ids.
    continued_rows = ""
    if not in_order:
        continued_rows = f"""
        UNION ALL
        SELECT offer_key, identity_id, $next::TIMESTAMPTZ, valid_to,
            {", ".join(STATE_FIELDS)}, fee_set_id, plan_set_id, content_hash, true, NULL
        FROM {_CLOSED}
        WHERE valid_to IS NULL OR valid_to > $next
        """
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE {_NEW} AS
        SELECT nextval('offer_version_ids')::BIGINT AS version_id, $p AS provider, *
        FROM (
            SELECT o.offer_key, i.identity_id, $at::TIMESTAMPTZ AS valid_from,
                $next::TIMESTAMPTZ AS valid_to, {", ".join(f"r.{c}" for c in STATE_FIELDS)},
                fs.fee_set_id, ps.plan_set_id, o.content_hash, false AS continued,
                r._line
            FROM {_OPENED} AS o
            JOIN {OFFERS_TABLE} AS r ON r._line = o._line
            JOIN (SELECT DISTINCT identity_hash, identity_id FROM offer_identities) AS i
                ON i.identity_hash = o.identity_hash
            LEFT JOIN (SELECT DISTINCT set_hash, fee_set_id FROM addon_fee_sets) AS fs
                ON fs.set_hash = o.fee_hash
            LEFT JOIN (SELECT DISTINCT set_hash, plan_set_id FROM price_plan_sets) AS ps
                ON ps.set_hash = o.plan_hash
            {continued_rows}
        )
        """,
        params if not in_order else {"p": provider, "at": position, "next": None},
    )
    counts = fetch_one(
        con, f"SELECT count(*) FILTER (NOT continued), count(*) FILTER (continued) FROM {_NEW}"
    ) or (0, 0)
    opened, continued = int(counts[0]), int(counts[1])
    if opened or continued:
        insert(
            con,
            "offer_versions",
            Rows(VERSION_COLUMNS, f"SELECT {', '.join(VERSION_COLUMNS)} FROM {_NEW}"),
        )

    if in_order:
        if closed:
            con.execute(
                "DELETE FROM current_offers WHERE provider = ?"
                f" AND version_id IN (SELECT version_id FROM {_CLOSED})",
                [provider],
            )
        # In parts of _CURRENT_PART_OFFERS opened offers, by feed line.
        for low, high in _line_ranges(con, opened) if opened else []:
            insert(
                con,
                "current_offers",
                Rows(CURRENT_COLUMNS, _CURRENT_SQL, {"lo": low, "hi": high}),
            )
        _mark_stale(con, provider, position, keep_unseen)
    else:
        _split_stale_spans(con, provider, position, next_position)
        if keep_unseen:
            _record_late_stale(con, provider, position, next_position)
        if continued:
            # Open versions that were cut and continued live on under new ids.
            con.execute(
                f"""
                UPDATE current_offers AS co SET version_id = n.version_id,
                    valid_from = n.valid_from
                FROM {_NEW} AS n
                WHERE n.continued AND n.valid_to IS NULL
                  AND co.provider = $p AND co.offer_key = n.offer_key
                """,
                {"p": provider},
            )
    return WeaveResult(opened=opened, closed=closed, continued=continued, kept=kept)


def drop_weave_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Free the temporary tables of the last weave (outside a transaction)."""
    for name in _TEMP_TABLES:
        con.execute(f"DROP TABLE IF EXISTS {name}")


# current_offers rows for the opened states (a run loaded in order): the new versions with
# the offer's fields and its fee and plan set ids (the lists are stored once per set), for
# the staged offers on feed lines $lo..$hi. A part is a range of lines, not of hashed keys:
# the staged tables are written in line order, so their zone maps let each part read only
# its own row groups (with hashed keys, every part read all the fees and plans, and a
# million-offer load spent a third of its time there).
_CURRENT_SQL = f"""
SELECT n.provider, n.offer_key, n.version_id, n.identity_id, n.valid_from, n.content_hash,
    {", ".join(f"r.{c}" for c in CONTENT_FIELDS)}, n.fee_set_id, n.plan_set_id
FROM (SELECT * FROM {_NEW} WHERE _line BETWEEN $lo AND $hi) AS n
JOIN (SELECT * FROM {OFFERS_TABLE} WHERE _line BETWEEN $lo AND $hi) AS r
    ON r._line = n._line
"""
# Opened offers per part of the current_offers insert. The join can spill, so a part can be
# large: for a million offers (lists then copied per offer) one part took 24.0 s at 892 MiB
# RSS, parts of 200k 25.7 s at 875 MiB (python -m benchmarks.load_child). Parts keep a
# larger feed's join within bounds all the same.
_CURRENT_PART_OFFERS = 1_000_000


def _line_ranges(con: duckdb.DuckDBPyConnection, opened: int) -> list[tuple[int, int]]:
    """The feed-line ranges of the current_offers insert's parts: about
    ``_CURRENT_PART_OFFERS`` opened offers each (a feed read in Python,
    ``warehouse.feed.stage_batch``, is numbered by its place in the batch)."""
    row = fetch_one(con, f"SELECT min(_line), max(_line) FROM {OFFERS_TABLE}")
    if row is None or row[0] is None:
        return []
    low, high = int(row[0]), int(row[1])
    parts = min(max(1, -(-opened // _CURRENT_PART_OFFERS)), high - low + 1)
    step = -(-(high - low + 1) // parts)
    return [(start, min(high, start + step - 1)) for start in range(low, high + 1, step)]


def _count_range(con: duckdb.DuckDBPyConnection) -> tuple[int, int, int]:
    row = fetch_one(con, f"SELECT count(*), min(version_id), max(version_id) FROM {_CLOSED}")
    if row is None or not row[0]:
        return 0, 0, 0
    return int(row[0]), int(row[1]), int(row[2])


def _unseen_count(con: duckdb.DuckDBPyConnection) -> int:
    row = fetch_one(
        con,
        f"SELECT count(*) FROM {_COVER} WHERE offer_key NOT IN (SELECT offer_key FROM {_STAGE})",
    )
    return int(row[0]) if row else 0


def _mark_stale(
    con: duckdb.DuckDBPyConnection, provider: str, position: datetime, keep_unseen: bool
) -> None:
    """After an in-order run: what it listed is fresh; what a partial run missed is stale.

    Runs before advance_current_run, so current_runs still names the run that saw the
    offers whose last_seen_at is NULL: its observation time is when they were last seen.
    A stale offer keeps the time it first went stale through further partial runs.
    """
    if keep_unseen:
        con.execute(
            f"""
            UPDATE current_offers
            SET last_seen_at = (SELECT observed_at FROM current_runs WHERE provider = $p)
            WHERE provider = $p AND last_seen_at IS NULL
              AND offer_key NOT IN (SELECT offer_key FROM {_STAGE})
            """,
            {"p": provider},
        )
    con.execute(
        f"""
        UPDATE current_offers SET last_seen_at = NULL
        WHERE provider = $p AND last_seen_at IS NOT NULL
          AND offer_key IN (SELECT offer_key FROM {_STAGE})
        """,
        {"p": provider},
    )
    # Stretches end where the offer is no longer stale (seen again, or closed by an ok run)...
    con.execute(
        """
        UPDATE stale_spans SET stale_to = $at
        WHERE provider = $p AND stale_to IS NULL AND offer_key NOT IN (
            SELECT offer_key FROM current_offers WHERE provider = $p AND last_seen_at IS NOT NULL
        )
        """,
        {"p": provider, "at": position},
    )
    # ... and begin where it went stale.
    con.execute(
        """
        INSERT INTO stale_spans (provider, offer_key, stale_from, stale_to, last_seen_at)
        SELECT provider, offer_key, $at, NULL, last_seen_at FROM current_offers
        WHERE provider = $p AND last_seen_at IS NOT NULL AND offer_key NOT IN (
            SELECT offer_key FROM stale_spans WHERE provider = $p AND stale_to IS NULL
        )
        """,
        {"p": provider, "at": position},
    )


def _late_observed_at(
    con: duckdb.DuckDBPyConnection, provider: str, position: datetime
) -> datetime | None:
    row = fetch_one(
        con,
        "SELECT observed_at FROM crawl_runs WHERE provider = ? AND history_at = ?",
        [provider, position],
    )
    return row[0] if row else None


def _split_stale_spans(
    con: duckdb.DuckDBPyConnection,
    provider: str,
    position: datetime,
    next_position: datetime | None,
) -> None:
    """A late run that lists an offer inside one of its stale stretches: the stretch is cut
    at the run and, where it went on past the next run, continued from there. Seen
    unchanged, the continuation was last seen by this run; seen changed, the state that
    continues is the old one, still last seen when it was.
    """
    seen = _late_observed_at(con, provider, position)
    params = {"p": provider, "at": position, "next": next_position, "seen": seen}
    con.execute(
        f"""
        INSERT INTO stale_spans (provider, offer_key, stale_from, stale_to, last_seen_at)
        SELECT sp.provider, sp.offer_key, $next, sp.stale_to,
            CASE WHEN c.content_hash = s.content_hash THEN $seen ELSE sp.last_seen_at END
        FROM stale_spans AS sp
        JOIN {_STAGE} AS s ON s.offer_key = sp.offer_key
        JOIN {_COVER} AS c ON c.offer_key = sp.offer_key
        WHERE sp.provider = $p AND sp.stale_from < $at
          AND coalesce(sp.stale_to, 'infinity'::TIMESTAMPTZ) > $next
        """,
        params,
    )
    con.execute(
        f"""
        UPDATE stale_spans SET stale_to = $at
        WHERE provider = $p AND stale_from < $at
          AND coalesce(stale_to, 'infinity'::TIMESTAMPTZ) > $at
          AND offer_key IN (SELECT offer_key FROM {_STAGE})
        """,
        {"p": provider, "at": position},
    )
    # A stale offer of the current state seen, unchanged, by the late run: seen later.
    con.execute(
        f"""
        UPDATE current_offers AS co SET last_seen_at = greatest(co.last_seen_at, $seen)
        FROM {_STAGE} AS s
        WHERE co.provider = $p AND co.last_seen_at IS NOT NULL
          AND s.offer_key = co.offer_key AND s.content_hash = co.content_hash
        """,
        {"p": provider, "seen": seen},
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
    con.execute(
        f"""
        WITH prev AS (
            SELECT observed_at FROM crawl_runs
            WHERE provider = $p AND history_at < $at
            ORDER BY history_at DESC LIMIT 1
        )
        INSERT INTO stale_spans (provider, offer_key, stale_from, stale_to, last_seen_at)
        SELECT $p, c.offer_key, $at, $next, prev.observed_at
        FROM {_COVER} AS c, prev
        WHERE c.offer_key NOT IN (SELECT offer_key FROM {_STAGE})
          AND NOT EXISTS (
            SELECT 1 FROM stale_spans AS sp
            WHERE sp.provider = $p AND sp.offer_key = c.offer_key AND sp.stale_from < $at
              AND coalesce(sp.stale_to, 'infinity'::TIMESTAMPTZ) > $at
          )
        """,
        {"p": provider, "at": position, "next": next_position},
    )


def _store_new_identities(con: duckdb.DuckDBPyConnection, top: int, insert: InsertFrame) -> None:
    """Store the identities (key, GPU, name, region, URL) of this run that are new.

    Straight into offer_identities, without a temporary table (for a million new offers
    that table was 1.1 s of the load). The statement reads the table it writes only in its
    NOT IN, whose hash table DuckDB builds in full before the first row is inserted.
    """
    insert(
        con,
        "offer_identities",
        Rows(
            IDENTITY_COLUMNS,
            f"""
            SELECT o.identity_id, r.provider, o.offer_key, o.identity_hash,
                   {", ".join(f"r.{c}" for c in IDENTITY_FIELDS)}
            FROM (
                SELECT CAST($top + row_number() OVER (ORDER BY _line) AS INTEGER)
                    AS identity_id, _line, offer_key, identity_hash
                FROM {_OPENED}
                WHERE identity_hash NOT IN (SELECT identity_hash FROM offer_identities)
            ) AS o
            JOIN {OFFERS_TABLE} AS r ON r._line = o._line
            """,
            {"top": top},
        ),
    )


def _store_new_sets(
    con: duckdb.DuckDBPyConnection,
    kind: str,
    table: str,
    id_column: str,
    top: int,
    insert: InsertFrame,
) -> None:
    """Store the fee (or plan) lists of this run that no earlier run had, under new ids:
    the rows of one offer that carries each new list, and the list whole
    (``fee_set_lists`` / ``plan_set_lists``)."""
    fields = FEE_FIELDS if kind == "fee" else PLAN_FIELDS
    column = "fees" if kind == "fee" else "plans"
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE {_FRESH} AS
        WITH fresh AS (
            SELECT {kind}_hash AS set_hash, min(offer_key) AS offer_key
            FROM {_OPENED}
            WHERE {kind}_hash IS NOT NULL
              AND {kind}_hash NOT IN (SELECT set_hash FROM {table})
            GROUP BY {kind}_hash
        )
        SELECT CAST(? + dense_rank() OVER (ORDER BY fresh.set_hash) AS INTEGER) AS {id_column},
               fresh.set_hash, {", ".join(f"r.item.{c} AS {c}" for c in fields)}
        FROM fresh JOIN (
            SELECT offer_key, unnest({column}) AS item FROM {OFFERS_TABLE}
            WHERE offer_key IN (SELECT offer_key FROM fresh)
        ) AS r ON r.offer_key = fresh.offer_key
        """,
        [top],
    )
    if _count(con, _FRESH):
        names = (id_column, "set_hash", *fields)
        columns = ", ".join(names)
        insert(con, table, Rows(names, f"SELECT {columns} FROM {_FRESH} ORDER BY {id_column}, seq"))
        # The list whole, once per set, for the read side (latest_offers joins it).
        lists = FEE_LIST if kind == "fee" else PLAN_LIST
        insert(
            con,
            f"{kind}_set_lists",
            Rows(
                (id_column, column),
                f"SELECT {id_column}, {lists} FROM {_FRESH} GROUP BY {id_column}"
                f" ORDER BY {id_column}",
            ),
        )


def _count(con: duckdb.DuckDBPyConnection, table: str) -> int:
    row = fetch_one(con, f"SELECT count(*) FROM {table}")
    return int(row[0]) if row else 0
