"""The benchmark runner's code paths on a tiny market: structure only, never timings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.market import feed_lines, write_feed
from benchmarks.measure import rotated, run_json
from benchmarks.runner import FLOOR_PROGRAM, main
from gpurent_core.model import OfferRecord, QuarantineRecord, parse_feed_line
from warehouse.feed import read_feed

KEYS = {
    "crawl_ratio",
    "load_ratio",
    "load_rss_mib_1m",
    "query_ms_10k",
    "query_ms_1m",
    "query_beyond_startup_ms_10k",
    "query_beyond_startup_ms_1m",
    "startup_s",
    "startup_help_s",
    "startup_floor_s",
    "storage_gib_year",
    "alert_latency_s",
    "market_polls",
    "market_providers",
    "market_seconds",
    "market_violations",
}


def test_the_synthetic_market_is_valid_feed_input(tmp_path: Path) -> None:
    records = [parse_feed_line(json.loads(line)) for line in feed_lines("bench", "run-1", 250)]
    offers = [r for r in records if isinstance(r, OfferRecord)]
    assert len(offers) == 250
    assert sum(isinstance(r, QuarantineRecord) for r in records) == 3
    assert {len(o.fees) for o in offers} == {2} and {len(o.plans) for o in offers} == {1}
    batch = read_feed(
        write_feed(tmp_path / "f.jsonl", "bench", "run-1", 250), provider="bench", run_id="run-1"
    )
    assert batch.offers.height == 250 and batch.quarantine.height == 3


def test_a_tiny_run_prints_a_table_and_one_json_line(capsys: pytest.CaptureFixture[str]) -> None:
    summary = main(
        [
            *("--sizes", "40", "--repeats", "1", "--crawl-offers", "600"),
            *("--only", "load", "query", "startup", "crawl"),
        ]
    )
    out, err = capsys.readouterr()
    assert json.loads(out.strip().splitlines()[-1]) == summary
    assert set(summary) >= KEYS
    for key in (
        "load_ratio",
        "startup_s",
        "startup_help_s",
        "startup_floor_s",
        "crawl_ratio",
    ):
        assert isinstance(summary[key], float) and summary[key] > 0, key
    # Not measured at these sizes or in this selection: null, not a made-up number.
    for key in (
        "load_rss_mib_1m",
        "query_ms_10k",
        "query_ms_1m",
        "query_beyond_startup_ms_10k",
        "query_beyond_startup_ms_1m",
        "storage_gib_year",
        "alert_latency_s",
        "market_polls",
        "market_violations",
    ):
        assert summary[key] is None, key
    for figure in ("load 40 offers", "cheapest --min-vram 32", "start-up", "crawl 600 offers"):
        assert figure in err


def test_the_alert_figure_is_the_worst_restock_trial(
    prefect_harness: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real watch-poll flow against the restock scene, one short trial: the figure is
    measured (a positive number of seconds), never left at null when asked for.

    The benchmark's process runs its flows against this session's Prefect API (as
    tests/cli_helpers.run_gpurent's do) instead of starting a temporary server of its own,
    15-20 s that the figure leaves out anyway (its polls are timed from their start)."""
    from prefect.settings import PREFECT_API_URL

    monkeypatch.setenv("PREFECT_API_URL", PREFECT_API_URL.value())
    summary = main(["--only", "alert", "--alert-interval", "5", "--alert-trials", "1"])
    _out, err = capsys.readouterr()
    latency = summary["alert_latency_s"]
    assert isinstance(latency, float) and latency > 0
    assert "restock -> webhook, 5 s poll, 1 trials" in err
    assert f"{latency:.1f} s worst" in err
    assert summary["load_ratio"] is None and summary["crawl_ratio"] is None


def test_rotated_turns_the_order_each_try_and_keeps_each_sides_medians() -> None:
    calls: list[str] = []

    def side(name: str, seconds: list[float]) -> Any:
        def run(k: int) -> dict[str, float]:
            calls.append(name)
            return {"seconds": seconds[k]}

        return run

    got = rotated(
        {
            "a": side("a", [1.0, 9.0, 2.0]),
            "b": side("b", [5.0, 4.0, 3.0]),
            "c": side("c", [7.0, 7.0, 0.5]),
        },
        3,
    )
    assert calls == ["a", "b", "c", "b", "c", "a", "c", "a", "b"]
    assert got == {"a": {"seconds": 2.0}, "b": {"seconds": 4.0}, "c": {"seconds": 7.0}}


def test_the_floor_program_answers_from_a_real_warehouse(tmp_path: Path) -> None:
    """The start-up floor runs the query it claims to (a failing floor would time an error)."""
    import subprocess
    import sys

    feed = write_feed(tmp_path / "f.jsonl", "bench", "run-1", 60)
    db = tmp_path / "w.duckdb"
    run_json(["-m", "benchmarks.load_child", "gpurent", str(feed), str(db), "bench", "run-1", "60"])
    done = subprocess.run(
        [sys.executable, "-c", FLOOR_PROGRAM, str(db)], capture_output=True, text=True, check=True
    )
    assert 0 < int(done.stdout.strip()) <= 10
