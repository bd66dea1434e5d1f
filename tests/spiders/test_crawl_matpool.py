"""Matpool: the real `scrapy crawl matpool` process against the replay server."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from crawl_kit import (
    RUN_ID,
    TOKEN,
    Routes,
    assert_secrets_kept,
    crawl,
    crawl_scene,
    recordings_with_routes,
)

from flows.health import classify_run
from gpurent_core.model import RunStatus
from replay import Fault, ReplayServer

TOKEN_ENV = "MATPOOL_TOKEN"
PATH = "/api/machines"


def test_public_market_loads_without_a_token(
    server: ReplayServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    result = crawl("matpool", server, tmp_path)
    assert result.returncode == 0, result.log[-2000:]
    offers = result.offers
    assert len(offers) == 27  # "A100-PCIE" too, with its VRAM unknown (40 or 80 GB)
    assert result.quarantined == []
    assert [o["gpu_vram_gb"] for o in offers.values() if o["raw_gpu_name"] == "A100-PCIE"] == [None]
    statuses = [o["status"] for o in offers.values()]
    assert statuses.count("sold_out") == 4 and statuses.count("low") == 1
    rtx4090 = [o for o in offers.values() if o["gpu_model"] == "RTX 4090"]
    assert {Decimal(o["price"]) for o in rtx4090} == {Decimal("2.2")}
    assert all([(p["price"], p["price_kind"]) for p in o["plans"]] == [("1.98", "member")]
               for o in rtx4090)  # fmt: skip
    # The network-disk rate beyond the free 5 GB is unknown: no fee is declared for it.
    assert all(o["fees"] == [] for o in rtx4090)
    assert all(r["run_id"] == RUN_ID for r in result.feed)

    calls = result.calls
    assert [(r.query["page"], r.query["per_page"]) for r in calls] == [("1", "20"), ("2", "20")]
    assert all(r.query["machine_category"] == "0" for r in calls)
    assert not any("authorization" in r.headers for r in calls)
    report = result.report
    assert report["auth"] == "not_needed" and report["pages_parsed"] == 2
    assert (report["offers"], report["quarantined"]) == (27, 0)
    assert report["errors"] == [] and report["layout_errors"] == []
    assert classify_run(report, returncode=0).status is RunStatus.OK


def test_token_is_sent_as_bearer_when_set(
    server: ReplayServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    result = crawl("matpool", server, tmp_path)
    assert [r.headers.get("authorization") for r in result.calls] == [f"Bearer {TOKEN}"] * 2
    assert len(result.offers) == 27 and result.report["auth"] == "ok"
    assert_secrets_kept(result, TOKEN)


def test_refused_token_is_reported_and_the_public_market_still_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def public_only(routes: Routes) -> None:
        for route in routes:  # the pages answer only requests without a token...
            route["headers"] = {"Authorization": "!"}
        routes.append(  # ...a request with one is refused
            {"method": "GET", "path": PATH, "headers": {"Authorization": "*"}, "status": 401,
             "body_text": json.dumps({"code": 401, "msg": "unauthorized"})}
        )  # fmt: skip

    root = recordings_with_routes(tmp_path, "matpool", public_only)
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    result = crawl_scene("matpool", tmp_path, root=root)
    calls = result.calls
    assert [(r.query["page"], r.status, "authorization" in r.headers) for r in calls] == [
        ("1", 401, True),
        ("1", 200, False),
        ("2", 200, False),
    ]
    assert len(result.offers) == 27
    report = result.report
    assert report["auth"] == "rejected"
    verdict = classify_run(report, returncode=0)
    assert verdict.status is RunStatus.AUTH_REQUIRED and "27 public" in verdict.message
    assert_secrets_kept(result, TOKEN)


def test_market_refusing_anonymous_requests_is_auth_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    result = crawl_scene("matpool", tmp_path, faults=[Fault("matpool", PATH, status=401)])
    assert result.feed == []
    assert result.report["auth"] == "missing" and TOKEN_ENV in result.report["auth_detail"]
    assert classify_run(result.report, returncode=0).status is RunStatus.AUTH_REQUIRED


def test_business_error_code_is_a_failed_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def busy(routes: Routes) -> None:
        routes[0].pop("body")
        routes[0]["body_text"] = json.dumps({"code": 500, "msg": "busy"})

    root = recordings_with_routes(tmp_path, "matpool", busy)
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    result = crawl_scene("matpool", tmp_path, root=root)
    report = result.report
    assert result.feed == [] and report["layout_errors"] == []
    assert report["errors"] == ["api error on /api/machines: code 500: busy"]
    assert classify_run(report, returncode=0).status is RunStatus.FAILED


def test_a_page_cap_cuts_the_market_and_the_run_says_partial(
    server: ReplayServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    result = crawl("matpool", server, tmp_path, settings={"GPURENT_MAX_PAGES": "1"})
    assert result.returncode == 0, result.log[-2000:]
    assert [r.query["page"] for r in result.calls] == ["1"]  # page 2 of 2 never asked
    assert result.report["page_cap_reached"] == 1
    verdict = classify_run(result.report, returncode=0)
    assert verdict.status is RunStatus.PARTIAL and "GPURENT_MAX_PAGES=1" in verdict.message
