"""Hyperstack: the real `scrapy crawl hyperstack` process against the replay server."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from crawl_kit import (
    RUN_ID,
    assert_api_spider,
    assert_auth_missing,
    assert_auth_rejected,
    assert_secrets_kept,
    copy_recordings,
    crawl,
    crawl_scene,
    recorded,
)

from flows.health import classify_run
from gpurent_core.model import RunStatus
from replay import Fault, ReplayServer
from spiders.providers.hyperstack.spider import HyperstackSpider

KEY_ENV = "HYPERSTACK_API_KEY"
KEY = "hs-key-7a0b2f-not-a-real-key"


def test_hyperstack_joins_flavors_with_the_price_book(
    server: ReplayServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    result = crawl("hyperstack", server, tmp_path)
    assert result.returncode == 0, result.log[-2000:]
    offers = result.offers
    assert len(offers) == 12
    assert [q["offer_key"] for q in result.quarantined] == [
        "CANADA-1/n3-H200x8",  # no price book entry
    ]
    # The NVLink bridge does not change the card: an A100 80 GB PCIe at its own book price.
    nvlink = offers["CANADA-1/n3-A100x8-NVLink"]
    assert (nvlink["gpu_model"], nvlink["gpu_vram_gb"], nvlink["gpu_form_factor"]) == (
        "A100",
        80,
        "PCIe",
    )
    assert (nvlink["status"], nvlink["gpu_count"], nvlink["price_basis"]) == ("in_stock", 8, "gpu")
    assert Decimal(nvlink["price"]) == Decimal("1.4") and nvlink["plans"] == []
    a6000 = offers["NORWAY-1/n3-RTX-A6000x2"]
    assert (a6000["status"], a6000["gpu_count"], a6000["price_basis"]) == ("in_stock", 2, "gpu")
    assert Decimal(a6000["price"]) == Decimal("0.5")
    assert [(p["price"], p["price_kind"]) for p in a6000["plans"]] == [("0.350000000", "spot")]
    # The optional public IP from the billing facts, then the price book's volume.
    public_ip, volume = a6000["fees"]
    assert (public_ip["fee_type"], public_ip["mandatory"]) == ("public_ip", False)
    assert public_ip["charged_while_stopped"] and public_ip["amount"] == "0.00672043"
    assert (volume["fee_type"], volume["basis"], volume["mandatory"]) == ("data_disk", "gb", False)
    sold_out = {k for k, o in offers.items() if o["status"] == "sold_out"}
    assert sold_out == {
        "CANADA-1/n3-A100x4",
        "CANADA-1/n3-A100x8",
        "CANADA-1/n3-H100x2",
        "NORWAY-1/n3-RTX-A6000x1",
    }
    assert all(r["run_id"] == RUN_ID for r in result.feed)

    assert [r.path for r in result.calls] == ["/pricebook", "/core/flavors"]
    assert [r.headers.get("api_key") for r in result.calls] == [KEY, KEY]

    report = result.report
    assert report["auth"] == "ok" and report["responses_by_status"] == {"200": 2}
    assert (report["offers"], report["quarantined"], report["pages_parsed"]) == (12, 1, 2)
    assert report["errors"] == [] and report["layout_errors"] == []
    # The recording holds one row that cannot be priced: quarantined, so the run is
    # partial with its counts (rule of truth 9: never plain `ok` past a quarantined item).
    # Its CPU-only flavor is no GPU offer: skipped and counted, never making it partial.
    assert report["skipped"] == {"not_a_gpu_offer": 1}
    verdict = classify_run(report, returncode=0)
    assert (verdict.status, verdict.message) == (
        RunStatus.PARTIAL,
        "12 offers, 1 quarantined, 1 skipped (not_a_gpu_offer 1)",
    )
    assert_secrets_kept(result, KEY)


def test_hyperstack_without_a_key_asks_nothing_and_says_so(
    server: ReplayServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    assert_auth_missing(crawl("hyperstack", server, tmp_path), KEY_ENV)


def test_hyperstack_refused_key_is_rejected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    result = crawl_scene("hyperstack", tmp_path, faults=[Fault("hyperstack", "*", status=401)])
    assert [r.path for r in result.calls] == ["/pricebook"]  # no flavors without prices
    assert result.report["responses_by_status"] == {"401": 1}
    assert_auth_rejected(result, KEY)


def test_hyperstack_status_false_is_a_failed_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    root = copy_recordings(tmp_path)
    body = recorded(root, "hyperstack") / "flavors.json"
    body.write_text(json.dumps({"status": False, "message": "Internal error"}), encoding="utf-8")
    result = crawl_scene("hyperstack", tmp_path, root=root)
    report = result.report
    assert result.feed == []
    assert report["errors"] == ["api error on /core/flavors: Internal error"]
    assert report["requests_gave_up"] == 1 and report["layout_errors"] == []
    assert classify_run(report, returncode=result.returncode).status is RunStatus.FAILED


def test_hyperstack_spider_facts_and_settings() -> None:
    assert_api_spider(
        HyperstackSpider, home="GB", auth_env=("HYPERSTACK_API_KEY",), needs_auth=True
    )
