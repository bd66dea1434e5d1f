"""Watches that can never fire, and inputs read as "everything", are refused in one line
(audit, CLI): `--min-vram 9999`, an RTX 4090 with 80 GB, an empty --region, a price cap
past what the table stores, an outbox --status that is no status."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpurent.cli.app import build_app

HOOK = "json://127.0.0.1:9/hook"


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(build_app(), list(args))
    return result.exit_code, " ".join(result.stderr.split())


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (["--min-vram", "9999"], "no card has 9999 GB"),
        (
            ["--gpu", "4090", "--min-vram", "80"],
            "no RTX 4090 has 80 GB",
        ),
        (["--gpu", "4090", "--region", ""], "a region is empty text"),
        (["--gpu", "4090", "--max-price", "1e30"], "must be below 1,000,000,000"),
    ],
)
def test_a_watch_that_could_never_fire_is_refused(
    tmp_path: Path, options: list[str], said: str
) -> None:
    db = tmp_path / "w.duckdb"
    code, err = _run("watch", "add", *options, "--notify", HOOK, "--db", str(db))
    assert code == 2 and said in err, err
    assert not db.exists(), "nothing written"


def test_a_watch_on_a_size_the_card_comes_in_is_taken(tmp_path: Path) -> None:
    code, _ = _run("watch", "add", "--gpu", "4090", "--min-vram", "48", "--notify", HOOK,
                   "--db", str(tmp_path / "w.duckdb"))  # fmt: skip
    assert code == 0


def test_an_outbox_status_that_is_no_status_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    assert _run("watch", "add", "--gpu", "4090", "--notify", HOOK, "--db", str(db))[0] == 0
    code, err = _run("watch", "outbox", "--status", "nosuch", "--db", str(db))
    assert code == 2 and "one of pending, sent" in err
    assert _run("watch", "outbox", "--status", "PENDING", "--db", str(db))[0] == 0


def test_a_poll_whose_every_crawl_failed_is_no_quiet_market() -> None:
    """Audit (operations): `watch poll` exited 0 with "0 alert(s)" when every provider it
    polled failed: a cron job could not tell a blind poll from a quiet market."""
    import typer

    from gpurent.cli.watch import _refuse_blind_poll

    failed = {"provider": "vastai", "action": "polled", "status": "failed"}
    skipped = {"provider": "autodl", "action": "skipped", "status": None}
    with pytest.raises(typer.Exit) as stopped:
        _refuse_blind_poll({"providers": [failed, skipped]})
    assert stopped.value.exit_code == 1
    _refuse_blind_poll({"providers": [failed, failed | {"provider": "x", "status": "ok"}]})
    _refuse_blind_poll({"providers": [skipped]})  # nothing was due: not blind


def test_a_watch_added_to_a_new_path_says_it_created_a_warehouse(tmp_path: Path) -> None:
    """Audit (CLI): a mistyped --db made a new warehouse holding the only watch, unsaid."""
    db = tmp_path / "typo.duckdb"
    result = CliRunner().invoke(build_app(), ["watch", "add", "--gpu", "4090", "--notify", HOOK,
                                              "--db", str(db)])  # fmt: skip
    assert result.exit_code == 0 and "created a new warehouse" in result.stderr
    again = CliRunner().invoke(build_app(), ["watch", "add", "--gpu", "H100", "--notify", HOOK,
                                             "--db", str(db)])  # fmt: skip
    assert again.exit_code == 0 and "created a new warehouse" not in again.stderr


def test_an_empty_precision_is_refused_not_read_as_bf16(tmp_path: Path) -> None:
    code, err = _run("size", "--model", "llama-3.1-8b", "--precision", "", "--prompt-tokens",
                     "100", "--gen-tokens", "10", "--db", str(tmp_path / "none.duckdb"))  # fmt: skip
    assert code == 2 and "precision is empty" in err
