"""Compshare through the real `scrapy crawl` process against the replay server."""

from __future__ import annotations

import json
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from crawl_kit import (
    RUN_ID,
    Crawl,
    Routes,
    assert_api_spider,
    assert_auth_missing,
    assert_secrets_kept,
    copy_recordings,
    crawl,
    crawl_scene,
    recorded,
    recordings_with_routes,
)

from flows.health import classify_run
from gpurent_core.model import RunStatus
from replay import Fault, ReplayServer
from spiders.parsers.ucloud import signature
from spiders.providers.compshare.spider import CompshareSpider

PUBLIC_KEY_ENV, PRIVATE_KEY_ENV = "COMPSHARE_PUBLIC_KEY", "COMPSHARE_PRIVATE_KEY"

DEMO_KEY = "replay-demo-token"  # the public key the recordings accept (as the replay flow sets)
PRIVATE_KEY = "priv-7d1e0b-not-a-real-key"
# The replay server answers HTTP/1.0 without "Connection: close"; Twisted may reuse such a
# connection once and Scrapy retries the request. That retry is noise, not a failure.
RETRIED_NOISE = {"download failed on /"}


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PUBLIC_KEY_ENV, DEMO_KEY)
    monkeypatch.setenv(PRIVATE_KEY_ENV, PRIVATE_KEY)


def actions(result: Crawl) -> list[dict[str, Any]]:
    return [r.json for r in result.calls]


def assert_secret_kept(result: Crawl) -> None:
    """The private key only signs: it is not even sent."""
    assert_secrets_kept(result, PRIVATE_KEY)
    assert PRIVATE_KEY not in json.dumps(actions(result))


@pytest.mark.usefixtures("keys")
def test_compshare_reads_types_stock_and_three_prices(server: ReplayServer, tmp_path: Path) -> None:
    result = crawl("compshare", server, tmp_path)
    assert result.returncode == 0, result.log[-2000:]
    offers = result.offers
    assert sorted(offers) == [
        "cn-wlcb-01/3090",
        "cn-wlcb-01/4090",
        "cn-wlcb-01/910B",
        "cn-wlcb-01/A800",
        "cn-wlcb-02/4090",
        "cn-wlcb-02/L20",
    ]
    stock = {key: (o["status"], o["available_count"]) for key, o in offers.items()}
    assert stock == {
        "cn-wlcb-01/4090": ("in_stock", 6),
        "cn-wlcb-01/3090": ("sold_out", 0),
        "cn-wlcb-01/A800": ("in_stock", 3),
        "cn-wlcb-01/910B": ("in_stock", 16),
        "cn-wlcb-02/4090": ("sold_out", 0),
        "cn-wlcb-02/L20": ("in_stock", 5),
    }
    rtx = offers["cn-wlcb-01/4090"]
    assert (Decimal(rtx["price"]), rtx["billing_unit"], rtx["price_basis"]) == (
        Decimal("1.92"),
        "hour",
        "instance",
    )
    assert [(p["price"], p["billing_unit"], p["price_kind"]) for p in rtx["plans"]] == [
        ("42.24", "day", "commitment"),
        ("1154.64", "month", "commitment"),
    ]
    [fee] = rtx["fees"]
    assert (fee["fee_type"], fee["amount"], fee["unit"], fee["basis"]) == (
        "data_disk",
        "0.01",
        "day",
        "gb",
    )
    assert fee["included_quantity"] == "100"
    assert offers["cn-wlcb-01/A800"]["gpu_vram_gb"] == 80
    assert offers["cn-wlcb-02/L20"]["gpu_vram_gb"] == 48
    # A bare "910B" is the Ascend 910B family, at the 64 GB Compshare gives for it.
    ascend = offers["cn-wlcb-01/910B"]
    assert (ascend["gpu_model"], ascend["gpu_vram_gb"]) == ("Ascend 910B", 64)
    assert result.quarantined == []
    assert all(r["run_id"] == RUN_ID for r in result.feed)

    bodies = actions(result)
    assert Counter(b["Action"] for b in bodies) == {
        "DescribeAvailableCompShareInstanceTypes": 1,
        "DescribeCompShareGpuInventory": 2,
        "GetCompShareInstancePrice": 18,  # 6 offers x Dynamic, Day, Month
    }
    for body in bodies:  # every call signed with the private key it never carries
        unsigned = {k: v for k, v in body.items() if k != "Signature"}
        assert body["PublicKey"] == DEMO_KEY
        assert body["Signature"] == signature(unsigned, PRIVATE_KEY)
    assert_secret_kept(result)

    report = result.report
    assert report["auth"] == "ok"
    assert (report["offers"], report["quarantined"], report["pages_parsed"]) == (6, 0, 21)
    assert report["layout_errors"] == [] and report["requests_gave_up"] == 0
    assert set(report["errors"]) <= RETRIED_NOISE
    assert report["skipped"] == {"not_offered": 1}  # the Hidden 5090
    assert (report["unread_keys"], report["unread_prefixes"]) == ([], [])
    assert classify_run(report, returncode=0).status is RunStatus.OK


ZONE_01_OFFERS = ["cn-wlcb-01/3090", "cn-wlcb-01/4090", "cn-wlcb-01/910B", "cn-wlcb-01/A800"]
ZONE_02_OFFERS = ["cn-wlcb-02/4090", "cn-wlcb-02/L20"]


