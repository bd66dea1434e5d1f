"""A damaged warehouse is an ``ApiError`` (``WarehouseDamaged``) from every read of the library
API, whether DuckDB finds the damage when the file opens or only when a read reaches the bad
block: a program never meets a raw DuckDB exception for it."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from gpurent import api
from gpurent.api import views
from tests.warehouse.wh_kit import FeedKit
from warehouse.db import connect
from warehouse.errors import WarehouseDamaged as WarehouseLayerDamaged
from warehouse.load import load_run

BLOCK = 262_144  # DuckDB's block size
HEADER = 3 * 4096  # the file's headers, before the first block

READS: dict[str, Callable[[Path], Any]] = {
    "offers": lambda db: api.offers(db=db),
    "cheapest": lambda db: api.cheapest(24, db=db),
    "providers": lambda db: api.providers(db=db),
    "index": lambda db: api.index(db=db),
    "explain": lambda db: api.explain("acme", "o-1", db=db),
    "latest": views.latest,
    "quarantine": views.quarantine,
}


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A real warehouse, big enough to span blocks, as bytes."""
    root = tmp_path_factory.mktemp("damaged")
    kit = FeedKit(root)
    path = root / "good.duckdb"
    con = connect(path)
    try:
        for n in range(1, 4):
            run = kit.run(n)
            lines = [kit.offer(run, f"o-{i}", price=Decimal(2000 + i) / 1000) for i in range(600)]
            load_run(con, run, kit.write(f"r{n}", [*lines, kit.quarantine(run)]))
        con.execute("CHECKPOINT")
    finally:
        con.close()
    return path.read_bytes()


def spoiled(good: bytes, block: int, where: Path) -> Path:
    """The warehouse with one block's bytes overwritten: its checksum no longer matches."""
    data = bytearray(good)
    start = HEADER + block * BLOCK + 100
    data[start : start + 2000] = os.urandom(2000)
    where.write_bytes(bytes(data))
    return where


def opens(path: Path) -> bool:
    """Whether the warehouse layer opens the file at all (its damage may lie deeper)."""
    try:
        connect(path, read_only=True).close()
    except WarehouseLayerDamaged:
        return False
    return True


def test_every_read_of_a_damaged_warehouse_is_an_api_error(good: bytes, tmp_path: Path) -> None:
    blocks = (len(good) - HEADER) // BLOCK
    assert blocks >= 3
    seen: dict[str, set[str]] = {"at open": set(), "while reading": set()}
    for block in range(blocks):
        path = spoiled(good, block, tmp_path / f"b{block}.duckdb")
        when = "at open" if not opens(path) else "while reading"
        for name, read in READS.items():
            try:
                read(path)
            except api.WarehouseDamaged as exc:
                assert str(path) in str(exc) and "is damaged" in str(exc), exc
                assert isinstance(exc, api.ApiError) and isinstance(exc, api.NoWarehouse)
                seen[when].add(name)
            except (api.NoSuchOffer, api.UnknownName):
                pass  # the damage lay elsewhere: this read's answer is right as it is
            # anything else (a raw DuckDB error, the warehouse layer's own) fails the test
    # Both ways were met: damage found when opening and damage found by a read.
    assert seen["at open"] and seen["while reading"], seen


def test_the_message_names_the_file_and_what_to_do(good: bytes, tmp_path: Path) -> None:
    path = spoiled(good, 0, tmp_path / "first.duckdb")
    with pytest.raises(api.WarehouseDamaged) as info:
        api.offers(db=path)
    assert str(info.value).startswith(f"the warehouse {path} is damaged")
    assert "restore a backup" in str(info.value)
    assert info.value.argument == "db"


@pytest.mark.parametrize("content", [b"", b"not a database at all\n"], ids=["empty", "text"])
@pytest.mark.parametrize("read", sorted(READS))
def test_a_file_that_is_no_warehouse_is_an_api_error_naming_it(
    tmp_path: Path, content: bytes, read: str
) -> None:
    """Audit A1: an empty or foreign file gave a raw duckdb.IOException from the API while
    the CLI said it in one line; both now say the same line."""
    path = tmp_path / "other.duckdb"
    path.write_bytes(content)
    with pytest.raises(api.NotAWarehouse, match="is not a gpurent warehouse"):
        READS[read](path)


def test_another_databases_file_is_no_warehouse_and_nothing_is_fetched(tmp_path: Path) -> None:
    """Audit (CLI): a SQLite file as --db made DuckDB download its SQLite extension from the
    internet, then print a raw error naming the extension's path. Extensions are never
    fetched (warehouse.errors.NO_EXTENSION_FETCH): it is refused in one line naming it."""
    import sqlite3

    from typer.testing import CliRunner

    from gpurent.cli.app import build_app

    lite = tmp_path / "lite.db"
    with sqlite3.connect(lite) as con:
        con.execute("CREATE TABLE t (x)")
    with pytest.raises(api.NotAWarehouse, match=str(lite)):
        api.offers(db=lite)
    result = CliRunner().invoke(
        build_app(),
        ["watch", "add", "--gpu", "4090", "--notify", "json://h:9/x", "--db", str(lite)],
    )
    said = re.sub(r"[\s│]", "", result.stderr)  # the box may wrap a long path anywhere
    assert result.exit_code == 2 and "lite.db" in said and "notagpurentwarehouse" in said
    assert "extension" not in said


def test_a_writer_leaves_another_programs_duckdb_database_alone(tmp_path: Path) -> None:
    """Audit (CLI): `watch add --db theirs.duckdb` added gpurent's ~30 tables beside theirs."""
    import duckdb
    from typer.testing import CliRunner

    from gpurent.cli.app import build_app

    theirs = tmp_path / "theirs.duckdb"
    with duckdb.connect(str(theirs)) as con:
        con.execute("CREATE TABLE foo (x INTEGER)")
    result = CliRunner().invoke(
        build_app(),
        ["watch", "add", "--gpu", "4090", "--notify", "json://h:9/x", "--db", str(theirs)],
    )
    assert result.exit_code == 2 and "anotherprogram" in re.sub(r"[\s│]", "", result.stderr)
    with duckdb.connect(str(theirs), read_only=True) as con:
        assert con.execute("SELECT table_name FROM information_schema.tables").fetchall() == [
            ("foo",)
        ]
