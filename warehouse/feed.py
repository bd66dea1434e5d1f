"""Reading one staging feed and validating it before anything is stored from it.

Two paths, one verdict. The set-wise path (warehouse.feed_fast) types the canonical lines
the spiders write, in DuckDB, as the file streams by (warehouse.feed_file); it vouches
only for what the exact path would read the same. Every other line (a quarantine line, a
coerced value, a bad line) takes the exact path (warehouse.feed_exact): the pydantic
contract, line by line. SQL then checks the feed as a whole (values that did not survive
conversion, duplicate offer keys). A line that fails becomes a quarantine row with its
reason: never dropped, never fatal (rule of truth 6).

Where the typed rows go is the caller's: ``read_into`` runs a ``Target``'s INSERT over
them, so a load can write a feed's offers straight into the latest state or into a
narrow comparison table without a staged copy (warehouse.history). ``stage_feed`` puts
them in a temporary table of the connection (``OFFERS_TABLE``), for ``read_feed`` (frames),
runs loaded late and runs that do not feed the state; ``stage_batch`` does the same for a
feed already read into frames (``FeedBatch``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa

from warehouse.duck_sql import checks_above_parse, run_numpy, run_sql
from warehouse.feed_exact import ExactReader, hints_of
from warehouse.feed_fast import OFFER_PREFIX, offer_rows_sql, offer_texts_sql
from warehouse.feed_file import FeedFile
from warehouse.feed_lists import (
    SAMPLE_BYTES,
    SAMPLE_WINDOWS,
    create_primed,
    drop_list_tables,
    prime,
    settled,
)
from warehouse.feed_schema import (
    FEE_AMOUNT,
    FEE_ITEM_FIELDS,
    FEE_LIST_TYPE,
    FEE_SCHEMA,
    LINE,
    OBSERVATION_SCHEMA,
    PLAN_ITEM_FIELDS,
    PLAN_LIST_TYPE,
    PLAN_SCHEMA,
    PRICE,
    QUANTITY,
    QUARANTINE_SCHEMA,
    UTC_TIME,
    sql_type,
)
from warehouse.offer_hashes import hashed

__all__ = [
    "DUPLICATE_REASON",
    "FEES_TABLE",
    "FEE_AMOUNT",
    "FEE_ITEM_FIELDS",
    "FEE_LIST_TYPE",
    "FEE_SCHEMA",
    "OBSERVATION_SCHEMA",
    "OFFERS_TABLE",
    "PLANS_TABLE",
    "PLAN_ITEM_FIELDS",
    "PLAN_LIST_TYPE",
    "PLAN_SCHEMA",
    "PRICE",
    "QUANTITY",
    "QUARANTINE_SCHEMA",
    "REREAD_FEW",
    "UTC_TIME",
    "FeedBatch",
    "FeedOutcome",
    "FeedRows",
    "StagedFeed",
    "TableRows",
    "Target",
    "checks_above_parse",
    "drop_staged",
    "read_feed",
    "read_into",
    "run_sql",
    "stage_batch",
    "stage_feed",
]

DUPLICATE_REASON = "duplicate offer_key in feed"
# Columns that are NOT NULL in the tables: a null there means a value did not convert.
_REQUIRED = {
    "observations": [
        c
        for c in OBSERVATION_SCHEMA
        # gpu_vram_gb may be null: the name leaves the VRAM open and the offer does not say.
        if c not in {"gpu_form_factor", "region", "url", "available_count", "gpu_vram_gb"}
    ],
    "addon_fees": [
        c for c in FEE_SCHEMA if c not in {"unit", "quantity", "included_quantity", "note"}
    ],
    "price_plans": list(PLAN_SCHEMA),
}

# The temporary tables a staged feed leaves in its connection (with a _line column). The
# offers table holds each offer's fees and plans as typed lists (structs with their seq);
# the fee and plan rows are views unnesting them (one row per fee or plan).
OFFERS_TABLE = "_gpurent_feed_offers"
FEES_TABLE = "_gpurent_feed_fees"
PLANS_TABLE = "_gpurent_feed_plans"
# The offers the exact path read, while the set-wise path's go straight to a target.
EXACT_TABLE = "_gpurent_feed_exact"
_STREAM = "_gpurent_feed_lines"
_LEFT = "_gpurent_feed_left"
_OFFER_PREFIX = OFFER_PREFIX.encode()
REREAD_FEW = 8
"""Lines read again are read one by one when they are at most one in REREAD_FEW of the
feed's lines, else from the file streamed again (reading a line by its offset costs a
seek; streaming costs the whole file)."""


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
class StagedFeed:
    """A validated feed held in temporary tables of a connection (OFFERS_TABLE, FEES_TABLE,
    PLANS_TABLE: the schemas of FeedBatch plus a line number); quarantine as a frame."""

    offers: int
    fees: int
    plans: int
    quarantine: pl.DataFrame
    observed_at: datetime | None
    """The earliest observed_at of the offers (None: no offers)."""
    lines: int = 0
    sha256: str | None = None


# -- where typed offer rows come from -------------------------------------------------


def _picked(table: str, where: str | None) -> str:
    """The rows of ``table`` (with a _line column) whose ``line`` meets ``where``."""
    if not where:
        return f"SELECT * FROM {table}"
    return f"SELECT * EXCLUDE (line) FROM (SELECT *, {LINE} AS line FROM {table}) WHERE {where}"


class TableRows:
    """Offer rows already in a table shaped ``OFFER_ROW_COLUMNS`` (a staged feed).

    In a statement, ``{rows}`` stands for the rows, ``{offers}`` for them hashed
    (warehouse.offer_hashes.hashed)."""

    def __init__(self, table: str = OFFERS_TABLE) -> None:
        self.table = table

    def execute(
        self,
        con: duckdb.DuckDBPyConnection,
        sql: str,
        params: dict[str, Any] | None = None,
        *,
        where: str | None = None,
        only: Sequence[int] | None = None,
    ) -> list[tuple[Any, ...]]:
        """Run ``sql`` with ``{rows}`` standing for the rows (``where``: a condition on
        ``line``, the rows' feed line, picking some; ``only``: the lines wanted)."""
        values = dict(params or {})
        if only is not None:
            where = "line IN (SELECT unnest($only))" + (f" AND ({where})" if where else "")
            values["only"] = list(only)
        rows = f"({_picked(self.table, where)})"
        return run_sql(con, sql.replace("{rows}", rows).replace("{offers}", hashed(rows)), values)


class FeedRows:
    """The offer rows of a feed file: its canonical lines typed set-wise as the file streams
    by (each statement reads the file again), and the rows the exact path read, held in
    EXACT_TABLE. ``read_into`` fills the latter.

    In a statement, ``{rows}`` stands for the rows, ``{offers}`` for them hashed
    (warehouse.offer_hashes.hashed; with ``lists_primed``, the set-wise rows whose lists
    are primed, warehouse.feed_lists.settled)."""

    def __init__(self, feed: FeedFile, *, provider: str | None, run_id: str | None) -> None:
        self.feed = feed
        self.run = {"provider": provider, "run_id": run_id}

    def execute(
        self,
        con: duckdb.DuckDBPyConnection,
        sql: str,
        params: dict[str, Any] | None = None,
        *,
        where: str | None = None,
        only: Sequence[int] | None = None,
        lines: pa.Table | None = None,
        exact: bool = True,
        fast: bool = True,
        lists_primed: bool = False,
    ) -> list[tuple[Any, ...]]:
        """Run ``sql`` with ``{rows}`` / ``{offers}`` standing for the rows. ``where``: a
        condition on ``line`` picking lines before any is parsed (the file is read whole);
        ``only``: the few lines wanted (read from where the first scan found them, unless
        ``lines`` holds them already, as ``FeedFile.table`` gives them).
        ``exact`` / ``fast``: include the exact path's rows / the set-wise ones;
        ``lists_primed``: ``{offers}`` are the set-wise rows whose lists were primed
        (warehouse.feed_lists), without their lists typed."""
        if lists_primed and exact:
            raise ValueError("rows with primed lists cannot be read with typed ones")
        picked = where
        if only is not None:
            picked = "line IN (SELECT unnest($only))" + (f" AND ({where})" if where else "")
        rows, offers = [], []
        if fast:
            rows.append(offer_rows_sql(_STREAM, where=picked))
            offers.append(
                settled(f"({offer_texts_sql(_STREAM, where=picked)})")
                if lists_primed
                else hashed(f"({rows[-1]})")
            )
        if exact:
            rows.append(_picked(EXACT_TABLE, picked))
            offers.append(hashed(f"({rows[-1]})"))
        sql = sql.replace("{rows}", "(" + " UNION ALL ".join(rows) + ")").replace(
            "{offers}", "(" + " UNION ALL ".join(f"SELECT * FROM {o}" for o in offers) + ")"
        )
        values = self.run | (params or {}) | ({"only": list(only)} if only is not None else {})
        if not fast:
            return run_sql(con, sql, values)
        if lines is None:
            lines = self.feed.scan() if only is None else self.feed.table(only)
        con.register(_STREAM, lines)
        try:
            with checks_above_parse(con, joins_as_written=lists_primed):
                return run_sql(con, sql, values)
        finally:
            con.unregister(_STREAM)


@dataclass(frozen=True)
class Target:
    """Where ``read_into`` puts a feed's offer rows, as statements.

    ``insert``: an INSERT ... SELECT over ``{rows}`` (columns ``OFFER_ROW_COLUMNS``) or
    over ``{offers}`` (the rows hashed, warehouse.offer_hashes);
    ``stored``: a query of ``(line, offer_key)`` of the rows it stored from this feed;
    ``remove``: a statement removing the stored rows whose lines are in ``$lines``.
    ``params``: their parameters (besides ``$lines``).

    A target that stores only hashes sets ``lists_once``: its insert then gets the
    set-wise rows with their lists vouched for once per distinct list
    (warehouse.feed_lists), its rows come with their set ids (``fee_set_id`` /
    ``plan_set_id``), and are never updated.
    """

    insert: str
    stored: str
    remove: str
    params: dict[str, Any] = field(default_factory=dict)
    lists_once: bool = False


@dataclass(frozen=True)
class FeedOutcome:
    """What ``read_into`` read: the offers it stored, what it quarantined, the file."""

    offers: int
    quarantine: pl.DataFrame
    lines: int
    sha256: str | None
    rows: FeedRows | TableRows
    """The feed's rows, for later statements over them (lines set aside left out)."""


def read_into(
    con: duckdb.DuckDBPyConnection,
    feed: FeedFile,
    target: Target,
    *,
    provider: str | None,
    run_id: str | None,
) -> FeedOutcome:
    """Read and validate ``feed`` into ``target``: the set-wise path straight from the file,
    then the exact path for every line it left, then the feed-wide checks. May run inside
    a transaction (its temporary table is the connection's)."""
    _create_exact_table(con)
    rows = FeedRows(feed, provider=provider, run_id=run_id)
    params = target.params
    stored = f"SELECT line FROM ({target.stored}) AS s(line, offer_key)"
    if target.lists_once:
        create_primed(con)
        prime(con, feed.sample(SAMPLE_WINDOWS, SAMPLE_BYTES))
    rows.execute(con, target.insert, params, exact=False, lists_primed=target.lists_once)
    feed.ensure_scanned()
    # The lines the set-wise path left, read again from where the scan found them.
    rest = _left(con, stored, params, feed.lines)
    texts = feed.texts(rest)
    if target.lists_once:
        # Offer lines whose lists the sample missed may still read set-wise (a quarantine
        # line never does).
        offers = [n for n in rest if texts[n].startswith(_OFFER_PREFIX)]
        if _read_again(con, rows, target, offers):
            rest = _left(con, stored, params, feed.lines)
    read_set_wise = int(run_sql(con, f"SELECT count(*) FROM ({stored})", params)[0][0])
    reader = ExactReader(provider=provider, run_id=run_id)
    for number in rest:
        reader.read(number, texts[number])
    if reader.offers:
        _append_rows(con, EXACT_TABLE, _reader_frames(reader))
        rows.execute(con, target.insert, params, fast=False)
    set_aside = _validate(con, target, reader)
    if set_aside:
        lines = [line for line, *_ in set_aside]
        texts |= feed.texts([n for n in lines if n not in texts])
        run_sql(con, target.remove, params | {"lines": lines})
        con.execute(
            f"DELETE FROM {EXACT_TABLE} WHERE list_contains($lines, {LINE})", {"lines": lines}
        )
        for line, reason, column in set_aside:
            text = texts[line].decode("utf-8", "replace")
            reader.reject(line, reason, text, field=column, **hints_of(text))
    count = run_sql(con, f"SELECT count(*) FROM ({stored})", params)
    quarantine = pl.DataFrame(reader.quarantine, schema=QUARANTINE_SCHEMA, orient="row")
    return FeedOutcome(
        offers=int(count[0][0]),
        quarantine=quarantine.sort("seq"),
        lines=read_set_wise + reader.lines,
        sha256=feed.sha256,
        rows=rows,
    )


def _left(
    con: duckdb.DuckDBPyConnection, stored: str, params: dict[str, Any], lines: int
) -> list[int]:
    """The numbers of the feed's lines (1 to ``lines``) no stored row came from (the stored
    line numbers fetched as one array and crossed out: several times cheaper than an
    anti-join in DuckDB for a large feed)."""
    numbers = run_numpy(con, f"SELECT line FROM ({stored})", params)["line"]
    left = np.ones(lines + 1, dtype=bool)
    left[0] = False
    left[np.asarray(numbers, dtype=np.int64)] = False
    return np.flatnonzero(left).tolist()


def _read_again(
    con: duckdb.DuckDBPyConnection, rows: FeedRows, target: Target, left: list[int]
) -> int:
    """The lines the first reading left whose lists the sample did not prime: their lists
    primed from these lines themselves, then the lines read set-wise again (what is still
    left is the exact path's). Few lines are read one by one, once for both steps; many
    from the file streamed again (twice: once to prime, once to read). Returns how many
    rows it stored."""
    if not left:
        return 0
    if len(left) * REREAD_FEW <= rows.feed.lines:
        picked = rows.feed.table(left)
        prime(con, picked)
        answer = rows.execute(
            con,
            target.insert,
            target.params,
            only=left,
            lines=picked,
            exact=False,
            lists_primed=True,
        )
    else:
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE {_LEFT} AS SELECT unnest($left) AS line",
            {"left": left},
        )
        where = f"line IN (SELECT line FROM {_LEFT})"
        prime(con, rows.feed.scan(), where=where)
        answer = rows.execute(
            con, target.insert, target.params, where=where, exact=False, lists_primed=True
        )
        con.execute(f"DROP TABLE {_LEFT}")
    return int(answer[0][0]) if answer else 0


