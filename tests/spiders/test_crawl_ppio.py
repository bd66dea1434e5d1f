"""PPIO: the real `scrapy crawl ppio` process against the replay server."""

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

KEY_ENV = "PPIO_API_KEY"
PATH = "/gpu-instance/openapi/v1/products"


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    with ReplayServer() as srv:
        yield srv


def test_key_reads_every_product_sold_out_ones_too(
    server: ReplayServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(KEY_ENV, TOKEN)
    result = crawl("ppio", server, tmp_path)
    assert result.returncode == 0, result.log[-2000:]
    offers = result.offers
    assert len(offers) == 8 and [q["offer_key"] for q in result.quarantined] == ["a9f0c1d2-0009"]
    sold_out = {k for k, o in offers.items() if o["status"] == "sold_out"}
    assert sold_out == {"a9f0c1d2-0003", "a9f0c1d2-0005", "a9f0c1d2-0007"}
    h100 = offers["a9f0c1d2-0007"]
    assert (h100["gpu_model"], Decimal(h100["price"]), h100["price_basis"]) == (
        "H100",
        Decimal("14.9"),
        "gpu",
    )
    assert all(r["run_id"] == RUN_ID for r in result.feed)
    calls = [r for r in server.requests if r.provider == "ppio"]
    assert [(r.query, r.headers.get("authorization")) for r in calls] == [({}, f"Bearer {TOKEN}")]
    report = result.report
    assert report["auth"] == "ok" and report["pages_parsed"] == 1
    assert (report["offers"], report["quarantined"]) == (8, 1)
    assert classify_run(report, returncode=0).status is RunStatus.OK
    assert TOKEN not in json.dumps(report) and TOKEN not in json.dumps(result.feed)
    assert TOKEN not in result.log


def test_without_key_nothing_is_asked_and_auth_is_missing(
    server: ReplayServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    result = crawl("ppio", server, tmp_path)
    assert result.returncode == 0, result.log[-2000:]
    assert result.feed == []
    assert not [r for r in server.requests if r.provider == "ppio"]
    assert result.report["auth"] == "missing"
    assert classify_run(result.report, returncode=0).status is RunStatus.AUTH_REQUIRED


def test_refused_key_is_rejected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, TOKEN)
    with ReplayServer(faults=[Fault("ppio", PATH, status=403)]) as server:
        result = crawl("ppio", server, tmp_path)
    assert result.feed == []
    assert result.report["auth"] == "rejected"
    assert classify_run(result.report, returncode=0).status is RunStatus.AUTH_REQUIRED
    assert TOKEN not in result.log
