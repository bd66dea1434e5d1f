"""TensorDock: the real `scrapy crawl tensordock` process against the replay server."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

from crawl_kit import RUN_ID, assert_api_spider, copy_recordings, crawl, crawl_scene, recorded

from flows.health import classify_run
from gpurent_core.model import RunStatus
from replay import Fault, ReplayServer
from spiders.providers.tensordock.spider import TensordockSpider

PATH = "/api/v0/client/deploy/hostnodes"
DALLAS = "3f1c0d2e-8a47-4b1e-9c55-6d0e2a9b7f10"


def test_tensordock_one_offer_per_card_type_and_node(server: ReplayServer, tmp_path: Path) -> None:
    result = crawl("tensordock", server, tmp_path)
    assert result.returncode == 0, result.log[-2000:]
    offers = result.offers
    assert len(offers) == 10 and result.quarantined == []
    gtx = offers["e49a7c26-0f18-4d3b-a5e7-b2c96d1f4e05/geforcegtx1070-pcie-8gb"]
    assert (gtx["gpu_model"], gtx["gpu_vram_gb"], gtx["gpu_form_factor"]) == ("GTX 1070", 8, None)
    rtx = offers[f"{DALLAS}/geforcertx4090-pcie-24gb"]
    assert (rtx["status"], rtx["available_count"], Decimal(rtx["price"])) == (
        "in_stock",
        6,
        Decimal("0.35"),
    )
    assert (rtx["price_basis"], rtx["gpu_count"], rtx["region"]) == (
        "gpu",
        1,
        "Dallas, Texas, United States",
    )
    fees = {f["fee_type"]: f for f in rtx["fees"]}
    assert (fees["vcpu"]["amount"], fees["vcpu"]["quantity"], fees["vcpu"]["mandatory"]) == (
        "0.003",
        "1",
        True,
    )
    assert (fees["memory"]["amount"], fees["memory"]["quantity"]) == ("0.002", "2")
    assert (fees["data_disk"]["amount"], fees["data_disk"]["basis"]) == ("0.00005", "gb")
    sold_out = sorted(k.split("/")[1] for k, o in offers.items() if o["status"] == "sold_out")
    assert sold_out == [
        "a40-pcie-48gb",
        "geforcegtx1070-pcie-8gb",  # cards free, but no vCPU left on the node
        "geforcertx3090-pcie-24gb",  # cards free, but no vCPU left on the node
        "geforcertx4090-pcie-24gb",
        "rtxa6000-pcie-48gb",
    ]
    assert sum(o["gpu_vram_gb"] >= 32 and o["status"] == "in_stock" for o in offers.values()) == 3
    assert all(r["run_id"] == RUN_ID for r in result.feed)
    report = result.report
    assert report["auth"] == "not_needed" and report["responses_by_status"] == {"200": 1}
    assert (report["offers"], report["quarantined"], report["pages_parsed"]) == (10, 0, 1)
    assert report["errors"] == [] and report["layout_errors"] == []
    assert classify_run(report, returncode=0).status is RunStatus.OK


def test_tensordock_retired_api_is_a_failed_run_not_sold_out(tmp_path: Path) -> None:
    # gpuhunt dropped TensorDock in Feb 2026; a v0 API that is gone must not read as sold out.
    result = crawl_scene("tensordock", tmp_path, faults=[Fault("tensordock", PATH, status=404)])
    report = result.report
    assert result.feed == []
    assert report["responses_by_status"] == {"404": 1} and report["requests_gave_up"] == 1
    assert classify_run(report, returncode=result.returncode).status is RunStatus.FAILED


def test_tensordock_changed_answer_is_a_layout_change(tmp_path: Path) -> None:
    root = copy_recordings(tmp_path)
    body = recorded(root, "tensordock") / "hostnodes.json"
    data = json.loads(body.read_text(encoding="utf-8"))
    body.write_text(json.dumps({"nodes": data["hostnodes"]}), encoding="utf-8")
    result = crawl_scene("tensordock", tmp_path, root=root)
    report = result.report
    assert result.feed == []
    assert report["layout_errors"] and "hostnodes" in report["layout_errors"][0]
    verdict = classify_run(report, returncode=result.returncode)
    assert verdict.status is RunStatus.LAYOUT_CHANGED


def test_tensordock_spider_facts_and_settings() -> None:
    assert_api_spider(TensordockSpider, home="US", auth_env=(), needs_auth=False)
