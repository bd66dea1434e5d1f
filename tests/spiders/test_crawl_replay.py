"""The real `scrapy crawl` process against the replay server: feeds, run reports, faults.

Each test starts a ReplayServer in this process and runs
`python -m scrapy crawl <provider> -O feed.jsonl` from the repo root, pointed at it with
GPURENT_BASE_URL, exactly as the flow runs a crawl.
"""

from __future__ import annotations

import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from crawl_kit import (
    RUN_ID,
    TOKEN,
    Routes,
    assert_secrets_kept,
    copy_recordings,
    crawl,
    crawl_scene,
    recorded,
    recordings_with_routes,
)
from spider_fixture_cases import REPO_ROOT

from replay import Fault, ReplayServer, provider_recordings
from spiders.ledger import EVERY_OFFER


def test_scrapy_list_names_every_spider_with_recordings() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "scrapy", "list"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    names = done.stdout.split()
    assert names == sorted(names)
    assert {"autodl", "cudo", "vastai"} <= set(names)
    # Every provider's spider has bundled recordings, so `gpurent crawl --replay` can reach it
    # offline; the one spider that reads no GPU provider (OpenRouter's per-token prices, for
    # `gpurent api-prices refresh`) keeps its own beside it.
    recorded_providers = {n for n, folder in provider_recordings().items() if folder.is_dir()}
    assert set(names) - recorded_providers == {"openrouter_prices"}
    assert (REPO_ROOT / "spiders" / "api_prices" / "recordings" / "routes.json").is_file()


# -- Vast.ai ---------------------------------------------------------------------


def test_vastai_pages_through_every_offer(server: ReplayServer, tmp_path: Path) -> None:
    result = crawl("vastai", server, tmp_path)
    assert result.returncode == 0, result.log[-2000:]
    offers = result.offers
    assert len(offers) == 11 and result.quarantined == []
    gtx = offers["21350333"]  # Vast.ai's "GTX 1660 S" with gpu_ram 6144 MiB
    assert (gtx["gpu_model"], gtx["gpu_vram_gb"], gtx["raw_gpu_name"]) == (
        "GTX 1660 SUPER",
        6,
        "GTX 1660 S",
    )
    assert offers["21348215"]["status"] == "in_stock"
    assert offers["21348215"]["available_count"] == 2
    assert Decimal(offers["21348215"]["price"]) == Decimal("0.9")
    assert offers["21348377"]["status"] == "sold_out"  # rentable false
    assert offers["21348390"]["status"] == "sold_out"  # rented true
    assert offers["21349012"]["status"] == "in_stock"  # no dph_total in this offer
    assert all(r["run_id"] == RUN_ID for r in result.feed)

    bodies = [r.json for r in result.calls]
    assert [b["id"] for b in bodies] == [
        {"gt": 0}, {"gt": 21348390}, {"gt": 21349488}, {"gt": 21350333},
    ]  # fmt: skip
    assert all("rentable" not in b and "rented" not in b for b in bodies)

    report = result.report
    assert report["provider"] == "vastai" and report["run_id"] == RUN_ID
    assert report["finish_reason"] == "finished"
    assert report["responses_by_status"] == {"200": 4}
    assert (report["offers"], report["quarantined"], report["pages_parsed"]) == (11, 0, 4)
    assert report["errors"] == [] and report["layout_errors"] == []
    assert report["auth"] == "not_needed"
    assert report["started_at"] <= report["finished_at"]


def test_vastai_500s_are_reported_and_give_no_offers(tmp_path: Path) -> None:
    fault = Fault("vastai", "/api/v0/bundles/", status=500)
    result = crawl_scene("vastai", tmp_path, faults=[fault])
    assert result.feed == []
    report = result.report
    assert report["responses_by_status"] == {"500": 4}  # first try + RETRY_TIMES 3
    assert "500 on /api/v0/bundles/" in report["errors"]
    assert report["offers"] == 0 and report["pages_parsed"] == 0
    assert report["requests_gave_up"] == 1
    assert report["layout_errors"] == []


