"""Tencent Cloud CVM: the real `scrapy crawl tencentcloud` process against the replay server.

One crawl of the default recordings with both keys, shared by the tests through a module
fixture: four signed calls, one per default region. The spider's other branches (no keys, a
refused key, an API error, an answer that is not JSON or lost its layout, a failed request,
the regions argument) run in process.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import scrapy
from crawl_kit import Crawl, answer, assert_api_spider, assert_secrets_kept, crawl, first_requests
from scrapy.utils.test import get_crawler
from twisted.python.failure import Failure

from flows.health import classify_run
from gpurent_core.model import RunStatus
from replay import ReplayServer
from spiders.providers.tencentcloud import tc3
from spiders.providers.tencentcloud.parser import DEFAULT_REGIONS, request_body
from spiders.providers.tencentcloud.spider import (
    SECRET_ID_ENV,
    SECRET_KEY_ENV,
    TencentcloudSpider,
)

PROVIDER = "tencentcloud"
SECRET_ID = "replay-demo-token"  # what the replay flow gives every credential variable
SECRET_KEY = "tc-secret-7e41d0-not-a-real-key"
RECORDINGS = Path(__file__).resolve().parents[2] / "spiders/providers/tencentcloud/recordings"
SOLD_OUT = {
    "ap-guangzhou-3/GN7.20XLARGE320",
    "ap-guangzhou-4/GT4.41XLARGE948",
    "ap-shanghai-5/PNV4.7XLARGE116",
    "ap-nanjing-1/GN10Xp.20XLARGE320",
}


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Crawl]:
    with pytest.MonkeyPatch.context() as patch, ReplayServer() as server:
        patch.setenv(SECRET_ID_ENV, SECRET_ID)
        patch.setenv(SECRET_KEY_ENV, SECRET_KEY)
        yield crawl(PROVIDER, server, tmp_path_factory.mktemp(PROVIDER))


def test_one_signed_call_per_region_reads_every_zone(crawled: Crawl) -> None:
    assert crawled.returncode == 0, crawled.log[-2000:]
    calls = crawled.calls
    assert sorted(r.headers["x-tc-region"] for r in calls) == sorted(DEFAULT_REGIONS)
    for call in calls:
        assert (call.method, call.path) == ("POST", "/")
        assert call.headers["x-tc-action"] == "DescribeZoneInstanceConfigInfos"
        assert call.headers["x-tc-version"] == "2017-03-12"
        assert call.headers["content-type"] == "application/json; charset=utf-8"
        assert call.json == request_body()
        # The signature covers the very bytes sent and the Host they were sent to.
        timestamp = int(call.headers["x-tc-timestamp"])
        assert call.headers["authorization"] == tc3.authorization(
            secret_id=SECRET_ID,
            secret_key=SECRET_KEY,
            service="cvm",
            host=call.headers["host"],
            payload=call.body,
            timestamp=timestamp,
        )
        assert SECRET_KEY not in json.dumps(call.headers) and SECRET_KEY.encode() not in call.body
    report = crawled.report
    assert report["auth"] == "ok" and report["pages_parsed"] == 4
    assert (report["offers"], report["quarantined"]) == (15, 0)
    assert report["skipped"] == {"outside_catalog": 2}  # the two vGPU slices
    assert report["layout_errors"] == [] and report["missing_fields"] == []
    assert (report["unread_keys"], report["unread_prefixes"]) == ([], [])
    assert any("usage steps" in note for note in report["notes"])
    assert classify_run(report, returncode=0).status is RunStatus.OK
    assert_secrets_kept(crawled, SECRET_KEY)


def test_sold_out_in_tencents_word_the_rest_in_stock_without_a_count(crawled: Crawl) -> None:
    offers = crawled.offers
    assert {k for k, o in offers.items() if o["status"] == "sold_out"} == SOLD_OUT
    others = {(o["status"], o["available_count"]) for k, o in offers.items() if k not in SOLD_OUT}
    assert others == {("in_stock", None), ("low", None)}  # low: StatusCategory UnderStock
    assert Counter(o["region"].rsplit("-", 1)[0] for o in offers.values()) == {
        "ap-guangzhou": 7,
        "ap-shanghai": 4,
        "ap-beijing": 2,
        "ap-nanjing": 2,
    }


def test_whole_instance_hourly_prices_in_cny(crawled: Crawl) -> None:
    box = crawled.offers["ap-guangzhou-4/GT4.41XLARGE948"]
    assert (box["gpu_model"], box["gpu_vram_gb"], box["gpu_count"]) == ("A100", 40, 8)
    assert (Decimal(box["price"]), box["currency"], box["price_basis"], box["billing_unit"]) == (
        Decimal("229.12"),
        "CNY",
        "instance",
        "hour",
    )
    assert (box["interconnect"], Decimal(box["nvlink_gbps"])) == ("nvlink", 600)
    a100 = crawled.offers["ap-guangzhou-4/GT4.4XLARGE96"]
    assert [(p["price"], p["price_kind"]) for p in a100["plans"]] == [("25.78", "member")]


# -- the spider's other branches, in process ------------------------------------------------


def make_spider(
    monkeypatch: pytest.MonkeyPatch, *, secret_id: str | None, secret_key: str | None, **kwargs: Any
) -> Any:
    for env, value in ((SECRET_ID_ENV, secret_id), (SECRET_KEY_ENV, secret_key)):
        if value is None:
            monkeypatch.delenv(env, raising=False)
        else:
            monkeypatch.setenv(env, value)
    crawler = get_crawler(TencentcloudSpider, {"GPURENT_BASE_URL": "http://replay/tencentcloud"})
    return TencentcloudSpider.from_crawler(crawler, **kwargs)


def keyed_spider(monkeypatch: pytest.MonkeyPatch, **kwargs: Any) -> Any:
    return make_spider(monkeypatch, secret_id=SECRET_ID, secret_key=SECRET_KEY, **kwargs)


def parsed(spider: Any, request: scrapy.Request, body: bytes, status: int = 200) -> list[Any]:
    return list(spider.parse_region(answer(request, body, status), **request.cb_kwargs))


@pytest.mark.parametrize(
    ("secret_id", "secret_key"), [(None, None), (SECRET_ID, None), (None, SECRET_KEY)]
)
def test_without_both_keys_nothing_is_asked_and_auth_is_missing(
    secret_id: str | None, secret_key: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    spider = make_spider(monkeypatch, secret_id=secret_id, secret_key=secret_key)
    assert first_requests(spider) == []
    detail = spider.ledger.auth_detail or ""
    assert spider.ledger.auth == "missing" and SECRET_ID_ENV in detail and SECRET_KEY_ENV in detail


def test_the_regions_argument_chooses_the_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    spider = keyed_spider(monkeypatch, regions="ap-chengdu, ap-hongkong")
    requests = first_requests(spider)
    assert [r.headers.get("X-TC-Region") for r in requests] == [b"ap-chengdu", b"ap-hongkong"]
    assert {r.url for r in requests} == {"http://replay/tencentcloud/"}
    # Signed for the host the request goes to; the key itself is in no header or body.
    auth = requests[0].headers.get("Authorization") or b""
    assert auth.decode().startswith(f"TC3-HMAC-SHA256 Credential={SECRET_ID}/")
    for request in requests:
        assert SECRET_KEY not in json.dumps(dict(request.headers.to_unicode_dict()))
        assert SECRET_KEY.encode() not in request.body


@pytest.mark.parametrize(
    ("body", "status", "detail"),
    [
        ((RECORDINGS / "auth_failure.json").read_bytes(), 200, "AuthFailure.InvalidAuthorization"),
        (
            b'{"Response": {"Error": {"Code": "AuthFailure.SecretIdNotFound", "Message": "x"}}}',
            200,
            "AuthFailure.SecretIdNotFound",
        ),
        (b"forbidden", 403, "HTTP 403"),
    ],
)
def test_a_refused_key_is_rejected_and_leaves_the_region_unread(
    body: bytes, status: int, detail: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    spider = keyed_spider(monkeypatch)
    request = first_requests(spider)[2]  # ap-beijing
    assert parsed(spider, request, body, status) == []
    ledger = spider.ledger
    assert ledger.auth == "rejected" and detail in (ledger.auth_detail or "")
    assert ledger.layout_errors == [] and ledger.unread_prefixes == ["ap-beijing-"]


def test_an_api_error_is_a_failed_request_of_that_region(monkeypatch: pytest.MonkeyPatch) -> None:
    spider = keyed_spider(monkeypatch)
    request = first_requests(spider)[1]  # ap-shanghai
    body = b'{"Response": {"Error": {"Code": "InternalError", "Message": "busy"}}}'
    assert parsed(spider, request, body) == []
    ledger = spider.ledger
    assert ledger.requests_gave_up == 1 and ledger.layout_errors == []
    assert ledger.unread_prefixes == ["ap-shanghai-"] and ledger.auth != "rejected"


def test_a_broken_answer_leaves_only_its_region_unread(monkeypatch: pytest.MonkeyPatch) -> None:
    spider = keyed_spider(monkeypatch)
    requests = first_requests(spider)
    assert parsed(spider, requests[0], b"<html>502 Bad Gateway</html>") == []
    doc = json.loads((RECORDINGS / "zone_configs_ap-nanjing.json").read_text(encoding="utf-8"))
    for item in doc["Response"]["InstanceTypeQuotaSet"]:
        item["SaleStatus"] = item.pop("Status")
    out = parsed(spider, requests[3], json.dumps(doc).encode())
    quarantined = [line for line in out if line["kind"] == "quarantine"]
    assert {line["offer_key"] for line in quarantined} == {
        "ap-nanjing-1/GN7.5XLARGE80",
        "ap-nanjing-1/GN10Xp.20XLARGE320",
    }
    ledger = spider.ledger
    assert len(ledger.layout_errors) == 2 and "Status" in ledger.layout_errors[1]
    assert ledger.unread_prefixes == ["ap-guangzhou-", "ap-nanjing-"]
    # A region that answers still reads whole and says nothing of the others.
    shanghai = (RECORDINGS / "zone_configs_ap-shanghai.json").read_bytes()
    assert len(parsed(spider, requests[1], shanghai)) == 4
    assert spider.ledger.unread_prefixes == ["ap-guangzhou-", "ap-nanjing-"]


def test_a_failed_request_leaves_only_its_region_unread(monkeypatch: pytest.MonkeyPatch) -> None:
    spider = keyed_spider(monkeypatch)
    request = first_requests(spider)[3]  # ap-nanjing
    failure = Failure(ConnectionRefusedError("replay down"))
    failure.request = request  # type: ignore[attr-defined]
    spider.on_request_failed(failure)
    assert spider.ledger.requests_gave_up == 1
    assert spider.ledger.unread_prefixes == ["ap-nanjing-"]


def test_spider_is_a_chinese_api_spider_with_two_key_variables() -> None:
    assert_api_spider(
        TencentcloudSpider,
        home="CN",
        auth_env=("TENCENTCLOUD_SECRET_ID", "TENCENTCLOUD_SECRET_KEY"),
        needs_auth=True,
    )
