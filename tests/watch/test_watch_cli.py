"""`gpurent watch add/list/remove/test/deliver/outbox` in-process (no flow runs here)."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from gpurent.model import StockStatus, utcnow
from tests.watch.watch_kit import Market, cli, cli_json, free_port, receiving
from warehouse.db import connect
from warehouse.watch.evaluate import evaluate_watches

TELEGRAM = "tgram://123456789:AAHsecretTokenValue42/987654"


def test_add_list_remove(tmp_path: Path) -> None:
    db = str(tmp_path / "w.duckdb")
    (added,) = cli_json(
        "watch", "add", "--gpu", "rtx4090", "--count", "2", "--max-price", "2.5",
        "--per", "hour", "--provider", "autodl", "--region", "西北", "--notify", TELEGRAM,
        "--notify", "json://127.0.0.1:8080/hook", "--db", db,
    )  # fmt: skip
    assert added["id"] == 1
    assert added["gpu"] == "RTX 4090"  # resolved through the GPU catalog
    assert added["min_vram_gb"] == 24
    assert added["count"] == 2
    assert added["max_price"] == "2.5 CNY/hour"
    assert added["providers"] == "autodl" and added["regions"] == "西北"

    cli_json("watch", "add", "--min-vram", "80", "--notify", "ntfy://ntfy.sh/topic", "--db", db)
    listed = cli_json("watch", "list", "--db", db)
    assert [w["id"] for w in listed] == [1, 2]
    assert listed[1]["gpu"] is None and listed[1]["min_vram_gb"] == 80

    for fmt in ("table", "json", "csv"):
        out = cli("watch", "list", "--db", db, "--format", fmt).stdout
        assert "AAHsecretTokenValue42" not in out, fmt
        assert "tgram" in out, fmt

    assert "removed watch #1" in cli("watch", "remove", "1", "--db", db).stdout
    assert [w["id"] for w in cli_json("watch", "list", "--db", db)] == [2]
    assert "no watch #1" in cli("watch", "remove", "1", "--db", db, code=1).output


def test_add_needs_a_gpu_or_a_vram_and_good_urls(tmp_path: Path) -> None:
    db = str(tmp_path / "w.duckdb")
    out = cli("watch", "add", "--notify", "json://127.0.0.1:1/x", "--db", db, code=2).output
    assert "--gpu" in out and "--min-vram" in out
    out = cli("watch", "add", "--gpu", "RTX 4090", "--notify", "nope://x", "--db", db, code=2)
    assert "apprise does not accept" in out.output
    cli("watch", "add", "--gpu", "Voodoo 5", "--notify", "json://h/x", "--db", db, code=2)
    cli("watch", "add", "--gpu", "4090", "--currency", "CNY", "--notify", "json://h/x",
        "--db", db, code=2)  # fmt: skip
    cli("watch", "add", "--gpu", "4090", "--provider", "nowhere", "--notify", "json://h/x",
        "--db", db, code=2)  # fmt: skip
    assert not Path(db).exists() or cli_json("watch", "list", "--db", db) == []


def test_a_literal_secret_gets_a_warning(tmp_path: Path) -> None:
    result = cli("watch", "add", "--gpu", "4090", "--notify", TELEGRAM, "--db", str(tmp_path / "w"))
    assert "${NAME}" in result.stderr
    assert "AAHsecretTokenValue42" not in result.output


def test_watch_test_sends_now(tmp_path: Path) -> None:
    db = str(tmp_path / "w.duckdb")
    with receiving() as hook:
        cli("watch", "add", "--gpu", "RTX 4090", "--notify", hook.url, "--db", db)
        (row,) = cli_json("watch", "test", "1", "--db", db)
        assert row["result"] == "sent"
        (post,) = hook.received()
    assert "test" in post["json"]["title"] and "RTX 4090" in post["json"]["message"]


def test_watch_test_reports_a_receiver_that_is_down(tmp_path: Path) -> None:
    db = str(tmp_path / "w.duckdb")
    cli("watch", "add", "--gpu", "RTX 4090", "--notify", f"json://127.0.0.1:{free_port()}/x",
        "--db", db)  # fmt: skip
    result = cli("watch", "test", "1", "--db", db, "--format", "json", code=1)
    assert '"failed"' in result.stdout


def test_deliver_and_outbox(tmp_path: Path) -> None:
    path = tmp_path / "w.duckdb"
    port = free_port()
    cli("watch", "add", "--gpu", "RTX 4090", "--notify", f"json://127.0.0.1:{port}/hook",
        "--db", str(path))  # fmt: skip
    con = connect(path)
    market = Market(con, tmp_path / "feeds")
    created = con.execute("SELECT created_at FROM watches").fetchall()[0][0]
    market.start = created - timedelta(seconds=50)  # polls 10 s and 70 s after the watch
    market.poll([market.offer(status=StockStatus.SOLD_OUT, available_count=0)])
    market.poll([market.offer(available_count=2)])
    assert len(evaluate_watches(con, now=utcnow()).alerts) == 1
    con.close()

    failed = cli("watch", "deliver", "--db", str(path), "--format", "json", code=1)
    (report,) = json.loads(failed.stdout)
    assert report["failed"] == 1 and "127.0.0.1" in report["errors"][0]
    (row,) = cli_json("watch", "outbox", "--db", str(path))
    assert row["status"] == "pending" and row["attempts"] == 1 and row["last_error"]

    with receiving(port) as hook:
        (report,) = cli_json("watch", "deliver", "--all", "--db", str(path))
        assert report["sent"] == 1
        (report,) = cli_json("watch", "deliver", "--all", "--db", str(path))
        assert report["sent"] == 0
        assert len(hook.received()) == 1
    (row,) = cli_json("watch", "outbox", "--status", "sent", "--db", str(path))
    assert row["attempts"] == 2
    assert "restock" in cli("watch", "outbox", "--db", str(path)).stdout


@pytest.mark.parametrize("command", [["list"], ["outbox"]])
def test_read_commands_before_any_database(tmp_path: Path, command: list[str]) -> None:
    db = tmp_path / "none.duckdb"
    result = cli("watch", *command, "--db", str(db), code=0 if command == ["list"] else 2)
    assert not db.exists()
    assert result.output