def _validate(
    con: duckdb.DuckDBPyConnection, target: Target, reader: ExactReader
) -> list[tuple[int, str, str]]:
    """The feed-wide checks: (line, reason, field) of the offers to set aside."""
    # Belt and braces: a value that did not convert is a null in a NOT NULL column. The
    # exact path's checks should make this impossible (the set-wise path keeps no null);
    # if one slips, quarantine the offer.
    unstorable: dict[int, str] = {}
    if reader.offers:
        for column_set, name in ((_REQUIRED["observations"], "observations"),):
            first_null = " ".join(f"WHEN {c} IS NULL THEN '{name}.{c}'" for c in column_set)
            any_null = " OR ".join(f"{c} IS NULL" for c in column_set)
            for line, column in con.execute(
                f"SELECT {LINE}, CASE {first_null} END FROM {EXACT_TABLE} WHERE {any_null}"
            ).fetchall():
                unstorable.setdefault(int(line), str(column))
        for list_column, fields, name in (
            ("fees", FEE_ITEM_FIELDS, "addon_fees"),
            ("plans", PLAN_ITEM_FIELDS, "price_plans"),
        ):
            required = [c for c in _REQUIRED[name] if c in fields]
            first_null = " ".join(f"WHEN x.{c} IS NULL THEN '{name}.{c}'" for c in required)
            any_null = " OR ".join(f"x.{c} IS NULL" for c in required)
            for line, column in con.execute(
                f"SELECT {LINE}, min(CASE {first_null} END) FROM"
                f" (SELECT {LINE}, unnest({list_column}) AS x FROM {EXACT_TABLE})"
                f" WHERE {any_null} GROUP BY {LINE}"
            ).fetchall():
                unstorable.setdefault(int(line), str(column))
    # One offer per key per run: keep the first line, quarantine the later ones.
    duplicates = [
        int(row[0])
        for row in run_sql(
            con,
            f"""
            SELECT line FROM (
                SELECT line, row_number() OVER (PARTITION BY offer_key ORDER BY line) AS n
                FROM ({target.stored}) AS s(line, offer_key)
                WHERE NOT list_contains($skip, line)
                  AND offer_key IN (
                    SELECT offer_key FROM ({target.stored}) AS d(line, offer_key)
                    GROUP BY offer_key HAVING count(*) > 1
                  )
            ) WHERE n > 1 ORDER BY line
            """,
            target.params | {"skip": list(unstorable)},
        )
    ]
    set_aside = [
        (line, f"value does not fit column {column}", column.split(".")[1])
        for line, column in sorted(unstorable.items())
    ]
    set_aside += [(line, DUPLICATE_REASON, "offer_key") for line in duplicates]
    return set_aside


