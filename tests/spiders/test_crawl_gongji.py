"""共绩算力 through the real `scrapy crawl` process: the pricing page rendered in Chromium."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from crawl_kit import RUN_ID, copy_recordings, crawl, crawl_scene, recorded
from scrapy.settings import Settings

from flows.health import classify_run
from gpurent_core.model import RunStatus
from replay import Fault, ReplayServer
from spiders.browser import PLAYWRIGHT_HANDLER
from spiders.providers.gongji.spider import GongjiSpider


@pytest.mark.browser
def test_gongji_reads_prices_spot_plans_and_free_cards_in_chromium(
    server: ReplayServer, tmp_path: Path
) -> None:
    result = crawl("gongji", server, tmp_path)
    assert result.returncode == 0, result.log[-2000:]
    offers = result.offers
    assert sorted(offers) == ["A800", "H800", "L40", "RTX 3090", "RTX 4090", "RTX 5090"]
    rtx = offers["RTX 4090"]
    assert (Decimal(rtx["price"]), rtx["billing_unit"], rtx["price_kind"]) == (
        Decimal("1.98"),
        "hour",
        "on_demand",
    )
    assert [(p["price"], p["price_kind"]) for p in rtx["plans"]] == [("1.19", "spot")]
    assert (rtx["status"], rtx["available_count"]) == ("in_stock", 12)
    [fee] = rtx["fees"]
    assert (fee["fee_type"], fee["amount"], fee["unit"], fee["basis"]) == (
        "data_disk",
        "0.2",
        "month",
        "gb",
    )
    assert (offers["H800"]["status"], offers["H800"]["available_count"]) == ("sold_out", 0)
    assert offers["L40"]["gpu_vram_gb"] == 48 and offers["L40"]["plans"] == []
    assert result.quarantined == []  # the 询价 H20 row is skipped: no public price
    assert all(r["run_id"] == RUN_ID for r in result.feed)
    paths = [r.path for r in result.calls]
    assert paths[:2] == ["/pricing", "/pricing.js"]  # the browser ran the page's script
    report = result.report
    assert report["auth"] == "not_needed"
    assert (report["offers"], report["quarantined"], report["pages_parsed"]) == (6, 0, 1)
    assert report["layout_errors"] == [] and report["errors"] == []
    # the 询价 row is no offer with a public price: counted, and the run is ok (rule 9)
    assert report["skipped"] == {"no_public_price": 1}
    assert classify_run(report, returncode=0).status is RunStatus.OK


@pytest.mark.browser
def test_gongji_500_is_a_failed_request_not_sold_out(tmp_path: Path) -> None:
    fault = Fault("gongji", "/pricing", status=500)
    result = crawl_scene("gongji", tmp_path, faults=[fault], settings={"RETRY_TIMES": "0"})
    assert result.feed == []
    report = result.report
    assert report["responses_by_status"] == {"500": 1}
    assert report["requests_gave_up"] == 1 and report["layout_errors"] == []


@pytest.mark.browser
def test_gongji_stock_label_renamed_by_the_script_is_a_layout_change(tmp_path: Path) -> None:
    root = copy_recordings(tmp_path)
    script = recorded(root, "gongji") / "pricing.js"
    text = script.read_text(encoding="utf-8")
    assert 'cell(row, "stock", ' in text
    script.write_text(text.replace('cell(row, "stock", ', 'cell(row, "inventory", '), "utf-8")
    result = crawl_scene("gongji", tmp_path, root=root)
    assert result.returncode == 0, result.log[-2000:]
    assert result.offers == {}  # not six cards of unknown stock
    assert {q["reason"] for q in result.quarantined} == {"missing_field: key gone: stock"}
    report = result.report
    assert report["missing_fields"] == ["/pricing: stock"]
    assert "stock (stock)" in report["layout_errors"][0]
    assert classify_run(report, returncode=0).status is RunStatus.LAYOUT_CHANGED


def test_gongji_is_a_public_chinese_browser_page() -> None:
    settings = Settings({"ROBOTSTXT_OBEY": True})
    GongjiSpider.update_settings(settings)
    assert settings.getdict("DOWNLOAD_HANDLERS")["https"] == PLAYWRIGHT_HANDLER
    assert settings.getbool("ROBOTSTXT_OBEY") is True
    assert GongjiSpider.home == "CN" and GongjiSpider.needs_browser is True
    assert GongjiSpider.auth_env == () and GongjiSpider.needs_auth is False
