"""Lambda: the real `scrapy crawl lambda` process against the replay server."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from crawl_kit import (
    RUN_ID,
    Routes,
    assert_api_spider,
    assert_auth_missing,
    assert_auth_rejected,
    assert_secrets_kept,
    crawl,
    crawl_scene,
    recordings_with_routes,
)

from flows.health import classify_run
from gpurent_core.model import RunStatus
from replay import ReplayServer
from spiders.providers.lambdalabs.spider import LambdaSpider

KEY_ENV = "LAMBDA_API_KEY"
KEY = "secret_lambda-test-key-91c4-not-real"


def test_instance_types_with_capacity_per_region(
    server: ReplayServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    result = crawl("lambda", server, tmp_path, settings={"LOG_LEVEL": "DEBUG"})
    assert result.returncode == 0, result.log[-2000:]
    offers = result.offers
    assert len(offers) == 9
    assert result.quarantined == []  # the CPU type is skipped, counted in the report
    a10 = offers["gpu_1x_a10/us-east-1"]
    assert (a10["status"], a10["region"], Decimal(a10["price"])) == (
        "in_stock",
        "us-east-1",
        Decimal("1.29"),
    )
    b200 = offers["gpu_8x_b200_sxm6/us-south-1"]
    assert (b200["gpu_count"], b200["price_basis"], b200["price"]) == (8, "instance", "53.52")
    # A type sold out everywhere makes no offer: its regions' prefix says they are sold out.
    assert not any(key.startswith("gpu_8x_h100_sxm5") for key in offers)
    assert all(r["run_id"] == RUN_ID for r in result.feed)

    assert [c.path for c in result.calls] == ["/api/v1/instance-types"]
    assert result.calls[0].headers.get("authorization") == f"Bearer {KEY}"

    report = result.report
    assert report["auth"] == "ok"
    assert report["responses_by_status"] == {"200": 1}
    assert (report["offers"], report["quarantined"], report["pages_parsed"]) == (9, 0, 1)
    assert report["errors"] == [] and report["layout_errors"] == []
    assert report["skipped"] == {"not_a_gpu_offer": 1}
    assert (report["unread_keys"], report["unread_prefixes"]) == ([], [])
    assert "gpu_8x_h100_sxm5/" in report["sold_out_unlisted"]
    assert len(report["sold_out_unlisted"]) == 9  # every GPU type listed
    assert classify_run(report, returncode=0).status is RunStatus.OK
    assert_secrets_kept(result, KEY)


def test_missing_key_sends_nothing_and_reports_auth_missing(
    server: ReplayServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    result = crawl("lambda", server, tmp_path)
    assert_auth_missing(result, KEY_ENV)
    assert result.report["offers"] == 0


def revoke_the_key(routes: Routes) -> None:
    routes[0].update(status=401, body="invalid_api_key.json")


def test_refused_key_is_auth_rejected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    root = recordings_with_routes(tmp_path, "lambda", revoke_the_key)
    result = crawl_scene("lambda", tmp_path, root=root)
    assert result.returncode == 0, result.log[-2000:]
    # Answered, not failed: a refused key is not retried nor given up on.
    assert len(result.calls) == 1 and result.report["responses_by_status"] == {"401": 1}
    assert (result.report["pages_parsed"], result.report["requests_gave_up"]) == (0, 0)
    assert_auth_rejected(result, KEY)


def test_lambda_is_a_plain_api_spider() -> None:
    assert LambdaSpider.name == "lambda"  # the module is lambdalabs: `lambda` is a keyword
    assert_api_spider(LambdaSpider, home="US", auth_env=("LAMBDA_API_KEY",), needs_auth=True)