# -- a feed staged whole ---------------------------------------------------------------


def stage_feed(
    con: duckdb.DuckDBPyConnection,
    path: Path | str,
    *,
    provider: str | None = None,
    run_id: str | None = None,
) -> StagedFeed:
    """Read and validate the feed at ``path`` into the temporary tables of ``con``
    (OFFERS_TABLE and its views): the rows never become Python objects."""
    _create_staged(con)
    table = TableRows(OFFERS_TABLE)
    outcome = read_into(
        con,
        FeedFile(path),
        Target(
            insert=f"INSERT INTO {OFFERS_TABLE} SELECT * FROM {{rows}}",
            stored=f"SELECT {LINE}, offer_key FROM {table.table}",
            remove=f"DELETE FROM {OFFERS_TABLE} WHERE list_contains($lines, {LINE})",
        ),
        provider=provider,
        run_id=run_id,
    )
    return _staged(con, outcome.quarantine, lines=outcome.lines, sha256=outcome.sha256)


def read_feed(
    path: Path | str, *, provider: str | None = None, run_id: str | None = None
) -> FeedBatch:
    """Read and validate the JSON Lines feed at ``path`` into frames.

    With ``provider``/``run_id`` given, offers that name another run are quarantined and
    quarantine rows carry those ids; without them, quarantine ids may be null.
    The same validation as ``stage_feed``, in a private in-memory DuckDB.
    """
    con = duckdb.connect()  # without ICU, TIMESTAMPTZ is read and shown as UTC
    try:
        staged = stage_feed(con, path, provider=provider, run_id=run_id)
        frames = [
            _table_frame(con, table, schema, order)
            for table, schema, order in (
                (OFFERS_TABLE, OBSERVATION_SCHEMA, LINE),
                (FEES_TABLE, FEE_SCHEMA, f"{LINE}, seq"),
                (PLANS_TABLE, PLAN_SCHEMA, f"{LINE}, seq"),
            )
        ]
    finally:
        con.close()
    return FeedBatch(
        offers=frames[0],
        fees=frames[1],
        plans=frames[2],
        quarantine=staged.quarantine,
        lines=staged.lines,
        sha256=staged.sha256,
    )


