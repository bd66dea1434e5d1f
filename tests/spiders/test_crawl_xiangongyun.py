"""仙宫云 through the real `scrapy crawl` process against the replay server (plain HTML)."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

from crawl_kit import RUN_ID, copy_recordings, crawl, crawl_scene, recorded
from scrapy.settings import Settings

from flows.health import classify_run
from gpurent_core.model import RunStatus
from replay import Fault, ReplayServer
from spiders.providers.xiangongyun.spider import XiangongyunSpider


def test_xiangongyun_reads_the_pricing_table(server: ReplayServer, tmp_path: Path) -> None:
    result = crawl("xiangongyun", server, tmp_path)
    assert result.returncode == 0, result.log[-2000:]
    offers = result.offers
    assert len(offers) == 8
    statuses = {key: o["status"] for key, o in offers.items()}
    assert statuses["宁波一区/RTX 4090"] == "in_stock"
    assert statuses["宿迁二区/RTX 4090"] == "low"
    assert statuses["宁波一区/RTX 4090D"] == "sold_out"
    assert statuses["宁波一区/RTX A6000"] == "unknown"
    a800 = offers["宁波一区/A800"]
    assert (Decimal(a800["price"]), a800["gpu_vram_gb"], a800["status"]) == (
        Decimal("5.78"),
        80,
        "in_stock",
    )
    [fee] = a800["fees"]
    assert (fee["fee_type"], fee["amount"], fee["unit"], fee["basis"]) == (
        "storage_stopped",
        "0.00003",
        "hour",
        "gb",
    )
    assert result.quarantined == [] and "宁波一区/H100" not in result.offers
    assert all(r["run_id"] == RUN_ID for r in result.feed)
    # robots.txt was asked before the page (the replay host answers 404: allow all).
    paths = [(r.provider, r.path) for r in server.requests]
    assert paths == [("", "/robots.txt"), ("xiangongyun", "/pricing")]
    assert server.requests[1].headers["user-agent"].startswith("gpurent/")
    report = result.report
    assert report["auth"] == "not_needed"
    assert (report["offers"], report["quarantined"], report["pages_parsed"]) == (8, 0, 1)
    assert report["responses_by_status"] == {"200": 1}
    assert report["errors"] == [] and report["layout_errors"] == []
    # the 面议 row ("price on request") has no public price: skipped, counted, and the run
    # is ok (rule of truth 9: skips never make a run partial)
    assert report["skipped"] == {"no_public_price": 1}
    assert classify_run(report, returncode=0).status is RunStatus.OK


def test_xiangongyun_500s_are_a_failed_request_not_sold_out(tmp_path: Path) -> None:
    fault = Fault("xiangongyun", "/pricing", status=500)
    result = crawl_scene("xiangongyun", tmp_path, faults=[fault])
    assert result.feed == []
    report = result.report
    assert report["responses_by_status"] == {"500": 4}  # first try + RETRY_TIMES 3
    assert report["requests_gave_up"] == 1 and report["layout_errors"] == []


def test_xiangongyun_changed_page_is_a_layout_error(tmp_path: Path) -> None:
    root = copy_recordings(tmp_path)
    page = recorded(root, "xiangongyun") / "pricing.html"
    page.write_text(
        page.read_text(encoding="utf-8").replace("gpu-price-table", "price-grid"),
        encoding="utf-8",
    )
    result = crawl_scene("xiangongyun", tmp_path, root=root)
    assert result.feed == []
    report = result.report
    assert report["layout_errors"] and "/pricing" in report["layout_errors"][0]
    assert report["pages_parsed"] == 0 and report["responses_by_status"] == {"200": 1}


def _with_page(tmp_path: Path, edit: Callable[[str], str]) -> Path:
    root = copy_recordings(tmp_path)
    page = recorded(root, "xiangongyun") / "pricing.html"
    page.write_text(edit(page.read_text(encoding="utf-8")), encoding="utf-8")
    return root


def test_xiangongyun_stock_label_renamed_is_a_layout_change(tmp_path: Path) -> None:
    root = _with_page(tmp_path, lambda html: html.replace('"gpu-stock"', '"gpu-inventory"'))
    result = crawl_scene("xiangongyun", tmp_path, root=root)
    assert result.offers == {}  # not 8 cards of unknown stock
    assert len(result.quarantined) == 9
    report = result.report
    assert report["missing_fields"] == ["/pricing: gpu-stock"]
    assert "gpu-stock (stock)" in report["layout_errors"][0]
    assert classify_run(report, returncode=0).status is RunStatus.LAYOUT_CHANGED


def test_xiangongyun_stock_label_renamed_in_one_row_costs_that_row(tmp_path: Path) -> None:
    first = '<td class="gpu-stock">充足</td>'
    root = _with_page(
        tmp_path, lambda html: html.replace(first, '<td class="gpu-inventory">充足</td>', 1)
    )
    result = crawl_scene("xiangongyun", tmp_path, root=root)
    assert len(result.offers) == 7 and "宁波一区/RTX 4090" not in result.offers
    assert result.offers["宿迁二区/RTX 4090"]["status"] == "low"
    report = result.report
    assert report["missing_fields"] == ["/pricing: gpu-stock"] and report["layout_errors"] == []
    verdict = classify_run(report, returncode=0)
    assert verdict.status is RunStatus.PARTIAL


def test_xiangongyun_is_a_public_chinese_page_that_obeys_robots() -> None:
    settings = Settings({"ROBOTSTXT_OBEY": True})
    XiangongyunSpider.update_settings(settings)
    assert settings.getbool("ROBOTSTXT_OBEY") is True
    assert not settings.getdict("DOWNLOAD_HANDLERS")
    assert XiangongyunSpider.home == "CN" and XiangongyunSpider.needs_browser is False
    assert XiangongyunSpider.auth_env == () and XiangongyunSpider.needs_auth is False
