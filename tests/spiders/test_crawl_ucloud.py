"""UCloud UHost through the real `scrapy crawl` process against the replay server."""

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
from spiders.providers.ucloud.spider import UcloudSpider

PUBLIC_KEY_ENV, PRIVATE_KEY_ENV = "UCLOUD_PUBLIC_KEY", "UCLOUD_PRIVATE_KEY"

DEMO_KEY = "replay-demo-token"  # the public key the recordings accept (as the replay flow sets)
PRIVATE_KEY = "priv-5c2a9f-not-a-real-key"
# The replay server answers HTTP/1.0 without "Connection: close"; Twisted may reuse such a
# connection once and Scrapy retries the request. That retry is noise, not a failure.
RETRIED_NOISE = {"download failed on /"}
OFFERS = ["cn-bj2-02/T4", "cn-bj2-02/V100S", "cn-bj2-05/4090", "cn-bj2-05/A100"]


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
def test_ucloud_reads_gpu_types_their_status_and_two_prices(
    server: ReplayServer, tmp_path: Path
) -> None:
    result = crawl("ucloud", server, tmp_path)
    assert result.returncode == 0, result.log[-2000:]
    offers = result.offers
    assert sorted(offers) == OFFERS
    # UHost tells no free-card count: Status alone says in stock or sold out.
    stock = {key: (o["status"], o["available_count"]) for key, o in offers.items()}
    assert stock == {
        "cn-bj2-02/T4": ("in_stock", None),
        "cn-bj2-02/V100S": ("sold_out", 0),
        "cn-bj2-05/4090": ("in_stock", None),
        "cn-bj2-05/A100": ("in_stock", None),
    }
    t4 = offers["cn-bj2-02/T4"]
    assert (Decimal(t4["price"]), t4["billing_unit"], t4["price_basis"], t4["currency"]) == (
        Decimal("3.46"),
        "hour",
        "instance",
        "CNY",
    )
    assert [(p["price"], p["billing_unit"], p["price_kind"]) for p in t4["plans"]] == [
        ("1663.2", "month", "commitment"),
    ]
    [fee] = t4["fees"]  # the optional cloud data disk, from the billing facts
    assert (fee["fee_type"], fee["amount"], fee["unit"], fee["basis"], fee["mandatory"]) == (
        "data_disk",
        "0.6",
        "month",
        "gb",
        False,
    )
    assert fee["charged_while_stopped"] is True
    assert offers["cn-bj2-05/A100"]["gpu_vram_gb"] == 80
    assert offers["cn-bj2-05/4090"]["gpu_model"] == "RTX 4090"
    assert result.quarantined == []
    assert all(r["run_id"] == RUN_ID for r in result.feed)

    bodies = actions(result)
    assert Counter(b["Action"] for b in bodies) == {
        "DescribeAvailableInstanceTypes": 1,
        "GetUHostInstancePrice": 8,  # 4 offers x Dynamic, Month
    }
    t4_hourly = next(
        b for b in bodies if b.get("GpuType") == "T4" and b.get("ChargeType") == "Dynamic"
    )
    assert {k: t4_hourly[k] for k in ("Zone", "MachineType", "GPU", "CPU", "Memory")} == {
        "Zone": "cn-bj2-02",
        "MachineType": "G",
        "GPU": "1",
        "CPU": "4",
        "Memory": "16384",
    }
    assert (t4_hourly["Disks.0.IsBoot"], t4_hourly["Disks.0.Size"]) == ("True", "20")
    for body in bodies:  # every call signed with the private key it never carries
        unsigned = {k: v for k, v in body.items() if k != "Signature"}
        assert body["PublicKey"] == DEMO_KEY
        assert body["Signature"] == signature(unsigned, PRIVATE_KEY)
    assert_secret_kept(result)

    report = result.report
    assert report["auth"] == "ok"
    assert (report["offers"], report["quarantined"], report["pages_parsed"]) == (4, 0, 9)
    assert report["layout_errors"] == [] and report["requests_gave_up"] == 0
    assert set(report["errors"]) <= RETRIED_NOISE
    # The non-GPU machine type O and the Hidden P40.
    assert report["skipped"] == {"not_a_gpu_offer": 1, "not_offered": 1}
    assert any("4090" in note and "OriginalPrice" in note for note in report["notes"])
    assert (report["unread_keys"], report["unread_prefixes"]) == ([], [])
    assert classify_run(report, returncode=0).status is RunStatus.OK


def _fail_a100_hourly_price(routes: Routes) -> None:
    [route] = [r for r in routes if r.get("body") == "price_A100_dynamic.json"]
    route["fault"] = {"status": 503}


