"""The warehouse and the one provider's market most watch tests evaluate against."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from tests.watch.watch_kit import Market
from warehouse.db import connect


@pytest.fixture
def con(tmp_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A fresh warehouse file; a module defines its own where it needs more in it."""
    connection = connect(tmp_path / "w.duckdb")
    yield connection
    connection.close()


@pytest.fixture
def market(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> Market:
    return Market(con, tmp_path / "feeds")
