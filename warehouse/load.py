"""Loading one provider run into the warehouse: all of it in one transaction, or nothing.

Rules of truth 2, 5 and 6: a run's ``crawl_runs`` row and its rows commit together (a crash
mid-load leaves the database as it was); loading a run already stored changes nothing
(skip: the first load wins); only ok / partial / auth_required runs with offers change the
offer history (warehouse.history: versions, not one row per offer per poll); a run closes
what it no longer lists except what it could not read (warehouse.unread): those offers stay
in the latest state, marked stale (rule 10); bad input lands in ``quarantine`` whatever the
status.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import duckdb
import polars as pl

from gpurent_core.model import ProviderRun, RunStatus
from warehouse.db import fetch_one
from warehouse.feed import FeedBatch, Staged, drop_staged, read_feed, read_into
from warehouse.history import (
    WeaveResult,
    advance_current_run,
    drop_weave_tables,
    place_run,
    record_unread_scope,
    weave_in_order,
)
from warehouse.history_late import drop_late_tables, weave_late
from warehouse.lake import take_write_lease
from warehouse.unread import Unread

__all__ = ["LOADING_STATUSES", "FeedBatch", "LoadResult", "load_batch", "load_run", "read_feed"]

log = logging.getLogger(__name__)

# Statuses whose rows feed the latest state (rule of truth 2).
LOADING_STATUSES = frozenset({RunStatus.OK, RunStatus.PARTIAL, RunStatus.AUTH_REQUIRED})


@dataclass(frozen=True)
class LoadResult:
    """What the warehouse holds for the run after ``load_run``.

    ``offers``/``fees``/``plans``/``quarantined`` count the rows stored for the run (on a
    skipped duplicate: the rows the first load stored, and its status). ``ignored_offers``
    counts valid offers in the feed of a run whose status does not feed the latest state (failed,
    layout_changed), which this call set aside (0 on a skip).
    """

    run_id: str
    provider: str
    status: RunStatus
    offers: int
    fees: int
    plans: int
    quarantined: int
    ignored_offers: int = 0
    skipped_duplicate_run: bool = False
    gone: int = 0
    """Offers closed because the run read their source and no longer lists them."""
    kept_stale: int = 0
    """Offers the run did not list and could not read: kept in their last state, stale."""
    sold_out: int = 0
    """Offers turned sold out: no longer listed where the provider lists only capacity."""


def load_run(
    con: duckdb.DuckDBPyConnection, run: ProviderRun, feed_path: Path | None
) -> LoadResult:
    """Store ``run`` and, if its status allows, the offers of its feed; idempotent.

    The feed is staged first (warehouse.feed.read_into: read, validated and hashed into a
    temporary table of the connection), then the run is stored and woven into the history
    in one transaction (warehouse.history for the newest run, warehouse.history_late for
    one that arrives late). Must be called outside an open transaction: it owns BEGIN /
    COMMIT and rolls back on any error, re-raising it.
    """
    return _load(con, run, FeedBatch.empty() if feed_path is None else Path(feed_path))


def load_batch(con: duckdb.DuckDBPyConnection, run: ProviderRun, batch: FeedBatch) -> LoadResult:
    """``load_run`` for a feed already read and validated (benchmarks, generated history)."""
    return _load(con, run, batch)


def _load(con: duckdb.DuckDBPyConnection, run: ProviderRun, feed: Path | FeedBatch) -> LoadResult:
    with _load_memory(con):
        try:
            return _load_once(con, run, feed)
        finally:
            _drop_temporaries(con)


def _load_once(
    con: duckdb.DuckDBPyConnection, run: ProviderRun, feed: Path | FeedBatch
) -> LoadResult:
    stored = _stored_counts(con, run)
    if stored is None:
        # Staged before the transaction, which writes the database: a temporary table
        # filled inside a transaction stays in memory until it ends; filled outside, it
        # spills to disk past the memory limit.
        staged = read_into(con, feed, provider=run.provider, run_id=run.run_id)
        con.execute("BEGIN TRANSACTION")
        try:
            # On a lake the check below reads a snapshot: the lease makes a load committing
            # beside this one conflict with it, and the retry then sees its run.
            take_write_lease(con)
            stored = _stored_counts(con, run)  # (by another connection meanwhile)
            if stored is None:
                result = _store(con, run, staged)
                con.execute("COMMIT")
                return result
            con.execute("ROLLBACK")
        except BaseException:
            _rollback(con)
            raise
    # Stored already: nothing written, the first load of this run wins.
    return _skipped(con, run, _sha256(feed), stored)


def _store(con: duckdb.DuckDBPyConnection, run: ProviderRun, staged: Staged) -> LoadResult:
    """The run and what it changes, from its staged feed (inside the transaction)."""
    feeds = run.status in LOADING_STATUSES
    place = place_run(con, run.provider, run.started_at) if feeds else None
    late = place is not None and place.next_position is not None
    quarantine = _for_run(staged.quarantine, run)
    # Only a run with offers changes the state: zero offers is a layout problem (rule 3).
    # But a listing read whole that holds only skipped items, or says only where nothing
    # has capacity, is no layout problem (rule 9): it closes what it no longer lists like
    # any other, and turns sold out what it lists only with capacity.
    whole = not late and run.status is RunStatus.OK and bool(run.skipped or run.sold_out_unlisted)
    woven = place is not None and (staged.offers > 0 or whole)
    weave = WeaveResult(0, 0, 0)
    if woven and place is not None:
        # Rule 10: what the run could not read stays, stale, with its age.
        Unread.of_run(run).stage(con, quarantine.get_column("offer_key"))
        # Kept with the run: a run loaded later but placed before this one must see what
        # this one could not read (warehouse.history_late).
        record_unread_scope(con, run.provider, run.run_id)
        if place.next_position is not None:
            weave_late(
                con,
                provider=run.provider,
                position=place.position,
                next_position=place.next_position,
                observed_at=staged.observed_at,
            )
        else:
            weave = weave_in_order(con, provider=run.provider, position=place.position)
            advance_current_run(
                con,
                provider=run.provider,
                run_id=run.run_id,
                started_at=run.started_at,
                finished_at=run.finished_at,
                observed_at=staged.observed_at or run.started_at,
                position=place.position,
            )
    offers = staged.offers if feeds else 0  # a run that does not feed the state stores none
    run = _with_load_quarantine(run, quarantine.height)
    _record_run(
        con,
        run,
        offers=offers,
        quarantined=quarantine.height,
        sha256=staged.sha256,
        position=place.position if woven and place is not None else None,
        observed_at=staged.observed_at if feeds else None,
        message=_with_closures(run.message, weave, quarantine),
    )
    _insert_frame(con, "quarantine", quarantine)
    return LoadResult(
        run_id=run.run_id,
        provider=run.provider,
        status=run.status,
        offers=offers,
        fees=staged.fees if feeds else 0,
        plans=staged.plans if feeds else 0,
        quarantined=quarantine.height,
        ignored_offers=staged.offers - offers,
        gone=weave.gone,
        kept_stale=weave.kept,
        sold_out=weave.sold_out,
    )


def _with_load_quarantine(run: ProviderRun, quarantined: int) -> ProviderRun:
    """``run``, partial where the load set aside lines its crawl did not (a duplicate key, a
    line that is no offer): an ``ok`` run read every offer (rule of truth 9), and one whose
    input was set aside did not. The message says how many, beside the crawl's count."""
    extra = quarantined - run.quarantined
    if run.status is not RunStatus.OK or extra <= 0:
        return run
    note = f"{extra} set aside while loading (`gpurent quarantine`)"
    message = f"{run.message}; {note}" if run.message else note
    return run.model_copy(update={"status": RunStatus.PARTIAL, "message": message})


