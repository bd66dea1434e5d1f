"""Many writers and readers on one DuckDB file: wait for the lock, say "busy" in one line,
never show half a load."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import warehouse.db as db_module
from flows.nightly import load_outcome
from tests.reliability.rel_kit import (
    make_outcome,
    reader_verdict,
    run_gpurent,
    writer_held,
)
from warehouse.db import READER_WAIT_S, WRITER_WAIT_S, connect, fetch_one, lock_wait_s
from warehouse.errors import WarehouseError, WarehouseLocked


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "var" / "gpurent.duckdb"


def test_lock_wait_defaults_and_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GPURENT_LOCK_WAIT_S", raising=False)
    assert lock_wait_s(read_only=False) == WRITER_WAIT_S == 120
    assert lock_wait_s(read_only=True) == READER_WAIT_S
    monkeypatch.setenv("GPURENT_LOCK_WAIT_S", "7.5")
    assert lock_wait_s(read_only=False) == lock_wait_s(read_only=True) == 7.5
    monkeypatch.setenv("GPURENT_LOCK_WAIT_S", "soon")
    with pytest.raises(WarehouseError, match="GPURENT_LOCK_WAIT_S"):
        lock_wait_s(read_only=True)
    monkeypatch.setenv("GPURENT_LOCK_WAIT_S", "-1")
    with pytest.raises(WarehouseError, match="GPURENT_LOCK_WAIT_S"):
        lock_wait_s(read_only=False)


def test_a_reader_and_a_writer_that_give_up_say_warehouse_busy(db: Path) -> None:
    with writer_held(db) as holder:
        for read_only in (True, False):
            with pytest.raises(WarehouseLocked) as caught:
                connect(db, read_only=read_only, wait_s=0)
            message = str(caught.value)
            assert message.startswith(
                f"warehouse busy: another process, PID {holder.pid}, holds {db}"
            )
            assert message.count("try again") == 1, message  # said once
            assert message.endswith("try again shortly (or set GPURENT_LOCK_WAIT_S)")
            assert f"PID {holder.pid}" in message


def test_a_writer_waits_for_the_lock_then_gets_in(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    refused = threading.Event()
    real = db_module._try_open

    def noting_refusals(path: Path, *, read_only: bool) -> object:
        opened = real(path, read_only=read_only)
        if isinstance(opened, str):
            refused.set()
        return opened

    monkeypatch.setattr(db_module, "_try_open", noting_refusals)
    got: dict[str, object] = {}

    def open_writer() -> None:
        try:
            con = connect(db, wait_s=600)
            got["runs"] = fetch_one(con, "SELECT count(*) FROM crawl_runs")
            con.close()
        except BaseException as exc:
            got["error"] = exc

    with writer_held(db):
        worker = threading.Thread(target=open_writer)
        worker.start()
        # Released only once the writer has been turned away at least once: it must wait.
        assert refused.wait(timeout=600), "the writer never tried"
    worker.join(timeout=600)
    assert "error" not in got, got
    assert got["runs"] == (0,)


def test_the_cli_says_warehouse_busy_in_one_line_with_exit_2(db: Path, tmp_path: Path) -> None:
    with writer_held(db):
        done = run_gpurent(
            "cheapest", "--min-vram", "24", "--db", str(db), env={"GPURENT_LOCK_WAIT_S": "0"}
        )
    assert reader_verdict(done) == "busy"
    assert str(db) in done.stderr
    assert "GPURENT_LOCK_WAIT_S" in done.stderr


def test_a_reader_during_a_load_sees_the_last_committed_state(db: Path, tmp_path: Path) -> None:
    first = make_outcome(tmp_path / "feeds", "run-1", "vastai", 5, hour=1)
    second = make_outcome(tmp_path / "feeds", "run-2", "vastai", 8, hour=2)
    con = connect(db)
    load_outcome(con, first)
    before = _state(con)
    seen: list[tuple[object, ...]] = []

    class Peeking:
        """Forwards to the connection; at each INSERT of the load, a second connection to
        the same database reads what a reader would see at that moment."""

        def __getattr__(self, name: str) -> object:
            return getattr(con, name)

        def execute(self, sql: str, *args: object, **kwargs: object) -> object:
            result = con.execute(sql, *args, **kwargs)
            if sql.lstrip().upper().startswith("INSERT"):
                seen.append(_state(con.cursor()))
            return result

    try:
        load_outcome(Peeking(), second)  # type: ignore[arg-type]
        after = _state(con)
    finally:
        con.close()
    assert seen, "the load inserted nothing"
    assert set(seen) == {before}, "a reader saw part of a load"
    assert after != before and after[0] == 2


def _state(con: object) -> tuple[object, ...]:
    runs = fetch_one(con, "SELECT count(*), sum(offers) FROM crawl_runs")  # type: ignore[arg-type]
    current = fetch_one(con, "SELECT count(*) FROM current_offers")  # type: ignore[arg-type]
    assert runs is not None and current is not None
    return (*runs, *current)
