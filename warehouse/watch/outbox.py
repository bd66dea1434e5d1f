"""The outbox: notifications waiting to be sent, sent once, retried with backoff, never lost.

Rows are written by ``evaluate`` in the transaction that changes the alert state, one per
destination URL, with an idempotency key naming the transition, so re-evaluating a run
cannot queue the same alert twice.

Delivery marks a row ``sent`` only after the sender returned; a failure keeps it
``pending`` with ``attempts``, ``last_error`` and ``next_attempt_at`` (exponential backoff,
capped), and later polls (or ``gpurent watch deliver``) try again, forever: a notification
is never dropped for having failed. The one window this cannot close: a process that dies
after the destination accepted the message and before the ``sent`` mark commits will send
it again on the next delivery (at-least-once; no transport here can take an idempotency
key). The window is one local UPDATE long.

Two deliverers at once (a poll and `gpurent watch deliver`; on a lake, two machines) send a
row once: each first claims it, in a transaction of its own holding the write lease, by
setting its ``claimed_until`` (``CLAIM_HOLD`` ahead) where it is still as read. A deliverer
that read the row before the other's claim committed is refused (the lake's commit
conflict) or finds it changed (a DuckDB file's writers take turns), and leaves the row to
the one that claimed it; a row under a live claim is not due, even to ``--all``. Marking how
the send ended clears the claim. A deliverer that dies after its claim leaves the row
pending: the claim lapses after ``CLAIM_HOLD`` and the next delivery sends it (still at
least once).
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import duckdb
import polars as pl

from warehouse.lake import WRITE_TRIES, is_read_conflict, is_write_conflict, leased_transaction
from warehouse.queries import frame

Sender = Callable[[str, str, str], None]
"""``send(url, title, body)``: returns when delivered, raises when not."""

LAST_ERROR_MAX = 500
CLAIM_HOLD = timedelta(minutes=15)
"""How long a claim keeps other deliveries off a row: far longer than a send (apprise's own
timeouts are seconds), short enough that a crashed deliverer's row is soon sent by the next
poll."""


@dataclass(frozen=True)
class Backoff:
    """Wait ``base_s * factor ** (failures - 1)`` after a failure, at most ``cap_s``."""

    base_s: float = 30.0
    factor: float = 2.0
    cap_s: float = 3600.0

    def __post_init__(self) -> None:
        if self.base_s < 0 or self.factor < 1 or self.cap_s < self.base_s:
            raise ValueError(f"bad backoff {self}")

    def delay(self, failures: int) -> timedelta:
        if failures < 1:
            return timedelta(0)
        # Exponent capped before computing, so a row failing for weeks cannot overflow.
        seconds = self.base_s * self.factor ** min(failures - 1, 64)
        return timedelta(seconds=min(seconds, self.cap_s))


@dataclass(frozen=True)
class Notification:
    """One outbox row to write."""

    idempotency_key: str
    target_seq: int
    watch_id: int
    kind: str
    provider: str
    offer_key: str
    run_id: str
    title: str
    body: str
    status: str = "pending"


@dataclass
class DeliveryReport:
    """What one delivery pass did."""

    sent: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    cancelled: list[int] = field(default_factory=list)
    claimed_elsewhere: list[int] = field(default_factory=list)
    """Rows another delivery running at the same time claimed first (it sends them)."""
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "sent": len(self.sent),
            "failed": len(self.failed),
            "cancelled": len(self.cancelled),
            "claimed_elsewhere": len(self.claimed_elsewhere),
            "errors": list(self.errors),
        }


def enqueue(con: duckdb.DuckDBPyConnection, rows: Sequence[Notification], *, now: datetime) -> int:
    """Insert outbox rows, skipping any (key, target) already there; returns rows inserted.

    Runs inside the caller's transaction (no BEGIN here).
    """
    inserted = 0
    for n in rows:
        before = con.execute(
            "SELECT count(*) FROM outbox WHERE idempotency_key = ? AND target_seq = ?",
            [n.idempotency_key, n.target_seq],
        ).fetchall()[0][0]
        if before:
            continue
        con.execute(
            """
            INSERT INTO outbox (
                notification_id, idempotency_key, target_seq, watch_id, kind, provider,
                offer_key, run_id, title, body, status, created_at, next_attempt_at
            ) VALUES (nextval('notification_ids'), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                n.idempotency_key, n.target_seq, n.watch_id, n.kind, n.provider, n.offer_key,
                n.run_id, n.title, n.body, n.status, now, now,
            ],
        )  # fmt: skip
        inserted += 1
    return inserted


def _due(
    con: duckdb.DuckDBPyConnection, now: datetime, ignore_schedule: bool, limit: int | None
) -> list[tuple[Any, ...]]:
    rows = con.execute(
        f"""
        SELECT o.notification_id, o.target_seq, o.title, o.body, o.attempts, w.notify_urls,
               o.claimed_until
        FROM outbox AS o
        LEFT JOIN watches AS w ON w.watch_id = o.watch_id
        WHERE o.status = 'pending' AND (o.claimed_until IS NULL OR o.claimed_until <= ?)
          {"" if ignore_schedule else "AND o.next_attempt_at <= ?"}
        ORDER BY o.created_at, o.notification_id
        {"LIMIT " + str(int(limit)) if limit is not None else ""}
        """,
        [now] if ignore_schedule else [now, now],
    ).fetchall()
    return [tuple(r) for r in rows]


