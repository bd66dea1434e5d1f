"""Reading one staging feed and validating it before anything touches the database.

Two paths, one verdict. The bulk path (``_Bulk``) hands blocks of lines to
DuckDB, which types them with ``from_json`` and checks them in set operations; it keeps a
line only if writing back what it read gives the line itself (both minified), so no key
was missing, extra or doubled and no value coerced, and if every value passes the checks
the columns need (money as decimal strings within the column's scale, UTC times, known
enum values, integer ranges, the run's provider and id). That is the form the spiders
write. Every other line (a quarantine line, a coerced value, a bad line) takes the exact
path: the pydantic contract (gpurent_core.model) line by line, then what the columns can hold
(DECIMAL scales, INTEGER range). SQL then checks the feed as a whole (values that did
not survive conversion, duplicate offer keys). Both paths write into temporary tables of
one DuckDB connection (``stage_feed``): the warehouse's own for a load, so the rows never
become Python or Polars objects (an offer keeps its fees and plans as typed lists, the way
current_offers stores them; the fee and plan rows are views over those lists);
``read_feed`` stages into a private one and returns
frames. A line that fails becomes a quarantine row with its reason: never dropped, never
fatal (rule of truth 6). The bulk path only accepts
what the exact path would accept, with the same values (tests/warehouse/
test_warehouse_load_bulk.py reads feeds both ways); anything it is unsure of goes the
exact way.
"""

from __future__ import annotations

import hashlib
import json
import logging
from array import array
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from enum import StrEnum
from itertools import accumulate
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pyarrow as pa
from pydantic import ValidationError

from gpurent_core.model import (
    BillingUnit,
    FeeBasis,
    FeeType,
    OfferRecord,
    PriceBasis,
    PriceKind,
    QuarantineRecord,
    StockStatus,
    parse_feed_line,
)

log = logging.getLogger(__name__)

# Column types; each money scale matches its DuckDB DECIMAL column (sql/0001_init.sql).
PRICE = pl.Decimal(18, 8)
FEE_AMOUNT = pl.Decimal(18, 10)
QUANTITY = pl.Decimal(18, 6)
UTC_TIME = pl.Datetime("us", "UTC")
_INT32_MAX = 2**31 - 1

OBSERVATION_SCHEMA = pl.Schema(
    {
        "run_id": pl.String(),
        "provider": pl.String(),
        "offer_key": pl.String(),
        "observed_at": UTC_TIME,
        "gpu_vendor": pl.String(),
        "gpu_model": pl.String(),
        "gpu_vram_gb": pl.Int32(),
        "gpu_form_factor": pl.String(),
        "gpu_count": pl.Int32(),
        "raw_gpu_name": pl.String(),
        "status": pl.String(),
        "available_count": pl.Int32(),
        "price": PRICE,
        "currency": pl.String(),
        "billing_unit": pl.String(),
        "price_basis": pl.String(),
        "price_kind": pl.String(),
        "region": pl.String(),
        "url": pl.String(),
    }
)
FEE_SCHEMA = pl.Schema(
    {
        "run_id": pl.String(),
        "provider": pl.String(),
        "offer_key": pl.String(),
        "seq": pl.Int32(),
        "fee_type": pl.String(),
        "amount": FEE_AMOUNT,
        "currency": pl.String(),
        "unit": pl.String(),
        "basis": pl.String(),
        "quantity": QUANTITY,
        "included_quantity": QUANTITY,
        "mandatory": pl.Boolean(),
        "charged_while_stopped": pl.Boolean(),
        "note": pl.String(),
    }
)
PLAN_SCHEMA = pl.Schema(
    {
        "run_id": pl.String(),
        "provider": pl.String(),
        "offer_key": pl.String(),
        "seq": pl.Int32(),
        "price": PRICE,
        "currency": pl.String(),
        "billing_unit": pl.String(),
        "price_basis": pl.String(),
        "price_kind": pl.String(),
    }
)
# run_id / provider are null when read_feed was not told which run the file belongs to.
QUARANTINE_SCHEMA = pl.Schema(
    {
        "run_id": pl.String(),
        "provider": pl.String(),
        "seq": pl.Int32(),
        "observed_at": UTC_TIME,
        "offer_key": pl.String(),
        "reason": pl.String(),
        "field": pl.String(),
        "raw": pl.String(),
    }
)

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
DUPLICATE_REASON = "duplicate offer_key in feed"
_LINE = "_line"
# An offer set aside by a feed-wide check: (line, reason, field, (offer_key, observed_at)).
_SetAside = tuple[int, str, str, tuple[str | None, datetime | None]]


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


