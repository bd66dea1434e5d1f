"""Vultr: the real `scrapy crawl vultr` process against the replay server.

Two crawls, shared by the tests through a module fixture: the default recordings (two pages
of the Cloud GPU plans, one of the bare-metal plans, no key), then a scene whose bare-metal
request answers HTTP 500 every time, both loaded into one warehouse by the crawl flow's own
load step. The spider's other branches (the cursor, a cursor asked twice, the page cap, an
error body, an answer that is not JSON) run in process.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from crawl_kit import (
    DefaultThenSpoilt,
    answer,
    assert_api_spider,
    default_then_spoilt,
    first_requests,
    recordings_with_routes,
    requests_in,
)
from scrapy.utils.test import get_crawler

from flows.health import classify_run
from gpurent import api
from gpurent_core.model import RunStatus
from spiders.base import UNREAD_META
from spiders.ledger import EVERY_OFFER
from spiders.providers.vultr.spider import METAL_PLANS_PATH, PLANS_PATH, VultrSpider

PROVIDER = "vultr"
RECORDINGS = Path(__file__).resolve().parents[2] / "spiders/providers/vultr/recordings"
CURSOR = "bmV4dF9fdmNnLWw0MHMtMzJjLTM3NWctOTZ2cmFt"
CLOUD, METAL = "cloud-gpu/", "bare-metal/"


def metal_fails(tmp: Path) -> Path:
    """The default recordings, with the bare-metal plans answering HTTP 500 every time."""

    def edit(routes: list[dict[str, Any]]) -> None:
        [route] = [r for r in routes if r.get("body") == "plans_metal.json"]
        route["fault"] = {"status": 500}

    return recordings_with_routes(tmp, PROVIDER, edit)


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> DefaultThenSpoilt:
    tmp = tmp_path_factory.mktemp(PROVIDER)
    return default_then_spoilt(
        tmp, PROVIDER, metal_fails(tmp), ("vultr-default", "vultr-metal-fails")
    )


def test_both_lists_are_read_without_a_key_following_the_cursor(crawled: DefaultThenSpoilt) -> None:
    run = crawled.default
    assert run.outcome.returncode == 0, run.log()[-2000:]
    offers = run.offers
    assert len(offers) == 21 and [r for r in run.feed if r["kind"] == "quarantine"] == []
    assert {k for k, o in offers.items() if o["status"] == "sold_out"} == {
        "cloud-gpu/vcg-l40s-32c-375g-96vram/on_demand/ewr",
        "cloud-gpu/vcg-l40s-32c-375g-96vram/on_demand/lax",
        "bare-metal/vbm-256c-2048gb-8-mi300x-gpu/on_demand/ord",
    }
    spot = offers["bare-metal/vbm-112c-2048gb-8-h100-gpu/spot/ewr"]
    assert (Decimal(spot["price"]), spot["price_kind"], spot["gpu_count"]) == (
        Decimal("17.6"),
        "spot",
        8,
    )
    sent = [(r.path, tuple(sorted(r.query.items()))) for r in run.calls]
    assert sorted(sent) == sorted(
        [
            (PLANS_PATH, (("per_page", "500"), ("type", "vcg"))),
            (PLANS_PATH, (("cursor", CURSOR), ("per_page", "500"), ("type", "vcg"))),
            (METAL_PLANS_PATH, (("per_page", "500"),)),
        ]
    )
    assert {r.headers.get("authorization") for r in run.calls} == {None}
    report = run.report
    assert report["pages_parsed"] == 3
    assert (report["offers"], report["quarantined"], report["skipped"]) == (
        21,
        0,
        {"outside_catalog": 4, "not_offered": 1, "not_a_gpu_offer": 1},
    )
    assert len(report["sold_out_unlisted"]) == 11
    assert report["unread_prefixes"] == [] and report["layout_errors"] == []
    assert classify_run(report, returncode=0).status is RunStatus.OK
    assert crawled.statuses["vultr-default"] == "ok"


def test_a_failing_list_leaves_only_its_own_offers_unread(crawled: DefaultThenSpoilt) -> None:
    run = crawled.spoilt
    assert run.outcome.returncode == 0, run.log()[-2000:]
    default = set(crawled.default.offers)
    assert set(run.offers) == {k for k in default if k.startswith(CLOUD)}
    report = run.report
    assert report["requests_gave_up"] == 1 and report["unread_prefixes"] == [METAL]
    assert classify_run(report, returncode=0).status is RunStatus.PARTIAL
    assert crawled.statuses["vultr-metal-fails"] == "partial"


def test_after_the_failed_list_its_offers_stay_stale_and_are_not_ranked(
    crawled: DefaultThenSpoilt,
) -> None:
    before = crawled.default.offers
    metal = {k for k in before if k.startswith(METAL)}
    now = {o.offer_key: o for o in api.offers(provider=PROVIDER, db=crawled.db)}
    assert set(now) == set(before), "a failed request closes nothing"
    assert {k for k, o in now.items() if o.stale} == metal
    for key in metal:
        assert (now[key].status, now[key].price) == (
            before[key]["status"],
            Decimal(before[key]["price"]),
        )
    ranked = {
        o.offer_key for o in api.cheapest(1, limit=None, db=crawled.db) if o.provider == PROVIDER
    }
    assert ranked and not ranked & metal, "a stale offer is never ranked"


# -- the spider's other branches, in process ------------------------------------------------


def make_spider(**settings: Any) -> Any:
    crawler = get_crawler(VultrSpider, {"GPURENT_BASE_URL": "http://replay/vultr", **settings})
    return VultrSpider.from_crawler(crawler)


def body(name: str) -> bytes:
    return (RECORDINGS / name).read_bytes()


def test_the_first_requests_ask_both_lists_and_name_what_a_failure_leaves_unread() -> None:
    cloud, metal = first_requests(make_spider())
    assert cloud.url == f"http://replay/vultr{PLANS_PATH}?type=vcg&per_page=500"
    assert metal.url == f"http://replay/vultr{METAL_PLANS_PATH}?per_page=500"
    assert [r.meta[UNREAD_META] for r in (cloud, metal)] == [
        {"prefixes": [CLOUD]},
        {"prefixes": [METAL]},
    ]
    assert all(r.headers.get("Authorization") is None for r in (cloud, metal))


def test_page_1_asks_for_the_page_its_cursor_names_and_page_2_for_nothing() -> None:
    spider = make_spider()
    cloud, _ = first_requests(spider)
    out = list(spider.parse_listing(answer(cloud, body("plans_page1.json")), **cloud.cb_kwargs))
    [second] = requests_in(out)
    assert second.url.endswith(f"?type=vcg&per_page=500&cursor={CURSOR}")
    assert second.cb_kwargs["asked"] == (CURSOR,)
    last = list(spider.parse_listing(answer(second, body("plans_page2.json")), **second.cb_kwargs))
    assert requests_in(last) == [] and spider.ledger.layout_errors == []
    assert spider.ledger.pages_parsed == 2


def test_a_cursor_asked_before_is_a_layout_error_of_its_list() -> None:
    spider = make_spider()
    cloud, _ = first_requests(spider)
    [second] = requests_in(
        list(spider.parse_listing(answer(cloud, body("plans_page1.json")), **cloud.cb_kwargs))
    )
    doc = json.loads(body("plans_page2.json"))
    doc["meta"]["links"]["next"] = CURSOR
    out = list(spider.parse_listing(answer(second, json.dumps(doc).encode()), **second.cb_kwargs))
    assert requests_in(out) == []
    assert len(spider.ledger.layout_errors) == 1 and CURSOR in spider.ledger.layout_errors[0]
    assert spider.ledger.unread_prefixes == [CLOUD]


def test_the_page_cap_stops_the_cursor_and_leaves_the_rest_unread() -> None:
    spider = make_spider(GPURENT_MAX_PAGES="1")
    cloud, _ = first_requests(spider)
    out = list(spider.parse_listing(answer(cloud, body("plans_page1.json")), **cloud.cb_kwargs))
    assert requests_in(out) == [] and spider.ledger.page_cap_reached == 1
    assert EVERY_OFFER in spider.ledger.unread_prefixes


def test_an_error_body_is_a_failed_request_of_its_list_only() -> None:
    spider = make_spider()
    cloud, _ = first_requests(spider)
    error = b'{"error": "Internal server error.", "status": 500}'
    assert list(spider.parse_listing(answer(cloud, error), **cloud.cb_kwargs)) == []
    assert spider.ledger.requests_gave_up == 1 and spider.ledger.layout_errors == []
    assert spider.ledger.unread_prefixes == [CLOUD]


def test_an_answer_that_is_not_json_is_a_layout_error_of_its_list() -> None:
    spider = make_spider()
    _, metal = first_requests(spider)
    assert list(spider.parse_listing(answer(metal, b"<html>502</html>"), **metal.cb_kwargs)) == []
    assert len(spider.ledger.layout_errors) == 1 and spider.ledger.unread_prefixes == [METAL]


def test_spider_is_a_json_api_spider_without_credentials() -> None:
    assert_api_spider(VultrSpider, home="US", auth_env=(), needs_auth=False)
