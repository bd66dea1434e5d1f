"""Featurize: the real `scrapy crawl featurize` process against the replay server."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from crawl_kit import (
    RUN_ID,
    TOKEN,
    assert_secrets_kept,
    copy_recordings,
    crawl,
    crawl_scene,
    recorded,
)

from flows.health import classify_run
from gpurent_core.model import RunStatus
from replay import ReplayServer

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
    assert len(offers) == 10
    # the status word we do not know is set aside beside its offer (stock unknown)
    assert [(q["offer_key"], q["field"]) for q in result.quarantined] == [("f3a1a2d0", "status")]
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
    # one status unread: partial, never plain ok (rule of truth 9)
    assert classify_run(report, returncode=0).status is RunStatus.PARTIAL
    assert_secrets_kept(result, TOKEN)


def test_status_renamed_in_the_answer_is_a_layout_change_not_a_market(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    root = copy_recordings(tmp_path)
    answer = recorded(root, "featurize") / "available_instances.json"
    answer.write_text(
        answer.read_text(encoding="utf-8").replace('"status": "', '"state": "'),
        encoding="utf-8",
    )
    result = crawl_scene("featurize", tmp_path, root=root)
    assert result.returncode == 0, result.log[-2000:]
    assert result.offers == {}  # no offer is unknown or sold out: none is stated at all
    assert {q["reason"] for q in result.quarantined} == {"missing_field: key gone: status"}
    report = result.report
    assert report["missing_fields"] == [f"{PATH}: status"]
    assert "status (stock)" in report["layout_errors"][0]
    assert classify_run(report, returncode=0).status is RunStatus.LAYOUT_CHANGED
