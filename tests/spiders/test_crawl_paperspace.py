"""Paperspace: the real `scrapy crawl paperspace` process against the replay server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
from scrapy.settings import Settings
from test_crawl_replay import RUN_ID, crawl

from flows.health import classify_run
from gpurent.model import RunStatus
from replay import Fault, ReplayServer
from spiders.providers.paperspace import PaperspaceSpider

KEY_ENV = "PAPERSPACE_API_KEY"
KEY = "ps-key-5e1d0c-not-a-real-key"
PATH = "/vmTypes/getVmTypesByClusters"


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    with ReplayServer() as srv:
        yield srv


def test_paperspace_reads_every_cluster_with_the_key(
    server: ReplayServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    result = crawl("paperspace", server, tmp_path)
    assert result.returncode == 0, result.log[-2000:]
    offers = result.offers
    assert len(offers) == 13
    assert [q["offer_key"] for q in result.quarantined] == ["31/M4000"]
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

    [call] = [r for r in server.requests if r.provider == "paperspace"]
    assert (call.path, call.query) == (PATH, {"includePublicClusters": "true"})
    assert call.headers.get("x-api-key") == KEY

    report = result.report
    assert report["auth"] == "ok" and report["responses_by_status"] == {"200": 1}
    assert (report["offers"], report["quarantined"], report["pages_parsed"]) == (13, 1, 1)
    assert report["errors"] == [] and report["layout_errors"] == []
    assert report["notes"] == ["skipped 1 CPU-only and 1 free-tier machine types"]
    assert classify_run(report, returncode=0).status is RunStatus.OK
    # Rule of truth 8: the key reaches the provider and nothing else.
    assert KEY not in json.dumps(report) and KEY not in json.dumps(result.feed)
    assert KEY not in result.log


def test_paperspace_without_a_key_asks_nothing_and_says_so(
    server: ReplayServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    result = crawl("paperspace", server, tmp_path)
    assert result.returncode == 0, result.log[-2000:]
    assert result.feed == []
    assert not [r for r in server.requests if r.provider == "paperspace"]
    report = result.report
    assert report["auth"] == "missing" and KEY_ENV in report["auth_detail"]
    assert report["errors"] == [] and report["layout_errors"] == []
    verdict = classify_run(report, returncode=result.returncode)
    assert verdict.status is RunStatus.AUTH_REQUIRED  # never failed, never sold out


def test_paperspace_refused_key_is_rejected_not_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    with ReplayServer(faults=[Fault("paperspace", PATH, status=401)]) as server:
        result = crawl("paperspace", server, tmp_path)
        calls = [r for r in server.requests if r.provider == "paperspace"]
    assert result.feed == [] and len(calls) == 1  # a 401 is not retried
    report = result.report
    assert report["auth"] == "rejected"
    assert report["responses_by_status"] == {"401": 1}
    assert report["requests_gave_up"] == 0 and report["layout_errors"] == []
    assert classify_run(report, returncode=result.returncode).status is RunStatus.AUTH_REQUIRED
    assert KEY not in json.dumps(report) and KEY not in result.log


def test_paperspace_spider_facts_and_settings() -> None:
    assert (PaperspaceSpider.home, PaperspaceSpider.needs_browser, PaperspaceSpider.auth_env) == (
        "US",
        False,
        ("PAPERSPACE_API_KEY",),
    )
    assert PaperspaceSpider.needs_auth is True
    settings = Settings()
    PaperspaceSpider.update_settings(settings)
    assert not settings.getdict("DOWNLOAD_HANDLERS")  # no browser
    assert settings.getbool("ROBOTSTXT_OBEY") is False  # a JSON API, not pages
