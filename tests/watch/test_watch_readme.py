"""The README's watch example, run exactly as written, end to end against the bundled
`restock` replay scene: it must fire.

It never did before the --per fix: with `--count 2 --max-price 2.5 --per hour`, the cap was
compared with the price of both cards (2 x 1.98 CNY + the disk, over 2.5), while the user
wrote a per-card price. The commands are read from README.md itself, so the README cannot
drift away from what works; only the webhook's address is pointed at a receiver here (the
README's 127.0.0.1:8080 may be taken), and the ${TG_BOT_TOKEN} the example references is set
for `watch add` and unset for the polls, so the Telegram delivery fails at once (no network)
and waits for a retry, while the webhook gets the alert.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tests.cli_helpers import run_gpurent, run_gpurent_json
from tests.watch.watch_kit import receiving
from warehouse.db import connect

pytestmark = pytest.mark.prefect

README = Path(__file__).resolve().parents[2] / "README.md"
README_HOOK = "json://127.0.0.1:8080/hook"


def readme_commands() -> list[list[str]]:
    """The `gpurent watch add` and `gpurent watch poll --replay` lines of the README's
    watch section, continuation lines joined and comments dropped, as argument lists."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("### Watches") :]
    start = section.index("```sh") + len("```sh")
    block = section[start : section.index("```", start)]
    joined = re.sub(r"\\\n\s*", " ", block)
    commands = []
    for line in joined.splitlines():
        args = shlex.split(line, comments=True)
        if args[:3] == ["gpurent", "watch", "add"] or (
            args[:3] == ["gpurent", "watch", "poll"] and "--replay" in args
        ):
            commands.append(args[1:])
    return commands


def test_the_readme_has_the_example() -> None:
    add, *polls = readme_commands()
    assert add[:2] == ["watch", "add"] and README_HOOK in add
    assert [p[p.index("--step") + 1] for p in polls] == ["1", "2"]


def test_the_readme_watch_example_fires_on_the_restock_scene(
    prefect_harness: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "gpurent.duckdb"
    monkeypatch.setenv("GPURENT_DB", str(db))
    monkeypatch.setenv("GPURENT_WORK_DIR", str(tmp_path / "feeds"))
    monkeypatch.setenv("TG_BOT_TOKEN", "123456789:AAHreadmeExampleToken")
    add, step1, step2 = readme_commands()
    # The real console script, each command its own process as a user runs it (Prefect's
    # log handlers keep the first stream they see, which an in-process runner closes).
    with receiving() as hook:
        run_gpurent(*[hook.url if a == README_HOOK else a for a in add])
        monkeypatch.delenv("TG_BOT_TOKEN")
        first = run_gpurent(*step1, timeout=600).stdout
        assert "0 alert(s)" in first, first
        second = run_gpurent(*step2, timeout=600).stdout
        assert "1 alert(s)" in second, second
        (post,) = hook.received()
    title = post["json"]["title"]
    assert "RTX 4090" in title and "autodl" in title
    assert "2 free card(s)" in post["json"]["message"]
    rows = run_gpurent_json("watch", "outbox")
    assert sorted(r["status"] for r in rows) == ["pending", "sent"]  # Telegram: for a retry
    pending = next(r for r in rows if r["status"] == "pending")
    assert "TG_BOT_TOKEN" in pending["last_error"]
    con = connect(db, read_only=True)
    try:
        ((urls,),) = con.execute("SELECT notify_urls FROM watches").fetchall()
    finally:
        con.close()
    assert "tgram://${TG_BOT_TOKEN}/CHAT_ID" in urls  # the reference, never the token
