"""Shadeform: the real `scrapy crawl shadeform` process against the replay server.

One crawl of the default recordings with a key, shared by the tests through a module
fixture. The spider's other branches (no key, a refused key, an error answer, an answer that
is not JSON) run in process.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from crawl_kit import (
    TOKEN,
    Crawl,
    answer,
    assert_api_spider,
    assert_secrets_kept,
    crawl,
    first_requests,
)
from scrapy.utils.test import get_crawler

from flows.health import classify_run
from gpurent_core.model import RunStatus
from replay import ReplayServer
from spiders.ledger import EVERY_OFFER
from spiders.providers.shadeform.spider import ShadeformSpider

# Shadeform's documented API: the path, the key's variable and its header.
INSTANCE_TYPES_PATH = "/instances/types"
KEY_ENV = "SHADEFORM_API_KEY"
KEY_HEADER = "X-API-KEY"

PROVIDER = "shadeform"
RECORDING = Path(__file__).resolve().parents[2] / (
    "spiders/providers/shadeform/recordings/instance_types.json"
)
SOLD_OUT = {
    "massedcompute/A6000/desmoines-usa-1",
    "hyperstack/A6000/norway-1",
    "lambdalabs/H100_sxm5x8/us-west-1",
    "crusoe/H100_sxm5x8/us-east1-a",
    "datacrunch/H200x8/FIN-02",
}


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Crawl]:
    with pytest.MonkeyPatch.context() as patch, ReplayServer() as server:
        patch.setenv(KEY_ENV, TOKEN)
        yield crawl(PROVIDER, server, tmp_path_factory.mktemp(PROVIDER))


def test_the_key_reads_every_type_at_every_cloud_in_one_request(crawled: Crawl) -> None:
    assert crawled.returncode == 0, crawled.log[-2000:]
    sent = [(r.path, r.query, r.headers.get(KEY_HEADER.lower())) for r in crawled.calls]
    assert sent == [(INSTANCE_TYPES_PATH, {}, TOKEN)]
    report = crawled.report
    assert report["auth"] == "ok" and report["pages_parsed"] == 1
    assert (report["offers"], report["quarantined"]) == (14, 0)
    assert report["missing_fields"] == [] and report["layout_errors"] == []
    assert classify_run(report, returncode=0).status is RunStatus.OK
    assert_secrets_kept(crawled, TOKEN)


def test_stock_follows_each_regions_flag(crawled: Crawl) -> None:
    offers = crawled.offers
    assert {k for k, o in offers.items() if o["status"] == "sold_out"} == SOLD_OUT
    in_stock = {(o["status"], o["available_count"]) for k, o in offers.items() if k not in SOLD_OUT}
    assert in_stock == {("in_stock", None)}  # Shadeform gives no count


def test_the_same_card_at_two_clouds_is_two_offers_priced_per_instance(crawled: Crawl) -> None:
    offers = crawled.offers
    lambda_h100 = offers["lambdalabs/H100_sxm5x8/us-east-1"]
    crusoe_h100 = offers["crusoe/H100_sxm5x8/us-southcentral1-a"]
    for offer in (lambda_h100, crusoe_h100):
        assert (offer["gpu_model"], offer["gpu_form_factor"], offer["gpu_count"]) == (
            "H100",
            "SXM",
            8,
        )
        assert (offer["currency"], offer["price_basis"], offer["billing_unit"]) == (
            "USD",
            "instance",
            "hour",
        )
    assert (Decimal(lambda_h100["price"]), Decimal(crusoe_h100["price"])) == (
        Decimal("23.92"),
        Decimal("31.2"),
    )
    assert (lambda_h100["interconnect"], lambda_h100["hosting"]) == ("sxm", "secure")
    assert Decimal(lambda_h100["vcpus_per_gpu"]) == 26  # 208 vCPUs over 8 cards
    pair = offers["massedcompute/A6000x2/kansascity-usa-1"]
    assert (pair["gpu_model"], pair["interconnect"], pair["region"]) == (
        "RTX A6000",
        "nvlink",
        "kansascity-usa-1",
    )


# -- the spider in process (the branches every keyed-list spider shares:
# tests/spiders/test_keyed_list.py) -----------------------------------------------------


def make_spider(monkeypatch: pytest.MonkeyPatch, *, key: str | None) -> Any:
    if key is None:
        monkeypatch.delenv(KEY_ENV, raising=False)
    else:
        monkeypatch.setenv(KEY_ENV, key)
    crawler = get_crawler(ShadeformSpider, {"GPURENT_BASE_URL": "http://replay/shadeform"})
    return ShadeformSpider.from_crawler(crawler)


def test_the_key_goes_in_its_header_only(monkeypatch: pytest.MonkeyPatch) -> None:
    spider = make_spider(monkeypatch, key=TOKEN)
    [request] = first_requests(spider)
    assert request.url == f"http://replay/shadeform{INSTANCE_TYPES_PATH}"
    assert request.headers.get(KEY_HEADER) == TOKEN.encode()
    assert TOKEN not in request.url and b"Authorization" not in request.headers


def test_an_error_answer_is_a_failed_request_that_leaves_every_offer_unread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spider = make_spider(monkeypatch, key=TOKEN)
    [request] = first_requests(spider)
    body = b'{"message": "Something went wrong. Please try again later."}'
    assert list(spider.parse_answer(answer(request, body))) == []
    assert spider.ledger.requests_gave_up == 1 and spider.ledger.layout_errors == []
    assert EVERY_OFFER in spider.ledger.unread_prefixes


def test_the_recorded_answer_in_process_yields_its_offers(monkeypatch: pytest.MonkeyPatch) -> None:
    spider = make_spider(monkeypatch, key=TOKEN)
    [request] = first_requests(spider)
    out = list(spider.parse_answer(answer(request, RECORDING.read_bytes())))
    assert len(out) == 14 and spider.ledger.auth == "ok"


def test_spider_is_a_json_api_spider() -> None:
    assert_api_spider(ShadeformSpider, home="US", auth_env=(KEY_ENV,), needs_auth=True)
