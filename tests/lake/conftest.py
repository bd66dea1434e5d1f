"""One throwaway PostgreSQL for every lake test (the DuckLake catalog); each test makes its
own database in it. Missing PostgreSQL fails the tests with what to install, never skips."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pg import Postgres, PostgresUnavailable, running_postgres


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    try:
        with running_postgres() as server:
            yield server
    except PostgresUnavailable as exc:
        pytest.fail(f"the lake tests need PostgreSQL: {exc}", pytrace=False)
