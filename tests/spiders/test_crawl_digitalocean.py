"""DigitalOcean: the real `scrapy crawl digitalocean` process against the replay server.

Two crawls, shared by the tests through a module fixture: the default recordings (two pages
of the size list), then a scene whose page 2 answers HTTP 500 every time, both loaded into
one warehouse by the crawl flow's own load step. The spider's other branches (no token, a
refused token, an error body, a page 1 without a total, the page cap) run in process.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from crawl_kit import (
    TOKEN,
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
from spiders.providers.digitalocean.spider import DigitaloceanSpider

SIZES_PATH = "/v2/sizes"
TOKEN_ENV = "DIGITALOCEAN_TOKEN"

PROVIDER = "digitalocean"
RECORDINGS = Path(__file__).resolve().parents[2] / "spiders/providers/digitalocean/recordings"
PAGE_2 = {"gpu-h200x1-141gb/atl1", "gpu-h200x1-141gb/nyc2", "gpu-mi300x8-1536gb/atl1"}
GPU_SIZES = [
    "gpu-h100x1-80gb", "gpu-h100x8-640gb", "gpu-l40sx1-48gb", "gpu-mi300x1-192gb",
    "gpu-6000adax1-48gb", "gpu-h200x1-141gb", "gpu-mi300x8-1536gb",
]  # fmt: skip


def page_2_fails(tmp: Path) -> Path:
    """The default recordings, with page 2 of the size list answering HTTP 500 every time."""

    def edit(routes: list[dict[str, Any]]) -> None:
        [route] = [r for r in routes if r.get("body") == "sizes_page2.json"]
        route["fault"] = {"status": 500}

    return recordings_with_routes(tmp, PROVIDER, edit)


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> DefaultThenSpoilt:
    tmp = tmp_path_factory.mktemp(PROVIDER)
    return default_then_spoilt(
        tmp, PROVIDER, page_2_fails(tmp), ("do-default", "do-page-2-fails"), ((TOKEN_ENV, TOKEN),)
    )


def test_the_token_reads_both_pages_of_the_size_list(crawled: DefaultThenSpoilt) -> None:
    run = crawled.default
    assert run.outcome.returncode == 0, run.log()[-2000:]
    offers = run.offers
    assert len(offers) == 12 and [r for r in run.feed if r["kind"] == "quarantine"] == []
    assert {k for k, o in offers.items() if o["status"] == "sold_out"} == {
        "gpu-6000adax1-48gb/tor1"
    }
    box = offers["gpu-h100x8-640gb/nyc2"]
    assert (Decimal(box["price"]), box["currency"], box["price_basis"], box["gpu_count"]) == (
        Decimal("23.92"),
        "USD",
        "instance",
        8,
    )
    assert [(p["billing_unit"], Decimal(p["price"])) for p in box["plans"]] == [
        ("month", Decimal("16074.24"))
    ]
    sent = sorted((r.path, tuple(sorted(r.query.items()))) for r in run.calls)
    assert sent == [
        (SIZES_PATH, (("page", "1"), ("per_page", "200"))),
        (SIZES_PATH, (("page", "2"), ("per_page", "200"))),
    ]
    assert {r.headers.get("authorization") for r in run.calls} == {f"Bearer {TOKEN}"}
    report = run.report
    assert report["auth"] == "ok" and report["pages_parsed"] == 2
    assert (report["offers"], report["quarantined"], report["skipped"]) == (
        12,
        0,
        {"not_a_gpu_offer": 3},
    )
    assert sorted(report["sold_out_unlisted"]) == sorted(f"{s}/" for s in GPU_SIZES)
    assert report["unread_prefixes"] == [] and report["layout_errors"] == []
    assert classify_run(report, returncode=0).status is RunStatus.OK
    assert crawled.statuses["do-default"] == "ok"
    for text in (json.dumps(report), json.dumps(run.feed), run.log()):
        assert TOKEN not in text


def test_a_failing_page_leaves_every_offer_not_seen_unread(crawled: DefaultThenSpoilt) -> None:
    run = crawled.spoilt
    assert run.outcome.returncode == 0, run.log()[-2000:]
    assert set(run.offers) == set(crawled.default.offers) - PAGE_2
    report = run.report
    assert report["requests_gave_up"] == 1 and report["unread_prefixes"] == [EVERY_OFFER]
    assert classify_run(report, returncode=0).status is RunStatus.PARTIAL
    assert crawled.statuses["do-page-2-fails"] == "partial"


def test_after_the_failed_page_its_offers_stay_stale_and_are_not_ranked(
    crawled: DefaultThenSpoilt,
) -> None:
    before = crawled.default.offers
    now = {o.offer_key: o for o in api.offers(provider=PROVIDER, db=crawled.db)}
    assert set(now) == set(before), "a failed page closes nothing"
    assert {k for k, o in now.items() if o.stale} == PAGE_2
    for key in PAGE_2:
        assert (now[key].status, now[key].price) == (
            before[key]["status"],
            Decimal(before[key]["price"]),
        )
    ranked = {
        o.offer_key for o in api.cheapest(1, limit=None, db=crawled.db) if o.provider == PROVIDER
    }
    assert ranked and not ranked & PAGE_2, "a stale offer is never ranked"


# -- the spider's other branches, in process ------------------------------------------------


def make_spider(monkeypatch: pytest.MonkeyPatch, *, token: str | None, **settings: Any) -> Any:
    if token is None:
        monkeypatch.delenv(TOKEN_ENV, raising=False)
    else:
        monkeypatch.setenv(TOKEN_ENV, token)
    crawler = get_crawler(DigitaloceanSpider, {"GPURENT_BASE_URL": "http://replay/do", **settings})
    return DigitaloceanSpider.from_crawler(crawler)


def test_without_a_token_nothing_is_asked_and_auth_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spider = make_spider(monkeypatch, token=None)
    assert first_requests(spider) == []
    assert spider.ledger.auth == "missing" and TOKEN_ENV in (spider.ledger.auth_detail or "")


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (401, (RECORDINGS / "unauthorized.json").read_bytes()),
        (403, b'{"id": "forbidden", "message": "not allowed"}'),
        (200, b'{"id": "unauthorized", "message": "token revoked"}'),
    ],
)
def test_a_refused_token_is_rejected_reads_nothing_and_closes_nothing(
    status: int, body: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    spider = make_spider(monkeypatch, token=TOKEN)
    [request] = first_requests(spider)
    assert request.headers.get("Authorization") == f"Bearer {TOKEN}".encode()
    assert list(spider.parse_answer(answer(request, body, status), page=1)) == []
    assert spider.ledger.auth == "rejected" and spider.ledger.layout_errors == []
    assert EVERY_OFFER in spider.ledger.unread_prefixes


def test_an_error_body_is_a_failed_request(monkeypatch: pytest.MonkeyPatch) -> None:
    spider = make_spider(monkeypatch, token=TOKEN)
    [request] = first_requests(spider)
    body = b'{"id": "server_error", "message": "Something went wrong."}'
    assert list(spider.parse_answer(answer(request, body), page=1)) == []
    assert spider.ledger.requests_gave_up == 1 and spider.ledger.layout_errors == []
    assert EVERY_OFFER in spider.ledger.unread_prefixes


def test_page_1_asks_for_the_pages_its_total_counts_up_to_the_cap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # meta.total 203 at 50 a page: pages 2..5, the cap stops at 3 (partial, rest unread).
    spider = make_spider(monkeypatch, token=TOKEN, GPURENT_PAGE_SIZE="50", GPURENT_MAX_PAGES="3")
    [request] = first_requests(spider)
    assert request.url == f"http://replay/do{SIZES_PATH}?page=1&per_page=50"
    out = list(
        spider.parse_answer(answer(request, (RECORDINGS / "sizes_page1.json").read_bytes()), page=1)
    )
    later = requests_in(out)
    assert [r.cb_kwargs for r in later] == [{"page": 2}, {"page": 3}]
    assert later[0].url.endswith("?page=2&per_page=50")
    assert spider.ledger.page_cap_reached == 3 and EVERY_OFFER in spider.ledger.unread_prefixes
    # A later page asks for nothing more.
    page_2 = (RECORDINGS / "sizes_page2.json").read_bytes()
    assert requests_in(list(spider.parse_answer(answer(later[0], page_2), page=2))) == []


def test_a_page_1_without_a_total_but_a_next_page_leaves_the_rest_unread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spider = make_spider(monkeypatch, token=TOKEN)
    [request] = first_requests(spider)
    doc = json.loads((RECORDINGS / "sizes_page1.json").read_text(encoding="utf-8"))
    del doc["meta"]
    out = list(spider.parse_answer(answer(request, json.dumps(doc).encode()), page=1))
    assert requests_in(out) == [] and len(out) == 9  # page 1's offers still emitted
    assert len(spider.ledger.layout_errors) == 1 and "meta.total" in spider.ledger.layout_errors[0]
    assert EVERY_OFFER in spider.ledger.unread_prefixes


def test_a_single_page_without_a_total_is_the_whole_list(monkeypatch: pytest.MonkeyPatch) -> None:
    spider = make_spider(monkeypatch, token=TOKEN)
    [request] = first_requests(spider)
    doc = json.loads((RECORDINGS / "sizes_page2.json").read_text(encoding="utf-8"))
    del doc["meta"]
    out = list(spider.parse_answer(answer(request, json.dumps(doc).encode()), page=1))
    assert requests_in(out) == [] and len(out) == 3
    assert spider.ledger.layout_errors == [] and spider.ledger.unread_prefixes == []


def test_an_answer_that_is_not_json_is_a_layout_error(monkeypatch: pytest.MonkeyPatch) -> None:
    spider = make_spider(monkeypatch, token=TOKEN)
    [request] = first_requests(spider)
    assert list(spider.parse_answer(answer(request, b"<html>502</html>"), page=1)) == []
    assert len(spider.ledger.layout_errors) == 1 and EVERY_OFFER in spider.ledger.unread_prefixes


def test_spider_is_a_json_api_spider() -> None:
    assert_api_spider(DigitaloceanSpider, home="US", auth_env=(TOKEN_ENV,), needs_auth=True)
