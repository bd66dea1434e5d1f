"""A load runs under a lower DuckDB memory limit (issue 13) and gives the limit back.

During load_run the staged feed and the weave's tables may use at most
``load.LOAD_MEMORY_LIMIT`` of DuckDB's memory (beyond it DuckDB spills to its temporary
directory); after the load, whatever its outcome, the connection has the limit it had. The
feed's digest, taken in a thread beside DuckDB, is the file's sha256 across blocks.
"""

from __future__ import annotations

import hashlib
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pytest
from wh_kit import FeedKit

from warehouse import feed as feed_module
from warehouse import feed_file, load
from warehouse.feed import read_feed
from warehouse.load import load_run


def memory_limit(con: duckdb.DuckDBPyConnection) -> str:
    return str(con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0])


def write_feed(kit: FeedKit, name: str, keys: int = 3) -> tuple[Any, Path]:
    run = kit.run(1)
    lines: list[Any] = [kit.offer(run, f"k{i}") for i in range(keys)]
    return run, kit.write(name, [*lines, kit.quarantine(run)])


def test_the_load_runs_under_the_lower_limit_and_gives_the_default_back(
    con: duckdb.DuckDBPyConnection, kit: FeedKit, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = memory_limit(con)
    seen: list[str] = []
    original = feed_module.read_into

    def spy(c: duckdb.DuckDBPyConnection, *args: Any, **kwargs: Any) -> Any:
        seen.append(memory_limit(c))
        return original(c, *args, **kwargs)

    monkeypatch.setattr(load, "read_into", spy)
    run, path = write_feed(kit, "feed")
    result = load_run(con, run, path)
    assert result.offers == 3 and result.quarantined == 1
    assert seen and load._bytes(seen[0]) <= load._bytes(load.LOAD_MEMORY_LIMIT)
    assert load._bytes(seen[0]) < load._bytes(before)
    assert memory_limit(con) == before


def test_a_failed_load_gives_the_limit_back(
    con: duckdb.DuckDBPyConnection, kit: FeedKit, monkeypatch: pytest.MonkeyPatch
) -> None:
    con.execute("SET memory_limit = '3GiB'")  # set by the caller: not the default
    before = memory_limit(con)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise duckdb.IOException("disk gone")

    monkeypatch.setattr(load, "weave_in_order", broken)
    run, path = write_feed(kit, "feed")
    with pytest.raises(duckdb.IOException):
        load_run(con, run, path)
    assert memory_limit(con) == before
    assert con.execute("SELECT count(*) FROM crawl_runs").fetchall() == [(0,)]


def test_a_lower_limit_is_never_raised(con: duckdb.DuckDBPyConnection, kit: FeedKit) -> None:
    con.execute("SET memory_limit = '200MB'")
    before = memory_limit(con)
    run, path = write_feed(kit, "feed")
    assert load_run(con, run, path).offers == 3
    assert memory_limit(con) == before


@pytest.mark.parametrize(
    ("size", "expected"),
    [
        ("600MB", 600 * 10**6),
        ("572.2 MiB", 572.2 * 2**20),
        ("18.8 GiB", 18.8 * 2**30),
        ("1.5GB", 1.5 * 10**9),
        ("512 KiB", 512 * 2**10),
        ("", float("inf")),
        ("lots", float("inf")),
    ],
)
def test_sizes_read_as_duckdb_writes_them(size: str, expected: float) -> None:
    assert load._bytes(size) == pytest.approx(expected)


@pytest.mark.parametrize("block_bytes", [97, 4096, 1 << 20])
def test_the_digest_is_the_files_sha256_whatever_the_blocks(
    kit: FeedKit, monkeypatch: pytest.MonkeyPatch, block_bytes: int
) -> None:
    _, path = write_feed(kit, "digest", keys=40)
    monkeypatch.setattr(feed_file, "BLOCK_BYTES", block_bytes)
    batch = read_feed(path, provider="acme", run_id="run-1")
    assert batch.offers.height == 40
    assert batch.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_digest_of_an_empty_feed(kit: FeedKit) -> None:
    path = kit.root / "empty.jsonl"
    path.write_bytes(b"")
    assert read_feed(path).sha256 == hashlib.sha256(b"").hexdigest()


def test_changed_offers_between_a_bad_line_and_a_blank_one_take_their_new_state(
    tmp_path: Path, kit: FeedKit
) -> None:
    """A later run opens versions for its new and changed offers; a bad line and a blank
    one between them change nothing."""
    from warehouse.db import connect

    first = kit.run(1)
    second = kit.run(2)
    keys = [f"k{i}" for i in range(9)]
    feed_1 = kit.write("one", [kit.offer(first, k) for k in keys])
    changed = {"k1": Decimal("9.5"), "k4": Decimal("0.75"), "k8": Decimal("3")}
    lines: list[Any] = [kit.offer(second, k, price=changed.get(k, Decimal("1.98"))) for k in keys]
    lines[3:3] = ["{not json", ""]
    lines.append(kit.offer(second, "k9", gpu_model="A100"))
    feed_2 = kit.write("two", lines)
    con = connect(tmp_path / "changed.duckdb")
    for run, feed in ((first, feed_1), (second, feed_2)):
        load_run(con, run, feed)
    rows = con.execute(
        "SELECT offer_key, price, gpu_model, fees, plans FROM latest_offers ORDER BY offer_key"
    ).fetchall()
    con.close()
    assert [r[0] for r in rows] == [*keys, "k9"]
    assert {r[0]: r[1] for r in rows if r[0] in changed} == changed
    assert all(r[3] and r[4] for r in rows)  # fees and plans
