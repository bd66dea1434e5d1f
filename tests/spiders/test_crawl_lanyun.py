"""蓝耘 Lanyun: the real `scrapy crawl lanyun` process against the replay server."""

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
    assert_auth_missing,
    assert_auth_rejected,
    assert_secrets_kept,
    copy_recordings,
    crawl,
    crawl_scene,
    recorded,
)

from flows.health import classify_run
from gpurent_core.model import RunStatus
from replay import Fault, ReplayServer
from spiders.providers.lanyun.spider import LanyunSpider

TOKEN_ENV = "LANYUN_TOKEN"
SOLD_OUT = {"14/852", "14/861", "14/962", "16/1215"}


def test_token_reads_every_region_sold_out_hosts_too(
    server: ReplayServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    result = crawl("lanyun", server, tmp_path)
    assert result.returncode == 0, result.log[-2000:]
    offers = result.offers
    assert len(offers) == 12 and result.quarantined == []
    assert {k for k, o in offers.items() if o["status"] == "sold_out"} == SOLD_OUT
    host = offers["14/847"]
    assert (host["gpu_model"], Decimal(host["price"]), host["currency"], host["region"]) == (
        "RTX 4090",
        Decimal("2.3"),
        "CNY",
        "河北1区",
    )
    assert host["cuda_version"] == "13.1"
    assert all([f["fee_type"] for f in o["fees"]] == ["data_disk"] for o in offers.values())
    assert all(r["run_id"] == RUN_ID for r in result.feed)
    assert {r.headers.get("authorization") for r in result.calls} == {f"Bearer {TOKEN}"}
    report = result.report
    assert report["auth"] == "ok" and report["pages_parsed"] == 3
    assert (report["offers"], report["quarantined"]) == (12, 0)
    assert classify_run(report, returncode=0).status is RunStatus.OK
    assert_secrets_kept(result, TOKEN)


def test_without_token_nothing_is_asked_and_auth_is_missing(
    server: ReplayServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    assert_auth_missing(crawl("lanyun", server, tmp_path), TOKEN_ENV)


@pytest.mark.parametrize("status", [401, 403])
def test_refused_token_is_rejected(
    status: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    faults = [Fault("lanyun", "/api/d/region/list", status=status)]
    assert_auth_rejected(crawl_scene("lanyun", tmp_path, faults=faults), TOKEN)


def rewritten_hosts(
    tmp_path: Path, edit: Callable[[list[dict[str, Any]]], None], regions: tuple[int, ...] = (14,)
) -> Path:
    """A copy of the default recordings whose hosts of `regions` `edit` changed in place."""
    root = copy_recordings(tmp_path)
    for region in regions:
        body = recorded(root, "lanyun") / f"dev_list_region{region}.json"
        data = json.loads(body.read_text(encoding="utf-8"))
        edit(data["data"])
        body.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return root


def test_a_stock_field_renamed_everywhere_is_a_layout_change_never_sold_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def rename(hosts: list[dict[str, Any]]) -> None:
        for host in hosts:
            host["freeGpuNum"] = host.pop("unuseGpuNum")

    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    result = crawl_scene("lanyun", tmp_path, root=rewritten_hosts(tmp_path, rename, (14, 16)))
    assert result.returncode == 0, result.log[-2000:]
    assert result.offers == {}
    assert {r["reason"] for r in result.quarantined} == {"missing_field: key gone: unuseGpuNum"}
    report = result.report
    assert len(report["layout_errors"]) == 2
    assert all("unuseGpuNum" in error for error in report["layout_errors"])
    assert classify_run(report, returncode=0).status is RunStatus.LAYOUT_CHANGED


def test_one_unreadable_host_is_quarantined_under_its_key_the_rest_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def spoil(hosts: list[dict[str, Any]]) -> None:
        hosts[0]["price"] = "n/a"

    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    result = crawl_scene("lanyun", tmp_path, root=rewritten_hosts(tmp_path, spoil))
    assert result.returncode == 0, result.log[-2000:]
    assert len(result.offers) == 11 and "14/847" not in result.offers
    [bad] = result.quarantined
    assert bad["offer_key"] == "14/847" and bad["reason"].startswith("price_unparsed")
    report = result.report
    assert (report["offers"], report["quarantined"], report["layout_errors"]) == (11, 1, [])
    assert classify_run(report, returncode=0).status is RunStatus.PARTIAL


def test_spider_is_a_json_api_spider() -> None:
    assert_api_spider(LanyunSpider, home="CN", auth_env=(TOKEN_ENV,), needs_auth=True)
