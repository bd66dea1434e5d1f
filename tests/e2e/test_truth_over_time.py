"""Rules of truth 10 and 11 at every provider, over two crawls of the `truth` replay scene.

Step 1 answers as the bundled recordings do. At step 2 each provider's listing (in its real
shape) has lost an offer, carries an unreadable item, says an offer is sold out in its own
words and, where the provider makes several requests, one request fails while the others
answer. Each provider's ``replay/recordings/truth/<provider>/expect.json`` says what the
warehouse must hold after step 2:

- ``gone``: offers no longer listed by a source that was read: closed, in no answer;
- ``sold_out``: offers the provider now calls sold out: listed, sold out, confirmed;
- ``stale``: offers whose source could not be read: listed with their step-1 state,
  stale, and never ranked by ``cheapest`` unless asked for.

The crawls are real `scrapy crawl` processes against the replay server, loaded by the
crawl flow's own load step (flows.nightly.load_and_track), without starting Prefect.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from flows.crawl import REPLAY_DEMO_TOKEN, CrawlOutcome, CrawlSpec, run_crawl
from flows.nightly import MAX_PARALLEL_CRAWLS, load_and_track
from flows.providers import provider_infos
from gpurent import api
from replay import ReplayServer
from replay.loader import default_root

SCENE = "truth"
SCENE_DIR = default_root() / SCENE

# Providers whose recordings do not allow the scene, and why (every other one must have it).
WITHOUT_TRUTH_SCENE: dict[str, str] = {}


@dataclass(frozen=True)
class Expect:
    status: str
    gone: frozenset[str]
    sold_out: frozenset[str]
    stale: frozenset[str]

    @classmethod
    def read(cls, provider: str) -> Expect:
        doc = json.loads((SCENE_DIR / provider / "expect.json").read_text(encoding="utf-8"))
        return cls(
            status=doc["status"],
            gone=frozenset(doc.get("gone", ())),
            sold_out=frozenset(doc.get("sold_out", ())),
            stale=frozenset(doc.get("stale", ())),
        )


def scene_providers() -> list[str]:
    return sorted(p.name for p in SCENE_DIR.iterdir() if (p / "expect.json").is_file())


def crawl(
    server: ReplayServer, providers: list[str], work: Path, run_id: str
) -> list[CrawlOutcome]:
    infos = provider_infos()
    env = tuple(
        (var, REPLAY_DEMO_TOKEN)
        for var in sorted({v for p in providers for v in infos[p].auth_env})
    )
    specs = [
        CrawlSpec(provider=p, run_id=run_id, work_dir=work, base_url=server.base_url(p), env=env)
        for p in providers
    ]
    with ThreadPoolExecutor(max_workers=MAX_PARALLEL_CRAWLS) as pool:
        return list(pool.map(run_crawl, specs))


@dataclass(frozen=True)
class Crawled:
    db: Path
    before: dict[tuple[str, str], Any]
    """Step 1's offers by (provider, offer_key)."""
    statuses: dict[str, str]
    """Step 2's run status by provider."""


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Crawled]:
    tmp = tmp_path_factory.mktemp("truth")
    db = tmp / "truth.duckdb"
    providers = scene_providers()
    with ReplayServer(scene=SCENE, step=1) as server:
        load_and_track(db, crawl(server, providers, tmp / "feeds", "truth-step-1"))
        before = {(o.provider, o.offer_key): o for o in api.offers(db=db)}
        server.set_state(step=2)
        second = load_and_track(db, crawl(server, providers, tmp / "feeds", "truth-step-2"))
    yield Crawled(db, before, {r.summary.provider: r.summary.status for r in second.runs})


def test_every_provider_has_a_truth_scene_or_says_why_not() -> None:
    assert set(scene_providers()) | set(WITHOUT_TRUTH_SCENE) == set(provider_infos())


@pytest.mark.parametrize("provider", scene_providers())
def test_a_listing_read_whole_closes_what_it_lost_and_keeps_only_what_it_could_not_read(
    crawled: Crawled, provider: str
) -> None:
    expect = Expect.read(provider)
    named = expect.gone | expect.sold_out | expect.stale
    assert named <= {k for p, k in crawled.before if p == provider}, "step 1 lists them all"
    assert crawled.statuses[provider] == expect.status
    now = {o.offer_key: o for o in api.offers(provider=provider, db=crawled.db)}
    assert not expect.gone & set(now), "an offer no longer listed is closed"
    for key in expect.sold_out:
        assert (now[key].status, now[key].stale) == ("sold_out", False), key
    for key in expect.stale:
        was = crawled.before[(provider, key)]
        assert now[key].stale, key
        assert (now[key].status, now[key].price) == (was.status, was.price), key
    # Everything else listed at step 2 is confirmed.
    assert {k for k, o in now.items() if o.stale} == expect.stale


@pytest.mark.parametrize("provider", scene_providers())
def test_only_confirmed_offers_are_ranked(crawled: Crawled, provider: str) -> None:
    expect = Expect.read(provider)
    ranked = [o for o in api.cheapest(1, limit=None, db=crawled.db) if o.provider == provider]
    keys = {o.offer_key for o in ranked}
    assert not keys & (expect.gone | expect.sold_out | expect.stale)
    assert not any(o.stale for o in ranked)
