"""RunPod: the real `scrapy crawl runpod` process against the replay server."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from scrapy.settings import Settings
from spider_fixture_cases import RECORDINGS
from test_crawl_replay import RUN_ID, crawl

from replay import ReplayServer
from spiders.providers.runpod import KEY_ENV, RunpodSpider

KEY = "rp-test-key-5e2b-not-real"


@pytest.fixture
def replay_server() -> Iterator[ReplayServer]:
    with ReplayServer() as srv:
        yield srv


def runpod_calls(server: ReplayServer) -> list[Any]:
    return [r for r in server.requests if r.provider == "runpod"]


def authorization(request: Any) -> str | None:
    return {k.lower(): v for k, v in request.headers.items()}.get("authorization")


def recordings_with(tmp_path: Path, first_route: dict[str, Any]) -> Path:
    """A copy of the default recordings with one route put before RunPod's own."""
    root = tmp_path / "recordings"
    shutil.copytree(RECORDINGS, root / "default")
    routes_file = root / "default" / "runpod" / "routes.json"
    routes = json.loads(routes_file.read_text(encoding="utf-8"))
    routes_file.write_text(json.dumps([first_route, *routes]), encoding="utf-8")
    return root


def test_public_catalog_without_a_key(
    replay_server: ReplayServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    result = crawl("runpod", replay_server, tmp_path)
    assert result.returncode == 0, result.log[-2000:]
    offers = result.offers
    assert len(offers) == 17
    assert [q["offer_key"] for q in result.quarantined] == ["NVIDIA GeForce GTX 1070/community"]
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

    calls = runpod_calls(replay_server)
    assert [c.json["operationName"] for c in calls] == ["GpuTypes", "GpuPrices", "GpuPrices"]
    clouds = sorted(c.json["variables"]["lowestPriceInput"]["secureCloud"] for c in calls[1:])
    assert clouds == [False, True]
    assert all(authorization(c) is None for c in calls)

    report = result.report
    assert report["auth"] == "not_needed"
    assert any(KEY_ENV in note for note in report["notes"])
    assert report["responses_by_status"] == {"200": 3}
    assert (report["offers"], report["quarantined"], report["pages_parsed"]) == (17, 1, 3)
    assert report["errors"] == [] and report["layout_errors"] == []


def test_key_is_sent_as_bearer_and_never_leaks(
    replay_server: ReplayServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    result = crawl("runpod", replay_server, tmp_path, settings={"LOG_LEVEL": "DEBUG"})
    assert result.returncode == 0, result.log[-2000:]
    assert len(result.offers) == 17
    assert [authorization(c) for c in runpod_calls(replay_server)] == [f"Bearer {KEY}"] * 3
    assert result.report["auth"] == "ok"
    for text in (json.dumps(result.report), json.dumps(result.feed), result.log):
        assert KEY not in text


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
    with ReplayServer(root=recordings_with(tmp_path, refuse)) as server:
        result = crawl("runpod", server, tmp_path)
        calls = runpod_calls(server)
    assert result.returncode == 0, result.log[-2000:]
    assert [(c.status, authorization(c) is not None) for c in calls] == [
        (401, True),  # the key, refused
        (200, False),  # the same query without it
        (200, False),
        (200, False),
    ]
    assert len(result.offers) == 17
    report = result.report
    assert report["auth"] == "rejected"
    assert report["responses_by_status"] == {"200": 3, "401": 1}
    assert KEY not in json.dumps(report) and KEY not in result.log


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
    with ReplayServer(root=recordings_with(tmp_path, refuse)) as server:
        result = crawl("runpod", server, tmp_path)
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
    with ReplayServer(root=recordings_with(tmp_path, busy)) as server:
        result = crawl("runpod", server, tmp_path)
    report = result.report
    assert result.feed == []
    assert sorted(report["errors"]) == [
        f"api error on /graphql {cloud}: Internal server error" for cloud in ("community", "secure")
    ]
    assert report["requests_gave_up"] == 2 and report["layout_errors"] == []
    assert report["pages_parsed"] == 1  # the catalog


def test_runpod_is_a_plain_api_spider() -> None:
    settings = Settings()
    RunpodSpider.update_settings(settings)
    assert settings.getbool("ROBOTSTXT_OBEY") is False
    assert not settings.getdict("DOWNLOAD_HANDLERS")
    assert (RunpodSpider.home, RunpodSpider.needs_browser) == ("US", False)
    assert RunpodSpider.auth_env == ("RUNPOD_API_KEY",) and not RunpodSpider.needs_auth
