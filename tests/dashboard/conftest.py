"""Dashboard fixtures: a demo warehouse, the dashboard serving it, one browser per module."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from dash_browser import CHROMIUM_ARGS, VIEWPORT, Watch, chromium_path, running_dashboard
from dash_kit import build_demo_db
from playwright.sync_api import Browser, Page, sync_playwright


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Two weeks of history: the price index, and an hour-of-week availability pattern.
    return build_demo_db(tmp_path_factory.mktemp("dash"), datetime.now(UTC), days=14)


@pytest.fixture(scope="module")
def dashboard_url(demo_db: Path) -> Iterator[str]:
    with running_dashboard(demo_db, demo_db.parent / "streamlit.log") as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    executable = chromium_path()
    if executable is None:
        pytest.skip("no system Chromium (set GPURENT_CHROMIUM or install `chromium`)")
    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def watch() -> Watch:
    return Watch()


@pytest.fixture
def page(browser: Browser, watch: Watch, tmp_path: Path) -> Iterator[Page]:
    context = browser.new_context(viewport=VIEWPORT, accept_downloads=True, locale="en-US")
    context.set_default_timeout(60_000)
    tab = context.new_page()
    watch.attach(tab)
    yield tab
    context.close()
