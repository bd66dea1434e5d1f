"""Truth under drift, end to end, b: one broken item. Real watch polls (the Prefect flow
`gpurent watch poll` runs, here in this process; one `scrapy crawl` process per provider,
the replay server, a DuckDB file, apprise to a local webhook) over a copy of the default
recordings spoilt at test time (`drift_kit`), every provider at once.

The module's world (`drift_world`) starts as the baseline poll left it, a watch on every
card; then one poll of the spoilt recordings and one poll of the default recordings again.
The two polls run once (a class fixture); the per-provider tests read them, so the test ids
say which provider keeps which promise. The other scenarios, the stock field renamed
everywhere (test_drift_renamed.py) and one failing page (test_drift_failing.py), are modules
with worlds of their own, so pytest-xdist (`--dist loadscope`) can run the three on
different workers. Rules of truth 2, 6, 7, 9 and 10 (the three modules together).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.drift_world import PROVIDERS, DriftScenario, Round, state


def _lines(rows: list[dict[str, Any]]) -> set[tuple[Any, str]]:
    return {(r.get("offer_key"), r["reason"]) for r in rows}


class TestBroken(DriftScenario):
    scenario = "broken"

    @pytest.mark.parametrize("provider", PROVIDERS)
    def test_one_broken_item_costs_exactly_that_item(self, provider: str, done: Round) -> None:
        poll = done.drift
        summary = poll.summary(provider)
        assert summary["status"] == "partial", summary
        new = _lines(poll.feed(provider, "quarantine")) - _lines(
            done.before.feed(provider, "quarantine")
        )
        reasons = {reason for _, reason in new}
        assert len(reasons) == 1 and all(reasons), new  # one bad cell, one problem
        keys = {key for key, _ in new}
        before, after = done.before.of(provider), poll.of(provider)
        seen = {(provider, r["offer_key"]) for r in poll.feed(provider, "offer")}
        lost = before.keys() - seen
        assert lost, "the broken item was an offer of the baseline"
        # One item may be several offers (a type in several regions): either one line whose
        # key every lost offer carries, or one line per lost offer; never a line for another
        # item.
        one = next(iter(keys)) if len(keys) == 1 else None
        per_offer = keys == {k[1] for k in lost}
        assert per_offer or (one is not None and all(one in k[1] for k in lost)), (keys, lost)
        assert after.keys() == before.keys(), "the quarantined item stays visible"
        assert {k: state(r) for k, r in after.items()} == {k: state(r) for k, r in before.items()}
        assert {k for k, r in after.items() if r["stale"]} == lost
        assert all(after[k]["observed_at"] == before[k]["observed_at"] for k in lost)
