"""Truth under drift, end to end, c: one failing page. Real watch polls (the Prefect flow
`gpurent watch poll` runs, here in this process; one `scrapy crawl` process per provider,
the replay server, a DuckDB file, apprise to a local webhook) over a copy of the default
recordings spoilt at test time (`drift_kit`), every provider at once.

The module's world (`drift_world`) starts as the baseline poll left it, a watch on every
card; then one poll of the spoilt recordings and one poll of the default recordings again.
The two polls run once (a module fixture); the per-provider tests read them, so the test ids
say which provider keeps which promise. The other scenarios, the stock field renamed
everywhere (test_drift_renamed.py) and one broken item (test_drift_broken.py), are modules
with worlds of their own, so pytest-xdist (`--dist loadscope`) can run the three on
different workers. Rules of truth 2, 6, 7, 9 and 10 (the three modules together).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.drift_kit import FAILING_PAGES
from tests.e2e.drift_world import (
    PROVIDERS,
    Round,
    World,
    check_no_watch_fired,
    check_repair_restored,
    new_world,
    run_round,
    state,
)

pytestmark = pytest.mark.prefect


@pytest.fixture(scope="module")
def world(prefect_harness: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with new_world(tmp_path_factory, "failing") as built:
        yield built


@pytest.fixture(scope="module")
def failing(world: World) -> Round:
    return run_round(world, "failing")


def test_no_watch_fires_on_drift_nor_on_its_repair(failing: Round) -> None:
    check_no_watch_fired(failing)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_repair_poll_restores_fresh_rows(provider: str, failing: Round) -> None:
    check_repair_restored(failing, provider)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_failing_page_keeps_its_offers_visible_with_their_age(
    provider: str, world: World, failing: Round
) -> None:
    done = failing
    poll = done.drift
    summary = poll.summary(provider)
    assert summary["status"] in FAILING_PAGES[provider].statuses, summary
    assert poll.report(provider)["requests_gave_up"] >= 1
    before, after = done.before.of(provider), poll.of(provider)
    assert after.keys() == before.keys()
    assert {k: state(r) for k, r in after.items()} == {k: state(r) for k, r in before.items()}
    seen = {(provider, r["offer_key"]) for r in poll.feed(provider, "offer")}
    unseen = before.keys() - seen
    assert unseen, "the failing page held offers"
    for k in unseen:
        assert after[k]["observed_at"] == before[k]["observed_at"], k
        assert after[k]["age_s"] is not None and after[k]["age_s"] >= 0, k
    if summary["status"] == "partial":
        assert {k for k, r in after.items() if r["stale"]} == unseen