def _with_closures(message: str | None, weave: WeaveResult, quarantine: pl.DataFrame) -> str | None:
    """The run's message with what its absences did: offers closed as no longer listed
    (and how many unreadable items had no key to keep their offer by), offers turned sold
    out, offers kept stale because the run could not read them."""
    notes = []
    if weave.gone:
        nameless = quarantine.get_column("offer_key").null_count()
        why = f" ({nameless} unreadable item(s) without a key among them)" if nameless else ""
        notes.append(f"{weave.gone} no longer listed, closed{why}")
    if weave.sold_out:
        notes.append(f"{weave.sold_out} no longer listed where only capacity is, sold out")
    if weave.kept:
        notes.append(f"{weave.kept} not read, kept stale")
    if not notes:
        return message
    return "; ".join([message, *notes] if message else notes)


def _sha256(feed: Path | FeedBatch) -> str | None:
    if isinstance(feed, FeedBatch):
        return feed.sha256
    with feed.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _for_run(quarantine: pl.DataFrame, run: ProviderRun) -> pl.DataFrame:
    # Quarantine rows belong to this run whatever the spider wrote in them.
    return quarantine.with_columns(
        run_id=pl.lit(run.run_id, pl.String), provider=pl.lit(run.provider, pl.String)
    )


def _record_run(
    con: duckdb.DuckDBPyConnection,
    run: ProviderRun,
    *,
    offers: int,
    quarantined: int,
    sha256: str | None,
    position: datetime | None = None,
    observed_at: datetime | None = None,
    message: str | None = None,
) -> None:
    con.execute(
        """
        INSERT INTO crawl_runs (
            run_id, provider, started_at, finished_at, duration_s, status, offers,
            quarantined, http_errors, message, reported_offers, reported_quarantined,
            feed_sha256, history_at, observed_at, skipped
        ) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """,
        [
            run.run_id,
            run.provider,
            run.started_at,
            run.finished_at,
            run.duration_s,
            run.status.value,
            offers,
            quarantined,
            run.http_errors,
            message if message is not None else run.message,
            run.offers,
            run.quarantined,
            sha256,
            position,
            observed_at,
            json.dumps(dict(run.skipped), sort_keys=True) if run.skipped else None,
        ],
    )