@pytest.mark.usefixtures("keys")
def test_a_failed_price_request_leaves_only_its_offer_unread(tmp_path: Path) -> None:
    root = recordings_with_routes(tmp_path, "ucloud", _fail_a100_hourly_price)
    result = crawl_scene("ucloud", tmp_path, root=root)
    assert result.returncode == 0, result.log[-2000:]
    assert sorted(result.offers) == [k for k in OFFERS if k != "cn-bj2-05/A100"]
    report = result.report
    assert report["requests_gave_up"] == 1
    assert (report["unread_keys"], report["unread_prefixes"]) == (["cn-bj2-05/A100"], [])
    assert classify_run(report, returncode=0).status is RunStatus.PARTIAL


@pytest.mark.usefixtures("keys")
def test_a_status_renamed_everywhere_is_a_layout_change_never_sold_out(tmp_path: Path) -> None:
    root = copy_recordings(tmp_path)
    body = recorded(root, "ucloud") / "instance_types.json"
    data = json.loads(body.read_text(encoding="utf-8"))
    for item in data["AvailableInstanceTypes"]:
        item["SaleStatus"] = item.pop("Status")
    body.write_text(json.dumps(data), encoding="utf-8")
    result = crawl_scene("ucloud", tmp_path, root=root)
    assert result.returncode == 0, result.log[-2000:]
    assert result.offers == {}  # nothing read as sold out (or in stock)
    assert not [r for r in result.feed if r.get("status") == "sold_out"]
    report = result.report
    assert [e for e in report["layout_errors"] if "Status" in e] == report["layout_errors"] != []
    verdict = classify_run(report, returncode=0)
    assert verdict.status is RunStatus.LAYOUT_CHANGED and "Status" in verdict.message


@pytest.mark.usefixtures("keys")
def test_one_unreadable_type_is_quarantined_and_the_rest_loaded(tmp_path: Path) -> None:
    root = copy_recordings(tmp_path)
    body = recorded(root, "ucloud") / "instance_types.json"
    data = json.loads(body.read_text(encoding="utf-8"))
    [a100] = [i for i in data["AvailableInstanceTypes"] if i["Name"] == "A100"]
    a100["GraphicsMemory"]["Value"] = "eighty"
    body.write_text(json.dumps(data), encoding="utf-8")
    result = crawl_scene("ucloud", tmp_path, root=root)
    assert result.returncode == 0, result.log[-2000:]
    assert sorted(result.offers) == [k for k in OFFERS if k != "cn-bj2-05/A100"]
    [line] = result.quarantined
    assert line["offer_key"] == "cn-bj2-05/A100" and line["field"] == "GraphicsMemory"
    report = result.report
    assert report["layout_errors"] == [] and report["quarantined"] == 1
    assert classify_run(report, returncode=0).status is RunStatus.PARTIAL


def test_ucloud_without_keys_reports_auth_missing(
    server: ReplayServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(PUBLIC_KEY_ENV, raising=False)
    monkeypatch.setenv(PRIVATE_KEY_ENV, PRIVATE_KEY)  # one key alone is not enough
    result = crawl("ucloud", server, tmp_path)
    assert_auth_missing(result, PUBLIC_KEY_ENV)  # every call would need a signature: none tried
    assert_secret_kept(result)


def test_ucloud_signature_error_is_auth_rejected(
    server: ReplayServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PUBLIC_KEY_ENV, "someone-else")  # not a key the recordings know
    monkeypatch.setenv(PRIVATE_KEY_ENV, PRIVATE_KEY)
    result = crawl("ucloud", server, tmp_path)
    assert result.returncode == 0, result.log[-2000:]
    assert result.feed == []
    assert [b["Action"] for b in actions(result)] == ["DescribeAvailableInstanceTypes"]
    report = result.report
    assert report["auth"] == "rejected"
    assert report["layout_errors"] == [] and report["offers"] == 0
    assert_secret_kept(result)


@pytest.mark.usefixtures("keys")
def test_ucloud_http_403_is_auth_rejected(tmp_path: Path) -> None:
    result = crawl_scene("ucloud", tmp_path, faults=[Fault("ucloud", "/", status=403)])
    assert result.returncode == 0, result.log[-2000:]
    assert result.feed == [] and len(result.calls) == 1  # refused keys are not retried
    report = result.report
    assert report["auth"] == "rejected" and "403" in report["auth_detail"]
    assert report["layout_errors"] == []


def test_ucloud_is_a_chinese_api_spider_with_two_key_variables() -> None:
    assert_api_spider(
        UcloudSpider,
        home="CN",
        auth_env=("UCLOUD_PUBLIC_KEY", "UCLOUD_PRIVATE_KEY"),
        needs_auth=True,
    )
