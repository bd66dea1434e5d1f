"""Prime Intellect: the real `scrapy crawl primeintellect` process against the replay server.

Two crawls, shared by the tests through a module fixture: the default recordings, then a
scene whose availability answer is an empty 200 (the flaky replica Prime Intellect's API is
known to answer from), both loaded into one warehouse by the crawl flow's own load step. The
spider's other branches (no key, a refused key, the next page, the page cap) run in process.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import scrapy
from crawl_kit import (
    TOKEN,
    DefaultThenSpoilt,
    answer,
    assert_api_spider,
    copy_recordings,
    default_then_spoilt,
    first_requests,
    recorded,
)
from scrapy.utils.test import get_crawler

from flows.health import classify_run
from gpurent import api
from gpurent_core.model import RunStatus
from spiders.ledger import EVERY_OFFER
from spiders.providers.primeintellect.parser import EMPTY_ANSWER
from spiders.providers.primeintellect.spider import PrimeintellectSpider

AVAILABILITY_PATH = "/api/v1/availability/"
KEY_ENV = "PRIME_API_KEY"

PROVIDER = "primeintellect"
H100_BOX = "runpod/US-TX-4/NVIDIA H100 80GB HBM3/8/secure_cloud"
A100_SOLD_OUT = "lambdalabs/us-south-2/gpu_8x_a100_80gb_sxm4/8/secure_cloud"
RECORDING = Path(__file__).resolve().parents[2] / (
    "spiders/providers/primeintellect/recordings/availability.json"
)


def empty_answer_scene(tmp: Path) -> Path:
    """The default recordings, with Prime Intellect answering `{}` (HTTP 200) to the key."""
    root = copy_recordings(tmp)
    (recorded(root, PROVIDER) / "availability.json").write_text("{}", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> DefaultThenSpoilt:
    tmp = tmp_path_factory.mktemp(PROVIDER)
    return default_then_spoilt(
        tmp, PROVIDER, empty_answer_scene(tmp), ("pi-default", "pi-empty"), ((KEY_ENV, TOKEN),)
    )


def test_the_key_reads_every_offer_in_one_unfiltered_request(crawled: DefaultThenSpoilt) -> None:
    run = crawled.default
    assert run.outcome.returncode == 0, run.log()[-2000:]
    offers = run.offers
    assert len(offers) == 12 and [r for r in run.feed if r["kind"] == "quarantine"] == []
    box = offers[H100_BOX]
    assert (Decimal(box["price"]), box["currency"], box["price_basis"], box["gpu_count"]) == (
        Decimal("21.84"),
        "USD",
        "instance",
        8,
    )
    assert (box["interconnect"], box["hosting"], box["status"]) == ("sxm", "secure", "in_stock")
    assert offers[A100_SOLD_OUT]["status"] == "sold_out"
    sent = [(r.path, r.query, r.headers.get("authorization")) for r in run.calls]
    assert sent == [(AVAILABILITY_PATH, {"page": "1", "page_size": "500"}, f"Bearer {TOKEN}")]
    report = run.report
    assert report["auth"] == "ok" and report["pages_parsed"] == 1
    assert (report["offers"], report["quarantined"], report["skipped"]) == (
        12,
        0,
        {"not_a_gpu_offer": 1},
    )
    assert classify_run(report, returncode=0).status is RunStatus.OK
    assert crawled.statuses["pi-default"] == "ok"
    for text in (json.dumps(report), json.dumps(run.feed), run.log()):
        assert TOKEN not in text


def test_an_empty_answer_is_a_failed_request_that_leaves_every_offer_unread(
    crawled: DefaultThenSpoilt,
) -> None:
    run = crawled.spoilt
    assert run.outcome.returncode == 0, run.log()[-2000:]
    assert run.feed == [] and len(run.calls) == 1
    report = run.report
    assert report["requests_gave_up"] == 1 and report["layout_errors"] == []
    assert report["errors"] == [f"api error on {AVAILABILITY_PATH} page 1: {EMPTY_ANSWER}"]
    assert report["unread_prefixes"] == [EVERY_OFFER]
    assert classify_run(report, returncode=0).status is RunStatus.FAILED
    assert crawled.statuses["pi-empty"] == "failed"


def test_after_the_empty_answer_nothing_is_closed_every_offer_stays_stale(
    crawled: DefaultThenSpoilt,
) -> None:
    before = crawled.default.offers
    now = {o.offer_key: o for o in api.offers(provider=PROVIDER, db=crawled.db)}
    assert set(now) == set(before), "an empty answer closes nothing"
    for key, offer in now.items():
        assert offer.stale, key
        assert (offer.status, offer.price) == (before[key]["status"], Decimal(before[key]["price"]))
    ranked = [o for o in api.cheapest(1, limit=None, db=crawled.db) if o.provider == PROVIDER]
    assert ranked == [], "a stale offer is never ranked"


# -- the spider's other branches, in process ------------------------------------------------


def make_spider(monkeypatch: pytest.MonkeyPatch, *, key: str | None, **settings: Any) -> Any:
    if key is None:
        monkeypatch.delenv(KEY_ENV, raising=False)
    else:
        monkeypatch.setenv(KEY_ENV, key)
    crawler = get_crawler(
        PrimeintellectSpider, {"GPURENT_BASE_URL": "http://replay/pi", **settings}
    )
    return PrimeintellectSpider.from_crawler(crawler)


def test_without_a_key_nothing_is_asked_and_auth_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spider = make_spider(monkeypatch, key=None)
    assert first_requests(spider) == []
    assert spider.ledger.auth == "missing" and KEY_ENV in (spider.ledger.auth_detail or "")


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_key_is_rejected_and_reads_nothing(
    status: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    spider = make_spider(monkeypatch, key=TOKEN)
    [request] = first_requests(spider)
    body = b'{"detail": "Invalid or missing API key"}'
    assert list(spider.parse_answer(answer(request, body, status), page=1)) == []
    assert spider.ledger.auth == "rejected" and spider.ledger.layout_errors == []


def test_a_full_page_asks_for_the_next_until_the_page_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    # 13 offers listed: a full page at page_size 13 (the answer says no total).
    spider = make_spider(monkeypatch, key=TOKEN, GPURENT_PAGE_SIZE="13", GPURENT_MAX_PAGES="2")
    [request] = first_requests(spider)
    assert request.url.endswith(f"{AVAILABILITY_PATH}?page=1&page_size=13")
    out = list(spider.parse_answer(answer(request, RECORDING.read_bytes()), page=1))
    [following] = [o for o in out if isinstance(o, scrapy.Request)]
    assert following.url.endswith("?page=2&page_size=13") and following.cb_kwargs == {"page": 2}
    # Page 2 is as full, but the cap stops there: partial, never the whole market.
    out = list(spider.parse_answer(answer(following, RECORDING.read_bytes()), page=2))
    assert not [o for o in out if isinstance(o, scrapy.Request)]
    assert spider.ledger.page_cap_reached == 2 and EVERY_OFFER in spider.ledger.unread_prefixes


def test_a_short_page_ends_the_listing(monkeypatch: pytest.MonkeyPatch) -> None:
    spider = make_spider(monkeypatch, key=TOKEN)
    [request] = first_requests(spider)
    out = list(spider.parse_answer(answer(request, RECORDING.read_bytes()), page=1))
    assert len(out) == 12 and not [o for o in out if isinstance(o, scrapy.Request)]
    assert spider.ledger.unread_prefixes == [] and spider.ledger.page_cap_reached is None


def test_an_answer_that_is_not_json_is_a_layout_error(monkeypatch: pytest.MonkeyPatch) -> None:
    spider = make_spider(monkeypatch, key=TOKEN)
    [request] = first_requests(spider)
    assert list(spider.parse_answer(answer(request, b"<html>502</html>"), page=1)) == []
    assert len(spider.ledger.layout_errors) == 1 and EVERY_OFFER in spider.ledger.unread_prefixes


def test_spider_is_a_json_api_spider() -> None:
    assert_api_spider(PrimeintellectSpider, home="US", auth_env=(KEY_ENV,), needs_auth=True)