# DuckDB's memory during a load: the staged feed and the weave's tables spill to DuckDB's
# temporary directory beyond this, so a large feed does not hold the process's memory.
# Measured on a million-offer feed (python -m benchmarks.load_child), whose staged table
# is ~650 MB: 500 MB peaked at ~980 MiB RSS, 300 MB at ~690 MiB and was no slower; the
# Python side and DuckDB's allocations outside its buffer pool come on top of the limit.
LOAD_MEMORY_LIMIT = "300MB"
_UNITS = {
    "b": 1, "bytes": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
    "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
}  # fmt: skip


@contextmanager
def _load_memory(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """Lower the database's ``memory_limit`` to LOAD_MEMORY_LIMIT for the load (never raise
    it), and give back the limit it had."""
    before = _setting(con, "memory_limit")
    if _bytes(before) <= _bytes(LOAD_MEMORY_LIMIT):
        yield
        return
    con.execute(f"SET memory_limit = '{LOAD_MEMORY_LIMIT}'")
    try:
        yield
    finally:
        try:
            # The default comes back exactly with RESET; a limit someone set, as shown.
            con.execute("RESET memory_limit")
            if _setting(con, "memory_limit") != before:
                con.execute(f"SET memory_limit = '{before}'")
        except duckdb.Error as exc:  # a broken connection: the load's own error matters
            log.debug("restoring memory_limit after a load: %s", exc)


def _setting(con: duckdb.DuckDBPyConnection, name: str) -> str:
    row = fetch_one(con, "SELECT current_setting(?)", [name])
    return str(row[0]) if row else ""


def _bytes(size: str) -> float:
    """A DuckDB size (``'18.8 GiB'``, ``'600MB'``) in bytes; unreadable: unlimited."""
    number = size.strip().rstrip("BbIiKkMmGgTtYyEeSs ").strip()
    unit = size.strip()[len(number) :].strip().lower() or "b"
    try:
        return float(number) * _UNITS[unit]
    except (ValueError, KeyError):
        return float("inf")


def _drop_temporaries(con: duckdb.DuckDBPyConnection) -> None:
    """The staged feed and the weave's tables go once the load is over: memory back."""
    try:
        drop_staged(con)
        drop_weave_tables(con)
        drop_late_tables(con)
    except duckdb.Error as exc:  # a broken connection: the error that broke it matters
        log.debug("dropping the load's temporary tables: %s", exc)


def _rollback(con: duckdb.DuckDBPyConnection) -> None:
    # A failed ROLLBACK must not hide the error that caused it.
    try:
        con.execute("ROLLBACK")
    except duckdb.Error as exc:  # e.g. a failed COMMIT already ended the transaction
        log.debug("rollback after a failed load: %s", exc)


def _insert_frame(con: duckdb.DuckDBPyConnection, table: str, frame: pl.DataFrame) -> int:
    """Append ``frame`` to ``table`` through Arrow; column names match the table's."""
    if frame.is_empty():
        return 0
    view = f"_gpurent_load_{table}"
    columns = ", ".join(frame.columns)
    con.register(view, frame.to_arrow())
    try:
        con.execute(f"INSERT INTO {table} ({columns}) SELECT {columns} FROM {view}")
    finally:
        con.unregister(view)
    return frame.height


@dataclass(frozen=True)
class _Stored:
    status: RunStatus
    offers: int
    quarantined: int
    feed_sha256: str | None


def _stored_counts(con: duckdb.DuckDBPyConnection, run: ProviderRun) -> _Stored | None:
    row = fetch_one(
        con,
        "SELECT status, offers, quarantined, feed_sha256 FROM crawl_runs"
        " WHERE run_id = ? AND provider = ?",
        [run.run_id, run.provider],
    )
    if row is None:
        return None
    return _Stored(RunStatus(row[0]), int(row[1]), int(row[2]), row[3])


def _skipped(
    con: duckdb.DuckDBPyConnection,
    run: ProviderRun,
    sha256: str | None,
    stored: _Stored,
) -> LoadResult:
    if sha256 is not None and stored.feed_sha256 != sha256:
        log.warning(
            "run %s of %s is already loaded from a different feed; keeping the first load",
            run.run_id,
            run.provider,
        )
    params = [run.run_id, run.provider]
    fees = fetch_one(
        con, "SELECT count(*) FROM addon_fees WHERE run_id = ? AND provider = ?", params
    )
    plans = fetch_one(
        con, "SELECT count(*) FROM price_plans WHERE run_id = ? AND provider = ?", params
    )
    return LoadResult(
        run_id=run.run_id,
        provider=run.provider,
        status=stored.status,
        offers=stored.offers,
        fees=int(fees[0]) if fees else 0,
        plans=int(plans[0]) if plans else 0,
        quarantined=stored.quarantined,
        skipped_duplicate_run=True,
    )
