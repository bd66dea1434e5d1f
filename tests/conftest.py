"""Shared fixtures: one Prefect test harness per session, CLI runner helpers."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

# The fast and slow tiers, and the Hypothesis profiles (tests/tiers.py).
pytest_plugins = ("tiers",)

# Tests never reach the internet: keep Prefect from trying.
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")

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
