"""Vouching for a feed's fee and plan lists once per distinct list, not once per offer.

A provider's offers share a few fee schedules and plan lists. Checking and typing every
offer's lists was a third of reading a large feed set-wise, so a load that only needs the
lists' hashes (warehouse.history) reads the offers with their lists left as text
(warehouse.feed_fast.offer_texts_sql) and looks each list's text up in the lists primed
before: the texts this connection has vouched for, with their set hash, their set id and
the list typed (``prime``). ``settled`` keeps the rows whose two lists are both primed,
hashed whole; the others are not stored, so they are among the lines the reading left, and
warehouse.feed reads them again after priming their own lists (or the exact way).

Every row is thus stored with its final hashes and set ids in one INSERT, never updated
after: DuckDB writes a large insert's blocks as it goes, and an UPDATE or DELETE of even
one of those rows before COMMIT makes the commit write them all again (a second for a
million rows, measured).

Priming starts from a sample of the file (``FeedFile.sample``): which lines it holds only
decides how much is read again, never what is stored, since a list's verdict depends on its
text alone. Two different lists whose text hashes (64-bit) collide would share one verdict
and set hash; as with the content hash, the odds are about n^2 / 2^65 for n distinct lists.
"""

from __future__ import annotations

from typing import Any

import duckdb

from warehouse.duck_sql import checks_above_parse, run_sql
from warehouse.feed_fast import list_sets_sql
from warehouse.feed_schema import FEE_LIST_TYPE, PLAN_LIST_TYPE
from warehouse.offer_hashes import IDENTITY_HASH, content_hash, fields_hash

__all__ = [
    "PRIMED_FEES",
    "PRIMED_PLANS",
    "SAMPLE_BYTES",
    "SAMPLE_WINDOWS",
    "create_primed",
    "drop_list_tables",
    "prime",
    "settled",
]

PRIMED_FEES = "_gpurent_feed_primed_fees"
PRIMED_PLANS = "_gpurent_feed_primed_plans"
"""Per list text vouched for (its hash): the set hash, the set id (NULL for an empty
list) and the list typed. A text that failed is not there."""
_READ = "_gpurent_feed_list_read"
_STREAM = "_gpurent_feed_list_stream"
SAMPLE_WINDOWS = 64
SAMPLE_BYTES = 64 * 1024
"""The sample lists are primed from: SAMPLE_WINDOWS stretches of SAMPLE_BYTES spread over
the file (about 4 MiB, some 4,000 lines of a large feed; all of a small one)."""

# (kind, primed table, set table, its id column, the list's column type)
_KINDS = (
    ("fee", PRIMED_FEES, "addon_fee_sets", "fee_set_id", FEE_LIST_TYPE),
    ("plan", PRIMED_PLANS, "price_plan_sets", "plan_set_id", PLAN_LIST_TYPE),
)


def create_primed(con: duckdb.DuckDBPyConnection) -> None:
    """Start this connection's primed lists empty."""
    for _, table, _, _, list_type in _KINDS:
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE {table} (text_hash UBIGINT, set_hash UBIGINT,"
            f" set_id INTEGER, items {list_type})"
        )


def prime(con: duckdb.DuckDBPyConnection, lines: Any, *, where: str | None = None) -> None:
    """Vouch for the lists of the offer lines of ``lines`` (an Arrow table or stream of
    ``(line, text)``; ``where``: a condition on ``line`` picking some) not primed yet:
    each distinct canonical list text is added with its set hash, its set id (the stored
    set's, else a new one past every id in use: ids only identify, and a set primed for
    an offer that is then quarantined leaves its id unused) and the list typed."""
    con.register(_STREAM, lines)
    try:
        with checks_above_parse(con):
            con.execute(
                f"CREATE OR REPLACE TEMP TABLE {_READ} AS {list_sets_sql(_STREAM, where=where)}"
            )
    finally:
        con.unregister(_STREAM)
    for kind, table, sets, id_column, _ in _KINDS:
        run_sql(
            con,
            f"""
            INSERT INTO {table}
            WITH texts AS (
                SELECT {kind}_text AS text_hash, min({kind}_set) AS set_hash,
                    any_value({kind}_items) AS items
                FROM {_READ}
                WHERE {kind}_text NOT IN (SELECT text_hash FROM {table})
                GROUP BY {kind}_text
                -- one verdict per text: should two texts share a hash and disagree,
                -- neither is vouched for
                HAVING bool_and({kind}_ok) AND count(DISTINCT {kind}_set) <= 1
            ),
            known AS (
                SELECT set_hash, min(id) AS id FROM (
                    SELECT set_hash, {id_column} AS id FROM {sets}
                    UNION ALL SELECT set_hash, set_id FROM {table} WHERE set_hash IS NOT NULL
                ) GROUP BY set_hash
            ),
            new AS (
                SELECT set_hash,
                    CAST(greatest((SELECT coalesce(max({id_column}), 0) FROM {sets}),
                                  (SELECT coalesce(max(set_id), 0) FROM {table}))
                         + row_number() OVER (ORDER BY set_hash) AS INTEGER) AS id
                FROM (SELECT DISTINCT set_hash FROM texts WHERE set_hash IS NOT NULL)
                WHERE set_hash NOT IN (SELECT set_hash FROM known)
            )
            SELECT t.text_hash, t.set_hash, coalesce(k.id, n.id), t.items
            FROM texts AS t
            LEFT JOIN known AS k ON k.set_hash = t.set_hash
            LEFT JOIN new AS n ON n.set_hash = t.set_hash
            """,
        )
    con.execute(f"DROP TABLE IF EXISTS {_READ}")


def settled(rows: str) -> str:
    """The rows of ``rows`` (offer rows with their lists as text, ``fee_text`` /
    ``plan_text``, warehouse.feed_fast.offer_texts_sql) whose two lists are primed, with
    their list, identity and content hashes and their set ids (the columns of
    warehouse.offer_hashes.hashed). The others are left out.

    Run with ``checks_above_parse(con, joins_as_written=True)``: the primed tables are
    the joins' small side, to be hashed, and the feed streams past them."""
    return f"""(
        SELECT o.* EXCLUDE (fee_text, plan_text), f.set_hash AS fee_hash,
            p.set_hash AS plan_hash, f.set_id AS fee_set_id, p.set_id AS plan_set_id,
            {IDENTITY_HASH} AS identity_hash,
            {content_hash(fields_hash("o"), "f.set_hash", "p.set_hash")} AS content_hash
        FROM {rows} AS o
        JOIN {PRIMED_FEES} AS f ON f.text_hash = o.fee_text
        JOIN {PRIMED_PLANS} AS p ON p.text_hash = o.plan_text
    )"""


def drop_list_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Free the primed lists. (Not on failure: inside an aborted transaction a DROP fails
    too, and hides the error; the rollback takes the tables with it.)"""
    for table in (PRIMED_FEES, PRIMED_PLANS, _READ):
        con.execute(f"DROP TABLE IF EXISTS {table}")
