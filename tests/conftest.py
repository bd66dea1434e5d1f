"""Shared fixtures: one Prefect test harness per session, CLI runner helpers, and one
migrated warehouse file per session that each new warehouse of a test starts as a copy of."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# The fast and slow tiers, and the Hypothesis profiles (tests/tiers.py).
pytest_plugins = ("tiers",)

# Tests never reach the internet: keep Prefect from trying.
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
# The commands size their tables from COLUMNS when the output is no terminal; the tests
# read tables at the pipe width unless they set COLUMNS themselves. A caller's shell, or a
# pytest-xdist worker (which starts with COLUMNS=80 and LINES=24), must not change that.
for _size in ("COLUMNS", "LINES"):
    os.environ.pop(_size, None)

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def prefect_harness(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A temporary Prefect home and ephemeral API for real flow runs (slow to start: once)."""
    home = tmp_path_factory.mktemp("prefect-home")
    old = os.environ.get("PREFECT_HOME")
    os.environ["PREFECT_HOME"] = str(home)
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=180):
        yield
    if old is None:
        os.environ.pop("PREFECT_HOME", None)
    else:
        os.environ["PREFECT_HOME"] = old


# -- a new warehouse file is a copy of one migrated once per session --------------------
# Migrating a new DuckDB file runs every script of warehouse.migrations (a tenth to a
# quarter of a second a file, and the suite makes hundreds). In this process, a writer that
# opens a warehouse file that does not exist yet finds a copy of the session's own, made by
# the real migrations (``migrated_warehouse``), in its place (linked there atomically, so a
# file made meanwhile by someone else is kept); `connect` then migrates it as ever (nothing
# left to apply) and goes on. Processes the tests start migrate their files themselves, and
# a module about what migrations do to a new file (``MIGRATES_FRESH_FILES = True``:
# tests/warehouse/test_warehouse_migrations.py, which also holds the copy equal to a fresh
# file) gets the real first migration in every test.


@pytest.fixture(scope="session")
def migrated_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path | None:
    """A warehouse file made by `warehouse.db.connect` (None: a lake is configured)."""
    import warehouse.db as wdb

    path = tmp_path_factory.mktemp("migrated-warehouse") / "template.duckdb"
    wdb.connect(path).close()  # the real migrations, once; closing checkpoints the file
    return path if path.is_file() else None


@pytest.fixture(autouse=True)
def _new_warehouses_start_migrated(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    if getattr(request.module, "MIGRATES_FRESH_FILES", False):
        return
    template: Path | None = request.getfixturevalue("migrated_warehouse")
    if template is None:
        return
    import warehouse.db as wdb

    real_open = wdb._try_open

    def open_from_template(db_path: Path, *, read_only: bool) -> Any:
        if not read_only and not os.path.lexists(db_path) and db_path.parent.is_dir():
            fd, staged = tempfile.mkstemp(dir=db_path.parent, suffix=".template")
            os.close(fd)
            try:
                shutil.copyfile(template, staged)
                os.link(staged, db_path)  # fails if the file appeared meanwhile: kept
            except OSError:
                pass  # then `connect` makes and migrates it itself
            finally:
                os.unlink(staged)
        return real_open(db_path, read_only=read_only)

    monkeypatch.setattr(wdb, "_try_open", open_from_template)


# The tests' made-up providers count free cards per machine, as AutoDL does: their per-card
# offers may be rented at more cards than listed (gpurent_core.providers). In process only:
# a dashboard or CLI run in a process of its own knows only the registry's providers.
TEST_PROVIDERS_PER_MACHINE = frozenset({"acme", "zeta"})


@pytest.fixture(autouse=True)
def _test_providers_count_per_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpurent_core import providers

    monkeypatch.setattr(
        providers,
        "PER_MACHINE_FREE_COUNTS",
        providers.PER_MACHINE_FREE_COUNTS | TEST_PROVIDERS_PER_MACHINE,
    )
