"""Secrets at rest (issue 13): a secret given as ${ENV} never reaches the warehouse file,
through add, poll, a failed send (its error is stored) and a good send; what is shown
(list, outbox, logs) never holds it."""

from __future__ import annotations

import logging
from datetime import timedelta
from pathlib import Path

import pytest

from gpurent_core.model import StockStatus, utcnow
from gpurent_core.notify import send
from tests.watch.watch_kit import Market, cli, cli_json, free_port, receiving
from warehouse.db import connect
from warehouse.watch.evaluate import evaluate_watches
from warehouse.watch.outbox import Backoff, deliver_pending

PASSWORD = "Pw-9f3c1e77aa-from-env"
MARKER = "visible-hook-path-4711"


def file_bytes(db: Path) -> bytes:
    """The database file and its write-ahead log, if any."""
    wal = db.with_name(db.name + ".wal")
    return db.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


def test_a_secret_given_by_reference_never_reaches_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("HOOK_PW", PASSWORD)
    db = tmp_path / "w.duckdb"
    port = free_port()
    url = f"json://gpurent:${{HOOK_PW}}@127.0.0.1:{port}/{MARKER}"
    cli("watch", "add", "--gpu", "RTX 4090", "--notify", url, "--db", str(db))

    con = connect(db)
    market = Market(con, tmp_path / "feeds")
    created = con.execute("SELECT created_at FROM watches").fetchall()[0][0]
    market.start = created - timedelta(seconds=50)
    market.poll([market.offer(status=StockStatus.SOLD_OUT, available_count=0)])
    market.poll([market.offer(available_count=2)])
    assert len(evaluate_watches(con, now=utcnow()).alerts) == 1
    with caplog.at_level(logging.DEBUG):
        down = deliver_pending(con, send, now=utcnow(), backoff=Backoff(base_s=0))
    assert down.failed  # the receiver is down: the error is stored in the outbox
    with receiving(port) as hook:
        up = deliver_pending(con, send, now=utcnow(), ignore_schedule=True)
        (post,) = hook.received()
    assert up.sent
    con.execute("CHECKPOINT")
    con.close()

    # The secret was used (basic auth), and the check below can see what the file holds.
    assert post["headers"]["Authorization"].startswith("Basic ")
    data = file_bytes(db)
    assert MARKER.encode() in data and b"${HOOK_PW}" in data
    assert PASSWORD.encode() not in data
    assert PASSWORD not in caplog.text

    for args in (["watch", "list"], ["watch", "outbox"]):
        for fmt in ("table", "json", "csv"):
            assert PASSWORD not in cli(*args, "--db", str(db), "--format", fmt).output
    (row,) = cli_json("watch", "outbox", "--db", str(db))
    assert row["status"] == "sent" and row["attempts"] == 2


def test_a_literal_secret_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    cli("watch", "add", "--gpu", "RTX 4090", "--db", str(db),
        "--notify", f"json://gpurent:{PASSWORD}@127.0.0.1:9/hook", code=2)  # fmt: skip
    assert not db.exists()
    cli("watch", "add", "--gpu", "RTX 4090", "--notify", "json://127.0.0.1:9/x", "--db", str(db))
    cli("watch", "add", "--gpu", "RTX 4090", "--db", str(db),
        "--notify", f"json://gpurent:{PASSWORD}@127.0.0.1:9/hook", code=2)  # fmt: skip
    assert PASSWORD.encode() not in file_bytes(db)


@pytest.mark.parametrize(
    ("url", "secret"),
    [
        ("json://hooks.example.com/x?token=hunter2", "token"),
        ("json://hooks.example.com/x?access_token=hunter2", "access_token"),
        ("json://hooks.example.com/x?X-Api-Key=hunter2", "X-Api-Key"),
        ("json://hooks.example.com/x?+Authorization=Bearer%20hunter2", "Authorization"),
        ("json://hooks.example.com/x?token=${HOOK_TOKEN}", None),  # a reference: stored
        ("json://hooks.example.com/x?format=markdown&monkey=1", None),  # no credential
    ],
)
def test_a_credential_in_a_url_option_is_a_literal_secret(url: str, secret: str | None) -> None:
    """Audit (CLI): `?token=` got through (apprise's privacy mode hides only the parts it
    knows of each service, and a generic webhook's options are not among them)."""
    from gpurent_core.notify import literal_secrets

    found = literal_secrets(url, {"HOOK_TOKEN": "from-the-environment"})
    if secret is None:
        assert found == []
    else:
        assert any("option" in f and secret in f for f in found), found
        assert "hunter2" not in " ".join(found)  # described, never quoted
