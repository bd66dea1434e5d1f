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
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import duckdb
import polars as pl

from warehouse.queries import frame

Sender = Callable[[str, str, str], None]
"""``send(url, title, body)``: returns when delivered, raises when not."""

LAST_ERROR_MAX = 500


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
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "sent": len(self.sent),
            "failed": len(self.failed),
            "cancelled": len(self.cancelled),
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
        SELECT o.notification_id, o.target_seq, o.title, o.body, o.attempts, w.notify_urls
        FROM outbox AS o
        LEFT JOIN watches AS w ON w.watch_id = o.watch_id
        WHERE o.status = 'pending' {"" if ignore_schedule else "AND o.next_attempt_at <= ?"}
        ORDER BY o.created_at, o.notification_id
        {"LIMIT " + str(int(limit)) if limit is not None else ""}
        """,
        [] if ignore_schedule else [now],
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

    Runs in autocommit: each mark commits on its own, so a crash loses at most the mark of
    the message being sent (see the module docstring). ``clock`` gives the times recorded
    for attempts (default: ``now``).
    """
    backoff = backoff or Backoff()
    stamp = clock or (lambda: now)
    report = DeliveryReport()
    for nid, target_seq, title, body, attempts, urls in _due(con, now, ignore_schedule, limit):
        if urls is None or not 0 <= target_seq < len(urls):
            # The watch was removed under a pending row (remove_watch cancels, this is a guard).
            con.execute("UPDATE outbox SET status = 'cancelled' WHERE notification_id = ?", [nid])
            report.cancelled.append(nid)
            continue
        try:
            send(urls[target_seq], title, body)
        except Exception as exc:
            failures = int(attempts) + 1
            error = _one_line(str(exc) or type(exc).__name__)
            at = stamp()
            con.execute(
                """
                UPDATE outbox SET attempts = ?, last_error = ?, last_attempt_at = ?,
                                  next_attempt_at = ?
                WHERE notification_id = ?
                """,
                [failures, error, at, at + backoff.delay(failures), nid],
            )
            report.failed.append(nid)
            report.errors.append(f"#{nid}: {error}")
            continue
        at = stamp()
        con.execute(
            """
            UPDATE outbox SET status = 'sent', attempts = attempts + 1, sent_at = ?,
                              last_attempt_at = ?, last_error = NULL
            WHERE notification_id = ?
            """,
            [at, at, nid],
        )
        report.sent.append(nid)
    return report


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
