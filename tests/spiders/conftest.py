"""Fixtures of the spider tests (helpers to import live in `crawl_kit` and
`spider_fixture_cases`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from replay import ReplayServer


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    """A replay server of the default recordings, for one test."""
    with ReplayServer() as srv:
        yield srv
