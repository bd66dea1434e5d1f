"""Vouching for a feed's fee and plan lists once per distinct list, not once per offer.

A provider's offers share a few fee schedules and plan lists. Checking and typing every
offer's lists was a third of reading a large feed set-wise, so a load that only needs the
lists' hashes (warehouse.history) reads the offers with their lists left as text
(warehouse.feed_fast.offer_texts_sql): each stored row carries the hashes of its two
lists' text, and its content hash half built (warehouse.offer_hashes.pending).

``settle`` then finishes those rows: it reads one line per distinct list text again,
checks and types that list there (feed_fast.list_sets_sql), puts the lists' set hashes and
the whole content hash in the rows' place, and takes out the rows whose lists it cannot
vouch for, so the exact path reads their lines like any other line the set-wise path left.
A list's verdict depends on its text alone, so one line answers for all that carry it.

Two different lists whose text hashes (64-bit) collide would share one verdict and set
hash; as with the content hash, the odds are about n^2 / 2^65 for n distinct lists.
"""

from __future__ import annotations

from typing import Any

import duckdb

from warehouse.duck_sql import checks_above_parse, run_sql
from warehouse.feed_fast import list_sets_sql
from warehouse.feed_file import FeedFile
from warehouse.offer_hashes import content_hash

__all__ = ["LISTS_TABLE", "REREAD_FEW", "drop_list_tables", "settle"]

LISTS_TABLE = "_gpurent_feed_lists"
"""Per kind ('fee' / 'plan') and list text hash: whether it passed, and its set hash."""
_PICKED = "_gpurent_feed_list_lines"
_READ = "_gpurent_feed_list_read"
_STREAM = "_gpurent_feed_list_stream"
REREAD_FEW = 8
"""The lines carrying the distinct lists are read one by one when they are at most one in
REREAD_FEW of the feed's lines, else from the file streamed again."""


def settle(
    con: duckdb.DuckDBPyConnection,
    feed: FeedFile,
    *,
    hashes: str,
    rehash: str,
    remove: str,
    params: dict[str, Any],
) -> int:
    """Finish the rows a target stored from ``feed`` with their lists as text.

    ``hashes``: a query of ``(line, content_hash, fee_hash, plan_hash)`` of those rows (the
    hashes as ``offer_hashes.pending`` left them); ``rehash``: an UPDATE of the rows from
    ``{relisted}``, a relation of ``(line, fee_hash, plan_hash, content_hash)`` with the
    final values; ``remove``: a statement removing the rows whose lines are in ``$lines``.
    Returns how many rows it took out."""
    stored = f"({hashes}) AS o(line, content_hash, fee_hash, plan_hash)"
    run_sql(
        con,
        f"""
        CREATE OR REPLACE TEMP TABLE {_PICKED} AS
        SELECT min(line) AS line FROM {stored} GROUP BY fee_hash
        UNION SELECT min(line) AS line FROM {stored} GROUP BY plan_hash
        """,
        params,
    )
    _read_lists(con, feed)
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE {LISTS_TABLE} AS
        SELECT kind, text_hash, min(set_hash) AS set_hash,
            -- one verdict per text: should two texts share a hash and disagree, neither
            -- is vouched for
            bool_and(ok) AND count(DISTINCT set_hash) <= 1 AS ok
        FROM (
            SELECT 'fee' AS kind, fee_text AS text_hash, fee_set AS set_hash, fee_ok AS ok
            FROM {_READ}
            UNION ALL
            SELECT 'plan', plan_text, plan_set, plan_ok FROM {_READ}
        )
        GROUP BY kind, text_hash
        """
    )
    joined = f"""{stored}
        LEFT JOIN {LISTS_TABLE} AS f ON f.kind = 'fee' AND f.text_hash = o.fee_hash
        LEFT JOIN {LISTS_TABLE} AS p ON p.kind = 'plan' AND p.text_hash = o.plan_hash"""
    bad = [
        int(row[0])
        for row in run_sql(
            con,
            f"SELECT o.line FROM {joined} WHERE NOT coalesce(f.ok AND p.ok, false)",
            params,
        )
    ]
    if bad:
        run_sql(con, remove, params | {"lines": bad})
    relisted = f"""(
        SELECT o.line, f.set_hash AS fee_hash, p.set_hash AS plan_hash,
            {content_hash("o.content_hash", "f.set_hash", "p.set_hash")} AS content_hash
        FROM {joined} WHERE f.ok AND p.ok
    )"""
    run_sql(con, rehash.replace("{relisted}", relisted), params)
    drop_list_tables(con)
    return len(bad)


def drop_list_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Free settle's temporary tables. (Not on failure: inside an aborted transaction a
    DROP fails too, and hides the error; the rollback takes the tables with it.)"""
    for table in (_PICKED, _READ, LISTS_TABLE):
        con.execute(f"DROP TABLE IF EXISTS {table}")


def _read_lists(con: duckdb.DuckDBPyConnection, feed: FeedFile) -> None:
    """The lists of the picked lines, checked and typed, into _READ."""
    row = con.execute(f"SELECT count(*) FROM {_PICKED}").fetchall()
    picked = int(row[0][0]) if row else 0
    if picked * REREAD_FEW <= feed.lines:
        lines = [int(r[0]) for r in con.execute(f"SELECT line FROM {_PICKED}").fetchall()]
        relation: Any = feed.table(lines)
        where = None
    else:
        relation = feed.scan()
        where = f"line IN (SELECT line FROM {_PICKED})"
    con.register(_STREAM, relation)
    try:
        with checks_above_parse(con):
            con.execute(
                f"CREATE OR REPLACE TEMP TABLE {_READ} AS {list_sets_sql(_STREAM, where=where)}"
            )
    finally:
        con.unregister(_STREAM)
