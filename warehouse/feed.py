"""Reading one feed into DuckDB, validated, before anything is stored from it.

``read_into`` stages a run's feed in a temporary table of the connection (``OFFERS_TABLE``:
one row per offer, typed, its fee and plan lists as lists of structs, hashed), in three
steps:

1. DuckDB types the file's lines (warehouse.feed_sql), a block of them per statement
   (warehouse.feed_file), vouching only for the lines the pydantic contract would read
   the same;
2. every other line (a quarantine line, a coerced value, a bad line) is read the exact way
   (warehouse.feed_exact: the pydantic contract, line by line), its offer added to the
   table or the line quarantined with the contract's reason;
3. an offer key met again on a later line is set aside (the first line wins).

A line that fails becomes a quarantine row with its reason: never dropped, never fatal
(rule of truth 6). A feed already read into frames (``FeedBatch``) is staged as it is.
``read_feed`` gives a file's staged feed back as frames.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from warehouse.duck_sql import run_sql
from warehouse.feed_exact import ExactReader, hints_of
from warehouse.feed_file import LINES_SCHEMA, FeedFile
from warehouse.feed_schema import (
    FEE_ITEM_FIELDS,
    FEE_LIST_TYPE,
    FEE_SCHEMA,
    LINE,
    OBSERVATION_SCHEMA,
    PLAN_ITEM_FIELDS,
    PLAN_LIST_TYPE,
    PLAN_SCHEMA,
    QUARANTINE_SCHEMA,
)
from warehouse.feed_sql import offer_rows_sql
from warehouse.offer_hashes import hashed

__all__ = [
    "DUPLICATE_REASON",
    "FEE_SCHEMA",
    "OBSERVATION_SCHEMA",
    "OFFERS_TABLE",
    "PLAN_SCHEMA",
    "QUARANTINE_SCHEMA",
    "FeedBatch",
    "Staged",
    "drop_staged",
    "read_feed",
    "read_into",
]

DUPLICATE_REASON = "duplicate offer_key in feed"
OFFERS_TABLE = "_gpurent_feed_offers"
"""The staged offers: ``_line`` (the line in the feed), the columns of OBSERVATION_SCHEMA,
``fees`` and ``plans`` (FEE_LIST_TYPE / PLAN_LIST_TYPE), the hashes of
warehouse.offer_hashes.HASHES, and ``ok`` / ``raw`` (the SQL reading's verdict, true on every
row once staged)."""
_LINES = "_gpurent_feed_lines"
_EXACT = "_gpurent_feed_exact"


@dataclass(frozen=True)
class FeedBatch:
    """A validated feed: frames shaped like their tables, plus what was set aside.

    ``offers``/``fees``/``plans``/``quarantine`` follow OBSERVATION_SCHEMA, FEE_SCHEMA,
    PLAN_SCHEMA and QUARANTINE_SCHEMA (money as Polars Decimal). ``lines`` counts the
    non-blank lines read; ``sha256`` is the digest of the file's bytes.
    """

    offers: pl.DataFrame
    fees: pl.DataFrame
    plans: pl.DataFrame
    quarantine: pl.DataFrame
    lines: int = 0
    sha256: str | None = None

    @classmethod
    def empty(cls) -> FeedBatch:
        return cls(
            offers=pl.DataFrame(schema=OBSERVATION_SCHEMA),
            fees=pl.DataFrame(schema=FEE_SCHEMA),
            plans=pl.DataFrame(schema=PLAN_SCHEMA),
            quarantine=pl.DataFrame(schema=QUARANTINE_SCHEMA),
        )


@dataclass(frozen=True)
class Staged:
    """A feed staged in OFFERS_TABLE: what it holds, and what was set aside (a frame)."""

    offers: int
    fees: int
    plans: int
    quarantine: pl.DataFrame
    observed_at: datetime | None
    """The earliest observed_at of the offers (None: no offers)."""
    lines: int = 0
    sha256: str | None = None


def read_into(
    con: duckdb.DuckDBPyConnection,
    source: Path | str | FeedBatch,
    *,
    provider: str | None = None,
    run_id: str | None = None,
) -> Staged:
    """Stage the feed at ``source`` (a file, or a batch already read and validated) in
    OFFERS_TABLE. With ``provider``/``run_id`` given, offers that name another run are
    quarantined. Writes nothing but the connection's temporary table; best outside a
    transaction (inside one, the table's rows stay in memory until it ends)."""
    params = {"provider": provider, "run_id": run_id}
    con.execute(f"CREATE OR REPLACE TEMP TABLE {OFFERS_TABLE} ({_staged_columns()})")
    if isinstance(source, FeedBatch):
        _append(con, source.offers, source.fees, source.plans)
        return _staged(con, source.quarantine, lines=source.lines, sha256=source.sha256)
    feed = FeedFile(source)
    # (1) a block at a time: DuckDB's JSON functions hold what they allocate until their
    # statement ends (a million lines in one statement held over a GiB).
    for block in feed.blocks():
        _read(con, f"INSERT INTO {OFFERS_TABLE}", block, params)
    # (2) the lines the SQL reading did not vouch for, the exact way.
    reader = ExactReader(provider=provider, run_id=run_id)
    left = con.execute(f"SELECT {LINE}, raw FROM {OFFERS_TABLE} WHERE NOT ok ORDER BY 1")
    for line, raw in left.fetchall():
        reader.read(line, feed.undecodable[line] if raw is None else raw.encode())
    con.execute(f"DELETE FROM {OFFERS_TABLE} WHERE NOT ok")
    vouched = _count(con)
    if reader.offers:
        _append(con, *reader.frames())
    # (3) one offer per key per run: the later lines are set aside.
    later = con.execute(
        f"""
        SELECT {LINE} FROM {OFFERS_TABLE} WHERE offer_key IN (
            SELECT offer_key FROM {OFFERS_TABLE} GROUP BY offer_key HAVING count(*) > 1
        ) QUALIFY row_number() OVER (PARTITION BY offer_key ORDER BY {LINE}) > 1
        """
    ).fetchall()
    if later:
        numbers = [int(row[0]) for row in later]
        con.execute(f"DELETE FROM {OFFERS_TABLE} WHERE list_contains($l, {LINE})", {"l": numbers})
        for line, text in sorted(feed.texts(numbers).items()):
            raw = text.decode("utf-8")  # it was read as an offer: it is UTF-8
            reader.reject(line, DUPLICATE_REASON, raw, field="offer_key", **hints_of(raw))
    quarantine = pl.DataFrame(reader.quarantine, schema=QUARANTINE_SCHEMA, orient="row")
    lines = vouched + reader.lines
    return _staged(con, quarantine.sort("seq"), lines=lines, sha256=feed.sha256)


def read_feed(
    path: Path | str, *, provider: str | None = None, run_id: str | None = None
) -> FeedBatch:
    """Read and validate the JSON Lines feed at ``path`` into frames (``read_into`` in a
    private in-memory DuckDB). Without ``provider``/``run_id``, quarantine ids may be null."""
    con = duckdb.connect()  # without ICU, TIMESTAMPTZ is read and shown as UTC
    try:
        staged = read_into(con, path, provider=provider, run_id=run_id)
        ids = f"{LINE}, run_id, provider, offer_key"
        frames = [_table_frame(con, f"SELECT * FROM {OFFERS_TABLE}", OBSERVATION_SCHEMA)]
        for column, fields, schema in (
            ("fees", FEE_ITEM_FIELDS, FEE_SCHEMA),
            ("plans", PLAN_ITEM_FIELDS, PLAN_SCHEMA),
        ):
            items = ", ".join(f"item.{c} AS {c}" for c in fields)
            unnested = f"SELECT {ids}, unnest({column}) AS item FROM {OFFERS_TABLE}"
            frames.append(_table_frame(con, f"SELECT {ids}, {items} FROM ({unnested})", schema))
    finally:
        con.close()
    offers, fees, plans = frames
    return FeedBatch(offers, fees, plans, staged.quarantine, staged.lines, staged.sha256)


def drop_staged(con: duckdb.DuckDBPyConnection) -> None:
    """Free the staged feed (outside a transaction)."""
    con.execute(f"DROP TABLE IF EXISTS {OFFERS_TABLE}")


def _read(con: duckdb.DuckDBPyConnection, verb: str, lines: Any, params: dict[str, Any]) -> None:
    """``verb`` (a CREATE ... AS or INSERT INTO OFFERS_TABLE) the rows warehouse.feed_sql
    reads from ``lines`` (an Arrow table of LINES_SCHEMA)."""
    con.register(_LINES, lines)
    try:
        run_sql(con, f"{verb} {offer_rows_sql(_LINES)}", params)
    finally:
        con.unregister(_LINES)


@cache
def _staged_columns() -> str:
    """OFFERS_TABLE's columns with their types, as CREATE TABLE lists them: those of the
    reading query over no lines, worked out once per process (planning that query costs as
    much as reading a small feed with it)."""
    con = duckdb.connect()
    try:
        empty = LINES_SCHEMA.empty_table()
        _read(con, f"CREATE TABLE {OFFERS_TABLE} AS", empty, {"provider": None, "run_id": None})
        columns = con.execute(
            "SELECT column_name, data_type FROM duckdb_columns()"
            " WHERE table_name = ? ORDER BY column_index",
            [OFFERS_TABLE],
        ).fetchall()
    finally:
        con.close()
    return ", ".join(f'"{name}" {kind}' for name, kind in columns)


def _append(
    con: duckdb.DuckDBPyConnection, offers: pl.DataFrame, fees: pl.DataFrame, plans: pl.DataFrame
) -> None:
    """Offers read already into OFFERS_TABLE, each with its fees and plans as lists by
    seq, hashed: the exact path's (frames with their ``_line``), or a batch's (frames as
    FeedBatch has them: an offer's line is its place in the frame, and a fee or plan
    belongs to the first offer with its key)."""
    if LINE not in offers.columns:
        offers = offers.with_row_index(LINE, offset=1).with_columns(pl.col(LINE).cast(pl.Int32))
        first = offers.select(LINE, "offer_key").unique("offer_key", keep="first")
        fees, plans = (rows.join(first, on="offer_key") for rows in (fees, plans))
    for rows, fields, name in ((fees, FEE_ITEM_FIELDS, "fees"), (plans, PLAN_ITEM_FIELDS, "plans")):
        lists = rows.group_by(LINE).agg(pl.struct(fields).sort_by("seq").alias(name))
        offers = offers.join(lists, on=LINE, how="left", maintain_order="left")
    con.register(_EXACT, offers.select(LINE, *OBSERVATION_SCHEMA, "fees", "plans").to_arrow())
    try:
        # Polars hands the lists over as its own types; the table's are cast to by name.
        typed = (
            f"(SELECT * REPLACE (coalesce(fees, [])::{FEE_LIST_TYPE} AS fees,"
            f" coalesce(plans, [])::{PLAN_LIST_TYPE} AS plans), true AS ok, NULL AS raw"
            f" FROM {_EXACT})"
        )
        con.execute(f"INSERT INTO {OFFERS_TABLE} BY NAME SELECT * FROM {hashed(typed)}")
    finally:
        con.unregister(_EXACT)


def _count(con: duckdb.DuckDBPyConnection) -> int:
    return int(con.execute(f"SELECT count(*) FROM {OFFERS_TABLE}").fetchall()[0][0])


def _staged(
    con: duckdb.DuckDBPyConnection, quarantine: pl.DataFrame, *, lines: int, sha256: str | None
) -> Staged:
    row = con.execute(
        f"SELECT count(*), coalesce(sum(len(fees)), 0), coalesce(sum(len(plans)), 0),"
        f" min(observed_at) FROM {OFFERS_TABLE}"
    ).fetchall()[0]
    observed_at = row[3] if isinstance(row[3], datetime) else None
    return Staged(int(row[0]), int(row[1]), int(row[2]), quarantine, observed_at, lines, sha256)


def _table_frame(con: duckdb.DuckDBPyConnection, rows: str, schema: pl.Schema) -> pl.DataFrame:
    order = f"{LINE}, seq" if "seq" in schema else LINE
    sql = f"SELECT {', '.join(schema)} FROM ({rows}) ORDER BY {order}"
    frame = pl.from_arrow(con.sql(sql).to_arrow_table())
    assert isinstance(frame, pl.DataFrame)
    return frame.cast(schema)