def _fail_zone_02_inventory(routes: Routes) -> None:
    [route] = [r for r in routes if r.get("body") == "gpu_inventory_cn-wlcb-02.json"]
    route["fault"] = {"status": 500}


@pytest.mark.usefixtures("keys")
def test_a_failed_inventory_leaves_its_zone_unpriced_never_count_unknown(tmp_path: Path) -> None:
    # Rule of truth 10: a zone whose free counts could not be fetched yields no offers, so
    # their last good state stays (stale), instead of a count flipped to unknown.
    root = recordings_with_routes(tmp_path, "compshare", _fail_zone_02_inventory)
    result = crawl_scene("compshare", tmp_path, root=root)
    assert result.returncode == 0, result.log[-2000:]
    assert sorted(result.offers) == ZONE_01_OFFERS
    assert result.offers["cn-wlcb-01/4090"]["available_count"] == 6
    report = result.report
    assert report["requests_gave_up"] == 1
    assert any("cn-wlcb-02/L20" in note and "last state" in note for note in report["notes"])
    # Only the zone's offers are unread (kept stale); the others were read and stand.
    assert (sorted(report["unread_keys"]), report["unread_prefixes"]) == (ZONE_02_OFFERS, [])
    assert classify_run(report, returncode=0).status is RunStatus.PARTIAL


def _fail_a800_hourly_price(routes: Routes) -> None:
    [route] = [r for r in routes if r.get("body") == "price_A800_dynamic.json"]
    route["fault"] = {"status": 503}


@pytest.mark.usefixtures("keys")
def test_a_failed_price_request_leaves_only_its_offer_unread(tmp_path: Path) -> None:
    root = recordings_with_routes(tmp_path, "compshare", _fail_a800_hourly_price)
    result = crawl_scene("compshare", tmp_path, root=root)
    assert result.returncode == 0, result.log[-2000:]
    assert "cn-wlcb-01/A800" not in result.offers and len(result.offers) == 5
    report = result.report
    assert report["requests_gave_up"] == 1
    assert (report["unread_keys"], report["unread_prefixes"]) == (["cn-wlcb-01/A800"], [])
    assert classify_run(report, returncode=0).status is RunStatus.PARTIAL


@pytest.mark.usefixtures("keys")
def test_a_renamed_inventory_map_is_a_layout_change_not_unknown_counts(tmp_path: Path) -> None:
    root = copy_recordings(tmp_path)
    for body in sorted(recorded(root, "compshare").glob("gpu_inventory_*.json")):
        data = json.loads(body.read_text(encoding="utf-8"))
        data["GpuInventoryByZone_v2"] = data.pop("GpuInventoryByZone")
        body.write_text(json.dumps(data), encoding="utf-8")
    result = crawl_scene("compshare", tmp_path, root=root)
    assert result.returncode == 0, result.log[-2000:]
    assert result.offers == {}
    report = result.report
    assert len(report["layout_errors"]) == 2
    assert all("GpuInventoryByZone" in e for e in report["layout_errors"])
    # Each zone's layout error leaves that zone's offers unread, by key.
    assert sorted(report["unread_keys"]) == sorted(ZONE_01_OFFERS + ZONE_02_OFFERS)
    assert report["unread_prefixes"] == []
    verdict = classify_run(report, returncode=0)
    assert verdict.status is RunStatus.LAYOUT_CHANGED and "GpuInventoryByZone" in verdict.message


def test_compshare_without_keys_reports_auth_missing(
    server: ReplayServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(PUBLIC_KEY_ENV, raising=False)
    monkeypatch.setenv(PRIVATE_KEY_ENV, PRIVATE_KEY)  # one key alone is not enough
    result = crawl("compshare", server, tmp_path)
    assert_auth_missing(result, PUBLIC_KEY_ENV)  # every call would need a signature: none tried
    assert_secret_kept(result)


def test_compshare_signature_error_is_auth_rejected(
    server: ReplayServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PUBLIC_KEY_ENV, "someone-else")  # not a key the recordings know
    monkeypatch.setenv(PRIVATE_KEY_ENV, PRIVATE_KEY)
    result = crawl("compshare", server, tmp_path)
    assert result.returncode == 0, result.log[-2000:]
    assert result.feed == []
    assert [b["Action"] for b in actions(result)] == ["DescribeAvailableCompShareInstanceTypes"]
    report = result.report
    assert report["auth"] == "rejected"
    assert report["layout_errors"] == [] and report["offers"] == 0
    assert_secret_kept(result)


@pytest.mark.usefixtures("keys")
def test_compshare_http_401_is_auth_rejected(tmp_path: Path) -> None:
    result = crawl_scene("compshare", tmp_path, faults=[Fault("compshare", "/", status=401)])
    assert result.returncode == 0, result.log[-2000:]
    assert result.feed == [] and len(result.calls) == 1  # refused keys are not retried
    report = result.report
    assert report["auth"] == "rejected" and "401" in report["auth_detail"]
    assert report["layout_errors"] == []


def test_compshare_is_a_chinese_api_spider_with_two_key_variables() -> None:
    assert_api_spider(
        CompshareSpider,
        home="CN",
        auth_env=("COMPSHARE_PUBLIC_KEY", "COMPSHARE_PRIVATE_KEY"),
        needs_auth=True,
    )
