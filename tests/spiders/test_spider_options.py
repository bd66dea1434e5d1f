"""SpiderOptions (issue 14): every crawl setting gpurent reads, typed, defaulted once, checked."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar

import pytest
from scrapy.settings import BaseSettings, Settings
from scrapy.utils.project import get_project_settings
from spider_fixture_cases import REPO_ROOT

from spiders import settings as project_settings
from spiders.base import ProviderSpider
from spiders.browser import BrowserPageSpider
from spiders.extensions import RunReport
from spiders.middlewares import RetryAfterMiddleware
from spiders.options import DEFAULTS, SETTING_NAMES, SpiderOptionError, SpiderOptions

# One value per field, written as `-s NAME=value` writes it (text), and what it reads as.
GIVEN: dict[str, tuple[str, Any]] = {
    "base_url": ("http://127.0.0.1:8765/vastai", "http://127.0.0.1:8765/vastai"),
    "run_id": ("20261004T120000Z-1a2b3c", "20261004T120000Z-1a2b3c"),
    "run_report": ("/tmp/vastai.report.json", Path("/tmp/vastai.report.json")),
    "page_size": ("100", 100),
    "max_pages": ("50", 50),
    "retry_after_max_s": ("5", 5.0),
    "retry_enabled": ("False", False),
    "retry_times": ("0", 0),
    "retry_http_codes": ("500,503", (500, 503)),
    "download_timeout_s": ("10", 10.0),
    "navigation_timeout_ms": ("60000", 60_000),
    "table_wait_ms": ("30000", 30_000),
    "browser_contexts": ("2", 2),
}


def test_every_field_has_a_setting_and_a_case() -> None:
    names = [f.name for f in dataclasses.fields(SpiderOptions)]
    assert list(SETTING_NAMES) == names
    assert set(GIVEN) == set(names)
    for field, (_text, value) in GIVEN.items():
        assert value != getattr(DEFAULTS, field), f"{field}: the case must differ from default"


@pytest.mark.parametrize("field", list(GIVEN))
def test_each_field_is_read_from_its_setting(field: str) -> None:
    text, expected = GIVEN[field]
    options = SpiderOptions.from_settings(BaseSettings({SETTING_NAMES[field]: text}))
    assert getattr(options, field) == expected
    # ...and only that field moved.
    assert dataclasses.replace(options, **{field: getattr(DEFAULTS, field)}) == DEFAULTS


def test_typed_values_from_a_settings_module_read_the_same() -> None:
    settings = BaseSettings(
        {"GPURENT_MAX_PAGES": 7, "GPURENT_RETRY_AFTER_MAX": 0.5, "RETRY_HTTP_CODES": [429, 503]}
    )
    options = SpiderOptions.from_settings(settings)
    assert (options.max_pages, options.retry_after_max_s) == (7, 0.5)
    assert options.retry_http_codes == (429, 503)


def test_defaults_when_nothing_is_set() -> None:
    assert SpiderOptions.from_settings(BaseSettings()) == DEFAULTS
    assert DEFAULTS.base_url is None and DEFAULTS.run_id is None and DEFAULTS.run_report is None
    assert DEFAULTS.page_size is None and DEFAULTS.max_pages == 200
    assert DEFAULTS.retry_after_max_s == 60.0 and DEFAULTS.retry_times == 3
    assert DEFAULTS.table_wait_ms == 15_000 and DEFAULTS.navigation_timeout_ms == 30_000


def test_the_project_settings_are_the_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    """Declared once: spiders.settings takes every value from DEFAULTS (and so reads back as
    DEFAULTS), whatever Scrapy's own default for the setting is."""
    monkeypatch.setenv("SCRAPY_SETTINGS_MODULE", "spiders.settings")
    assert SpiderOptions.from_settings(get_project_settings()) == DEFAULTS
    for field, name in SETTING_NAMES.items():
        if hasattr(project_settings, name):
            declared = getattr(project_settings, name)
            default = getattr(DEFAULTS, field)
            assert declared == (list(default) if isinstance(default, tuple) else default)
    # Scrapy's defaults differ (RETRY_TIMES 2): the project one wins, as before.
    assert Settings().getint("RETRY_TIMES") != DEFAULTS.retry_times


