"""The bundled `restock` scene keeps the promise of issue 6, checked the way the watch poll
sees it: a real `scrapy crawl` process per provider against the replay server.

At step 1 every RTX 4090 offer of every provider is sold out; at step 2 exactly one is
in stock, AutoDL host 3f8a2c91d0 with 2 free cards. The providers come from the spider list,
so a provider recorded later without a restock override fails here (its RTX 4090 offers
would be inherited in stock from the default scene).

Crawls run three at a time, as the crawl flow runs them (`flows.nightly.MAX_PARALLEL_CRAWLS`):
each is a Scrapy process that spends most of its few seconds starting up.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from flows.crawl import REPLAY_DEMO_TOKEN
from flows.nightly import MAX_PARALLEL_CRAWLS, crawl_env
from flows.providers import provider_infos
from replay import ReplayServer

# The crawl helpers live beside the spider tests, which are not a package (pytest puts their
# folder on sys.path only when it collects them).
_SPIDER_TESTS = Path(__file__).resolve().parents[1] / "spiders"
if str(_SPIDER_TESTS) not in sys.path:
    sys.path.insert(0, str(_SPIDER_TESTS))
from crawl_kit import Crawl, crawl  # noqa: E402

GPU = "RTX 4090"
FREED = ("autodl", "3f8a2c91d0")
"""The one offer that frees up at steps 2 and 3."""

EXPECTED_4090_OFFERS = {
    "autodl": 2,
    "cloudrift": 4,
    "compshare": 2,
    "featurize": 3,
    "gongji": 1,
    "gpushare": 10,
    "lanyun": 3,
    "matpool": 3,
    "novita": 1,
    "ppio": 1,
    "runpod": 2,
    "suanjia": 2,
    "tensordock": 2,
    "ucloud": 1,
    "vastai": 2,
    "xiangongyun": 2,
}
"""RTX 4090 offers each provider lists in the default scene (RTX 4090D rows are another
model); the restock scene must keep every one of them, only sold out."""

_INFOS = provider_infos()
# Pages read in Chromium whatever the credentials. AutoDL also has a browser page, but only as
# its fallback without a token; with the demo token it reads its API.
BROWSER = sorted(p for p, info in _INFOS.items() if info.needs_browser and not info.auth_env)
API = sorted(p for p in _INFOS if p not in BROWSER)

GROUPS = [
    pytest.param(API, id="api"),
    pytest.param(BROWSER, id="browser", marks=pytest.mark.browser),
]


@pytest.fixture
def demo_credentials(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The dummy token `gpurent crawl --replay` gives every keyed spider (AutoDL's is passed
    to `crawl` itself, which never inherits AUTODL_TOKEN)."""
    for name, value in crawl_env(list(_INFOS), replay=True, demo_credentials=True):
        assert value is not None
        monkeypatch.setenv(name, value)
    yield


def crawl_step(providers: list[str], step: int, tmp_path: Path) -> dict[str, Crawl]:
    with (
        ReplayServer(scene="restock", step=step) as server,
        ThreadPoolExecutor(max_workers=MAX_PARALLEL_CRAWLS) as pool,
    ):
        # Feeds and reports are named after the provider: one folder holds them all.
        runs = pool.map(lambda p: crawl(p, server, tmp_path, token=REPLAY_DEMO_TOKEN), providers)
        return dict(zip(providers, runs, strict=True))


def gpu_offers(runs: dict[str, Crawl]) -> dict[tuple[str, str], dict[str, Any]]:
    """Every RTX 4090 offer of the runs, keyed (provider, offer_key), each run checked clean."""
    offers = {}
    for provider, run in runs.items():
        report = run.report
        assert run.returncode == 0, f"{provider}:\n{run.log[-2000:]}"
        assert report["errors"] == [] and report["layout_errors"] == [], (provider, report)
        assert report["offers"] > 0, provider
        offers.update({(provider, k): o for k, o in run.offers.items() if o["gpu_model"] == GPU})
    return offers


def test_groups_cover_every_provider_and_every_rtx_4090_lister() -> None:
    assert sorted(API + BROWSER) == sorted(_INFOS)
    assert BROWSER == ["gongji", "suanjia"]
    assert set(EXPECTED_4090_OFFERS) <= set(_INFOS)


@pytest.mark.parametrize("providers", GROUPS)
def test_step_1_every_rtx_4090_offer_is_sold_out(
    providers: list[str], tmp_path: Path, demo_credentials: None
) -> None:
    offers = gpu_offers(crawl_step(providers, 1, tmp_path))
    listed = {p: sum(1 for q, _ in offers if q == p) for p in providers}
    assert {p: n for p, n in listed.items() if n} == {
        p: n for p, n in EXPECTED_4090_OFFERS.items() if p in providers
    }
    not_sold_out = {k: (o["status"], o["available_count"]) for k, o in offers.items()
                    if o["status"] != "sold_out" or o["available_count"] not in (0, None)}  # fmt: skip
    assert not_sold_out == {}


@pytest.mark.parametrize("providers", GROUPS)
def test_step_2_frees_exactly_the_one_autodl_offer(
    providers: list[str], tmp_path: Path, demo_credentials: None
) -> None:
    offers = gpu_offers(crawl_step(providers, 2, tmp_path))
    assert len(offers) == sum(EXPECTED_4090_OFFERS.get(p, 0) for p in providers)
    rentable = {k: (o["status"], o["available_count"]) for k, o in offers.items()
                if o["status"] != "sold_out"}  # fmt: skip
    expected = {FREED: ("in_stock", 2)} if FREED[0] in providers else {}
    assert rentable == expected
