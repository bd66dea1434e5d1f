"""Truth under drift, end to end: real watch polls (the Prefect flow `gpurent watch poll`
runs, here in this process; one `scrapy crawl` process per provider, the replay server, a
DuckDB file, apprise to a local webhook) over copies of the default recordings spoilt at
test time (`drift_kit`), every provider at once.

One database lives through: a baseline poll with a watch on every card; then per scenario
(stock field renamed everywhere, one broken item, one failing page) one poll of the spoilt
recordings and one poll of the default recordings again. Each scenario's two polls run once
(a module fixture); the per-provider tests read them, so the test ids say which provider
keeps which promise. Rules of truth 2, 6, 7, 9 and 10.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.cli_helpers import invoke, invoke_json
from tests.e2e.drift_kit import FAILING_PAGES, RENAMES, mutated_recordings
from tests.watch.watch_kit import Receiver, receiving

pytestmark = pytest.mark.prefect

PROVIDERS = sorted(RENAMES)
OfferId = tuple[str, str]


def state(row: dict[str, Any]) -> tuple[Any, ...]:
    """What a drift must never change about an offer."""
    return (row["status"], row["available_count"], row["price"], row["currency"])


@dataclass
class Poll:
    """One watch poll and what the warehouse shows after it."""

    result: dict[str, Any]
    offers: dict[OfferId, dict[str, Any]]
    feeds: Path

    @property
    def statuses(self) -> dict[str, str]:
        return {p["provider"]: p["status"] for p in self.result["providers"]}

    def summary(self, provider: str) -> dict[str, Any]:
        return next(p for p in self.result["providers"] if p["provider"] == provider)

    def report(self, provider: str) -> dict[str, Any]:
        path = self.feeds / f"{provider}.run.json"
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return data

    def feed(self, provider: str, kind: str) -> list[dict[str, Any]]:
        path = self.feeds / f"{provider}.jsonl"
        lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
        return [r for r in map(json.loads, lines) if r["kind"] == kind]

    def of(self, provider: str) -> dict[OfferId, dict[str, Any]]:
        return {k: r for k, r in self.offers.items() if k[0] == provider}


@dataclass
class World:
    db: Path
    tmp: Path
    hook: Receiver
    baseline: Poll
    last: Poll
    """The latest poll of the default recordings: the state a scenario starts from."""

    def poll(self, root: Path | None) -> Poll:
        """`gpurent watch poll --replay [ROOT] --db DB --format json`: the flow that command
        runs, with the command's arguments, run here against the session's Prefect API (a
        process of its own would add ~3 s of start-up a poll and prove nothing more: the
        command is run as a process in tests/watch/test_watch_readme.py), its answer read
        back as the command prints it."""
        from flows.watch import watch_poll
        from gpurent.cli.output import to_jsonable

        answer = watch_poll(
            db_path=self.db, work_dir=self.db.parent / "feeds", replay=True, replay_dir=root
        )
        result: dict[str, Any] = json.loads(json.dumps(to_jsonable(answer)))
        rows = invoke_json("offers", "--db", str(self.db))
        offers = {(r["provider"], r["offer_key"]): r for r in rows}
        return Poll(result, offers, self.db.parent / "feeds" / result["run_id"])

    def outbox(self) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = invoke_json("watch", "outbox", "--db", str(self.db))
        return rows


@dataclass
class Round:
    """A scenario's poll, then the repairing poll of the default recordings."""

    before: Poll
    drift: Poll
    repair: Poll
    outbox: list[dict[str, Any]]
    posts: int


