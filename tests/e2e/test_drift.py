"""Truth under drift, end to end: real watch polls (the Prefect flow `gpurent watch poll`
runs, here in this process; one `scrapy crawl` process per provider, the replay server, a
DuckDB file, apprise to a local webhook) over copies of the default recordings spoilt at
test time (`drift_kit`), every provider at once, in three scenarios:

- renamed: the stock field renamed everywhere;
- broken: one item broken;
- failing: one page failing.

One world (`drift_world`) runs them in a row: its baseline poll, then per scenario one poll
of the spoilt recordings and one of the default recordings again (the repair), each round
run once (the first test that asks for it) and read by per-provider tests, so the test ids
say which provider keeps which promise. One class, so pytest-xdist (`--dist loadscope`)
gives the seven polls to one worker, which starts them first (the class holds the most
tests) and needs no other worker's baseline. Rules of truth 2, 6, 7, 9 and 10.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.drift_kit import FAILING_PAGES, RENAMES
from tests.e2e.drift_world import PROVIDERS, Rounds, new_world, state

SCENARIOS = ("renamed", "broken", "failing")


def _lines(rows: list[dict[str, Any]]) -> set[tuple[Any, str]]:
    return {(r.get("offer_key"), r["reason"]) for r in rows}


@pytest.mark.prefect
class TestDrift:
    @pytest.fixture(scope="class")
    @classmethod
    def rounds(
        cls, prefect_harness: None, tmp_path_factory: pytest.TempPathFactory
    ) -> Iterator[Rounds]:
        with new_world(tmp_path_factory.mktemp("drift")) as world:
            yield Rounds(world)

    @pytest.mark.parametrize("provider", PROVIDERS)
    def test_a_renamed_stock_field_is_named_and_flips_no_state(
        self, provider: str, rounds: Rounds
    ) -> None:
        done = rounds("renamed")
        poll = done.drift
        assert poll.statuses[provider] in ("layout_changed", "partial"), poll.summary(provider)
        report = poll.report(provider)
        named = " ".join([*report.get("missing_fields", []), *report["layout_errors"]])
        assert RENAMES[provider].expected_name in named, report
        before, after = done.before.of(provider), poll.of(provider)
        assert after.keys() == before.keys()
        assert {k: state(r) for k, r in after.items()} == {k: state(r) for k, r in before.items()}

    @pytest.mark.parametrize("provider", PROVIDERS)
    def test_one_broken_item_costs_exactly_that_item(self, provider: str, rounds: Rounds) -> None:
        done = rounds("broken")
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

    @pytest.mark.parametrize("provider", PROVIDERS)
    def test_a_failing_page_keeps_its_offers_visible_with_their_age(
        self, provider: str, rounds: Rounds
    ) -> None:
        done = rounds("failing")
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

    # What holds in every scenario. A round starts from whatever poll of the default
    # recordings came last, so the order the rounds run in changes nothing.

    @pytest.mark.parametrize("scenario", SCENARIOS)
    def test_no_watch_fires_on_drift_nor_on_its_repair(self, scenario: str, rounds: Rounds) -> None:
        done = rounds(scenario)
        assert done.drift.result["alerts"] == []
        assert done.repair.result["alerts"] == []
        assert done.outbox == [] and done.posts == 0

    @pytest.mark.parametrize("provider", PROVIDERS)
    @pytest.mark.parametrize("scenario", SCENARIOS)
    def test_the_repair_poll_restores_fresh_rows(
        self, scenario: str, provider: str, rounds: Rounds
    ) -> None:
        """The repair poll restores the provider's fresh rows, as they were before."""
        done = rounds(scenario)
        assert done.repair.statuses[provider] == done.before.statuses[provider]
        before, after = done.before.of(provider), done.repair.of(provider)
        assert after.keys() == before.keys()
        assert {k: state(r) for k, r in after.items()} == {k: state(r) for k, r in before.items()}
        assert not [k for k, r in after.items() if r["stale"]]
        assert {r["run_id"] for r in after.values()} == {done.repair.result["run_id"]}
