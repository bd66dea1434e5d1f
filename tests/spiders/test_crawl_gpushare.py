"""GPUShare: the real `scrapy crawl gpushare` process against the replay server."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from crawl_kit import (
    RUN_ID,
    TOKEN,
    assert_auth_missing,
    assert_auth_rejected,
    assert_secrets_kept,
    crawl,
    crawl_scene,
)

from flows.health import classify_run
from gpurent_core.model import RunStatus
from replay import Fault, ReplayServer

TOKEN_ENV = "GPUSHARE_TOKEN"
PATH = "/app/api/market/machine/list"


def test_token_pages_until_total_is_covered(
    server: ReplayServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    result = crawl("gpushare", server, tmp_path, settings={"LOG_LEVEL": "DEBUG"})
    assert result.returncode == 0, result.log[-2000:]
    offers = result.offers
    # 57 machines, every one an offer: the Tesla V100 (16 or 32 GB) is kept, VRAM unknown.
    assert len(offers) == 57 and result.quarantined == []
    assert offers["36336"]["gpu_model"] == "V100" and offers["36336"]["gpu_vram_gb"] is None
    statuses = [o["status"] for o in offers.values()]
    assert statuses.count("in_stock") == 44 and statuses.count("sold_out") == 13
    assert all(o["currency"] == "CNY" and o["billing_unit"] == "hour" for o in offers.values())
    h800 = [o for o in offers.values() if o["gpu_model"] == "H800"]
    assert {Decimal(o["price"]) for o in h800} == {Decimal("10.8"), Decimal("10.9")}
    with_plans = [o for o in offers.values() if o["plans"]]
    assert with_plans and all(
        [p["billing_unit"] for p in o["plans"]] == ["day", "week", "month"] for o in with_plans
    )
    # Unknown VRAM (the V100) never counts as fitting a size.
    big = [o for o in offers.values() if (o["gpu_vram_gb"] or 0) >= 32]
    assert sum(o["status"] == "in_stock" for o in big) >= 5
    assert all(r["run_id"] == RUN_ID for r in result.feed)

    calls = result.calls
    assert [r.query["pn"] for r in calls] == ["1", "2"]
    assert all(r.query["ps"] == "50" and r.query["models"] == "-1" for r in calls)
    assert {r.headers["authorization"] for r in calls} == {f"Bearer {TOKEN}"}
    report = result.report
    assert report["auth"] == "ok" and report["pages_parsed"] == 2
    assert report["responses_by_status"] == {"200": 2}
    assert (report["offers"], report["quarantined"]) == (57, 0)
    assert report["errors"] == [] and report["layout_errors"] == []
    assert report["missing_fields"] == []
    # Nothing quarantined, no field missing: ok (one quarantined item would make it partial).
    assert classify_run(report, returncode=0).status is RunStatus.OK
    assert_secrets_kept(result, TOKEN)


def test_without_token_nothing_is_asked_and_auth_is_missing(
    server: ReplayServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    assert_auth_missing(crawl("gpushare", server, tmp_path), TOKEN_ENV)


def test_expired_token_401_is_rejected_not_sold_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    result = crawl_scene("gpushare", tmp_path, faults=[Fault("gpushare", PATH, status=401)])
    assert [r.status for r in result.calls] == [401]  # read, not retried
    assert_auth_rejected(result, TOKEN)


def test_a_401_on_a_later_page_leaves_that_page_unread(monkeypatch: pytest.MonkeyPatch) -> None:
    """Audit (operations): page 2 of the machine list answering 401 (an expired token mid
    crawl, a web firewall's 403) closed the offers page 2 lists as "no longer listed": a
    refused page is a page not read (every offer may have been on it), as a page given up
    on is."""
    from crawl_kit import answer
    from scrapy.utils.test import get_crawler

    from spiders.ledger import EVERY_OFFER
    from spiders.providers.gpushare.spider import GpushareSpider

    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    crawler = get_crawler(GpushareSpider, {"GPURENT_BASE_URL": "http://replay/gpushare"})
    spider = GpushareSpider.from_crawler(crawler)
    page_two = spider.page_request(2, seen=50)
    assert list(spider.parse_page(answer(page_two, b'{"msg": "token expired"}', 401), 2, 50)) == []
    assert spider.ledger.auth == "rejected"
    assert EVERY_OFFER in spider.ledger.unread_prefixes