def stage_batch(con: duckdb.DuckDBPyConnection, batch: FeedBatch) -> StagedFeed:
    """A feed already read (``FeedBatch``) into the temporary tables ``stage_feed`` fills."""
    _create_staged(con)
    # Each offer gets its place in the batch as its line (the weave joins staged rows by
    # line), and its fees and plans the line of the first offer with their key.
    offers = batch.offers.with_row_index(LINE, offset=1).with_columns(pl.col(LINE).cast(pl.Int32))
    lines = offers.select(LINE, "offer_key").unique("offer_key", keep="first")
    frames = [
        frame.join(lines, on="offer_key", how="inner").select(LINE, *schema)
        if frame is not offers
        else frame.select(LINE, *schema)
        for frame, schema in (
            (offers, OBSERVATION_SCHEMA),
            (batch.fees, FEE_SCHEMA),
            (batch.plans, PLAN_SCHEMA),
        )
    ]
    _append_rows(con, OFFERS_TABLE, frames)
    return _staged(con, batch.quarantine, lines=batch.lines, sha256=batch.sha256)


def drop_staged(con: duckdb.DuckDBPyConnection) -> None:
    """Free the staged tables (outside a transaction)."""
    con.execute(f"DROP VIEW IF EXISTS {FEES_TABLE}")
    con.execute(f"DROP VIEW IF EXISTS {PLANS_TABLE}")
    con.execute(f"DROP TABLE IF EXISTS {OFFERS_TABLE}")
    con.execute(f"DROP TABLE IF EXISTS {EXACT_TABLE}")
    con.execute(f"DROP TABLE IF EXISTS {_LEFT}")
    drop_list_tables(con)


