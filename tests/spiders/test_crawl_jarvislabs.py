"""JarvisLabs: the real `scrapy crawl jarvislabs` process against the replay server."""

from __future__ import annotations

from pathlib import Path

import pytest
from crawl_kit import (
    RUN_ID,
    Routes,
    assert_api_spider,
    assert_auth_rejected,
    assert_secrets_kept,
    crawl,
    crawl_scene,
    recordings_with_routes,
)

from replay import Fault, ReplayServer
from spiders.providers.jarvislabs.spider import JarvislabsSpider

KEY_ENV = "JARVISLABS_API_KEY"
KEY = "jl-test-key-7d0a-not-real"


def test_server_meta_prices_and_free_cards(
    server: ReplayServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    result = crawl("jarvislabs", server, tmp_path, settings={"LOG_LEVEL": "DEBUG"})
    assert result.returncode == 0, result.log[-2000:]
    offers = result.offers
    assert len(offers) == 9
    assert [q["offer_key"] for q in result.quarantined] == ["india-01/A5000Pro/container"]
    l4 = offers["india-noida-01/L4/vm"]
    assert (l4["status"], l4["available_count"], l4["price"]) == ("in_stock", 3, "0.44")
    assert l4["plans"] == []  # spot is for containers: the VM row's spot_price is none
    container = offers["india-noida-01/L4/container"]
    assert [(p["price_kind"], p["price"]) for p in container["plans"]] == [("spot", "0.29")]
    assert offers["india-noida-01/A100-80GB/vm"]["status"] == "sold_out"
    h100 = offers["europe-01/H100/any"]
    assert (h100["gpu_model"], h100["gpu_vram_gb"], h100["available_count"]) == ("H100", 80, 12)
    assert all(r["run_id"] == RUN_ID for r in result.feed)

    assert [c.path for c in result.calls] == ["/misc/server_meta"]
    assert result.calls[0].headers.get("authorization") == f"Bearer {KEY}"

    report = result.report
    assert report["auth"] == "ok"
    assert report["responses_by_status"] == {"200": 1}
    assert (report["offers"], report["quarantined"], report["pages_parsed"]) == (9, 1, 1)
    assert report["errors"] == [] and report["layout_errors"] == []
    assert_secrets_kept(result, KEY)


def refuse_the_key(routes: Routes) -> None:
    routes[0].update(status=401, body="not_authenticated.json")


def test_refused_key_is_auth_rejected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # JarvisLabs' own 401 answer (recorded): the keyed-list path, on the provider's body.
    monkeypatch.setenv(KEY_ENV, KEY)
    root = recordings_with_routes(tmp_path, "jarvislabs", refuse_the_key)
    result = crawl_scene("jarvislabs", tmp_path, root=root)
    assert result.report["responses_by_status"] == {"401": 1}
    assert_auth_rejected(result, KEY)


def test_server_error_is_a_failed_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    fault = Fault("jarvislabs", "/misc/server_meta", status=503)
    result = crawl_scene("jarvislabs", tmp_path, faults=[fault], settings={"RETRY_TIMES": "1"})
    report = result.report
    assert result.feed == []
    assert report["responses_by_status"] == {"503": 2}
    assert report["requests_gave_up"] == 1 and report["layout_errors"] == []
    assert report["auth"] == "unknown"  # the key was neither accepted nor refused


def test_jarvislabs_is_a_plain_api_spider() -> None:
    assert_api_spider(
        JarvislabsSpider, home="IN", auth_env=("JARVISLABS_API_KEY",), needs_auth=True
    )
