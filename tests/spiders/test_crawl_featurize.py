"""Featurize: the real `scrapy crawl featurize` process against the replay server."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from crawl_kit import (
    RUN_ID,
    TOKEN,
    assert_auth_missing,
    assert_auth_rejected,
    assert_secrets_kept,
    crawl,
    crawl_scene,
)

from flows.health import classify_run
from gpurent.model import RunStatus
from replay import Fault, ReplayServer

TOKEN_ENV = "FEATURIZE_TOKEN"
PATH = "/bus/api/v1/available_instances"


def test_token_reads_every_instance(
    server: ReplayServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    result = crawl("featurize", server, tmp_path)
    assert result.returncode == 0, result.log[-2000:]
    offers = result.offers
    assert len(offers) == 10 and result.quarantined == []
    rtx3080 = offers["f3a1a2c8"]  # "GeForce RTX 3080, 10GB, ...": the 10GB part settles it
    assert (rtx3080["gpu_model"], rtx3080["gpu_vram_gb"]) == ("RTX 3080", 10)
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
    assert [r.headers.get("token") for r in result.calls] == [TOKEN]
    report = result.report
    assert report["auth"] == "ok" and report["pages_parsed"] == 1
    assert report["notes"] == ["unrecognised instance status 'maintaining': stock unknown"]
    assert classify_run(report, returncode=0).status is RunStatus.OK
    assert_secrets_kept(result, TOKEN)


def test_without_token_nothing_is_asked_and_auth_is_missing(
    server: ReplayServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    assert_auth_missing(crawl("featurize", server, tmp_path), TOKEN_ENV)


def test_refused_token_is_rejected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    result = crawl_scene("featurize", tmp_path, faults=[Fault("featurize", PATH, status=401)])
    assert_auth_rejected(result, TOKEN)
