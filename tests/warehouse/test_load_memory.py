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
    original = feed_module.stage_feed

    def spy(c: duckdb.DuckDBPyConnection, *args: Any, **kwargs: Any) -> Any:
        seen.append(memory_limit(c))
        return original(c, *args, **kwargs)

    monkeypatch.setattr(load, "stage_feed", spy)
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

    monkeypatch.setattr(load, "weave_run", broken)
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


def test_current_offers_built_in_parts_are_the_same(
    tmp_path: Path, kit: FeedKit, monkeypatch: pytest.MonkeyPatch
) -> None:
    """current_offers is written in parts (its join may spill): any part size gives the same
    rows, lists included."""
    from warehouse import history
    from warehouse.db import connect

    run, path = write_feed(kit, "parts", keys=7)

    def current(con: duckdb.DuckDBPyConnection) -> list[Any]:
        return con.execute(
            "SELECT * EXCLUDE (age_s, fees, plans, stale), fees, plans FROM latest_offers"
            " ORDER BY offer_key"
        ).fetchall()

    whole = connect(tmp_path / "whole.duckdb")
    load_run(whole, run, path)
    monkeypatch.setattr(history, "_CURRENT_PART_OFFERS", 2)  # 4 parts
    parts = connect(tmp_path / "parts.duckdb")
    load_run(parts, run, path)
    rows = current(parts)
    assert len(rows) == 7 and all(row[-2] and row[-1] for row in rows)  # fees, plans
    assert rows == current(whole)
    whole.close()
    parts.close()


def test_parts_by_feed_line_give_the_same_state_after_a_run_that_changes_some_offers(
    tmp_path: Path, kit: FeedKit, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parts are ranges of feed lines; a later run opens only the offers that changed,
    spread over those ranges, with a bad line and a blank one between them: the state is the
    same whatever the part size."""
    from warehouse import history
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

    def state(con: duckdb.DuckDBPyConnection) -> list[Any]:
        return con.execute(
            "SELECT offer_key, price, gpu_model, fees, plans FROM latest_offers ORDER BY offer_key"
        ).fetchall()

    whole = connect(tmp_path / "whole.duckdb")
    for run, feed in ((first, feed_1), (second, feed_2)):
        load_run(whole, run, feed)
    monkeypatch.setattr(history, "_CURRENT_PART_OFFERS", 1)  # one opened offer a part
    parts = connect(tmp_path / "parts.duckdb")
    for run, feed in ((first, feed_1), (second, feed_2)):
        load_run(parts, run, feed)
    rows = state(parts)
    assert [r[0] for r in rows] == [*keys, "k9"]
    assert {r[0]: r[1] for r in rows if r[0] in changed} == changed
    assert rows == state(whole)
    whole.close()
    parts.close()


def test_line_ranges_cover_every_line_once() -> None:
    """The parts' ranges, for any span of lines and any count: contiguous, no gap, no overlap."""
    import duckdb as db

    from warehouse import history
    from warehouse.feed import OFFERS_TABLE

    con = db.connect()
    for lines, opened in ((1, 1), (10, 3), (10, 10), (10, 25), (7, 1)):
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE {OFFERS_TABLE} AS SELECT range + 5 AS _line FROM range({lines})"
        )
        ranges = history._line_ranges(con, opened * history._CURRENT_PART_OFFERS)
        covered = [n for low, high in ranges for n in range(low, high + 1)]
        assert covered == list(range(5, 5 + lines)), (lines, opened, ranges)
        assert len(ranges) == min(opened, lines)
