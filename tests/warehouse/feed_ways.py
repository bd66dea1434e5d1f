"""Reading one feed both ways: the SQL reading as it is, and with it switched off.

Shared by the bulk-path tests and the property test, which compare the two readings.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import wh_kit  # noqa: F401  (puts the real warehouse package first on sys.path)
from polars.testing import assert_frame_equal

from warehouse import feed_sql
from warehouse.feed import FeedBatch, read_feed
from warehouse.feed_exact import ExactReader


def exact_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SQL reading (warehouse.feed_sql) switched off: it vouches for no line, so all
    go the exact way."""
    monkeypatch.setattr(feed_sql, "vouched", lambda: "false")


def exact_lines(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record the numbers of the lines that go through the exact path (the pydantic
    contract), in the order it reads them."""
    seen: list[int] = []
    original = ExactReader.read

    def spy(self: ExactReader, line: int, raw: bytes) -> None:
        seen.append(line)
        original(self, line, raw)

    monkeypatch.setattr(ExactReader, "read", spy)
    return seen


def both_ways(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[FeedBatch, FeedBatch]:
    bulk = read_feed(path, provider="acme", run_id="run-1")
    with monkeypatch.context() as patch:
        exact_only(patch)
        exact = read_feed(path, provider="acme", run_id="run-1")
    return bulk, exact


def assert_same(bulk: FeedBatch, exact: FeedBatch) -> None:
    for name in ("offers", "fees", "plans", "quarantine"):
        assert_frame_equal(getattr(bulk, name), getattr(exact, name))
    assert (bulk.lines, bulk.sha256) == (exact.lines, exact.sha256)
