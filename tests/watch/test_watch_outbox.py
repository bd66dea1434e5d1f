"""The outbox: sent once, failures kept with backoff and retried, never lost, never doubled."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import duckdb
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpurent_core.model import StockStatus
from tests.watch.watch_kit import T0, Market, outbox
from warehouse.db import connect
from warehouse.watch.evaluate import evaluate_watches
from warehouse.watch.outbox import CLAIM_HOLD, Backoff, deliver_pending
from warehouse.watch.store import add_watch

NOW = T0 + timedelta(minutes=3)


class FakeSender:
    """Records sends; fails while ``down`` holds."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, str]] = []
        self.down = False
        self.calls = 0

    def __call__(self, url: str, title: str, body: str) -> None:
        self.calls += 1
        if self.down:
            raise ConnectionError(f"connection refused by {url.split('/')[2]}")
        self.sent.append((url, title, body))


@pytest.fixture
def con(tmp_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    connection = connect(tmp_path / "o.duckdb")
    add_watch(
        connection,
        created_at=T0,
        gpu_model="RTX 4090",
        notify_urls=["json://127.0.0.1:9/a", "json://127.0.0.1:9/b"],
    )
    market = Market(connection, tmp_path / "feeds")
    market.poll([market.offer(status=StockStatus.SOLD_OUT, available_count=0)])
    market.poll([market.offer(available_count=2)])
    evaluate_watches(connection, now=NOW)
    yield connection
    connection.close()


def test_each_destination_gets_the_message_once(con: duckdb.DuckDBPyConnection) -> None:
    send = FakeSender()
    report = deliver_pending(con, send, now=NOW)
    assert len(report.sent) == 2
    assert [url for url, _, _ in send.sent] == ["json://127.0.0.1:9/a", "json://127.0.0.1:9/b"]
    assert all("RTX 4090" in title for _, title, _ in send.sent)
    assert deliver_pending(con, send, now=NOW + timedelta(hours=1), ignore_schedule=True).sent == []
    assert len(send.sent) == 2
    rows = outbox(con)
    assert {r["status"] for r in rows} == {"sent"} and {r["attempts"] for r in rows} == {1}


def test_a_failed_send_stays_pending_with_backoff_then_goes_through_once(
    con: duckdb.DuckDBPyConnection,
) -> None:
    send = FakeSender()
    send.down = True
    backoff = Backoff(base_s=30, cap_s=120)
    report = deliver_pending(con, send, now=NOW, backoff=backoff)
    assert len(report.failed) == 2 and "connection refused" in report.errors[0]
    rows = outbox(con)
    assert {r["status"] for r in rows} == {"pending"}
    assert {r["attempts"] for r in rows} == {1}
    assert {r["next_attempt_at"] for r in rows} == {NOW + timedelta(seconds=30)}
    assert all("connection refused" in r["last_error"] for r in rows)

    assert deliver_pending(con, send, now=NOW + timedelta(seconds=10), backoff=backoff).failed == []
    assert send.calls == 2, "not due yet: not tried"

    deliver_pending(con, send, now=NOW + timedelta(seconds=31), backoff=backoff)
    assert {r["next_attempt_at"] for r in outbox(con)} == {NOW + timedelta(seconds=91)}
    assert {r["attempts"] for r in outbox(con)} == {2}

    send.down = False
    later = NOW + timedelta(seconds=91)
    assert len(deliver_pending(con, send, now=later, backoff=backoff).sent) == 2
    assert (
        deliver_pending(con, send, now=later + timedelta(days=1), ignore_schedule=True).sent == []
    )
    assert len(send.sent) == 2
    rows = outbox(con)
    assert {r["status"] for r in rows} == {"sent"} and {r["attempts"] for r in rows} == {3}
    assert {r["last_error"] for r in rows} == {None}


def test_one_failing_destination_does_not_resend_to_the_other(
    con: duckdb.DuckDBPyConnection,
) -> None:
    calls: list[str] = []

    def send(url: str, title: str, body: str) -> None:
        calls.append(url)
        if url.endswith("/b"):
            raise OSError("b is down")

    deliver_pending(con, send, now=NOW)
    deliver_pending(con, send, now=NOW + timedelta(hours=2))
    assert calls == ["json://127.0.0.1:9/a", "json://127.0.0.1:9/b", "json://127.0.0.1:9/b"]


def test_a_crash_before_the_mark_leaves_the_row_pending(con: duckdb.DuckDBPyConnection) -> None:
    # The documented at-least-once window: an interrupted delivery is tried again, not lost.
    def interrupted(url: str, title: str, body: str) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        deliver_pending(con, interrupted, now=NOW)
    assert {r["status"] for r in outbox(con)} == {"pending"}
    assert {r["attempts"] for r in outbox(con)} == {0}


def test_rows_of_a_vanished_watch_are_cancelled_not_sent(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("DELETE FROM watches")
    send = FakeSender()
    report = deliver_pending(con, send, now=NOW)
    assert len(report.cancelled) == 2 and send.calls == 0


@given(st.integers(min_value=1, max_value=10_000))
def test_backoff_grows_and_is_capped(failures: int) -> None:
    backoff = Backoff(base_s=30, factor=2, cap_s=3600)
    assert backoff.delay(failures) <= timedelta(seconds=3600)
    assert backoff.delay(failures + 1) >= backoff.delay(failures)
    assert backoff.delay(1) == timedelta(seconds=30)
    assert backoff.delay(3) == timedelta(seconds=120)


def test_two_deliveries_at_once_send_each_notification_once(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """While the first delivery sends its first row, a second one (a poll beside `watch
    deliver`) runs to the end on its own connection: the row being sent is claimed, so the
    second leaves it; the second sends the other row, so the first, which had read it as
    due, finds it claimed and leaves it."""
    other = con.cursor()  # its own connection to the same file, its own transactions
    inner, outer_urls, inner_reports = FakeSender(), [], []

    def outer(url: str, title: str, body: str) -> None:
        outer_urls.append(url)
        if len(outer_urls) == 1:
            inner_reports.append(deliver_pending(other, inner, now=NOW))

    report = deliver_pending(con, outer, now=NOW)
    sent = outer_urls + [url for url, _, _ in inner.sent]
    assert sorted(sent) == ["json://127.0.0.1:9/a", "json://127.0.0.1:9/b"], "each once"
    assert len(report.sent) == 1 and len(report.claimed_elsewhere) == 1
    assert len(inner_reports[0].sent) == 1
    rows = outbox(con)
    assert {r["status"] for r in rows} == {"sent"} and {r["attempts"] for r in rows} == {1}


def test_deliver_all_leaves_a_row_another_delivery_is_sending(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """`watch deliver --all` ignores the backoff, not a live claim."""
    other = con.cursor()
    inner, outer_urls = FakeSender(), []

    def outer(url: str, title: str, body: str) -> None:
        outer_urls.append(url)
        if len(outer_urls) == 1:
            deliver_pending(other, inner, now=NOW, ignore_schedule=True)

    deliver_pending(con, outer, now=NOW, limit=1)  # claims and sends the first row only
    assert outer_urls == ["json://127.0.0.1:9/a"]
    assert [url for url, _, _ in inner.sent] == ["json://127.0.0.1:9/b"]


def test_a_claim_left_by_a_dead_deliverer_lapses_and_the_row_is_sent(
    con: duckdb.DuckDBPyConnection,
) -> None:
    def dies(url: str, title: str, body: str) -> None:
        raise KeyboardInterrupt  # the process ends between its claim and its send

    with pytest.raises(KeyboardInterrupt):
        deliver_pending(con, dies, now=NOW)
    send = FakeSender()
    deliver_pending(con, send, now=NOW + timedelta(minutes=1), ignore_schedule=True)
    assert [url for url, _, _ in send.sent] == ["json://127.0.0.1:9/b"], "a waits for its claim"
    later = NOW + CLAIM_HOLD + timedelta(seconds=1)
    assert len(deliver_pending(con, send, now=later).sent) == 1, "the lapsed claim's row"
    assert [url for url, _, _ in send.sent] == ["json://127.0.0.1:9/b", "json://127.0.0.1:9/a"]
    assert {r["status"] for r in outbox(con)} == {"sent"}
    assert con.execute("SELECT count(claimed_until) FROM outbox").fetchall() == [(0,)]
