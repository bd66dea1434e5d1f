"""Per-spider settings: only AutoDL swaps in Playwright, with the system Chromium."""

from __future__ import annotations

import pytest
from scrapy.settings import Settings
from scrapy.utils.project import get_project_settings

from spiders.browser import CHROMIUM_ARGS, PLAYWRIGHT_HANDLER
from spiders.providers.autodl.spider import AutodlSpider
from spiders.providers.cudo.spider import CudoSpider
from spiders.providers.vastai.spider import VastaiSpider


def test_autodl_launches_the_system_chromium(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPURENT_CHROMIUM", "/opt/test/chromium")
    settings = Settings()
    AutodlSpider.update_settings(settings)
    launch = settings.getdict("PLAYWRIGHT_LAUNCH_OPTIONS")
    assert launch["executable_path"] == "/opt/test/chromium"
    assert launch["args"] == CHROMIUM_ARGS and "--no-sandbox" in launch["args"]
    assert launch["headless"] is True
    handlers = settings.getdict("DOWNLOAD_HANDLERS")
    assert handlers == {"http": PLAYWRIGHT_HANDLER, "https": PLAYWRIGHT_HANDLER}


@pytest.mark.parametrize("spider", [VastaiSpider, CudoSpider])
def test_api_spiders_keep_scrapys_handler_and_skip_robots(spider: type) -> None:
    settings = Settings()
    spider.update_settings(settings)
    assert not settings.getdict("DOWNLOAD_HANDLERS")
    assert settings.getbool("ROBOTSTXT_OBEY") is False


def test_project_settings_are_polite_and_report(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCRAPY_SETTINGS_MODULE", "spiders.settings")  # whatever the cwd
    settings = get_project_settings()
    assert settings["USER_AGENT"].startswith("gpurent/0.1 (+https://github.com/gpurent/gpurent")
    assert settings.getbool("ROBOTSTXT_OBEY") and settings.getbool("AUTOTHROTTLE_ENABLED")
    assert settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN") == 2
    assert settings.getint("RETRY_TIMES") == 3 and settings.getint("DOWNLOAD_TIMEOUT") == 30
    assert {429, 500, 502, 503, 504} <= {int(c) for c in settings.getlist("RETRY_HTTP_CODES")}
    assert settings.getdict("EXTENSIONS")["spiders.extensions.RunReport"] == 500
    assert settings["TWISTED_REACTOR"].endswith("AsyncioSelectorReactor")


def test_a_crawl_opens_no_port_that_takes_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither Scrapy's telnet console nor its remote control (a local HTTP server that runs
    the code sent to it) is among a crawl's extensions, enabled or not; every other
    extension of Scrapy's is kept."""
    from scrapy.settings.default_settings import EXTENSIONS_BASE

    monkeypatch.setenv("SCRAPY_SETTINGS_MODULE", "spiders.settings")
    settings = get_project_settings()
    ours = settings.getwithbase("EXTENSIONS")
    unwanted = {
        "scrapy.extensions.telnet.TelnetConsole",
        "scrapy.extensions.remote_control.RemoteControl",
    }
    assert not unwanted & set(ours)
    assert set(EXTENSIONS_BASE) - unwanted <= set(ours)
    assert not settings.getbool("REMOTE_CONTROL_ENABLED")
    assert not settings.getbool("TELNETCONSOLE_ENABLED")
