"""CloudRift: the real `scrapy crawl cloudrift` process against the replay server.

Two crawls, shared by the tests through a module fixture: the default recordings (one POST
of the public instance-type listing), then a scene whose listing answers HTTP 500 every
time, both loaded into one warehouse by the crawl flow's own load step. The spider's other
branches (a bare string answer, an answer that is not JSON, the request it sends) run in
process.
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
)
from scrapy.utils.test import get_crawler

from flows.health import classify_run
from gpurent import api
from gpurent_core.model import RunStatus
from spiders.ledger import EVERY_OFFER
from spiders.providers.cloudrift.spider import (
    API_VERSION,
    INSTANCE_TYPES_PATH,
    CloudriftSpider,
)

PROVIDER = "cloudrift"
RECORDING = Path(__file__).resolve().parents[2] / (
    "spiders/providers/cloudrift/recordings/instance_types.json"
)
IN_STOCK = {
    "rtx49-8c-nr/rtx49-8c-nr.1/us-east-nc-nr-1",
    "rtx49-8c-nr/rtx49-8c-nr.2/us-east-nc-nr-1",
    "rtx59-16c-tx/rtx59-16c-tx.1/ustx1a_a01",
    "rtxpro6000-12c-ny/rtxpro6000-12c-ny.1/usny01_a01",
    "l40s-8c-gv/l40s-8c-gv.1/eu-central-it-gv-1",
    "v100-6c-tx/v100-6c-tx.1/ustx1a_a01",
    "v100-6c-tx/v100-6c-tx.1/usny01_a01",
}


def listing_fails(tmp: Path) -> Path:
    """The default recordings, with the instance-type listing answering HTTP 500 every time."""

    def edit(routes: list[dict[str, Any]]) -> None:
        [route] = [r for r in routes if r.get("body") == "instance_types.json"]
        route["fault"] = {"status": 500}

    return recordings_with_routes(tmp, PROVIDER, edit)


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> DefaultThenSpoilt:
    tmp = tmp_path_factory.mktemp(PROVIDER)
    return default_then_spoilt(
        tmp, PROVIDER, listing_fails(tmp), ("cr-default", "cr-listing-fails")
    )


def test_one_public_post_reads_every_vm_type_without_a_key(crawled: DefaultThenSpoilt) -> None:
    run = crawled.default
    assert run.outcome.returncode == 0, run.log()[-2000:]
    [call] = run.calls
    assert (call.method, call.path) == ("POST", INSTANCE_TYPES_PATH)
    assert call.json == {
        "version": API_VERSION,
        "data": {"selector": {"ByServiceAndLocation": {"services": ["vm"]}}},
    }
    assert not {"x-api-key", "authorization"} & set(call.headers)
    report = run.report
    assert report["pages_parsed"] == 1 and report["layout_errors"] == []
    assert (report["offers"], report["quarantined"], report["skipped"]) == (
        16,
        0,
        {"not_offered": 2},
    )
    assert report["unread_prefixes"] == [] and report["missing_fields"] == []
    assert classify_run(report, returncode=0).status is RunStatus.OK
    assert crawled.statuses["cr-default"] == "ok"


def test_free_nodes_decide_stock_and_cents_the_price(crawled: DefaultThenSpoilt) -> None:
    offers = crawled.default.offers
    assert {k for k, o in offers.items() if o["status"] == "in_stock"} == IN_STOCK
    assert {
        (o["status"], o["available_count"]) for k, o in offers.items() if k not in IN_STOCK
    } == {("sold_out", 0)}
    pro = offers["rtxpro6000-12c-ny/rtxpro6000-12c-ny.8/usny01_a01"]
    assert (Decimal(pro["price"]), pro["currency"], pro["price_basis"], pro["gpu_count"]) == (
        Decimal("11.1488"),
        "USD",
        "instance",
        8,
    )
    assert (pro["region"], pro["gpu_model"], Decimal(pro["ram_gb_per_gpu"])) == (
        "usny01_a01",
        "RTX PRO 6000",
        128,
    )


def test_a_failed_listing_keeps_every_offer_stale_and_unranked(crawled: DefaultThenSpoilt) -> None:
    run = crawled.spoilt
    assert run.outcome.returncode == 0, run.log()[-2000:]
    assert run.offers == {}
    report = run.report
    assert report["requests_gave_up"] == 1 and report["unread_prefixes"] == [EVERY_OFFER]
    assert classify_run(report, returncode=0).status is RunStatus.FAILED
    assert crawled.statuses["cr-listing-fails"] == "failed"
    before = crawled.default.offers
    now = {o.offer_key: o for o in api.offers(provider=PROVIDER, db=crawled.db)}
    assert set(now) == set(before), "a failed request closes nothing"
    for key, offer in now.items():
        assert offer.stale, key
        assert (offer.status, offer.price) == (before[key]["status"], Decimal(before[key]["price"]))
    ranked = [o for o in api.cheapest(1, limit=None, db=crawled.db) if o.provider == PROVIDER]
    assert ranked == [], "a stale offer is never ranked"


# -- the spider's other branches, in process ------------------------------------------------


def make_spider() -> Any:
    crawler = get_crawler(CloudriftSpider, {"GPURENT_BASE_URL": "http://replay/cloudrift"})
    return CloudriftSpider.from_crawler(crawler)


def test_the_request_is_a_json_post_with_no_credential() -> None:
    [request] = first_requests(make_spider())
    assert (request.method, request.url) == (
        "POST",
        f"http://replay/cloudrift{INSTANCE_TYPES_PATH}",
    )
    assert request.headers.get("Content-Type") == b"application/json"
    assert b"X-Api-Key" not in request.headers and b"Authorization" not in request.headers
    assert json.loads(request.body)["data"]["selector"] == {
        "ByServiceAndLocation": {"services": ["vm"]}
    }


def test_a_bare_string_answer_is_a_failed_request_that_leaves_every_offer_unread() -> None:
    spider = make_spider()
    [request] = first_requests(spider)
    body = b'"Internal server error"'
    assert list(spider.parse_instance_types(answer(request, body))) == []
    assert spider.ledger.requests_gave_up == 1 and spider.ledger.layout_errors == []
    assert EVERY_OFFER in spider.ledger.unread_prefixes


def test_an_answer_that_is_not_json_is_a_layout_error() -> None:
    spider = make_spider()
    [request] = first_requests(spider)
    assert list(spider.parse_instance_types(answer(request, b"<html>502</html>"))) == []
    assert len(spider.ledger.layout_errors) == 1 and EVERY_OFFER in spider.ledger.unread_prefixes


def test_the_recorded_answer_in_process_yields_its_offers() -> None:
    spider = make_spider()
    [request] = first_requests(spider)
    out = list(spider.parse_instance_types(answer(request, RECORDING.read_bytes())))
    assert len(out) == 16 and spider.ledger.skipped == {"not_offered": 2}


def test_spider_is_a_json_api_spider() -> None:
    assert_api_spider(CloudriftSpider, home="US", auth_env=(), needs_auth=False)
