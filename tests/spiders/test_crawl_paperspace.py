"""Paperspace: the real `scrapy crawl paperspace` process against the replay server."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from crawl_kit import (
    RUN_ID,
    assert_api_spider,
    assert_secrets_kept,
    crawl,
)

from flows.health import classify_run
from gpurent_core.model import RunStatus
from replay import ReplayServer
from spiders.providers.paperspace.spider import PaperspaceSpider

KEY_ENV = "PAPERSPACE_API_KEY"
KEY = "ps-key-5e1d0c-not-a-real-key"
PATH = "/vmTypes/getVmTypesByClusters"


def test_paperspace_reads_every_cluster_with_the_key(
    server: ReplayServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    result = crawl("paperspace", server, tmp_path)
    assert result.returncode == 0, result.log[-2000:]
    offers = result.offers
    assert len(offers) == 13
    assert result.quarantined == [] and "31/M4000" not in offers
    a100 = offers["31/A100-80G"]
    assert (a100["status"], a100["gpu_vram_gb"], Decimal(a100["price"])) == (
        "in_stock",
        80,
        Decimal("3.18"),
    )
    assert (a100["billing_unit"], a100["price_basis"]) == ("hour", "instance")
    assert [(p["price"], p["billing_unit"], p["price_kind"]) for p in a100["plans"]] == [
        ("2042.00", "month", "commitment")
    ]
    assert [(f["fee_type"], f["amount"], f["unit"]) for f in a100["fees"]] == [
        ("system_disk", "5", "month")
    ]
    sold_out = {k for k, o in offers.items() if o["status"] == "sold_out"}
    assert sold_out == {"31/A6000x2", "31/A100-80Gx8", "37/V100-32G", "45/A6000"}
    assert offers["37/A6000/preemptible"]["price_kind"] == "spot"
    assert all(r["run_id"] == RUN_ID for r in result.feed)

    [call] = result.calls
    assert (call.path, call.query) == (PATH, {"includePublicClusters": "true"})
    assert call.headers.get("x-api-key") == KEY

    report = result.report
    assert report["auth"] == "ok" and report["responses_by_status"] == {"200": 1}
    assert (report["offers"], report["quarantined"], report["pages_parsed"]) == (13, 0, 1)
    assert report["errors"] == [] and report["layout_errors"] == []
    # What the recording sets aside is no offer: the CPU-only type and the free tier (no GPU
    # rental) and the Maxwell M4000 (outside the catalog on purpose). Skips, counted by kind,
    # never make the run partial (rule of truth 9).
    assert report["skipped"] == {"not_a_gpu_offer": 2, "outside_catalog": 1}
    assert report["unread_keys"] == [] and report["unread_prefixes"] == []
    verdict = classify_run(report, returncode=0)
    assert (verdict.status, verdict.message) == (
        RunStatus.OK,
        "13 offers, 3 skipped (not_a_gpu_offer 2, outside_catalog 1)",
    )
    assert_secrets_kept(result, KEY)


def test_paperspace_spider_facts_and_settings() -> None:
    assert_api_spider(
        PaperspaceSpider, home="US", auth_env=("PAPERSPACE_API_KEY",), needs_auth=True
    )
