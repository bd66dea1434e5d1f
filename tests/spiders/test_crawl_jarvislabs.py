"""JarvisLabs: the real `scrapy crawl jarvislabs` process against the replay server."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from scrapy.settings import Settings
from spider_fixture_cases import RECORDINGS
from test_crawl_replay import RUN_ID, crawl

from replay import Fault, ReplayServer
from spiders.providers.jarvislabs import KEY_ENV, JarvislabsSpider

KEY = "jl-test-key-7d0a-not-real"


@pytest.fixture
def replay_server() -> Iterator[ReplayServer]:
    with ReplayServer() as srv:
        yield srv


def test_server_meta_prices_and_free_cards(
    replay_server: ReplayServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    result = crawl("jarvislabs", replay_server, tmp_path, settings={"LOG_LEVEL": "DEBUG"})
    assert result.returncode == 0, result.log[-2000:]
    offers = result.offers
    assert len(offers) == 9
    assert [q["offer_key"] for q in result.quarantined] == ["india-01/A5000Pro/container"]
    l4 = offers["india-noida-01/L4/vm"]
    assert (l4["status"], l4["available_count"], l4["price"]) == ("in_stock", 3, "0.44")
    assert [(p["price_kind"], p["price"]) for p in l4["plans"]] == [("spot", "0.29")]
    assert offers["india-noida-01/A100-80GB/vm"]["status"] == "sold_out"
    h100 = offers["europe-01/H100/any"]
    assert (h100["gpu_model"], h100["gpu_vram_gb"], h100["available_count"]) == ("H100", 80, 12)
    assert all(r["run_id"] == RUN_ID for r in result.feed)

    calls = [r for r in replay_server.requests if r.provider == "jarvislabs"]
    assert [c.path for c in calls] == ["/misc/server_meta"]
    sent = {k.lower(): v for k, v in calls[0].headers.items()}.get("authorization")
    assert sent == f"Bearer {KEY}"

    report = result.report
    assert report["auth"] == "ok"
    assert report["responses_by_status"] == {"200": 1}
    assert (report["offers"], report["quarantined"], report["pages_parsed"]) == (9, 1, 1)
    assert report["errors"] == [] and report["layout_errors"] == []
    for text in (json.dumps(report), json.dumps(result.feed), result.log):
        assert KEY not in text


def test_missing_key_is_auth_missing(
    replay_server: ReplayServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    result = crawl("jarvislabs", replay_server, tmp_path)
    assert result.returncode == 0, result.log[-2000:]
    assert result.feed == []
    assert not [r for r in replay_server.requests if r.provider == "jarvislabs"]
    assert result.report["auth"] == "missing" and result.report["errors"] == []


def test_refused_key_is_auth_rejected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    root = tmp_path / "recordings"
    shutil.copytree(RECORDINGS, root / "default")
    routes_file = root / "default" / "jarvislabs" / "routes.json"
    routes = json.loads(routes_file.read_text(encoding="utf-8"))
    routes[0].update(status=401, body="not_authenticated.json")
    routes_file.write_text(json.dumps(routes), encoding="utf-8")
    with ReplayServer(root=root) as server:
        result = crawl("jarvislabs", server, tmp_path)
    assert result.feed == []
    report = result.report
    assert report["auth"] == "rejected" and report["responses_by_status"] == {"401": 1}
    assert report["layout_errors"] == []
    assert KEY not in json.dumps(report) and KEY not in result.log


def test_server_error_is_a_failed_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    with ReplayServer(faults=[Fault("jarvislabs", "/misc/server_meta", status=503)]) as server:
        result = crawl("jarvislabs", server, tmp_path, settings={"RETRY_TIMES": "1"})
    report = result.report
    assert result.feed == []
    assert report["responses_by_status"] == {"503": 2}
    assert report["requests_gave_up"] == 1 and report["layout_errors"] == []
    assert report["auth"] == "unknown"  # the key was neither accepted nor refused


def test_jarvislabs_is_a_plain_api_spider() -> None:
    settings = Settings()
    JarvislabsSpider.update_settings(settings)
    assert settings.getbool("ROBOTSTXT_OBEY") is False
    assert not settings.getdict("DOWNLOAD_HANDLERS")
    assert (JarvislabsSpider.home, JarvislabsSpider.needs_browser) == ("IN", False)
    assert JarvislabsSpider.auth_env == ("JARVISLABS_API_KEY",) and JarvislabsSpider.needs_auth
