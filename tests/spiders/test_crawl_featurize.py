"""Featurize: the real `scrapy crawl featurize` process against the replay server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
from test_crawl_replay import RUN_ID, TOKEN, crawl

from flows.health import classify_run
from gpurent.model import RunStatus
from replay import Fault, ReplayServer

TOKEN_ENV = "FEATURIZE_TOKEN"
PATH = "/bus/api/v1/available_instances"


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    with ReplayServer() as srv:
        yield srv


def test_token_reads_every_instance(
    server: ReplayServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    result = crawl("featurize", server, tmp_path)
    assert result.returncode == 0, result.log[-2000:]
    offers = result.offers
    assert len(offers) == 9 and [q["offer_key"] for q in result.quarantined] == ["f3a1a2c8"]
    assert {k: o["status"] for k, o in offers.items() if o["status"] != "in_stock"} == {
        "f3a19c11": "sold_out",
        "f3a19d52": "sold_out",
        "f3a1a0f3": "sold_out",
        "f3a1a2d0": "unknown",
    }
    rtx5090 = offers["f3a1a115"]
    assert (rtx5090["gpu_model"], rtx5090["gpu_vram_gb"], rtx5090["status"]) == (
        "RTX 5090",
        32,
        "in_stock",
    )
    assert Decimal(rtx5090["price"]) == Decimal("3.18") and rtx5090["currency"] == "CNY"
    assert all(r["run_id"] == RUN_ID for r in result.feed)
    calls = [r for r in server.requests if r.provider == "featurize"]
    assert [r.headers.get("token") for r in calls] == [TOKEN]
    report = result.report
    assert report["auth"] == "ok" and report["pages_parsed"] == 1
    assert report["notes"] == ["unrecognised instance status 'maintaining': stock unknown"]
    assert classify_run(report, returncode=0).status is RunStatus.OK
    assert TOKEN not in json.dumps(report) and TOKEN not in json.dumps(result.feed)
    assert TOKEN not in result.log


def test_without_token_nothing_is_asked_and_auth_is_missing(
    server: ReplayServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    result = crawl("featurize", server, tmp_path)
    assert result.returncode == 0, result.log[-2000:]
    assert result.feed == []
    assert not [r for r in server.requests if r.provider == "featurize"]
    assert result.report["auth"] == "missing"
    assert classify_run(result.report, returncode=0).status is RunStatus.AUTH_REQUIRED


def test_refused_token_is_rejected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    with ReplayServer(faults=[Fault("featurize", PATH, status=401)]) as server:
        result = crawl("featurize", server, tmp_path)
    assert result.feed == []
    assert result.report["auth"] == "rejected"
    assert classify_run(result.report, returncode=0).status is RunStatus.AUTH_REQUIRED
    assert TOKEN not in result.log
