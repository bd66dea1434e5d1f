"""算家云 through the real `scrapy crawl` process: the price page rendered in headless Chromium."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from crawl_kit import RUN_ID, copy_recordings, crawl, crawl_scene, recorded
from scrapy.settings import Settings

from flows.health import classify_run
from gpurent_core.model import RunStatus
from replay import ReplayServer
from spiders.browser import CHROMIUM_ARGS, PLAYWRIGHT_HANDLER
from spiders.providers.suanjia.spider import SuanjiaSpider


@pytest.mark.browser
def test_suanjia_reads_the_script_built_market_in_chromium(
    server: ReplayServer, tmp_path: Path
) -> None:
    result = crawl("suanjia", server, tmp_path)
    assert result.returncode == 0, result.log[-2000:]
    offers = result.offers
    assert len(offers) == 6
    rtx = offers["华东一区/RTX 4090 24G"]
    assert (Decimal(rtx["price"]), rtx["currency"], rtx["billing_unit"]) == (
        Decimal("1.88"),
        "CNY",
        "hour",
    )
    assert (rtx["status"], rtx["available_count"]) == ("in_stock", 3)
    assert offers["华东一区/RTX 3090 24G"]["status"] == "sold_out"
    assert offers["华北一区/A100 80G"]["gpu_vram_gb"] == 80
    assert result.quarantined == []  # the vGPU slice is skipped, not quarantined
    assert all(r["run_id"] == RUN_ID for r in result.feed)
    paths = [r.path for r in result.calls]
    assert paths[:2] == ["/pricing", "/pricing.js"]  # the browser ran the page's script
    assert ("", "/robots.txt") in [(r.provider, r.path) for r in server.requests]
    report = result.report
    assert report["auth"] == "not_needed"
    assert (report["offers"], report["quarantined"], report["pages_parsed"]) == (6, 0, 1)
    assert report["layout_errors"] == [] and report["errors"] == []
    # a virtual slice names no card the catalog ranks: counted as skipped, the run is ok
    # (rule of truth 9: skips never make a run partial)
    assert report["skipped"] == {"outside_catalog": 1}
    assert classify_run(report, returncode=0).status is RunStatus.OK


@pytest.mark.browser
def test_suanjia_table_that_never_renders_is_a_layout_error(tmp_path: Path) -> None:
    root = copy_recordings(tmp_path)
    (recorded(root, "suanjia") / "pricing.js").write_text(
        "/* the site moved its table elsewhere */\n", encoding="utf-8"
    )
    result = crawl_scene("suanjia", tmp_path, root=root)
    assert result.feed == []
    report = result.report
    assert report["layout_errors"] and "price table never appeared" in report["layout_errors"][0]
    assert report["offers"] == 0 and report["pages_parsed"] == 0


def test_suanjia_launches_the_system_chromium(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPURENT_CHROMIUM", "/opt/test/chromium")
    settings = Settings({"ROBOTSTXT_OBEY": True})
    SuanjiaSpider.update_settings(settings)
    launch = settings.getdict("PLAYWRIGHT_LAUNCH_OPTIONS")
    assert launch["executable_path"] == "/opt/test/chromium"
    assert launch["args"] == CHROMIUM_ARGS and launch["headless"] is True
    handlers = settings.getdict("DOWNLOAD_HANDLERS")
    assert handlers == {"http": PLAYWRIGHT_HANDLER, "https": PLAYWRIGHT_HANDLER}
    assert settings.getbool("ROBOTSTXT_OBEY") is True
    assert SuanjiaSpider.home == "CN" and SuanjiaSpider.needs_browser is True
    assert SuanjiaSpider.auth_env == ()
