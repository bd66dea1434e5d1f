"""Lambda: the real `scrapy crawl lambda` process against the replay server."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from scrapy.settings import Settings
from spider_fixture_cases import RECORDINGS
from test_crawl_replay import RUN_ID, crawl

from replay import ReplayServer
from spiders.providers.lambdalabs import KEY_ENV, LambdaSpider

KEY = "secret_lambda-test-key-91c4-not-real"


@pytest.fixture
def replay_server() -> Iterator[ReplayServer]:
    with ReplayServer() as srv:
        yield srv


def lambda_calls(server: ReplayServer) -> list[Any]:
    return [r for r in server.requests if r.provider == "lambda"]


def test_instance_types_with_capacity_per_region(
    replay_server: ReplayServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    result = crawl("lambda", replay_server, tmp_path, settings={"LOG_LEVEL": "DEBUG"})
    assert result.returncode == 0, result.log[-2000:]
    offers = result.offers
    assert len(offers) == 12
    assert [q["offer_key"] for q in result.quarantined] == ["cpu_4x_general"]
    a10 = offers["gpu_1x_a10/us-east-1"]
    assert (a10["status"], a10["region"], Decimal(a10["price"])) == (
        "in_stock",
        "us-east-1",
        Decimal("1.29"),
    )
    b200 = offers["gpu_8x_b200_sxm6/us-south-1"]
    assert (b200["gpu_count"], b200["price_basis"], b200["price"]) == (8, "instance", "53.52")
    sold = offers["gpu_8x_h100_sxm5"]
    assert (sold["status"], sold["region"]) == ("sold_out", None)
    assert all(r["run_id"] == RUN_ID for r in result.feed)

    calls = lambda_calls(replay_server)
    assert [c.path for c in calls] == ["/api/v1/instance-types"]
    sent = {k.lower(): v for k, v in calls[0].headers.items()}.get("authorization")
    assert sent == f"Bearer {KEY}"

    report = result.report
    assert report["auth"] == "ok"
    assert report["responses_by_status"] == {"200": 1}
    assert (report["offers"], report["quarantined"], report["pages_parsed"]) == (12, 1, 1)
    assert report["errors"] == [] and report["layout_errors"] == []
    for text in (json.dumps(report), json.dumps(result.feed), result.log):
        assert KEY not in text


def test_missing_key_sends_nothing_and_reports_auth_missing(
    replay_server: ReplayServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    result = crawl("lambda", replay_server, tmp_path)
    assert result.returncode == 0, result.log[-2000:]
    assert result.feed == [] and lambda_calls(replay_server) == []
    report = result.report
    assert report["auth"] == "missing" and KEY_ENV in (report["auth_detail"] or "")
    assert report["offers"] == 0 and report["errors"] == [] and report["layout_errors"] == []


def test_refused_key_is_auth_rejected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    root = tmp_path / "recordings"
    shutil.copytree(RECORDINGS, root / "default")
    routes_file = root / "default" / "lambda" / "routes.json"
    routes = json.loads(routes_file.read_text(encoding="utf-8"))
    routes[0].update(status=401, body="invalid_api_key.json")  # the key was revoked
    routes_file.write_text(json.dumps(routes), encoding="utf-8")
    with ReplayServer(root=root) as server:
        result = crawl("lambda", server, tmp_path)
    assert result.returncode == 0, result.log[-2000:]
    assert result.feed == []
    report = result.report
    assert report["auth"] == "rejected"
    assert report["responses_by_status"] == {"401": 1}
    assert report["layout_errors"] == [] and report["pages_parsed"] == 0
    assert KEY not in json.dumps(report) and KEY not in result.log


def test_lambda_is_a_plain_api_spider() -> None:
    settings = Settings()
    LambdaSpider.update_settings(settings)
    assert settings.getbool("ROBOTSTXT_OBEY") is False
    assert not settings.getdict("DOWNLOAD_HANDLERS")
    assert (LambdaSpider.name, LambdaSpider.home, LambdaSpider.needs_browser) == (
        "lambda",
        "US",
        False,
    )
    assert LambdaSpider.auth_env == ("LAMBDA_API_KEY",) and LambdaSpider.needs_auth
