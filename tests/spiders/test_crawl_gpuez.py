"""GpuEZ: the real `scrapy crawl gpuez` process against the replay server.

Two crawls, shared by the tests through a module fixture: the default recordings (two pages
of the machine list), then the same recordings with page 2 answering HTTP 500, both loaded
into one warehouse by the crawl flow's own load step. The spider's other branches (no key, a
refused key, the page cap, an API error, the Basic credential's two forms) run in process.
"""

from __future__ import annotations

import base64
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
from spiders.ledger import EVERY_OFFER
from spiders.providers.gpuez.spider import GpuezSpider, basic_authorization

KEY_ENV = "GPUEZ_API_KEY"
MACHINE_LIST_PATH = "/zsc/open/api/v2/machine/list"

PROVIDER = "gpuez"
# An id and a secret, as RFC 7617's Basic credential pairs them.
KEY = "gz-id-5d1c:not-a-real-secret-7e2b"
ENCODED = base64.b64encode(KEY.encode()).decode()
H100 = "20101"
PAGE_1 = {"20101", "20102", "20107", "20113", "20118", "20121", "20125", "20133", "20140"}
PAGE_2 = {"20144", "20151", "20156", "20160"}
RECORDINGS = Path(__file__).resolve().parents[2] / "spiders/providers/gpuez/recordings"


def page_2_fails(routes: list[dict[str, Any]]) -> None:
    for route in routes:
        if route.get("body") == "machine_list_page2.json":
            route["fault"] = {"status": 500}


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> DefaultThenSpoilt:
    tmp = tmp_path_factory.mktemp(PROVIDER)
    return default_then_spoilt(
        tmp,
        PROVIDER,
        recordings_with_routes(tmp, PROVIDER, page_2_fails),
        ("gz-default", "gz-failing"),
        ((KEY_ENV, KEY),),
    )


def test_the_key_reads_both_pages_of_machines_with_basic_auth(crawled: DefaultThenSpoilt) -> None:
    run = crawled.default
    assert run.outcome.returncode == 0, run.log()[-2000:]
    offers = run.offers
    assert set(offers) == PAGE_1 | PAGE_2
    assert [r for r in run.feed if r["kind"] == "quarantine"] == []
    box = offers[H100]
    assert (Decimal(box["price"]), box["currency"], box["billing_unit"], box["price_basis"]) == (
        Decimal("19800.00"),
        "CNY",
        "week",
        "instance",
    )
    assert (box["gpu_model"], box["gpu_count"], box["region"]) == ("H100", 8, "华东一区")
    assert [(Decimal(p["price"]), p["billing_unit"]) for p in box["plans"]] == [
        (Decimal("72000.00"), "month")
    ]
    # The list says nothing of stock: no offer is in stock or sold out.
    assert {(o["status"], o["available_count"]) for o in offers.values()} == {("unknown", None)}
    sent = [(r.path, r.query, r.headers.get("authorization")) for r in run.calls]
    assert sent == [
        (MACHINE_LIST_PATH, {"machine_type": "4", "page": str(n), "page_size": "10"},
         f"Basic {ENCODED}")
        for n in (1, 2)
    ]  # fmt: skip
    report = run.report
    assert report["auth"] == "ok" and report["pages_parsed"] == 2
    assert (report["offers"], report["quarantined"], report["skipped"]) == (
        13,
        0,
        {"not_a_gpu_offer": 1},
    )
    assert classify_run(report, returncode=0).status is RunStatus.OK
    assert crawled.statuses["gz-default"] == "ok"
    for text in (json.dumps(report), json.dumps(run.feed), run.log()):
        assert KEY not in text and ENCODED not in text


def test_a_failed_page_is_partial_and_leaves_every_offer_unread(crawled: DefaultThenSpoilt) -> None:
    run = crawled.spoilt
    assert run.outcome.returncode == 0, run.log()[-2000:]
    assert set(run.offers) == PAGE_1
    report = run.report
    assert report["requests_gave_up"] == 1 and report["layout_errors"] == []
    assert report["unread_prefixes"] == [EVERY_OFFER]
    assert classify_run(report, returncode=0).status is RunStatus.PARTIAL
    assert crawled.statuses["gz-failing"] == "partial"


