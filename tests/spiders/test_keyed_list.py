"""The one-keyed-GET spiders (`spiders.keyed_list`): every one keeps the same promises, in
process, on answers made here. Each provider's crawl test runs its real `scrapy crawl` with
its recordings; Lambda's also without a key and with a refused one, for the shared path
through a real process (its log included)."""

from __future__ import annotations

from typing import Any

import pytest
from crawl_kit import answer, first_requests
from scrapy.settings import Settings
from scrapy.spiderloader import SpiderLoader
from scrapy.utils.test import get_crawler

from flows.health import classify_run
from gpurent_core.model import RunStatus, utcnow
from spiders.keyed_list import KeyedListSpider
from spiders.ledger import EVERY_OFFER, build_report
from spiders.parsers.common import PageResult
from spiders.parsers.envelope import ApiPage

KEY = "kl-test-key-0b7e-not-real"


def _keyed_spiders() -> list[type[KeyedListSpider]]:
    settings = Settings()
    settings.setmodule("spiders.settings")
    loader = SpiderLoader.from_settings(settings)
    found = [loader.load(name) for name in loader.list()]
    return sorted((s for s in found if issubclass(s, KeyedListSpider)), key=lambda s: s.name)


KEYED = _keyed_spiders()


def test_the_one_request_providers_share_the_shape() -> None:
    shape = {
        "chenyu",
        "featurize",
        "jarvislabs",
        "lambda",
        "novita",
        "paperspace",
        "ppio",
        "shadeform",
    }
    assert shape <= {spider.name for spider in KEYED}


def make(
    spider_cls: type[KeyedListSpider], monkeypatch: pytest.MonkeyPatch, key: str | None
) -> Any:
    (env,) = spider_cls.auth_env
    if key is None:
        monkeypatch.delenv(env, raising=False)
    else:
        monkeypatch.setenv(env, key)
    base = f"http://replay/{spider_cls.name}"
    crawler = get_crawler(spider_cls, {"GPURENT_BASE_URL": base})
    return spider_cls.from_crawler(crawler)


def report(spider: Any) -> dict[str, Any]:
    """The run report the crawl would write (`spiders.extensions.RunReport`)."""
    now = utcnow()
    return build_report(
        spider.ledger,
        provider=spider.name,
        run_id="keyed-list-test",
        started_at=now,
        finished_at=now,
        finish_reason="finished",
        needs_auth=spider.needs_auth,
    )


def assert_needs_auth(spider: Any) -> None:
    """A run that needs credentials: never failed, never a layout change, never sold out,
    and the key in nothing it reports."""
    written = report(spider)
    assert written["offers"] == 0 and written["layout_errors"] == [] and written["errors"] == []
    assert classify_run(written, returncode=0).status is RunStatus.AUTH_REQUIRED
    assert KEY not in repr(written)


@pytest.fixture(params=KEYED, ids=lambda s: s.name)
def spider_cls(request: pytest.FixtureRequest) -> type[KeyedListSpider]:
    return request.param


def test_without_a_key_nothing_is_asked(
    spider_cls: type[KeyedListSpider], monkeypatch: pytest.MonkeyPatch
) -> None:
    spider = make(spider_cls, monkeypatch, None)
    assert first_requests(spider) == []
    assert spider.ledger.auth == "missing"
    assert spider_cls.auth_env[0] in (spider.ledger.auth_detail or "")
    assert_needs_auth(spider)


def test_the_key_travels_in_a_header_of_one_get(
    spider_cls: type[KeyedListSpider], monkeypatch: pytest.MonkeyPatch
) -> None:
    spider = make(spider_cls, monkeypatch, KEY)
    [request] = first_requests(spider)
    assert request.method == "GET"
    assert request.url.startswith(f"http://replay/{spider_cls.name}{spider_cls.list_path}")
    assert KEY not in request.url
    headers = request.headers
    assert any(KEY.encode() in value for name in headers for value in headers.getlist(name))


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_key_reads_nothing(
    spider_cls: type[KeyedListSpider], status: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    spider = make(spider_cls, monkeypatch, KEY)
    [request] = first_requests(spider)
    assert list(spider.parse_answer(answer(request, b'{"error": "no"}', status))) == []
    assert spider.ledger.auth == "rejected"
    assert EVERY_OFFER in spider.ledger.unread_prefixes  # not read: nothing of it is gone
    assert_needs_auth(spider)


def test_an_answer_that_is_not_json_is_a_layout_error(
    spider_cls: type[KeyedListSpider], monkeypatch: pytest.MonkeyPatch
) -> None:
    spider = make(spider_cls, monkeypatch, KEY)
    [request] = first_requests(spider)
    assert list(spider.parse_answer(answer(request, b"<html>502</html>"))) == []
    assert len(spider.ledger.layout_errors) == 1
    assert EVERY_OFFER in spider.ledger.unread_prefixes and spider.ledger.auth != "ok"


@pytest.mark.parametrize(
    ("page", "auth", "gave_up"),
    [
        (ApiPage(auth_rejected=True), "rejected", 0),
        (ApiPage(api_error="rate limited"), None, 1),
        (PageResult(), "ok", 0),
    ],
    ids=["envelope-refuses-the-key", "envelope-api-error", "a-plain-page"],
)
def test_what_the_page_says_decides_the_run(
    spider_cls: type[KeyedListSpider],
    page: PageResult,
    auth: str | None,
    gave_up: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spider = make(spider_cls, monkeypatch, KEY)
    [request] = first_requests(spider)
    monkeypatch.setattr(spider, "parse_list", lambda data, ctx: page)
    # What follows a page is each paged provider's own (its crawl tests): none here.
    monkeypatch.setattr(spider, "later_requests", lambda number, result: iter(()))
    assert list(spider.parse_answer(answer(request, b"{}"))) == []
    assert spider.ledger.requests_gave_up == gave_up
    if auth is not None:
        assert spider.ledger.auth == auth
    else:  # an API error says nothing of the key: never `ok`
        assert spider.ledger.auth != "ok" and EVERY_OFFER in spider.ledger.unread_prefixes
