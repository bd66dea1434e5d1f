"""Where a command says it read or wrote: the file, or the lake (audit A4: a crawl into a
lake ended with "database: <a file it never wrote>")."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpurent.api.warehouse import warehouse_label


def test_a_file_is_named_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GPURENT_LAKE_CATALOG", raising=False)
    assert warehouse_label(Path("/data/gpurent.duckdb")) == "/data/gpurent.duckdb"


def test_a_lake_is_named_by_its_catalog_without_its_password(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GPURENT_LAKE_CATALOG", "dbname=gp host=/run/pg password=s3cret user=u")
    label = warehouse_label(Path("/data/gpurent.duckdb"))
    assert label.startswith("the lake, catalog dbname=gp")
    assert "s3cret" not in label and "password=***" in label
    assert "gpurent.duckdb" not in label
