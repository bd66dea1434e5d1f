"""Novita AI: the real `scrapy crawl novita` process against the replay server."""

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
from spiders.providers.novita.spider import NovitaSpider

KEY_ENV = "NOVITA_API_KEY"
PATH = "/gpu-instance/openapi/v1/products"
SOLD_OUT = {"c3e8a1f0-0003", "c3e8a1f0-0005", "c3e8a1f0-0007"}


def test_key_reads_every_product_sold_out_ones_too(
    server: ReplayServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(KEY_ENV, TOKEN)
    result = crawl("novita", server, tmp_path)
    assert result.returncode == 0, result.log[-2000:]
    offers = result.offers
    assert len(offers) == 9 and result.quarantined == []
    assert {k for k, o in offers.items() if o["status"] == "sold_out"} == SOLD_OUT
    h100 = offers["c3e8a1f0-0007"]
    assert (h100["gpu_model"], Decimal(h100["price"]), h100["currency"], h100["price_basis"]) == (
        "H100",
        Decimal("2.56"),
        "USD",
        "gpu",
    )
    # The spot price is a plan beside the offer; the container-disk fee is on every offer.
    assert [(Decimal(p["price"]), p["price_kind"]) for p in h100["plans"]] == [
        (Decimal("1.28"), "spot")
    ]
    assert all([f["fee_type"] for f in o["fees"]] == ["system_disk"] for o in offers.values())
    assert all(r["run_id"] == RUN_ID for r in result.feed)
    sent = [(r.query, r.headers.get("authorization")) for r in result.calls]
    assert sent == [({}, f"Bearer {TOKEN}")]
    report = result.report
    assert report["auth"] == "ok" and report["pages_parsed"] == 1
    assert (report["offers"], report["quarantined"]) == (9, 0)
    assert report["missing_fields"] == [] and report["layout_errors"] == []
    assert classify_run(report, returncode=0).status is RunStatus.OK
    assert_secrets_kept(result, TOKEN)


def rewritten_products(tmp_path: Path, edit: Callable[[list[dict[str, Any]]], None]) -> Path:
    """A copy of the default recordings whose Novita products `edit` changed in place."""
    root = copy_recordings(tmp_path)
    body = recorded(root, "novita") / "products.json"
    data = json.loads(body.read_text(encoding="utf-8"))
    edit(data["data"])
    body.write_text(json.dumps(data), encoding="utf-8")
    return root


def test_a_stock_flag_renamed_everywhere_is_a_layout_change_never_sold_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def rename(products: list[dict[str, Any]]) -> None:
        for product in products:
            product["deployable"] = product.pop("availableDeploy")

    monkeypatch.setenv(KEY_ENV, TOKEN)
    result = crawl_scene("novita", tmp_path, root=rewritten_products(tmp_path, rename))
    assert result.returncode == 0, result.log[-2000:]
    assert result.offers == {}
    assert {r["reason"] for r in result.quarantined} == {"missing_field: key gone: availableDeploy"}
    report = result.report
    assert len(report["layout_errors"]) == 1 and "availableDeploy" in report["layout_errors"][0]
    verdict = classify_run(report, returncode=0)
    assert verdict.status is RunStatus.LAYOUT_CHANGED


def test_one_unreadable_product_is_quarantined_under_its_key_the_rest_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def spoil(products: list[dict[str, Any]]) -> None:
        products[0]["price"] = "n/a"

    monkeypatch.setenv(KEY_ENV, TOKEN)
    result = crawl_scene("novita", tmp_path, root=rewritten_products(tmp_path, spoil))
    assert result.returncode == 0, result.log[-2000:]
    assert len(result.offers) == 8 and "c3e8a1f0-0001" not in result.offers
    [bad] = result.quarantined
    assert bad["offer_key"] == "c3e8a1f0-0001" and bad["reason"].startswith("price_unparsed")
    report = result.report
    assert (report["offers"], report["quarantined"], report["layout_errors"]) == (8, 1, [])
    assert classify_run(report, returncode=0).status is RunStatus.PARTIAL


def test_spider_is_a_json_api_spider() -> None:
    assert_api_spider(NovitaSpider, home="US", auth_env=(KEY_ENV,), needs_auth=True)