def test_blank_and_zero_mean_unset() -> None:
    settings = BaseSettings(
        {"GPURENT_BASE_URL": "  ", "GPURENT_RUN_ID": "", "GPURENT_PAGE_SIZE": "0"}
    )
    options = SpiderOptions.from_settings(settings)
    assert options.base_url is None and options.run_id is None and options.page_size is None


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("GPURENT_MAX_PAGES", "lots", "a whole number >= 1"),
        ("GPURENT_MAX_PAGES", "0", "a whole number >= 1"),
        ("GPURENT_MAX_PAGES", "2.5", "a whole number >= 1"),
        ("GPURENT_PAGE_SIZE", "-5", "a whole number >= 0"),
        ("GPURENT_RETRY_AFTER_MAX", "soon", "a number of seconds >= 0"),
        ("GPURENT_RETRY_AFTER_MAX", "-1", "a number of seconds >= 0"),
        ("GPURENT_RETRY_AFTER_MAX", "nan", "a number of seconds >= 0"),
        ("DOWNLOAD_TIMEOUT", "0", "a number of seconds > 0"),
        ("RETRY_TIMES", "-1", "a whole number >= 0"),
        ("RETRY_ENABLED", "maybe", "true or false"),
        ("RETRY_HTTP_CODES", "500,abc", "HTTP statuses"),
        ("RETRY_HTTP_CODES", "5000", "HTTP statuses"),
        ("GPURENT_TABLE_WAIT_MS", "quick", "a whole number >= 0"),
        ("PLAYWRIGHT_MAX_CONTEXTS", "0", "a whole number >= 1"),
        ("GPURENT_BASE_URL", 8765, "text"),
    ],
)
def test_a_bad_value_is_refused_with_a_clear_message(name: str, value: Any, expected: str) -> None:
    with pytest.raises(SpiderOptionError) as caught:
        SpiderOptions.from_settings(BaseSettings({name: value}))
    message = str(caught.value)
    assert message.startswith(f"setting {name}={value!r}: expected {expected}")
    assert caught.value.setting == name
    assert isinstance(caught.value, ValueError)


def test_options_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULTS.max_pages = 1  # type: ignore[misc]


class _Spider(ProviderSpider):
    name = "options_probe"
    default_base_url = "https://api.example.invalid/"
    default_page_size = 40


def _spider(values: dict[str, Any]) -> _Spider:
    spider = _Spider()
    spider.settings = Settings(values)  # what Scrapy's crawler gives it
    return spider


def test_the_spider_reads_its_options_once() -> None:
    spider = _spider({"GPURENT_BASE_URL": "http://127.0.0.1:9/x/", "GPURENT_MAX_PAGES": "3"})
    assert spider.base_url == "http://127.0.0.1:9/x"
    assert spider.max_pages == 3 and spider.page_size == 40
    assert spider.options is spider.options
    plain = _spider({})
    assert plain.base_url == "https://api.example.invalid"
    assert plain.max_pages == DEFAULTS.max_pages
    assert _spider({"GPURENT_PAGE_SIZE": "7"}).page_size == 7
    assert _spider({"GPURENT_RUN_ID": "run-9"}).run_id == "run-9"


def test_middleware_and_extension_read_the_options() -> None:
    settings = Settings(
        {
            "GPURENT_RETRY_AFTER_MAX": "2.5",
            "RETRY_TIMES": "1",
            "RETRY_HTTP_CODES": "429",
            "GPURENT_RUN_REPORT": "/tmp/r.json",
        }
    )
    crawler: Any = SimpleNamespace(settings=settings, spider=None)
    middleware = RetryAfterMiddleware(crawler)
    assert middleware.cap == 2.5 and middleware.max_retry_times == 1
    assert middleware.retry_codes == {429} and middleware.retry_enabled is True
    assert RunReport(crawler).path == Path("/tmp/r.json")
    bad: Any = SimpleNamespace(settings=Settings({"GPURENT_RETRY_AFTER_MAX": "x"}), spider=None)
    with pytest.raises(SpiderOptionError, match="GPURENT_RETRY_AFTER_MAX"):
        RetryAfterMiddleware(bad)


class _Page(BrowserPageSpider):
    name = "options_page_probe"
    default_base_url = "https://page.example.invalid"
    row_selector: ClassVar[str] = "tr.gpu"


def test_browser_spiders_take_their_waits_from_the_options() -> None:
    settings = Settings()
    _Page.update_settings(settings)
    navigation = settings.getint("PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT")
    assert navigation == DEFAULTS.navigation_timeout_ms
    assert settings.getint("PLAYWRIGHT_MAX_CONTEXTS") == DEFAULTS.browser_contexts
    spider = _Page()
    spider.settings = Settings({"GPURENT_TABLE_WAIT_MS": "1234"})
    (method,) = spider.page_request().meta["playwright_page_methods"]
    assert method.kwargs["timeout"] == 1234
    spider = _Page()
    spider.settings = Settings()
    (method,) = spider.page_request().meta["playwright_page_methods"]
    assert method.kwargs["timeout"] == DEFAULTS.table_wait_ms


def test_a_crawl_with_a_bad_setting_stops_at_start_up(tmp_path: Path) -> None:
    feed = tmp_path / "vastai.jsonl"
    done = subprocess.run(
        [
            sys.executable, "-m", "scrapy", "crawl", "vastai", "-O", str(feed),
            "-s", "GPURENT_MAX_PAGES=lots",
            "-s", "GPURENT_BASE_URL=http://127.0.0.1:9",  # never asked: it stops first
        ],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode != 0
    assert "setting GPURENT_MAX_PAGES='lots': expected a whole number >= 1" in done.stderr
    assert not feed.exists() or not feed.read_text(encoding="utf-8").strip()