def deliver_pending(
    con: duckdb.DuckDBPyConnection,
    send: Sender,
    *,
    now: datetime,
    backoff: Backoff | None = None,
    ignore_schedule: bool = False,
    limit: int | None = None,
    clock: Callable[[], datetime] | None = None,
) -> DeliveryReport:
    """Send the pending notifications that are due (all pending ones with
    ``ignore_schedule``), oldest first, each marked as soon as its own send ends.

    Each claim and each mark commits on its own, so a crash loses at most the mark of the
    message being sent (see the module docstring); a row another deliverer claimed first
    is left to it (``claimed_elsewhere``). ``clock`` gives the times recorded
    for attempts (default: ``now``).
    """
    backoff = backoff or Backoff()
    stamp = clock or (lambda: now)
    report = DeliveryReport()
    for nid, target_seq, title, body, attempts, urls, claimed in _due(
        con, now, ignore_schedule, limit
    ):
        if urls is None or not 0 <= target_seq < len(urls):
            # The watch was removed under a pending row (remove_watch cancels, this is a guard).
            con.execute("UPDATE outbox SET status = 'cancelled' WHERE notification_id = ?", [nid])
            report.cancelled.append(nid)
            continue
        if not _claim(con, nid, claimed, stamp() + CLAIM_HOLD):
            report.claimed_elsewhere.append(nid)
            continue
        try:
            send(urls[target_seq], title, body)
        except Exception as exc:
            failures = int(attempts) + 1
            error = _one_line(str(exc) or type(exc).__name__)
            at = stamp()
            _mark(
                con,
                """
                UPDATE outbox SET attempts = ?, last_error = ?, last_attempt_at = ?,
                                  next_attempt_at = ?, claimed_until = NULL
                WHERE notification_id = ?
                """,
                [failures, error, at, at + backoff.delay(failures), nid],
            )
            report.failed.append(nid)
            report.errors.append(f"#{nid}: {error}")
            continue
        at = stamp()
        _mark(
            con,
            """
            UPDATE outbox SET status = 'sent', attempts = ?, sent_at = ?,
                              last_attempt_at = ?, last_error = NULL, claimed_until = NULL
            WHERE notification_id = ?
            """,
            [int(attempts) + 1, at, at, nid],
        )
        report.sent.append(nid)
    return report


def _claim(
    con: duckdb.DuckDBPyConnection, nid: int, claimed: datetime | None, hold_until: datetime
) -> bool:
    """Whether this delivery now holds row ``nid`` (module docstring): its ``claimed_until``
    set from ``claimed``, as read, to ``hold_until``, committed under the write lease."""
    try:
        changed = _leased(
            con,
            """
            UPDATE outbox SET claimed_until = ?
            WHERE notification_id = ? AND status = 'pending'
              AND claimed_until IS NOT DISTINCT FROM ?
            """,
            [hold_until, nid, claimed],
        )
    except duckdb.Error as exc:
        if is_write_conflict(exc) or is_read_conflict(exc):
            return False  # another deliverer committed first: the row is its to send
        raise
    return bool(changed) and int(changed[0][0]) == 1


def _mark(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any]) -> None:
    """Record how a send ended (an UPDATE of the row this delivery holds), again while the
    lake refuses the commit: the mark sets the same values however often it is written,
    and a send left unmarked would be sent again."""
    for tried in range(1, WRITE_TRIES + 1):
        try:
            _leased(con, sql, params)
            return
        except duckdb.Error as exc:
            if tried == WRITE_TRIES or not (is_write_conflict(exc) or is_read_conflict(exc)):
                raise
        time.sleep(random.uniform(0.05, 0.25) * tried)


def _leased(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any]) -> list[Any]:
    """``sql`` in a transaction of its own holding the write lease; its result rows."""
    with leased_transaction(con):
        rows = con.execute(sql, params).fetchall()
    return rows


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()[:LAST_ERROR_MAX]


def outbox_rows(
    con: duckdb.DuckDBPyConnection, *, status: str | None = None, limit: int | None = 100
) -> pl.DataFrame:
    """Outbox rows, newest first (``limit=None``: all). No URLs: they are not stored here."""
    where = "WHERE status = ?" if status else ""
    params: list[Any] = [status] if status else []
    tail = ""
    if limit is not None:
        tail = "LIMIT ?"
        params.append(limit)
    return frame(
        con,
        f"""
        SELECT notification_id, watch_id, target_seq, kind, provider, offer_key, run_id, title,
               status, attempts, last_error, created_at, next_attempt_at, last_attempt_at,
               sent_at, idempotency_key
        FROM outbox {where}
        ORDER BY created_at DESC, notification_id DESC
        {tail}
        """,
        params,
    )
