"""Azure: the real `scrapy crawl azure` process against the replay server.

Two crawls, shared by the tests through a module fixture: the default recordings (six series,
two of them over two pages linked by NextPageLink), then the same recordings with page 2 of the
NC A100 v4 series failing; both loaded into one warehouse by the crawl flow's own load step.
The spider's other branches (the link put on the base URL, a link elsewhere, the page cap, an
answer that is not JSON) run in process.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import scrapy
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
from spiders.providers.azure.sizes import series_table
from spiders.providers.azure.spider import API_VERSION, PRICES_PATH, AzureSpider

PROVIDER = "azure"
RECORDINGS = Path(__file__).resolve().parents[2] / "spiders/providers/azure/recordings"
FAILING_BODY = "prices_nc_a100_v4_page2.json"
NC_A100 = next(s for s in series_table() if s.name == "NC A100 v4")
ONLY_ON_PAGE_2 = {
    "Standard_NC24ads_A100_v4/westeurope/on_demand",
    "Standard_NC24ads_A100_v4/westeurope/spot",
    "Standard_NC96ads_A100_v4/westeurope/on_demand",
}


def page_2_fails(routes: list[dict[str, Any]]) -> None:
    [route] = [r for r in routes if r.get("body") == FAILING_BODY]
    route["fault"] = {"status": 503}


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> DefaultThenSpoilt:
    tmp = tmp_path_factory.mktemp(PROVIDER)
    return default_then_spoilt(
        tmp,
        PROVIDER,
        recordings_with_routes(tmp, PROVIDER, page_2_fails),
        ("azure-default", "azure-failing"),
    )


def test_every_series_is_read_to_its_last_page_with_no_key(crawled: DefaultThenSpoilt) -> None:
    run = crawled.default
    assert run.outcome.returncode == 0, run.log()[-2000:]
    assert len(run.offers) == 32 and [r for r in run.feed if r["kind"] == "quarantine"] == []
    firsts = [c.query for c in run.calls if "api-version" in c.query]
    assert sorted(q["$filter"] for q in firsts) == sorted(s.odata_filter() for s in series_table())
    assert {(q["api-version"], q["meterRegion"]) for q in firsts} == {(API_VERSION, "'primary'")}
    followed = [c.query for c in run.calls if "$skip" in c.query]
    assert len(followed) == 2 and {q["$skip"] for q in followed} == {"100"}
    assert {c.path for c in run.calls} == {PRICES_PATH}
    assert all("authorization" not in c.headers for c in run.calls)
    report = run.report
    assert (report["auth"], report["pages_parsed"], report["offers"]) == ("not_needed", 8, 32)
    assert report["skipped"] == {"not_offered": 9, "outside_catalog": 4}
    assert classify_run(report, returncode=0).status is RunStatus.OK
    assert crawled.statuses["azure-default"] == "ok"


def test_offers_are_priced_per_vm_hour_and_never_in_stock(crawled: DefaultThenSpoilt) -> None:
    offers = crawled.default.offers
    nd = offers["Standard_ND96isr_H100_v5/eastus/on_demand"]
    assert (Decimal(nd["price"]), nd["currency"], nd["price_basis"], nd["gpu_count"]) == (
        Decimal("98.4"),
        "USD",
        "instance",
        8,
    )
    spot = offers["Standard_ND96isr_H100_v5/eastus/spot"]
    assert (spot["price_kind"], Decimal(spot["price"])) == ("spot", Decimal("29.52"))
    assert {(o["status"], o["available_count"]) for o in offers.values()} == {("unknown", None)}
    ranked = [o for o in api.cheapest(1, limit=None, db=crawled.db) if o.provider == PROVIDER]
    assert ranked == [], "an offer of unknown stock is never ranked as rentable"


def test_a_failed_page_leaves_only_its_series_unread(crawled: DefaultThenSpoilt) -> None:
    run = crawled.spoilt
    assert run.outcome.returncode == 0, run.log()[-2000:]
    assert set(crawled.default.offers) - set(run.offers) == ONLY_ON_PAGE_2
    report = run.report
    assert report["requests_gave_up"] == 1 and report["layout_errors"] == []
    assert report["unread_prefixes"] == NC_A100.offer_prefixes()
    assert classify_run(report, returncode=0).status is RunStatus.PARTIAL
    assert crawled.statuses["azure-failing"] == "partial"
    now = {o.offer_key: o for o in api.offers(provider=PROVIDER, db=crawled.db)}
    assert set(now) == set(crawled.default.offers), "a failed page closes nothing"
    assert {key for key, offer in now.items() if offer.stale} == ONLY_ON_PAGE_2


# -- the spider's other branches, in process ------------------------------------------------


def make_spider(**settings: Any) -> Any:
    crawler = get_crawler(AzureSpider, {"GPURENT_BASE_URL": "http://replay/azure", **settings})
    return AzureSpider.from_crawler(crawler)


def nc_a100_request(spider: Any) -> scrapy.Request:
    return next(r for r in first_requests(spider) if r.cb_kwargs["series"] is NC_A100)


def page_1(link: Any) -> bytes:
    doc = json.loads((RECORDINGS / "prices_nc_a100_v4_page1.json").read_text(encoding="utf-8"))
    doc["NextPageLink"] = link
    return json.dumps(doc).encode()


def test_one_request_per_series_each_leaving_only_its_sizes_unread() -> None:
    requests = first_requests(make_spider())
    assert len(requests) == len(series_table())
    for request, series in zip(requests, series_table(), strict=True):
        assert request.url.startswith(f"http://replay/azure{PRICES_PATH}?api-version=")
        assert request.meta[UNREAD_META] == {"prefixes": series.offer_prefixes()}
        assert request.cb_kwargs == {"series": series, "page": 1}


def test_the_next_page_link_is_asked_of_the_base_url_never_of_its_host() -> None:
    spider = make_spider()
    request = nc_a100_request(spider)
    link = "https://prices.azure.com:443/api/retail/prices?$filter=x%20eq%20%27y%27&$skip=100"
    out = list(spider.parse_page(answer(request, page_1(link)), series=NC_A100, page=1))
    [following] = requests_in(out)
    assert following.url == f"http://replay/azure{PRICES_PATH}?$filter=x%20eq%20%27y%27&$skip=100"
    assert following.cb_kwargs == {"series": NC_A100, "page": 2}
    assert following.meta[UNREAD_META] == {"prefixes": NC_A100.offer_prefixes()}
    # The last page asks for nothing more.
    assert requests_in(list(spider.parse_page(answer(request, page_1(None)), NC_A100, 1))) == []


@pytest.mark.parametrize(
    "link",
    [
        "https://prices.azure.com/api/other?$skip=100",
        "https://prices.azure.com/api/retail/prices",
    ],
)
def test_a_link_that_is_no_next_page_is_a_layout_error_of_that_series(link: str) -> None:
    spider = make_spider()
    out = list(spider.parse_page(answer(nc_a100_request(spider), page_1(link)), NC_A100, 1))
    assert requests_in(out) == [] and len(spider.ledger.layout_errors) == 1
    assert spider.ledger.unread_prefixes == NC_A100.offer_prefixes()


def test_a_link_back_to_the_same_page_is_a_loop_not_followed() -> None:
    spider = make_spider()
    request = nc_a100_request(spider)
    same = "https://prices.azure.com:443" + request.url.split("/azure", 1)[1]
    assert requests_in(list(spider.parse_page(answer(request, page_1(same)), NC_A100, 1))) == []
    assert len(spider.ledger.layout_errors) == 1


def test_the_page_cap_stops_a_chain_and_says_so() -> None:
    spider = make_spider(GPURENT_MAX_PAGES="1")
    link = "https://prices.azure.com:443/api/retail/prices?$skip=100"
    out = list(spider.parse_page(answer(nc_a100_request(spider), page_1(link)), NC_A100, 1))
    assert requests_in(out) == [] and spider.ledger.page_cap_reached == 1
    assert EVERY_OFFER in spider.ledger.unread_prefixes


def test_an_answer_that_is_not_json_leaves_only_its_series_unread() -> None:
    spider = make_spider()
    request = nc_a100_request(spider)
    assert list(spider.parse_page(answer(request, b"<html>502</html>"), NC_A100, 1)) == []
    assert len(spider.ledger.layout_errors) == 1
    assert spider.ledger.unread_prefixes == NC_A100.offer_prefixes()


def test_spider_is_a_public_json_api_spider() -> None:
    assert_api_spider(AzureSpider, home="US", auth_env=(), needs_auth=False)
