"""Truth under drift, end to end, c: one failing page. Real watch polls (the Prefect flow
`gpurent watch poll` runs, here in this process; one `scrapy crawl` process per provider,
the replay server, a DuckDB file, apprise to a local webhook) over a copy of the default
recordings spoilt at test time (`drift_kit`), every provider at once.

The module's world (`drift_world`) starts as the baseline poll left it, a watch on every
card; then one poll of the spoilt recordings and one poll of the default recordings again.
The two polls run once (a class fixture); the per-provider tests read them, so the test ids
say which provider keeps which promise. The other scenarios, the stock field renamed
everywhere (test_drift_renamed.py) and one broken item (test_drift_broken.py), are modules
with worlds of their own, so pytest-xdist (`--dist loadscope`) can run the three on
different workers. Rules of truth 2, 6, 7, 9 and 10 (the three modules together).
"""

from __future__ import annotations

import pytest

from tests.e2e.drift_kit import FAILING_PAGES
from tests.e2e.drift_world import PROVIDERS, DriftScenario, Round, state


class TestFailing(DriftScenario):
    scenario = "failing"

    @pytest.mark.parametrize("provider", PROVIDERS)
    def test_a_failing_page_keeps_its_offers_visible_with_their_age(
        self, provider: str, done: Round
    ) -> None:
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
