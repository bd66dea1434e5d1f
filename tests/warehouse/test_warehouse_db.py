"""Opening the warehouse: writers create and migrate, readers wait for the writer's lock."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import duckdb
import pytest
from wh_kit import REPO_ROOT, FeedKit

from warehouse.db import connect, fetch_one
from warehouse.errors import WarehouseLocked, WarehouseMissing
from warehouse.load import load_run
from warehouse.queries import latest_offers

HOLD_WRITER = """
import sys
from warehouse.db import connect
con = connect(sys.argv[1])
print("ready", flush=True)
sys.stdin.readline()
con.close()
"""


def test_a_writer_creates_parent_folders_and_the_file(db_path: Path) -> None:
    assert not db_path.parent.exists()
    con = connect(db_path)
    con.close()
    assert db_path.is_file()


def test_sessions_run_in_utc(con: duckdb.DuckDBPyConnection) -> None:
    assert fetch_one(con, "SELECT current_setting('TimeZone')") == ("UTC",)


def test_a_reader_of_a_missing_file_gets_a_clear_error(db_path: Path) -> None:
    with pytest.raises(WarehouseMissing, match="no warehouse at"):
        connect(db_path, read_only=True)
    assert not db_path.exists()  # a reader never creates the file


def test_a_reader_of_a_foreign_duckdb_file_gets_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "other.duckdb"
    duckdb.connect(str(path)).close()
    with pytest.raises(WarehouseMissing, match="never migrated"):
        connect(path, read_only=True)


def test_readers_work_while_no_writer_is_open(db_path: Path, kit: FeedKit) -> None:
    run = kit.run(1)
    writer = connect(db_path)
    load_run(writer, run, kit.write("one", [kit.offer(run)]))
    writer.close()

    first = connect(db_path, read_only=True)
    second = connect(db_path, read_only=True)  # readers share the file
    try:
        assert latest_offers(first)["offer_key"].to_list() == ["h100-1"]
        assert latest_offers(second).height == 1
        with pytest.raises(duckdb.Error):
            first.execute("DELETE FROM observations")
    finally:
        first.close()
        second.close()


def test_a_reader_waits_for_the_writer_then_opens(db_path: Path) -> None:
    connect(db_path).close()
    with subprocess.Popen(
        [sys.executable, "-c", HOLD_WRITER, str(db_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO_ROOT,
    ) as holder:
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline().strip() == "ready"
        with pytest.raises(WarehouseLocked, match=r"another process.* holds"):
            connect(db_path, read_only=True, retries=2, retry_delay_s=0.01)

        stdin = holder.stdin

        def release() -> None:
            stdin.write("go\n")
            stdin.flush()

        timer = threading.Timer(0.3, release)
        timer.start()
        try:
            reader = connect(db_path, read_only=True, retries=400, retry_delay_s=0.05)
        finally:
            timer.join()
        assert fetch_one(reader, "SELECT count(*) FROM crawl_runs") == (0,)
        reader.close()
        assert holder.wait(timeout=30) == 0