def test_after_the_failed_page_its_machines_stay_listed_stale(crawled: DefaultThenSpoilt) -> None:
    before = crawled.default.offers
    now = {o.offer_key: o for o in api.offers(provider=PROVIDER, db=crawled.db)}
    assert set(now) == set(before), "a failed page closes nothing"
    assert {key for key, offer in now.items() if offer.stale} == PAGE_2
    for key in PAGE_2:
        assert (now[key].status, now[key].price) == (
            before[key]["status"],
            Decimal(before[key]["price"]),
        )
    ranked = [o for o in api.cheapest(1, limit=None, db=crawled.db) if o.provider == PROVIDER]
    assert ranked == [], "unknown stock is never ranked as rentable"


# -- the spider's other branches, in process ------------------------------------------------


def make_spider(monkeypatch: pytest.MonkeyPatch, *, key: str | None, **settings: Any) -> Any:
    if key is None:
        monkeypatch.delenv(KEY_ENV, raising=False)
    else:
        monkeypatch.setenv(KEY_ENV, key)
    crawler = get_crawler(GpuezSpider, {"GPURENT_BASE_URL": "http://replay/gpuez", **settings})
    return GpuezSpider.from_crawler(crawler)


def test_without_a_key_nothing_is_asked_and_auth_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spider = make_spider(monkeypatch, key=None)
    assert first_requests(spider) == []
    assert spider.ledger.auth == "missing" and KEY_ENV in (spider.ledger.auth_detail or "")


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_key_is_rejected_reads_nothing_and_closes_nothing(
    status: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    spider = make_spider(monkeypatch, key=KEY)
    [request] = first_requests(spider)
    body = (RECORDINGS / "unauthorized.json").read_bytes()
    assert list(spider.parse_answer(answer(request, body, status), page=1)) == []
    assert spider.ledger.auth == "rejected" and spider.ledger.layout_errors == []
    assert EVERY_OFFER in spider.ledger.unread_prefixes


def test_a_full_page_asks_for_the_next_until_the_page_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    spider = make_spider(monkeypatch, key=KEY, GPURENT_MAX_PAGES="2")
    [request] = first_requests(spider)
    page_1 = (RECORDINGS / "machine_list_page1.json").read_bytes()
    [following] = requests_in(list(spider.parse_answer(answer(request, page_1), page=1)))
    assert following.url.endswith("?machine_type=4&page=2&page_size=10")
    assert following.headers.get("Authorization") == f"Basic {ENCODED}".encode()
    # Page 2 is as full, but the cap stops there: partial, never the whole market.
    assert not requests_in(list(spider.parse_answer(answer(following, page_1), page=2)))
    assert spider.ledger.page_cap_reached == 2 and EVERY_OFFER in spider.ledger.unread_prefixes


def test_an_api_error_is_a_failed_request_not_an_empty_market(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spider = make_spider(monkeypatch, key=KEY)
    [request] = first_requests(spider)
    body = json.dumps({"code": 10003, "message": "参数错误", "trace": "x"}).encode()
    assert list(spider.parse_answer(answer(request, body), page=1)) == []
    assert spider.ledger.requests_gave_up == 1 and spider.ledger.layout_errors == []
    assert EVERY_OFFER in spider.ledger.unread_prefixes


def test_an_answer_that_is_not_json_is_a_layout_error(monkeypatch: pytest.MonkeyPatch) -> None:
    spider = make_spider(monkeypatch, key=KEY)
    [request] = first_requests(spider)
    assert list(spider.parse_answer(answer(request, b"<html>502</html>"), page=1)) == []
    assert len(spider.ledger.layout_errors) == 1 and EVERY_OFFER in spider.ledger.unread_prefixes


def test_the_basic_credential_is_encoded_from_a_pair_or_taken_as_encoded() -> None:
    assert basic_authorization("id:secret") == "Basic aWQ6c2VjcmV0"
    assert basic_authorization("aWQ6c2VjcmV0") == "Basic aWQ6c2VjcmV0"


def test_spider_is_a_json_api_spider() -> None:
    assert_api_spider(GpuezSpider, home="CN", auth_env=(KEY_ENV,), needs_auth=True)
