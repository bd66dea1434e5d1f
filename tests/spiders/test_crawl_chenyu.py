"""Chenyu: the real `scrapy crawl chenyu` process against the replay server."""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from crawl_kit import (
    RUN_ID,
    TOKEN,
    assert_api_spider,
    assert_secrets_kept,
    copy_recordings,
    crawl,
    crawl_scene,
    recorded,
)

from flows.health import classify_run
from gpurent_core.model import RunStatus
from replay import ReplayServer
from spiders.providers.chenyu.spider import ChenyuSpider

KEY_ENV = "CHENYU_API_KEY"
PATH = "/api/open/v2/gpu/list"
RTX_4090D = "gpu_5f0c2a91-3b7e-4d21-9a6e-1c4f8d2e7b03"


def test_key_reads_every_gpu_with_plans_and_unknown_stock(
    server: ReplayServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(KEY_ENV, TOKEN)
    result = crawl("chenyu", server, tmp_path)
    assert result.returncode == 0, result.log[-2000:]
    offers = result.offers
    assert len(offers) == 6 and result.quarantined == []
    # `status` values are undocumented: no offer is in stock or sold out.
    assert {(o["status"], o["available_count"]) for o in offers.values()} == {("unknown", None)}
    rtx = offers[RTX_4090D]
    assert (rtx["gpu_model"], Decimal(rtx["price"]), rtx["currency"], rtx["price_basis"]) == (
        "RTX 4090D",
        Decimal("1.88"),
        "CNY",
        "gpu",
    )
    assert [p["billing_unit"] for p in rtx["plans"]] == ["day", "week", "month", "year"]
    assert all(r["run_id"] == RUN_ID for r in result.feed)
    sent = [(r.query, r.headers.get("authorization")) for r in result.calls]
    assert sent == [({}, f"Bearer {TOKEN}")]
    report = result.report
    assert report["auth"] == "ok" and report["pages_parsed"] == 1
    assert (report["offers"], report["quarantined"]) == (6, 0)
    assert report["missing_fields"] == [] and report["layout_errors"] == []
    assert classify_run(report, returncode=0).status is RunStatus.OK
    assert_secrets_kept(result, TOKEN)


def rewritten_list(tmp_path: Path, edit: Callable[[list[dict[str, Any]]], None]) -> Path:
    """A copy of the default recordings whose Chenyu GPU list `edit` changed in place."""
    root = copy_recordings(tmp_path)
    body = recorded(root, "chenyu") / "gpu_list.json"
    data = json.loads(body.read_text(encoding="utf-8"))
    edit(data["data"]["gpu_list"])
    body.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return root


def test_a_status_field_renamed_everywhere_is_a_layout_change_never_sold_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def rename(items: list[dict[str, Any]]) -> None:
        for item in items:
            item["state"] = item.pop("status")

    monkeypatch.setenv(KEY_ENV, TOKEN)
    result = crawl_scene("chenyu", tmp_path, root=rewritten_list(tmp_path, rename))
    assert result.returncode == 0, result.log[-2000:]
    assert result.offers == {}
    assert {r["reason"] for r in result.quarantined} == {"missing_field: key gone: status"}
    report = result.report
    assert len(report["layout_errors"]) == 1 and "status" in report["layout_errors"][0]
    assert classify_run(report, returncode=0).status is RunStatus.LAYOUT_CHANGED


def test_one_unreadable_gpu_is_quarantined_under_its_key_the_rest_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def spoil(items: list[dict[str, Any]]) -> None:
        items[0]["price"]["hour"] = "n/a"

    monkeypatch.setenv(KEY_ENV, TOKEN)
    result = crawl_scene("chenyu", tmp_path, root=rewritten_list(tmp_path, spoil))
    assert result.returncode == 0, result.log[-2000:]
    assert len(result.offers) == 5 and RTX_4090D not in result.offers
    [bad] = result.quarantined
    assert bad["offer_key"] == RTX_4090D and bad["reason"].startswith("price_unparsed")
    report = result.report
    assert (report["offers"], report["quarantined"], report["layout_errors"]) == (5, 1, [])
    assert classify_run(report, returncode=0).status is RunStatus.PARTIAL


def test_spider_is_a_json_api_spider() -> None:
    assert_api_spider(ChenyuSpider, home="CN", auth_env=(KEY_ENV,), needs_auth=True)