def test_vastai_429_waits_for_retry_after_then_loads(tmp_path: Path) -> None:
    fault = Fault("vastai", "/api/v0/bundles/", status=429, retry_after=2, times=1)
    result = crawl_scene("vastai", tmp_path, faults=[fault])
    times = [r.time for r in result.calls]
    statuses = [r.status for r in result.calls]
    assert statuses == [429, 200, 200, 200, 200]
    assert (times[1] - times[0]).total_seconds() >= 1.9  # the retry honoured Retry-After
    assert len(result.offers) == 11
    report = result.report
    assert report["responses_by_status"] == {"200": 4, "429": 1}
    assert report["retry_after_waits_s"] == [2.0]
    assert report["requests_gave_up"] == 0 and report["pages_parsed"] == 4


def test_vastai_retry_after_is_capped(tmp_path: Path) -> None:
    fault = Fault("vastai", "/api/v0/bundles/", status=429, retry_after=600, times=1)
    settings = {"GPURENT_RETRY_AFTER_MAX": "0.5"}
    result = crawl_scene("vastai", tmp_path, faults=[fault], settings=settings)
    assert result.report["retry_after_waits_s"] == [0.5]
    assert len(result.offers) == 11


def test_vastai_changed_layout_is_a_layout_error_not_sold_out(tmp_path: Path) -> None:
    root = copy_recordings(tmp_path)
    for page in recorded(root, "vastai").glob("bundles_page*.json"):
        data = json.loads(page.read_text(encoding="utf-8"))
        page.write_text(json.dumps({"results": data["offers"]}), encoding="utf-8")
    result = crawl_scene("vastai", tmp_path, root=root)
    assert result.feed == []
    report = result.report
    assert report["layout_errors"] and "offers" in report["layout_errors"][0]
    assert report["offers"] == 0 and report["pages_parsed"] == 0
    assert report["responses_by_status"] == {"200": 1}
    assert len(result.calls) == 1  # no cursor, no next page


# -- Cudo ------------------------------------------------------------------------


def test_cudo_machine_types(server: ReplayServer, tmp_path: Path) -> None:
    result = crawl("cudo", server, tmp_path)
    assert result.returncode == 0, result.log[-2000:]
    statuses = {k.split("/")[0]: r["status"] for k, r in result.offers.items()}
    assert statuses == {
        "gb-bournemouth-1": "in_stock",
        "se-smedjebacken-1": "sold_out",
        "no-luster-1": "in_stock",
        "us-santaclara-1": "sold_out",
        "ca-montreal-3": "in_stock",
        "us-newyork-1": "in_stock",
        "fr-paris-2": "sold_out",
    }
    assert result.report["responses_by_status"] == {"200": 1}
    assert result.report["pages_parsed"] == 1 and result.report["offers"] == 7


def test_cudo_truncated_body_is_a_failed_request(tmp_path: Path) -> None:
    fault = Fault("cudo", "/v1/vms/machine-types", truncate_at=120)
    result = crawl_scene("cudo", tmp_path, faults=[fault])
    report = result.report
    assert result.feed == []
    assert report["errors"] == ["truncated body on /v1/vms/machine-types"]
    assert report["requests_failed"] == 4 and report["requests_gave_up"] == 1
    assert report["pages_parsed"] == 0 and report["layout_errors"] == []


def test_cudo_timeout_is_reported(tmp_path: Path) -> None:
    fault = Fault("cudo", "/v1/vms/machine-types", delay_s=3)
    settings = {"DOWNLOAD_TIMEOUT": "1", "RETRY_TIMES": "0"}
    result = crawl_scene("cudo", tmp_path, faults=[fault], settings=settings)
    assert result.report["errors"] == ["timeout on /v1/vms/machine-types"]
    assert result.report["requests_failed"] == 1 and result.report["offers"] == 0


# -- AutoDL ----------------------------------------------------------------------