@pytest.fixture(scope="module")
def world(prefect_harness: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp("drift")
    db = tmp / "gpurent.duckdb"
    with receiving() as hook:
        # Every card with VRAM: each provider's latest good run lists one, so every poll
        # crawls every provider; a second watch narrows to the commonest card.
        invoke("watch", "add", "--min-vram", "1", "--notify", hook.url, "--db", str(db))
        invoke("watch", "add", "--gpu", "RTX 4090", "--notify", hook.url, "--db", str(db))
        empty = World(db, tmp, hook, Poll({}, {}, tmp), Poll({}, {}, tmp))
        baseline = empty.poll(None)
        assert set(baseline.statuses) == set(PROVIDERS), baseline.statuses
        assert baseline.result["alerts"] == [], "a watch's first poll is its baseline"
        yield World(db, tmp, hook, baseline, baseline)


def run_round(world: World, scenario: str) -> Round:
    before = world.last
    drift = world.poll(mutated_recordings(world.tmp, scenario, PROVIDERS))
    repair = world.poll(None)
    world.last = repair
    return Round(before, drift, repair, world.outbox(), len(world.hook.received()))


@pytest.fixture(scope="module")
def renamed(world: World) -> Round:
    return run_round(world, "renamed")


@pytest.fixture(scope="module")
def broken(world: World) -> Round:
    return run_round(world, "broken")


@pytest.fixture(scope="module")
def failing(world: World) -> Round:
    return run_round(world, "failing")


SCENARIOS = ["renamed", "broken", "failing"]


# -- what holds for every scenario ----------------------------------------------


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_no_watch_fires_on_drift_nor_on_its_repair(
    scenario: str, request: pytest.FixtureRequest
) -> None:
    done: Round = request.getfixturevalue(scenario)
    assert done.drift.result["alerts"] == []
    assert done.repair.result["alerts"] == []
    assert done.outbox == [] and done.posts == 0


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_repair_poll_restores_fresh_rows(
    scenario: str, provider: str, world: World, request: pytest.FixtureRequest
) -> None:
    done: Round = request.getfixturevalue(scenario)
    assert done.repair.statuses[provider] == done.before.statuses[provider]
    before, after = done.before.of(provider), done.repair.of(provider)
    assert after.keys() == before.keys()
    assert {k: state(r) for k, r in after.items()} == {k: state(r) for k, r in before.items()}
    assert not [k for k, r in after.items() if r["stale"]]
    assert {r["run_id"] for r in after.values()} == {done.repair.result["run_id"]}


# -- a. the stock field renamed in every item --------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_renamed_stock_field_is_named_and_flips_no_state(
    provider: str, world: World, renamed: Round
) -> None:
    done = renamed
    poll = done.drift
    assert poll.statuses[provider] in ("layout_changed", "partial"), poll.summary(provider)
    report = poll.report(provider)
    named = " ".join([*report.get("missing_fields", []), *report["layout_errors"]])
    assert RENAMES[provider].expected_name in named, report
    before, after = done.before.of(provider), poll.of(provider)
    assert after.keys() == before.keys()
    assert {k: state(r) for k, r in after.items()} == {k: state(r) for k, r in before.items()}


# -- b. one broken item ------------------------------------------------------------


def _lines(rows: list[dict[str, Any]]) -> set[tuple[Any, str]]:
    return {(r.get("offer_key"), r["reason"]) for r in rows}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_one_broken_item_costs_exactly_that_item(
    provider: str, world: World, broken: Round
) -> None:
    done = broken
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
    # One item may be several offers (a type in several regions): either one line whose key
    # every lost offer carries, or one line per lost offer; never a line for another item.
    one = next(iter(keys)) if len(keys) == 1 else None
    per_offer = keys == {k[1] for k in lost}
    assert per_offer or (one is not None and all(one in k[1] for k in lost)), (keys, lost)
    assert after.keys() == before.keys(), "the quarantined item stays visible"
    assert {k: state(r) for k, r in after.items()} == {k: state(r) for k, r in before.items()}
    assert {k for k, r in after.items() if r["stale"]} == lost
    assert all(after[k]["observed_at"] == before[k]["observed_at"] for k in lost)


# -- c. one failing page -------------------------------------------------------------


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