class _Reject(Exception):
    """A record the contract accepts but the warehouse cannot store faithfully."""

    def __init__(self, reason: str, field: str | None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.field = field


def read_feed(
    path: Path | str, *, provider: str | None = None, run_id: str | None = None
) -> FeedBatch:
    """Read and validate the JSON Lines feed at ``path``.

    With ``provider``/``run_id`` given, offers that name another run are quarantined and
    quarantine rows carry those ids; without them, quarantine ids may be null.
    The file is read in blocks (its digest on the way), so memory follows the typed rows,
    not the text. The same validation as ``stage_feed``, in a private in-memory DuckDB.
    """
    con = duckdb.connect()  # without ICU, TIMESTAMPTZ is read and shown as UTC
    try:
        staged = stage_feed(con, path, provider=provider, run_id=run_id)
        frames = [
            _table_frame(con, table, schema, order)
            for table, schema, order in (
                (OFFERS_TABLE, OBSERVATION_SCHEMA, _LINE),
                (FEES_TABLE, FEE_SCHEMA, f"{_LINE}, seq"),
                (PLANS_TABLE, PLAN_SCHEMA, f"{_LINE}, seq"),
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


# The temporary tables a staged feed leaves in its connection (with a _line column). The
# offers table holds each offer's fees and plans as typed lists (structs with their seq),
# as current_offers stores them, so the load copies them instead of grouping rows back
# into lists; the fee and plan rows are views unnesting them (one row per fee or plan).
OFFERS_TABLE = "_gpurent_feed_offers"
FEES_TABLE = "_gpurent_feed_fees"
PLANS_TABLE = "_gpurent_feed_plans"
_TABLES = (
    (OFFERS_TABLE, OBSERVATION_SCHEMA, "observations"),
    (FEES_TABLE, FEE_SCHEMA, "addon_fees"),
    (PLANS_TABLE, PLAN_SCHEMA, "price_plans"),
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


def stage_feed(
    con: duckdb.DuckDBPyConnection,
    path: Path | str,
    *,
    provider: str | None = None,
    run_id: str | None = None,
) -> StagedFeed:
    """``read_feed`` into temporary tables of ``con``: the rows never leave DuckDB.

    Must be called outside an open transaction of ``con`` (it replaces the tables).
    """
    reader = _Reader(provider=provider, run_id=run_id)
    with _checks_above_parse(con):
        bulk, sha256 = _stage_bulk(con, path, reader, provider=provider, run_id=run_id)
    if reader.offers:
        _append_exact(
            con,
            [
                _frame(rows, schema)
                for (_, schema, _), rows in zip(
                    _TABLES, (reader.offers, reader.fees, reader.plans), strict=True
                )
            ],
        )
    set_aside = _validate_staged(con)
    texts = reader.texts | _texts_of(path, {s[0] for s in set_aside} - reader.texts.keys())
    for at, reason, field, (offer_key, observed_at) in set_aside:
        reader.reject(
            at, reason, texts[at], field=field, offer_key=offer_key, observed_at=observed_at
        )
    quarantine_frame = pl.DataFrame(reader.quarantine, schema=QUARANTINE_SCHEMA, orient="row")
    return _staged(
        con,
        quarantine_frame.sort("seq"),
        lines=bulk.lines + reader.lines,
        sha256=sha256,
    )


def _stage_bulk(
    con: duckdb.DuckDBPyConnection,
    path: Path | str,
    reader: _Reader,
    *,
    provider: str | None,
    run_id: str | None,
) -> tuple[_Bulk, str]:
    """The file in blocks through the bulk path (the rest to ``reader``), with its digest."""
    digest = hashlib.sha256()
    bulk = _Bulk(con, provider=provider, run_id=run_id)
    # The digest is taken in a thread while DuckDB types the block (hashlib lets go of
    # the GIL on large buffers), one block at a time, so at most two are held.
    hasher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gpurent-feed-sha256")
    hashed: Future[None] | None = None
    try:
        line = 0
        carry = b""
        with Path(path).open("rb") as handle:
            while True:
                block = handle.read(_BLOCK_BYTES)
                if hashed is not None:
                    hashed.result()
                hashed = hasher.submit(digest.update, block)
                data = carry + block
                # Cut after the last newline: a CR LF pair never straddles two parts, and
                # splitlines() numbers the lines as it does for the whole file.
                cut = data.rfind(b"\n") + 1 if block else len(data)
                part, carry = data[:cut], data[cut:]
                if part:
                    pieces = part.splitlines()
                    bulk.add(line + 1, pieces, reader)
                    line += len(pieces)
                if not block:
                    break
    finally:
        hasher.shutdown(wait=True)
    if hashed is not None:
        hashed.result()  # the digest is complete
    return bulk, digest.hexdigest()


@contextmanager
def _checks_above_parse(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """DuckDB's filter pushdown off while the bulk path runs, then as it was.

    Pushed below the parse, each check would carry its own copy of from_json and parse the
    line again (4.4 s instead of 0.44 s for 100k offers). The setting is the database's
    (GLOBAL): another connection to it in this process plans without the pushdown for
    that time, slower perhaps, never wrong.
    """
    row = con.execute("SELECT current_setting('disabled_optimizers')").fetchall()
    before = str(row[0][0]) if row and row[0][0] is not None else ""
    names = [n.strip() for n in before.split(",") if n.strip()]
    if "filter_pushdown" in names:
        yield
        return
    con.execute("SET disabled_optimizers = ?", [",".join([*names, "filter_pushdown"])])
    try:
        yield
    finally:
        try:
            con.execute("SET disabled_optimizers = ?", [before])
        except duckdb.Error as exc:  # a broken connection: the staging's own error matters
            log.debug("restoring disabled_optimizers after staging: %s", exc)


def stage_batch(con: duckdb.DuckDBPyConnection, batch: FeedBatch) -> StagedFeed:
    """A feed already read (``FeedBatch``) into the temporary tables ``stage_feed`` fills."""
    _create_staged(con)
    # Each offer gets its place in the batch as its line (the weave joins staged rows by
    # line), and its fees and plans the line of the first offer with their key.
    offers = batch.offers.with_row_index(_LINE, offset=1).with_columns(pl.col(_LINE).cast(pl.Int32))
    lines = offers.select(_LINE, "offer_key").unique("offer_key", keep="first")
    _append_exact(
        con,
        [
            frame.join(lines, on="offer_key", how="inner").select(_LINE, *schema)
            if frame is not offers
            else frame.select(_LINE, *schema)
            for (_, schema, _), frame in zip(
                _TABLES, (offers, batch.fees, batch.plans), strict=True
            )
        ],
    )
    return _staged(con, batch.quarantine, lines=batch.lines, sha256=batch.sha256)


def drop_staged(con: duckdb.DuckDBPyConnection) -> None:
    """Free the staged tables (outside a transaction)."""
    con.execute(f"DROP VIEW IF EXISTS {FEES_TABLE}")
    con.execute(f"DROP VIEW IF EXISTS {PLANS_TABLE}")
    con.execute(f"DROP TABLE IF EXISTS {OFFERS_TABLE}")


def _sql_type(dtype: pl.DataType) -> str:
    if isinstance(dtype, pl.Decimal):
        return f"DECIMAL({dtype.precision}, {dtype.scale})"
    if isinstance(dtype, pl.Datetime):
        return "TIMESTAMPTZ"
    return {pl.String: "VARCHAR", pl.Int32: "INTEGER", pl.Boolean: "BOOLEAN"}[type(dtype)]


# The list columns of the staged offers, typed as current_offers holds them.
FEE_ITEM_FIELDS = ("seq", *FEE_SCHEMA.names()[FEE_SCHEMA.names().index("fee_type") :])
PLAN_ITEM_FIELDS = ("seq", *PLAN_SCHEMA.names()[PLAN_SCHEMA.names().index("price") :])


def _struct_type(schema: pl.Schema, fields: tuple[str, ...]) -> str:
    return "STRUCT(" + ", ".join(f"{c} {_sql_type(schema[c])}" for c in fields) + ")"


FEE_LIST_TYPE = _struct_type(FEE_SCHEMA, FEE_ITEM_FIELDS) + "[]"
PLAN_LIST_TYPE = _struct_type(PLAN_SCHEMA, PLAN_ITEM_FIELDS) + "[]"


def _create_staged(con: duckdb.DuckDBPyConnection) -> None:
    """The empty offers table (with its lists) and the fee and plan views over it."""
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE {OFFERS_TABLE} ({_ddl(OBSERVATION_SCHEMA)},"
        f" fees {FEE_LIST_TYPE} NOT NULL, plans {PLAN_LIST_TYPE} NOT NULL)"
    )
    ids = f"{_LINE}, run_id, provider, offer_key"
    for view, column, fields in (
        (FEES_TABLE, "fees", FEE_ITEM_FIELDS),
        (PLANS_TABLE, "plans", PLAN_ITEM_FIELDS),
    ):
        con.execute(
            f"CREATE OR REPLACE TEMP VIEW {view} AS SELECT {ids},"
            f" {', '.join(f'item.{c} AS {c}' for c in fields)}"
            f" FROM (SELECT {ids}, unnest({column}) AS item FROM {OFFERS_TABLE})"
        )


def _append_exact(con: duckdb.DuckDBPyConnection, frames: list[pl.DataFrame]) -> None:
    """Flat offer, fee and plan rows (each with its line) into the offers table, the fees
    and plans of an offer as its lists, by seq; the offers keep the order they came in."""
    offers, fees, plans = frames
    keys = [_LINE, "offer_key"]  # a fee or plan belongs to the offer of its line and key
    for rows, fields, name in ((fees, FEE_ITEM_FIELDS, "fees"), (plans, PLAN_ITEM_FIELDS, "plans")):
        lists = rows.group_by(keys).agg(pl.struct(fields).sort_by("seq").alias(name))
        offers = offers.join(lists, on=keys, how="left", maintain_order="left")
    columns = ", ".join(offers.columns[:-2])
    view = f"{OFFERS_TABLE}_in"
    con.register(view, offers.to_arrow())
    try:
        # Polars hands the lists over as its own types; the table's are cast to by name.
        con.execute(
            f"INSERT INTO {OFFERS_TABLE} SELECT {columns},"
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


# Lines are read in blocks of about this many bytes; the bulk path types a block at a time.
_BLOCK_BYTES = 8 * 1024 * 1024
# Rows per Arrow batch of a block: DuckDB's threads take a block's batches one by one, so
# batches far smaller than a block keep both busy (8192 left one thread the last ~500 rows
# of an 8 MB block, and the checks ran ~25% slower).
_BATCH_ROWS = 1024


class _Reader:
    """The exact path: one line at a time through the pydantic contract."""

    def __init__(self, *, provider: str | None, run_id: str | None) -> None:
        self.provider = provider
        self.run_id = run_id
        self.quarantine: list[dict[str, Any]] = []
        self.offers: list[dict[str, Any]] = []
        self.fees: list[dict[str, Any]] = []
        self.plans: list[dict[str, Any]] = []
        self.texts: dict[int, str] = {}
        self.lines = 0

    def reject(self, line: int, reason: str, raw: str | None, **extra: Any) -> None:
        self.quarantine.append(
            {"run_id": self.run_id, "provider": self.provider, "seq": line}
            | {"reason": reason, "raw": raw}
            | extra
        )

    def read(self, line: int, raw_line: bytes) -> None:
        provider, run_id = self.provider, self.run_id
        if not raw_line.strip():
            return
        self.lines += 1
        try:
            text = raw_line.decode("utf-8")
        except UnicodeDecodeError:
            self.reject(line, "line is not UTF-8", raw_line.decode("utf-8", "replace"))
            return
        try:
            # parse_float=Decimal: a price written as a JSON number keeps its exact digits.
            decoded = json.loads(text, parse_float=Decimal, parse_constant=_no_constant)
        except ValueError as exc:
            self.reject(line, f"invalid JSON: {exc}", text)
            return
        if not isinstance(decoded, dict):
            self.reject(line, "line is not a JSON object", text)
            return
        hints = {
            "offer_key": _str_or_none(decoded.get("offer_key")),
            "observed_at": _time_or_none(decoded.get("observed_at")),
        }
        try:
            record = parse_feed_line(decoded)
        except ValidationError as exc:
            reason, field = _describe(exc)
            self.reject(line, reason, text, field=field, **hints)
            return
        if isinstance(record, QuarantineRecord):
            self.quarantine.append(_quarantine_row(record, line, provider=provider, run_id=run_id))
            return
        try:
            _check_run(record, provider=provider, run_id=run_id)
            row, fee_rows, plan_rows = _offer_rows(record, line)
        except _Reject as exc:
            self.reject(line, exc.reason, text, field=exc.field, **hints)
            return
        self.texts[line] = text
        self.offers.append(row)
        self.fees.extend(fee_rows)
        self.plans.extend(plan_rows)


def _texts_of(path: Path | str, lines: set[int]) -> dict[int, str]:
    """The text of a few lines (offers set aside by a feed-wide check), read again."""
    found: dict[int, str] = {}
    if not lines:
        return found
    line = 0
    carry = b""
    with Path(path).open("rb") as handle:
        while True:
            block = handle.read(_BLOCK_BYTES)
            data = carry + block
            cut = data.rfind(b"\n") + 1 if block else len(data)
            part, carry = data[:cut], data[cut:]
            for piece in part.splitlines():
                line += 1
                if line in lines:
                    found[line] = piece.decode("utf-8")
            if not block:
                return found


def _validate_staged(con: duckdb.DuckDBPyConnection) -> list[_SetAside]:
    """Feed-wide checks on the staged tables; removes the offers set aside and returns them."""
    # Belt and braces: a value that did not convert is a null in a NOT NULL column.
    # The per-record checks should make this impossible; if one slips, quarantine the offer.
    unstorable: dict[int, str] = {}
    for table, _, name in _TABLES:
        columns = _REQUIRED[name]
        first_null = " ".join(f"WHEN {c} IS NULL THEN '{name}.{c}'" for c in columns)
        any_null = " OR ".join(f"{c} IS NULL" for c in columns)
        rows = con.execute(
            f"SELECT {_LINE}, CASE {first_null} END FROM {table} WHERE {any_null} ORDER BY {_LINE}"
        ).fetchall()
        for line, column in rows:
            unstorable.setdefault(int(line), str(column))
    # One offer per key per run: keep the first line, quarantine the later ones.
    duplicates = [
        int(row[0])
        for row in con.execute(
            f"""
            SELECT {_LINE} FROM (
                SELECT {_LINE}, row_number() OVER (PARTITION BY offer_key ORDER BY {_LINE}) AS n
                FROM {OFFERS_TABLE} WHERE NOT list_contains($skip, {_LINE})
            ) WHERE n > 1 ORDER BY {_LINE}
            """,
            {"skip": list(unstorable)},
        ).fetchall()
    ]
    set_aside: list[_SetAside] = []
    if not unstorable and not duplicates:
        return set_aside
    dropped = [*unstorable, *duplicates]
    id_rows = con.execute(
        f"SELECT {_LINE}, offer_key, observed_at FROM {OFFERS_TABLE}"
        f" WHERE list_contains($lines, {_LINE})",
        {"lines": dropped},
    ).fetchall()
    ids = {int(line): (key, observed_at) for line, key, observed_at in id_rows}
    for line, column in sorted(unstorable.items()):
        reason = f"value does not fit column {column}"
        set_aside.append((line, reason, column.split(".")[1], ids.get(line, (None, None))))
    for line in duplicates:
        set_aside.append((line, DUPLICATE_REASON, "offer_key", ids[line]))
    # The fee and plan rows are views of the offers: they go with them.
    con.execute(
        f"DELETE FROM {OFFERS_TABLE} WHERE list_contains($lines, {_LINE})", {"lines": dropped}
    )
    return set_aside


def _frame(rows: list[dict[str, Any]], schema: pl.Schema) -> pl.DataFrame:
    full = pl.Schema({_LINE: pl.Int32(), **schema})
    return pl.DataFrame(rows, schema=full, orient="row")


def _check_run(record: OfferRecord, *, provider: str | None, run_id: str | None) -> None:
    if provider is not None and record.provider != provider:
        raise _Reject(f"offer of provider {record.provider!r} in a {provider!r} feed", "provider")
    if run_id is not None and record.run_id != run_id:
        raise _Reject(f"offer of run {record.run_id!r} in the feed of run {run_id!r}", "run_id")


def _offer_rows(
    record: OfferRecord, line: int
) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    ids = {"run_id": record.run_id, "provider": record.provider, "offer_key": record.offer_key}
    row = {
        _LINE: line,
        **ids,
        "observed_at": record.observed_at,
        "gpu_vendor": record.gpu_vendor,
        "gpu_model": record.gpu_model,
        "gpu_vram_gb": _fit_int(record.gpu_vram_gb, "gpu_vram_gb", minimum=0),
        "gpu_form_factor": record.gpu_form_factor,
        "gpu_count": _fit_int(record.gpu_count, "gpu_count", minimum=1),
        "raw_gpu_name": record.raw_gpu_name,
        "status": record.status.value,
        "available_count": _fit_int(record.available_count, "available_count", minimum=0),
        "price": _fit(record.price, PRICE, "price"),
        "currency": record.currency,
        "billing_unit": record.billing_unit.value,
        "price_basis": record.price_basis.value,
        "price_kind": record.price_kind.value,
        "region": record.region,
        "url": record.url,
    }
    fee_rows = [
        {
            _LINE: line,
            **ids,
            "seq": seq,
            "fee_type": fee.fee_type.value,
            "amount": _fit(fee.amount, FEE_AMOUNT, f"fees.{seq}.amount"),
            "currency": fee.currency,
            "unit": fee.unit.value if fee.unit is not None else None,
            "basis": fee.basis.value,
            "quantity": _fit(fee.quantity, QUANTITY, f"fees.{seq}.quantity"),
            "included_quantity": _fit(
                fee.included_quantity, QUANTITY, f"fees.{seq}.included_quantity"
            ),
            "mandatory": fee.mandatory,
            "charged_while_stopped": fee.charged_while_stopped,
            "note": fee.note,
        }
        for seq, fee in enumerate(record.fees)
    ]
    plan_rows = [
        {
            _LINE: line,
            **ids,
            "seq": seq,
            "price": _fit(plan.price, PRICE, f"plans.{seq}.price"),
            "currency": plan.currency,
            "billing_unit": plan.billing_unit.value,
            "price_basis": plan.price_basis.value,
            "price_kind": plan.price_kind.value,
        }
        for seq, plan in enumerate(record.plans)
    ]
    return row, fee_rows, plan_rows


def _fit(value: Decimal | None, dtype: pl.Decimal, field: str) -> Decimal | None:
    """Round half-even to the column's scale; reject negative, non-finite or too-large values.

    Money in the warehouse is never negative: the contract forbids a negative price, and a
    negative plan price or fee amount is as untrustworthy.
    """
    if value is None:
        return None
    precision = dtype.precision or 38
    scale = dtype.scale
    if not value.is_finite():
        raise _Reject(f"{field} is not a finite number", field)
    if value < 0:
        raise _Reject(f"{field} is negative ({value})", field)
    limit = Decimal(10) ** (precision - scale)
    try:
        fitted = value.quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_EVEN)
    except InvalidOperation:
        fitted = limit  # too many digits to quantize: certainly out of range
    if fitted >= limit:
        raise _Reject(f"{field} {value} is out of range for DECIMAL({precision},{scale})", field)
    return fitted


def _fit_int(value: int | None, field: str, *, minimum: int) -> int | None:
    if value is None:
        return None
    if not minimum <= value <= _INT32_MAX:
        raise _Reject(f"{field} {value} is out of range [{minimum}, {_INT32_MAX}]", field)
    return value


def _quarantine_row(
    record: QuarantineRecord, line: int, *, provider: str | None, run_id: str | None
) -> dict[str, Any]:
    raw = record.raw
    return {
        "run_id": run_id if run_id is not None else record.run_id,
        "provider": provider if provider is not None else record.provider,
        "seq": line,
        "observed_at": record.observed_at,
        "offer_key": record.offer_key,
        "reason": record.reason,
        "field": record.field,
        # Decimals decoded from the feed go back out as strings; no float on the way.
        "raw": json.dumps(raw, ensure_ascii=False, default=str) if isinstance(raw, dict) else raw,
    }


def _describe(exc: ValidationError) -> tuple[str, str | None]:
    """A one-line reason naming the failing fields, and the first field's dotted path."""
    errors = exc.errors(include_url=False)
    paths = [".".join(str(part) for part in error["loc"]) for error in errors]
    parts = [
        f"{path or '<record>'}: {error['msg']}" for path, error in zip(paths, errors, strict=True)
    ]
    reason = "invalid record: " + "; ".join(parts[:3])
    if len(parts) > 3:
        reason += f" (+{len(parts) - 3} more)"
    return reason, (paths[0] or None) if paths else None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _time_or_none(value: Any) -> datetime | None:
    """observed_at of a rejected line when it is readable, so the quarantine row is dated."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed.astimezone(UTC) if parsed.tzinfo is not None else None


# -- the bulk path -------------------------------------------------------------------

# The offer line's keys in the model's order, each with the type from_json reads it as.
# The bulk path takes a line only if writing back what it read gives the line itself
# (both minified): then no key is missing, extra or doubled, and no value was coerced
# (a count written "2", a price written as a number, a flag written "true").
_OFFER_FIELDS = (
    "kind", "provider", "offer_key", "run_id", "observed_at", "gpu_vendor", "gpu_model",
    "gpu_vram_gb", "gpu_form_factor", "gpu_count", "raw_gpu_name", "status",
    "available_count", "price", "currency", "billing_unit", "price_basis", "price_kind",
    "region", "url",
)  # fmt: skip
_INTEGERS = {"gpu_vram_gb", "gpu_count", "available_count"}
_FEE_FIELDS = (
    "fee_type", "amount", "currency", "unit", "basis", "quantity", "included_quantity",
    "mandatory", "charged_while_stopped", "note",
)  # fmt: skip
_BOOLEANS = {"mandatory", "charged_while_stopped"}
_PLAN_FIELDS = ("price", "currency", "billing_unit", "price_basis", "price_kind")


def _money(dtype: pl.Decimal) -> str:
    # Digits that fit without rounding: one integer digit short of the limit, no more
    # decimals than the scale (rounding half-even to the scale is the exact path's).
    precision = dtype.precision or 38
    return f"'[0-9]{{1,{precision - dtype.scale - 1}}}(\\.[0-9]{{1,{dtype.scale}}})?'"


def _one_of(enum: type[StrEnum]) -> str:
    return "(" + ", ".join(f"'{member.value}'" for member in enum) + ")"


def _ddl(schema: pl.Schema) -> str:
    return ", ".join([f"{_LINE} INTEGER", *(f"{n} {_sql_type(t)}" for n, t in schema.items())])


_JSON_FEE = json.dumps({k: "BOOLEAN" if k in _BOOLEANS else "VARCHAR" for k in _FEE_FIELDS})
_JSON_PLAN = json.dumps(dict.fromkeys(_PLAN_FIELDS, "VARCHAR"))
_JSON_OFFER = json.dumps(
    {k: "BIGINT" if k in _INTEGERS else "VARCHAR" for k in _OFFER_FIELDS}
    | {"fees": [json.loads(_JSON_FEE)], "plans": [json.loads(_JSON_PLAN)]}
)
_TIME_RE = (
    "'[1-9][0-9]{3}-[0-9]{2}-[0-9]{2}T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]"
    "(\\.[0-9]{1,6})?(Z|\\+00:00)'"
)
_QTY = _money(QUANTITY)
_FEE_OK = f"""f IS NOT NULL AND f.fee_type IN {_one_of(FeeType)}
    AND regexp_full_match(f.amount, {_money(FEE_AMOUNT)})
    AND regexp_full_match(f.currency, '[A-Z]{{3}}')
    AND (f.unit IS NULL OR f.unit IN {_one_of(BillingUnit)}) AND f.basis IN {_one_of(FeeBasis)}
    AND (f.quantity IS NULL OR regexp_full_match(f.quantity, {_QTY}))
    AND (f.included_quantity IS NULL OR regexp_full_match(f.included_quantity, {_QTY}))
    AND f.mandatory IS NOT NULL AND f.charged_while_stopped IS NOT NULL"""
_PLAN_OK = f"""p IS NOT NULL AND regexp_full_match(p.price, {_money(PRICE)})
    AND regexp_full_match(p.currency, '[A-Z]{{3}}')
    AND p.billing_unit IN {_one_of(BillingUnit)} AND p.price_basis IN {_one_of(PriceBasis)}
    AND p.price_kind IN {_one_of(PriceKind)}"""
_RECORD_OK = f"""r.kind = 'offer'
    AND r.provider IS NOT NULL AND r.offer_key IS NOT NULL AND r.run_id IS NOT NULL
    AND r.gpu_vendor IS NOT NULL AND r.gpu_model IS NOT NULL AND r.raw_gpu_name IS NOT NULL
    AND ($provider IS NULL OR r.provider = $provider) AND ($run_id IS NULL OR r.run_id = $run_id)
    AND regexp_full_match(r.observed_at, {_TIME_RE})
    AND try_cast(r.observed_at AS TIMESTAMPTZ) IS NOT NULL
    AND (r.gpu_vram_gb IS NULL OR r.gpu_vram_gb BETWEEN 1 AND {_INT32_MAX})
    AND r.gpu_count BETWEEN 1 AND {_INT32_MAX}
    AND (r.available_count IS NULL OR r.available_count BETWEEN 0 AND {_INT32_MAX})
    AND r.status IN {_one_of(StockStatus)} AND regexp_full_match(r.price, {_money(PRICE)})
    AND regexp_full_match(r.currency, '[A-Z]{{3}}') AND r.billing_unit IN {_one_of(BillingUnit)}
    AND r.price_basis IN {_one_of(PriceBasis)} AND r.price_kind IN {_one_of(PriceKind)}
    AND r.fees IS NOT NULL AND r.plans IS NOT NULL
    AND coalesce(list_bool_and(list_transform(r.fees, lambda f: {_FEE_OK})), true)
    AND coalesce(list_bool_and(list_transform(r.plans, lambda p: {_PLAN_OK})), true)"""
# Writing back what was read gives the line itself (both minified). The fast reading
# compares with the line as written first: the spiders write it minified.
_OFFER_OK = f"tidy = to_json(r) AND {_RECORD_OK}"
_OFFER_OK_FAST = f"(text = to_json(r) OR json(text) = to_json(r)) AND {_RECORD_OK}"


class _Bulk:
    """The bulk path: blocks of lines typed by DuckDB in set operations, into the staged
    tables of ``con`` (replaced)."""

    def __init__(
        self, con: duckdb.DuckDBPyConnection, *, provider: str | None, run_id: str | None
    ) -> None:
        self.params = {"provider": provider, "run_id": run_id}
        self.lines = 0
        self.con = con
        _create_staged(con)

    def add(self, first: int, pieces: list[bytes], reader: _Reader) -> None:
        """Type lines ``first``.. (``pieces``); hand the rest to the exact ``reader``."""
        texts = _text_array(pieces)
        if texts is None:  # a line that is not UTF-8: this block goes line by line
            for offset, piece in enumerate(pieces):
                reader.read(first + offset, piece)
            return
        con = self.con
        # Several batches, so DuckDB's threads share the block.
        block = pa.table({"line": _line_numbers(first, len(pieces)), "text": texts})
        con.register(_BLOCK, pa.Table.from_batches(block.to_batches(_BATCH_ROWS)))
        try:
            # Parsed, checked and typed in one statement (stage_feed keeps DuckDB from
            # pushing the checks into the parse, which would parse a line again for each
            # use of r). Lines as the spiders write them parse at once; a block with a line
            # that is not a JSON object fails to parse and is taken again with guards (the
            # failed statement inserted nothing).
            try:
                self._keep(first, len(pieces), _PARSED_FAST, _OFFER_OK_FAST, reader)
            except duckdb.Error:
                self._keep(first, len(pieces), _PARSED_GUARDED, _OFFER_OK, reader)
        finally:
            con.unregister(_BLOCK)

    def _keep(self, first: int, count: int, parsed: str, offer_ok: str, reader: _Reader) -> None:
        """Stage the lines of the block that ``parsed`` reads and that pass ``offer_ok``,
        typed; the rest go the exact way."""
        con = self.con
        # try_cast: the rows kept passed every check, but DuckDB may cast before it
        # filters; a value that still failed would be a null, caught by _validate_staged.
        # Rows go in unordered: readers order by line number.
        ids = "r.run_id, r.provider, r.offer_key"
        # The lists keep their order; seq is the position in the line's list.
        fees = f"""list_transform(r.fees, lambda f, i: {{
            'seq': (i - 1)::INTEGER, 'fee_type': f.fee_type,
            'amount': try_cast(f.amount AS {_sql_type(FEE_AMOUNT)}), 'currency': f.currency,
            'unit': f.unit, 'basis': f.basis,
            'quantity': try_cast(f.quantity AS {_sql_type(QUANTITY)}),
            'included_quantity': try_cast(f.included_quantity AS {_sql_type(QUANTITY)}),
            'mandatory': f.mandatory, 'charged_while_stopped': f.charged_while_stopped,
            'note': f.note}})"""
        plans = f"""list_transform(r.plans, lambda p, i: {{
            'seq': (i - 1)::INTEGER, 'price': try_cast(p.price AS {_sql_type(PRICE)}),
            'currency': p.currency, 'billing_unit': p.billing_unit,
            'price_basis': p.price_basis, 'price_kind': p.price_kind}})"""
        # Checked and typed in one pass over the parsed block. A bare WHERE (a null is not
        # true): wrapped in a function, the conjunction would be evaluated whole for every
        # row; bare, each check runs on the rows still in.
        inserted = con.execute(
            f"""
            INSERT INTO {OFFERS_TABLE} SELECT line, {ids},
                try_cast(r.observed_at AS TIMESTAMPTZ), r.gpu_vendor,
                r.gpu_model, try_cast(r.gpu_vram_gb AS INTEGER), r.gpu_form_factor,
                try_cast(r.gpu_count AS INTEGER), r.raw_gpu_name, r.status,
                try_cast(r.available_count AS INTEGER), try_cast(r.price AS {_sql_type(PRICE)}),
                r.currency, r.billing_unit, r.price_basis, r.price_kind, r.region, r.url,
                {fees}, {plans}
            FROM ({parsed}) AS p WHERE {offer_ok}
            """,
            self.params,
        ).fetchall()
        self.lines += int(inserted[0][0]) if inserted else 0
        # The lines not kept go the exact way; the block's lines are first..last, so the
        # zone maps of the staged offers find the ones kept.
        rest = con.execute(
            f"""
            SELECT line, text FROM ({parsed}) AS p WHERE line NOT IN (
                SELECT {_LINE} FROM {OFFERS_TABLE} WHERE {_LINE} BETWEEN $first AND $last
            ) ORDER BY line
            """,
            {"first": first, "last": first + count - 1},
        ).fetchall()
        for line, text in rest:
            reader.read(line, text.encode("utf-8"))


_BLOCK = "_gpurent_feed_block"
# A block's lines parsed: at once (the spiders' lines), or guarded when a line of the block
# is not a JSON object (blank lines left out; tidy is the line minified, for _OFFER_OK).
_PARSED_FAST = f"SELECT line, text, from_json(text, '{_JSON_OFFER}') AS r FROM {_BLOCK}"
_PARSED_GUARDED = f"""
SELECT line, text, from_json(object, '{_JSON_OFFER}') AS r, json(object) AS tidy
FROM (
    SELECT line, text,
        CASE WHEN json_valid(text) AND json_type(text) = 'OBJECT' THEN text END AS object
    FROM {_BLOCK}
    WHERE trim(text, ' \t\n\r' || chr(11) || chr(12)) <> ''
)
"""


def _text_array(pieces: list[bytes]) -> pa.Array | None:
    """The lines as one Arrow string array over a copy of their bytes (no Python object per
    line); None if a line is not UTF-8."""
    data = b"".join(pieces)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    offsets = array("q", accumulate(map(len, pieces), initial=0))
    return pa.Array.from_buffers(
        pa.large_string(), len(pieces), [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )


def _line_numbers(first: int, count: int) -> pa.Array:
    numbers = array("i", range(first, first + count))
    return pa.Array.from_buffers(pa.int32(), count, [None, pa.py_buffer(numbers)])


def _count(con: duckdb.DuckDBPyConnection, sql: str) -> int:
    rows = con.execute(sql).fetchall()
    return int(rows[0][0]) if rows else 0
