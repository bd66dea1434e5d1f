"""RunPod: the real `scrapy crawl runpod` process against the replay server."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from crawl_kit import (
    RUN_ID,
    Crawl,
    assert_api_spider,
    assert_secrets_kept,
    crawl,
    crawl_scene,
    recordings_with_routes,
)

from flows.health import classify_run
from gpurent_core.model import RunStatus
from replay import ReplayServer
from replay.server import RecordedRequest
from spiders.providers.runpod.spider import KEY_ENV, RunpodSpider

KEY = "rp-test-key-5e2b-not-real"


def authorization(request: RecordedRequest) -> str | None:
    return request.headers.get("authorization")


def crawl_with_route_first(tmp_path: Path, first_route: dict[str, Any]) -> Crawl:
    """A crawl of the default recordings with one route put before RunPod's own."""
    root = recordings_with_routes(tmp_path, "runpod", lambda routes: routes.insert(0, first_route))
    return crawl_scene("runpod", tmp_path, root=root)


def test_public_catalog_without_a_key(
    server: ReplayServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    result = crawl("runpod", server, tmp_path)
    assert result.returncode == 0, result.log[-2000:]
    offers = result.offers
    assert len(offers) == 18 and result.quarantined == []
    gtx = offers["NVIDIA GeForce GTX 1070/community"]  # Pascal GeForce: in the GPU catalog
    assert (gtx["gpu_model"], gtx["gpu_vram_gb"], gtx["status"]) == ("GTX 1070", 8, "in_stock")
    pro = offers["NVIDIA RTX PRO 6000 Blackwell Workstation Edition/community"]
    assert (pro["gpu_model"], pro["gpu_vram_gb"], pro["raw_gpu_name"]) == (
        "RTX PRO 6000",
        96,
        "RTX PRO 6000 WK",
    )
    h100 = offers["NVIDIA H100 80GB HBM3/secure"]
    assert (h100["status"], h100["price"], h100["price_basis"]) == ("low", "2.69", "gpu")
    assert [p["price_kind"] for p in h100["plans"]] == ["spot", *["commitment"] * 3]
    assert {f["fee_type"]: f["amount"] for f in h100["fees"]} == {
        "data_disk": "0.10",
        "storage_stopped": "0.20",
    }
    assert offers["NVIDIA B200/secure"]["status"] == "sold_out"
    assert offers["NVIDIA L4/community"]["status"] == "sold_out"
    assert offers["NVIDIA GeForce RTX 4090/community"]["status"] == "in_stock"
    assert Decimal(offers["NVIDIA GeForce RTX 4090/community"]["price"]) == Decimal("0.34")
    assert all(r["run_id"] == RUN_ID for r in result.feed)

    calls = result.calls
    assert [c.json["operationName"] for c in calls] == ["GpuTypes", "GpuPrices", "GpuPrices"]
    clouds = sorted(c.json["variables"]["lowestPriceInput"]["secureCloud"] for c in calls[1:])
    assert clouds == [False, True]
    assert all(authorization(c) is None for c in calls)

    report = result.report
    assert report["auth"] == "not_needed"
    assert any(KEY_ENV in note for note in report["notes"])
    assert report["responses_by_status"] == {"200": 3}
    assert (report["offers"], report["quarantined"], report["pages_parsed"]) == (18, 0, 3)
    assert report["errors"] == [] and report["layout_errors"] == []
    # RunPod answers every type for each cloud: the 8 a cloud's catalog flag leaves out are
    # counted as not offered there, and the run is ok.
    assert report["skipped"] == {"not_offered": 8}
    assert classify_run(report, returncode=0).status is RunStatus.OK


def test_key_is_sent_as_bearer_and_never_leaks(
    server: ReplayServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    result = crawl("runpod", server, tmp_path, settings={"LOG_LEVEL": "DEBUG"})
    assert result.returncode == 0, result.log[-2000:]
    assert len(result.offers) == 18
    assert [authorization(c) for c in result.calls] == [f"Bearer {KEY}"] * 3
    assert result.report["auth"] == "ok"
    assert_secrets_kept(result, KEY)


def test_refused_key_is_rejected_and_the_public_catalog_still_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    refuse = {
        "method": "POST",
        "path": "/graphql",
        "headers": {"Authorization": "*"},
        "status": 401,
        "body_text": json.dumps({"errors": [{"message": "Unauthorized"}]}),
    }
    result = crawl_with_route_first(tmp_path, refuse)
    assert result.returncode == 0, result.log[-2000:]
    assert [(c.status, authorization(c) is not None) for c in result.calls] == [
        (401, True),  # the key, refused
        (200, False),  # the same query without it
        (200, False),
        (200, False),
    ]
    assert len(result.offers) == 18
    report = result.report
    assert report["auth"] == "rejected"
    assert report["responses_by_status"] == {"200": 3, "401": 1}
    assert_secrets_kept(result, KEY)


def test_public_query_refused_without_a_key_is_auth_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    refuse = {
        "method": "POST",
        "path": "/graphql",
        "headers": {"Authorization": "!"},
        "status": 200,
        "body_text": json.dumps({"errors": [{"message": "Unauthorized"}], "data": None}),
    }
    result = crawl_with_route_first(tmp_path, refuse)
    assert result.returncode == 0, result.log[-2000:]
    assert result.feed == []
    report = result.report
    assert report["auth"] == "missing"
    assert report["requests_gave_up"] == 1 and report["layout_errors"] == []


def test_graphql_error_is_a_failed_request_not_a_layout_change(tmp_path: Path) -> None:
    busy = {
        "method": "POST",
        "path": "/graphql",
        "json": {"operationName": "GpuPrices"},
        "status": 200,
        "body_text": json.dumps({"errors": [{"message": "Internal server error"}], "data": None}),
    }
    result = crawl_with_route_first(tmp_path, busy)
    report = result.report
    assert result.feed == []
    assert sorted(report["errors"]) == [
        f"api error on /graphql {cloud}: Internal server error" for cloud in ("community", "secure")
    ]
    assert report["requests_gave_up"] == 2 and report["layout_errors"] == []
    assert report["pages_parsed"] == 1  # the catalog


def test_runpod_is_a_plain_api_spider() -> None:
    assert_api_spider(RunpodSpider, home="US", auth_env=("RUNPOD_API_KEY",), needs_auth=False)


def test_a_field_the_schema_no_longer_has_is_a_layout_change_not_a_failure(
    tmp_path: Path,
) -> None:
    """HTTP 400 with GRAPHQL_VALIDATION_FAILED: RunPod's schema refused a field we query
    (renamed or removed). That is the layout changing under us, never a network failure:
    the run ends `layout_changed` and the previous good run stays on display."""
    message = 'Cannot query field "stockStatus" on type "LowestPrice".'
    refused = {
        "method": "POST",
        "path": "/graphql",
        "json": {"operationName": "GpuPrices"},
        "status": 400,
        "body_text": json.dumps(
            {"errors": [{"message": message, "extensions": {"code": "GRAPHQL_VALIDATION_FAILED"}}]}
        ),
    }
    result = crawl_with_route_first(tmp_path, refused)
    assert result.returncode == 0, result.log[-2000:]
    assert result.feed == []
    report = result.report
    assert report["responses_by_status"] == {"200": 1, "400": 2}  # read once each, no retry
    assert sorted(report["layout_errors"]) == [
        f"/graphql {cloud}: query refused by the schema (GRAPHQL_VALIDATION_FAILED): {message}"
        for cloud in ("community", "secure")
    ]
    # The answers are counted as every HTTP error is, but no request was given up.
    assert report["requests_gave_up"] == 0 and report["errors"] == ["400 on /graphql"]
    # What each refused query decides is unread: the catalog's keys of that cloud.
    assert "NVIDIA H100 80GB HBM3/secure" in report["unread_keys"]
    assert "NVIDIA H100 80GB HBM3/community" not in report["unread_keys"]
    assert report["unread_prefixes"] == []
    verdict = classify_run(report, returncode=0)
    assert verdict.status is RunStatus.LAYOUT_CHANGED
    assert message in verdict.message


def test_any_other_bad_request_is_a_failed_request(tmp_path: Path) -> None:
    bad = {
        "method": "POST",
        "path": "/graphql",
        "json": {"operationName": "GpuPrices"},
        "status": 400,
        "body_text": json.dumps(
            {
                "errors": [
                    {"message": "Variable $x is bad", "extensions": {"code": "BAD_USER_INPUT"}}
                ]
            }
        ),
    }
    result = crawl_with_route_first(tmp_path, bad)
    report = result.report
    assert result.feed == [] and report["layout_errors"] == []
    assert report["requests_gave_up"] == 2
    assert sorted(report["errors"]) == [
        "400 on /graphql",
        *(
            f"api error on /graphql {cloud}: HTTP 400: Variable $x is bad"
            for cloud in ("community", "secure")
        ),
    ]
    assert classify_run(report, returncode=0).status is RunStatus.FAILED


def test_a_failed_cloud_leaves_only_its_own_offers_unread(tmp_path: Path) -> None:
    """The community prices request fails (503, retries spent) while the secure one answers:
    the community offers the catalog names are unread (kept, stale) by key, and the secure
    offers are read: nothing else is kept from a listing that answered."""
    down = {
        "method": "POST",
        "path": "/graphql",
        "json": {"operationName": "GpuPrices",
                 "variables": {"lowestPriceInput": {"secureCloud": False}}},
        "status": 503,
        "body_text": json.dumps({"error": "upstream unavailable"}),
    }  # fmt: skip
    result = crawl_with_route_first(tmp_path, down)
    assert result.returncode == 0, result.log[-2000:]
    assert {k.rsplit("/", 1)[1] for k in result.offers} == {"secure"}
    report = result.report
    assert report["requests_gave_up"] == 1
    assert sorted(report["unread_keys"]) == sorted(
        f"{type_id}/community"
        for type_id in (
            "NVIDIA GeForce RTX 4090", "NVIDIA L4", "NVIDIA L40S", "NVIDIA RTX A6000",
            "NVIDIA GeForce RTX 5090", "NVIDIA A100-SXM4-80GB",
            "NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "NVIDIA GeForce GTX 1070",
        )
    )  # fmt: skip
    assert report["unread_prefixes"] == []
    assert classify_run(report, returncode=0).status is RunStatus.PARTIAL
