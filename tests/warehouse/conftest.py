"""Warehouse fixtures: real DuckDB files under tmp_path (helpers live in wh_kit.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from wh_kit import FeedKit  # also puts the repo root on sys.path (see wh_kit)

from warehouse.db import connect


@pytest.fixture
def kit(tmp_path: Path) -> FeedKit:
    return FeedKit(tmp_path)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "var" / "warehouse" / "gpurent.duckdb"


@pytest.fixture
def con(db_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    connection = connect(db_path)
    yield connection
    connection.close()
