"""`gpurent watch add/list/remove/test/deliver/outbox` in-process (no flow runs here)."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path

import duckdb
import pytest

from gpurent_core.model import StockStatus, utcnow
from tests.watch.watch_kit import Market, cli, cli_json, free_port, receiving
from warehouse.db import connect
from warehouse.watch.evaluate import evaluate_watches
from warehouse.watch.store import add_watch

TELEGRAM = "tgram://123456789:AAHsecretTokenValue42/987654"


def flat(text: str) -> str:
    """An error box's text on one line (rich wraps it to the terminal width)."""
    return re.sub(r"[\s│╭╮╰╯─]+", " ", text)


TELEGRAM_BY_ENV = "tgram://${TG_BOT_TOKEN}/987654"
TG_TOKEN = "123456789:AAHsecretTokenValue42"


def test_add_list_remove(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TG_BOT_TOKEN", TG_TOKEN)
    db = str(tmp_path / "w.duckdb")
    (added,) = cli_json(
        "watch", "add", "--gpu", "rtx4090", "--count", "2", "--max-price", "2.5",
        "--per", "hour", "--provider", "autodl", "--region", "西北", "--notify", TELEGRAM_BY_ENV,
        "--notify", "json://127.0.0.1:8080/hook", "--db", db,
    )  # fmt: skip
    assert added["id"] == 1
    assert added["gpu"] == "RTX 4090"  # resolved through the GPU catalog
    assert added["min_vram_gb"] == 24
    assert added["count"] == 2
    # --per hour is per card (as providers quote); stored for the watch's two cards.
    assert added["max_price"] == "2.5 CNY/card-hour (5 CNY/hour for 2 cards)"
    assert added["providers"] == "autodl" and added["regions"] == "西北"

    cli_json("watch", "add", "--min-vram", "80", "--notify", "ntfy://ntfy.sh/topic", "--db", db)
    listed = cli_json("watch", "list", "--db", db)
    assert [w["id"] for w in listed] == [1, 2]
    assert listed[1]["gpu"] is None and listed[1]["min_vram_gb"] == 80

    for fmt in ("table", "json", "csv"):
        out = cli("watch", "list", "--db", db, "--format", fmt).stdout
        assert "AAHsecretTokenValue42" not in out, fmt
        assert "tgram" in out, fmt  # a table cell may wrap the rest of the reference

    assert "removed watch #1" in cli("watch", "remove", "1", "--db", db).stdout
    assert [w["id"] for w in cli_json("watch", "list", "--db", db)] == [2]
    assert "no watch #1" in cli("watch", "remove", "1", "--db", db, code=1).output


def test_add_reads_the_gpu_as_offers_does_and_suggests(tmp_path: Path) -> None:
    db = str(tmp_path / "w.duckdb")
    out = flat(cli("watch", "add", "--gpu", "4090x", "--notify", "json://h/x", "--db", db,
                   code=2).output)  # fmt: skip
    assert "did you mean RTX 4090" in out
    assert not Path(db).exists()
    (added,) = cli_json("watch", "add", "--gpu", "A100 80G", "--notify", "json://h/x", "--db", db)
    assert (added["gpu"], added["min_vram_gb"], added["form_factor"]) == ("A100", 80, None)


def test_a_watch_names_a_form_factor_and_lists_it(tmp_path: Path) -> None:
    db = str(tmp_path / "w.duckdb")
    # Before: refused ("watches cannot tell form factors apart yet").
    (sxm,) = cli_json("watch", "add", "--gpu", "H100 SXM", "--notify", "json://h/x", "--db", db)
    assert (sxm["gpu"], sxm["form_factor"], sxm["min_vram_gb"]) == ("H100", "SXM", 80)
    (any_h100,) = cli_json("watch", "add", "--gpu", "H100", "--notify", "json://h/x", "--db", db)
    assert any_h100["form_factor"] is None
    listed = cli_json("watch", "list", "--db", db)
    assert [w["form_factor"] for w in listed] == ["SXM", None]
    table = cli("watch", "list", "--db", db).stdout
    assert "H100 SXM >= 80 GB x1" in table
    assert "form_factor" in cli("watch", "list", "--db", db, "--format", "csv").stdout


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


@pytest.mark.parametrize(
    "url",
    [
        TELEGRAM,  # a bot token in the path
        "json://alice:hunter2pass@127.0.0.1:8080/hook",  # a password in the address
        "mailto://alice:hunter2pass@example.com",
        "ntfys://ntfy.sh/topic?token=tk_hunter2pass",  # a token in the query
        "json://alice:x${HOOK_PW}@127.0.0.1:8080/hook",  # half referenced is not referenced
    ],
)
def test_a_literal_secret_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    monkeypatch.setenv("HOOK_PW", "from-the-environment")
    db = tmp_path / "w.duckdb"
    result = cli("watch", "add", "--gpu", "4090", "--notify", url, "--db", str(db), code=2)
    assert "${NAME}" in flat(result.output) and "never stored" in flat(result.output)
    assert "AAHsecretTokenValue42" not in result.output and "hunter2pass" not in result.output
    assert not db.exists()  # refused before the warehouse was opened


@pytest.mark.parametrize(
    "url",
    [
        "tgram://${TG_BOT_TOKEN}/987654",
        "json://alice:${HOOK_PW}@127.0.0.1:8080/hook",
        "mailto://alice:${HOOK_PW}@example.com",
        "json://127.0.0.1:8080/hook",
        "ntfy://ntfy.sh/topic",
    ],
)
def test_referenced_secrets_are_accepted_and_stored_as_references(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    monkeypatch.setenv("TG_BOT_TOKEN", TG_TOKEN)
    monkeypatch.setenv("HOOK_PW", "pw-from-the-environment")
    db = tmp_path / "w.duckdb"
    cli("watch", "add", "--gpu", "4090", "--notify", url, "--db", str(db))
    con = connect(db, read_only=True)
    try:
        ((stored,),) = con.execute("SELECT notify_urls FROM watches").fetchall()
    finally:
        con.close()
    assert stored == [url]


def test_notify_config_stores_only_the_path(tmp_path: Path) -> None:
    config = tmp_path / "apprise.yml"
    config.write_text(f"urls:\n  - {TELEGRAM}\n", encoding="utf-8")
    config.chmod(0o600)
    db = tmp_path / "w.duckdb"
    (added,) = cli_json(
        "watch", "add", "--gpu", "4090", "--notify-config", str(config), "--db", str(db)
    )
    assert added["notify"] == f"apprise-config://{config.resolve()}"
    con = connect(db, read_only=True)
    try:
        ((stored,),) = con.execute("SELECT notify_urls FROM watches").fetchall()
    finally:
        con.close()
    assert stored == [f"apprise-config://{config.resolve()}"]
    missing = tmp_path / "nope.yml"
    out = cli("watch", "add", "--gpu", "4090", "--notify-config", str(missing), "--db", str(db),
              code=2).output  # fmt: skip
    assert "no such file" in flat(out)
    out = cli("watch", "add", "--gpu", "4090", "--db", str(db), code=2).output
    assert "--notify-config" in flat(out)


def test_a_notify_config_delivers_to_every_url_in_it(tmp_path: Path) -> None:
    config = tmp_path / "apprise.txt"
    with receiving() as hook:
        config.write_text(hook.url + "\n", encoding="utf-8")
        db = str(tmp_path / "w.duckdb")
        cli("watch", "add", "--gpu", "RTX 4090", "--notify-config", str(config), "--db", db)
        (row,) = cli_json("watch", "test", "1", "--db", db)
        assert row["result"] == "sent"
        (post,) = hook.received()
    assert "test" in post["json"]["title"]


def test_a_readable_config_file_gets_a_note(tmp_path: Path) -> None:
    config = tmp_path / "apprise.txt"
    config.write_text("json://127.0.0.1:8080/hook\n", encoding="utf-8")
    config.chmod(0o644)
    result = cli("watch", "add", "--gpu", "4090", "--notify-config", str(config),
                 "--db", str(tmp_path / "w.duckdb"))  # fmt: skip
    assert "chmod 600" in result.stderr


def _cells(con: duckdb.DuckDBPyConnection) -> str:
    """Every value of every table, as text (to look for a string anywhere in the warehouse)."""
    tables = [t for (t,) in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE'"
    ).fetchall()]  # fmt: skip
    return "\n".join(
        str(row) for table in tables for row in con.execute(f'SELECT * FROM "{table}"').fetchall()
    )


def test_remove_deletes_the_urls_from_every_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TG_BOT_TOKEN", TG_TOKEN)
    path = tmp_path / "w.duckdb"
    cli("watch", "add", "--gpu", "RTX 4090", "--notify", "json://127.0.0.1:9/removed-hook",
        "--notify", "tgram://${TG_BOT_TOKEN}/555000111", "--db", str(path))  # fmt: skip
    cli("watch", "add", "--gpu", "H100", "--notify", "json://127.0.0.1:9/kept-hook",
        "--db", str(path))  # fmt: skip
    con = connect(path)
    market = Market(con, tmp_path / "feeds")
    created = con.execute("SELECT min(created_at) FROM watches").fetchall()[0][0]
    market.start = created - timedelta(seconds=50)
    market.poll([market.offer(status=StockStatus.SOLD_OUT, available_count=0)])
    market.poll([market.offer(available_count=2)])
    evaluate_watches(con, now=utcnow())
    before = _cells(con)
    con.close()
    assert "removed-hook" in before and "555000111" in before  # the check can see them

    cli("watch", "remove", "1", "--db", str(path))
    con = connect(path, read_only=True)
    try:
        after = _cells(con)
    finally:
        con.close()
    assert "removed-hook" not in after and "555000111" not in after
    assert "kept-hook" in after


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


def test_list_points_at_a_literal_secret_stored_by_an_older_gpurent(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    con = connect(db)
    add_watch(con, created_at=utcnow(), notify_urls=[TELEGRAM], gpu_model="RTX 4090")
    con.close()
    result = cli("watch", "list", "--db", str(db))
    assert "watch #1 stores a literal secret" in flat(result.stderr)
    assert "AAHsecretTokenValue42" not in result.output
