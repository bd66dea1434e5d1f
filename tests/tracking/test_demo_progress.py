"""`gpurent demo` shows its progress: a bar per stage (the crawl of the recordings, the
month of synthetic polls), fed by the demo flow after each step."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import typer
from rich.console import Console
from typer.testing import CliRunner

import flows.demo
from flows.demo import build_demo_history
from gpurent.cli import tracking


def test_the_flow_reports_each_crawl_and_each_poll(tmp_path: Path) -> None:
    heard: list[tuple[str, int, int]] = []
    summary = build_demo_history(
        tmp_path / "demo.duckdb", days=2, polls_per_day=2, providers=["autodl"],
        now=datetime(2026, 11, 20, 12, tzinfo=UTC), progress=lambda *e: heard.append(e),
    )  # fmt: skip
    assert summary.runs == 2 * 2 + 1
    assert [e for e in heard if e[0] == "crawl"] == [("crawl", 1, 1)]
    assert [e for e in heard if e[0] == "polls"] == [("polls", n, 5) for n in (1, 2, 3, 4, 5)]
    assert heard.index(("crawl", 1, 1)) == 0  # crawled first, then loaded


def test_the_command_draws_the_bars(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def fake(path: Path, **kw: Any) -> Any:
        kw["progress"]("crawl", 18, 18)
        for n in range(1, 4):
            kw["progress"]("polls", n, 3)
        return flows.demo.DemoSummary(path, ("autodl",), datetime(2026, 11, 1).date(),
                                      datetime(2026, 11, 2).date(), 3, 0, 7)  # fmt: skip

    monkeypatch.setattr(flows.demo, "build_demo_history", fake)
    app = typer.Typer()
    app.add_typer(tracking.app)
    result = CliRunner().invoke(app, ["demo", "--db", str(tmp_path / "d.duckdb")])
    assert result.exit_code == 0, result.output
    assert "crawling the recordings (providers)" in result.stderr
    assert "18/18" in result.stderr and "loading synthetic polls" in result.stderr
    assert "3/3" in result.stderr


def test_the_progress_callback_keeps_one_bar_per_stage() -> None:
    console = Console(record=True, width=100, force_terminal=False)
    with tracking.demo_progress(console) as update:
        update("polls", 1, 4)
        update("polls", 4, 4)
    text = console.export_text()
    assert text.count("loading synthetic polls") == 1 and "4/4" in text
