"""`gpurent demo` builds a month of (synthetic) history; `index export` then has >= 20 dates.

Slow: it crawls the bundled recordings for real (each spider in its own `scrapy crawl`
process against the replay server) and loads a poll of every provider per day. The demo
here asks for DAYS days at one poll a day, the fewest polls that still give twenty dates
and a pattern (24 polls over a week) for every provider; loading is most of the demo's
time, and the default month (ninety polls) would take three times as long. That the
default spans a month is checked on its own (``test_the_default_demo_spans_a_month``).
"""

from __future__ import annotations

import csv
import json
import subprocess
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from flows import demo
from gpurent.cli import tracking
from tests import cli_helpers
from tests.test_catalog import DEMO_CARDS, NO_FIGURES
from warehouse.db import connect

REQUIRED = {
    "date", "gpu_model", "gpu_vram_gb", "currency", "index_price", "n_offers", "n_providers",
    "in_stock_share", "method_version", "withheld_reason",
}  # fmt: skip


DAYS = 24
"""Days of synthetic history the demo here builds (one poll a day, and today's): 25 dates,
25 polls of every provider, whose hours of day cover the whole day once."""


def gpurent(*args: str) -> subprocess.CompletedProcess[str]:
    return cli_helpers.run_gpurent(*args, timeout=1500)


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("demo") / "demo.duckdb"
    done = gpurent("demo", "--days", str(DAYS), "--polls-per-day", "1", "--db", str(path))
    assert "synthetic" in done.stderr
    return path


def test_the_default_demo_spans_a_month() -> None:
    # The command's defaults are the flow's, and they poll on a month of distinct dates.
    assert (tracking.DEFAULT_DAYS, tracking.DEFAULT_POLLS_PER_DAY, tracking.DEFAULT_SEED) == (
        demo.DEFAULT_DAYS, demo.DEFAULT_POLLS_PER_DAY, demo.DEFAULT_SEED,
    )  # fmt: skip
    now = datetime(2026, 11, 20, 12, tzinfo=UTC)
    polls = list(demo.poll_times(now, demo.DEFAULT_DAYS, demo.DEFAULT_POLLS_PER_DAY))
    assert len(polls) == demo.DEFAULT_DAYS * demo.DEFAULT_POLLS_PER_DAY
    assert len({p.date() for p in polls} | {now.date()}) >= 30
    assert len({p.hour for p in polls}) == 24  # every hour of the day polled
    assert all(p < now for p in polls)


def test_demo_then_index_export_gives_twenty_dates_or_more(demo_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "index.csv"
    gpurent("index", "export", "--out", str(out), "--db", str(demo_db))
    with out.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert set(rows[0]) >= REQUIRED
    assert len({r["date"] for r in rows}) >= 20
    assert {r["currency"] for r in rows} == {"CNY", "USD"}  # gpi-3: CN in CNY, intl in USD
    assert {r["method_version"] for r in rows} == {"gpi-3"}  # the default
    priced = [r for r in rows if r["index_price"]]
    assert priced, "at least one row is quoted in stock by three suppliers of one market"
    assert all(int(r["n_providers"]) >= 3 for r in priced)
    assert all(Decimal(r["p25"]) <= Decimal(r["index_price"]) <= Decimal(r["p75"]) for r in priced)
    assert all(r["withheld_reason"] for r in rows if not r["index_price"])
    assert {(r["market"], r["currency"]) for r in priced} == {("CN", "CNY"), ("intl", "USD")}

    old = tmp_path / "gpi-1.csv"
    gpurent("index", "export", "--method", "gpi-1", "--out", str(old), "--db", str(demo_db))
    with old.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert {r["method_version"] for r in rows} == {"gpi-1"}
    assert len({r["date"] for r in rows}) >= 20
    priced = [r for r in rows if r["index_price"]]
    assert priced, "at least one GPU is quoted in stock by two providers on some day"
    assert all(int(r["n_providers"]) >= 2 for r in priced)


def test_the_demo_is_marked_synthetic_and_ends_with_the_recordings(demo_db: Path) -> None:
    con = connect(demo_db, read_only=True)
    try:
        messages = {m for (m,) in con.execute("SELECT DISTINCT message FROM crawl_runs").fetchall()}
        latest = {r for (r,) in con.execute("SELECT DISTINCT run_id FROM current_runs").fetchall()}
        failed = con.execute("SELECT count(*) FROM crawl_runs WHERE status = 'failed'").fetchall()
    finally:
        con.close()
    assert "demo: synthetic poll" in messages
    assert all(r.endswith("-live") for r in latest)  # today's state is the crawl itself
    assert failed[0][0] > 0  # a few synthetic outages, which change nothing


def test_history_and_rank_read_the_demo(demo_db: Path) -> None:
    rank: list[dict[str, Any]] = json.loads(
        gpurent("rank", "--db", str(demo_db), "--format", "json").stdout
    )
    assert rank and {"perf_rank", "heat_rank", "in_stock_share"} <= set(rank[0])
    # Every card the recordings list is one tests/test_catalog.py knows, and has compute and
    # bandwidth figures unless its vendor publishes none (then unranked, last).
    listed = {(r["gpu_model"], r["gpu_vram_gb"], r["form_factor"]) for r in rank}
    assert {card for card in listed if card[1] is not None} <= DEMO_CARDS
    for r in rank:
        if r["gpu_model"] in NO_FIGURES:
            assert r["perf_rank"] is None
        elif r["gpu_vram_gb"] is not None:
            assert r["compute_tflops"] and r["mem_bandwidth_gbps"], r
    ranked = [r["perf_rank"] for r in rank if r["perf_rank"] is not None]
    assert ranked == list(range(1, len(ranked) + 1))
    assert all(r["perf_rank"] is None for r in rank[len(ranked) :])
    busiest = max(rank, key=lambda r: r["providers"])
    pattern = json.loads(
        gpurent("history", "--gpu", busiest["gpu_model"], "--by", "pattern",
                "--db", str(demo_db), "--format", "json").stdout
    )  # fmt: skip
    assert pattern and all(p["polls"] >= 20 for p in pattern)
    assert any("usually free" in p["summary"] or "rarely free" in p["summary"] for p in pattern)