def _ddl() -> str:
    return (
        ", ".join(
            [f"{LINE} INTEGER", *(f"{n} {sql_type(t)}" for n, t in OBSERVATION_SCHEMA.items())]
        )
        + f", fees {FEE_LIST_TYPE} NOT NULL, plans {PLAN_LIST_TYPE} NOT NULL"
    )


def _create_exact_table(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(f"CREATE OR REPLACE TEMP TABLE {EXACT_TABLE} ({_ddl()})")


def _create_staged(con: duckdb.DuckDBPyConnection) -> None:
    """The empty offers table (with its lists) and the fee and plan views over it."""
    con.execute(f"CREATE OR REPLACE TEMP TABLE {OFFERS_TABLE} ({_ddl()})")
    ids = f"{LINE}, run_id, provider, offer_key"
    for view, column, fields in (
        (FEES_TABLE, "fees", FEE_ITEM_FIELDS),
        (PLANS_TABLE, "plans", PLAN_ITEM_FIELDS),
    ):
        con.execute(
            f"CREATE OR REPLACE TEMP VIEW {view} AS SELECT {ids},"
            f" {', '.join(f'item.{c} AS {c}' for c in fields)}"
            f" FROM (SELECT {ids}, unnest({column}) AS item FROM {OFFERS_TABLE})"
        )


def _reader_frames(reader: ExactReader) -> list[pl.DataFrame]:
    return [
        _frame(rows, schema)
        for rows, schema in (
            (reader.offers, OBSERVATION_SCHEMA),
            (reader.fees, FEE_SCHEMA),
            (reader.plans, PLAN_SCHEMA),
        )
    ]


def _append_rows(con: duckdb.DuckDBPyConnection, table: str, frames: list[pl.DataFrame]) -> None:
    """Flat offer, fee and plan rows (each with its line) into ``table``, the fees and
    plans of an offer as its lists, by seq; the offers keep the order they came in."""
    offers, fees, plans = frames
    keys = [LINE, "offer_key"]  # a fee or plan belongs to the offer of its line and key
    for rows, fields, name in ((fees, FEE_ITEM_FIELDS, "fees"), (plans, PLAN_ITEM_FIELDS, "plans")):
        lists = rows.group_by(keys).agg(pl.struct(fields).sort_by("seq").alias(name))
        offers = offers.join(lists, on=keys, how="left", maintain_order="left")
    columns = ", ".join(offers.columns[:-2])
    view = f"{table}_in"
    con.register(view, offers.to_arrow())
    try:
        # Polars hands the lists over as its own types; the table's are cast to by name.
        con.execute(
            f"INSERT INTO {table} SELECT {columns},"
            f" coalesce(fees, [])::{FEE_LIST_TYPE}, coalesce(plans, [])::{PLAN_LIST_TYPE}"
            f" FROM {view}"
        )
    finally:
        con.unregister(view)


def _staged(
    con: duckdb.DuckDBPyConnection, quarantine: pl.DataFrame, *, lines: int, sha256: str | None
) -> StagedFeed:
    row = con.execute(
        f"SELECT count(*), coalesce(sum(len(fees)), 0), coalesce(sum(len(plans)), 0),"
        f" min(observed_at) FROM {OFFERS_TABLE}"
    ).fetchall()[0]
    observed_at = row[3] if isinstance(row[3], datetime) else None
    return StagedFeed(
        offers=int(row[0]),
        fees=int(row[1]),
        plans=int(row[2]),
        quarantine=quarantine,
        observed_at=observed_at,
        lines=lines,
        sha256=sha256,
    )


def _table_frame(
    con: duckdb.DuckDBPyConnection, table: str, schema: pl.Schema, order: str
) -> pl.DataFrame:
    frame = pl.from_arrow(
        con.sql(f"SELECT {', '.join(schema)} FROM {table} ORDER BY {order}").to_arrow_table()
    )
    assert isinstance(frame, pl.DataFrame)
    return frame.cast(schema)


def _frame(rows: list[dict[str, Any]], schema: pl.Schema) -> pl.DataFrame:
    full = pl.Schema({LINE: pl.Int32(), **schema})
    return pl.DataFrame(rows, schema=full, orient="row")