def test_autodl_with_token_reads_stock_from_the_api(server: ReplayServer, tmp_path: Path) -> None:
    result = crawl("autodl", server, tmp_path, token=TOKEN, settings={"LOG_LEVEL": "DEBUG"})
    assert result.returncode == 0, result.log[-2000:]
    offers = result.offers
    assert len(offers) == 10
    assert (offers["3f8a2c91d0"]["status"], offers["3f8a2c91d0"]["available_count"]) == (
        "in_stock",
        3,
    )
    assert offers["5b1e7d44a2"]["status"] == "sold_out"
    assert Decimal(offers["a41d9e02c4"]["price"]) == Decimal("5.88")
    assert [r.json["page_index"] for r in result.calls] == [1, 2]
    sent = [r.headers.get("authorization") for r in result.calls]
    assert sent == [TOKEN, TOKEN]  # the bare token, no "Bearer"
    assert not any(r.path == "/home" for r in result.calls)
    report = result.report
    assert report["auth"] == "ok"
    assert report["responses_by_status"] == {"200": 2} and report["pages_parsed"] == 2
    assert_secrets_kept(result, TOKEN)


@pytest.mark.browser
def test_autodl_without_token_reads_the_public_table_in_chromium(
    server: ReplayServer, tmp_path: Path
) -> None:
    result = crawl("autodl", server, tmp_path)
    assert result.returncode == 0, result.log[-2000:]
    offers = result.offers
    assert len(offers) == 15
    assert all(o["status"] == "unknown" and o["available_count"] is None for o in offers.values())
    rtx = offers["home:RTX 4090"]
    assert Decimal(rtx["price"]) == Decimal("1.98") and rtx["currency"] == "CNY"
    assert [(p["price"], p["price_kind"]) for p in rtx["plans"]] == [("1.88", "member")]
    paths = [r.path for r in result.calls]
    assert "/home.js" in paths  # the browser ran the page's script
    assert "/api/v1/user/machine/list" not in paths
    report = result.report
    assert report["auth"] == "missing"
    # the machine list was not read: its machines are kept, stale, not closed by this table
    assert report["unread_prefixes"] == [EVERY_OFFER]
    assert report["pages_parsed"] == 1 and report["layout_errors"] == []
    assert report["responses_by_status"] == {"200": 1}


@pytest.mark.browser
def test_autodl_refused_token_falls_back_to_public_prices(tmp_path: Path) -> None:
    def expire_token(routes: Routes) -> None:
        for route in routes:  # the token is expired: every list call is refused
            if route.get("body", "").startswith("machine_list_page"):
                route["body"] = "authorize_failed.json"

    root = recordings_with_routes(tmp_path, "autodl", expire_token)
    result = crawl_scene("autodl", tmp_path, root=root, token=TOKEN)
    report = result.report
    assert report["auth"] == "rejected"
    assert report["unread_prefixes"] == [EVERY_OFFER]  # the refused list's machines: kept
    assert all(o["status"] == "unknown" for o in result.offers.values())
    assert len(result.offers) == 15
    assert_secrets_kept(result, TOKEN)


@pytest.mark.browser
def test_autodl_homepage_error_page_is_a_failed_request_not_a_layout_change(
    tmp_path: Path,
) -> None:
    fault = Fault("autodl", "/home", status=500)
    result = crawl_scene("autodl", tmp_path, faults=[fault], settings={"RETRY_TIMES": "1"})
    assert result.feed == []
    report = result.report
    assert report["auth"] == "missing"
    # The browser saw the 500 at once: Scrapy retried it and gave up, as for any page.
    assert report["responses_by_status"] == {"500": 2}
    assert report["requests_gave_up"] == 1 and report["layout_errors"] == []


def test_autodl_api_error_is_a_failed_request_not_a_layout_change(tmp_path: Path) -> None:
    def busy(routes: Routes) -> None:
        routes[0].pop("body")
        routes[0]["body_text"] = json.dumps({"code": "InternalError", "msg": "busy", "data": None})

    root = recordings_with_routes(tmp_path, "autodl", busy)
    result = crawl_scene("autodl", tmp_path, root=root, token=TOKEN)
    report = result.report
    assert result.feed == []
    assert report["errors"] == [
        "api error on /api/v1/user/machine/list: code 'InternalError': busy"
    ]
    assert report["requests_gave_up"] == 1 and report["layout_errors"] == []
    assert report["auth"] == "unknown"  # the token was neither accepted nor refused
