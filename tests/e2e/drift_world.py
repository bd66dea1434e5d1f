"""Drift world: the warehouse the drift scenarios poll (tests/e2e/test_drift.py), its polls
and rounds.

One world serves the three scenarios: a DuckDB file, a folder for the spoilt recordings, a
webhook receiver. It starts with two watches (on every card with VRAM and on the RTX 4090)
and one watch poll of the default recordings, every provider at once: the baseline. Each
scenario's round is one poll of the spoilt recordings, then one poll of the default
recordings again (the repair), which the next round starts from. A world's state is its
files: the warehouse and each poll's feeds and run reports.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.cli_helpers import invoke, invoke_json
from tests.e2e.drift_kit import RENAMES, mutated_recordings
from tests.watch.watch_kit import Receiver, receiving

PROVIDERS = sorted(RENAMES)
OfferId = tuple[str, str]
DB_NAME = "gpurent.duckdb"


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


def offers(db: Path) -> dict[OfferId, dict[str, Any]]:
    """`gpurent offers --db DB`: every offer the warehouse shows, by provider and key."""
    rows = invoke_json("offers", "--db", str(db))
    return {(r["provider"], r["offer_key"]): r for r in rows}


@dataclass
class World:
    db: Path
    tmp: Path
    hook: Receiver
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
        return Poll(result, offers(self.db), self.db.parent / "feeds" / result["run_id"])

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
    """The world's outbox after the repair (every round's so far)."""
    posts: int
    """What the webhook received by then (every round's so far)."""


def run_round(world: World, scenario: str) -> Round:
    before = world.last
    drift = world.poll(mutated_recordings(world.tmp, scenario, PROVIDERS))
    repair = world.poll(None)
    world.last = repair
    return Round(before, drift, repair, world.outbox(), len(world.hook.received()))


# -- the world: its baseline, then rounds in the order the tests ask ------------


@contextmanager
def new_world(folder: Path) -> Iterator[World]:
    """A warehouse in ``folder`` with two watches (on every card with VRAM, so every poll
    crawls every provider, and on the RTX 4090) and its baseline poll of the default
    recordings (a fixture's body: needs the session's Prefect harness)."""
    db = folder / DB_NAME
    with receiving() as hook:
        invoke("watch", "add", "--min-vram", "1", "--notify", hook.url, "--db", str(db))
        invoke("watch", "add", "--gpu", "RTX 4090", "--notify", hook.url, "--db", str(db))
        empty = Poll({}, {}, folder)
        world = World(db, folder, hook, empty)
        baseline = world.poll(None)
        assert set(baseline.statuses) == set(PROVIDERS), baseline.statuses
        assert baseline.result["alerts"] == [], "a watch's first poll is its baseline"
        world.last = baseline
        yield world


class Rounds:
    """A world's rounds, each run the first time a test asks for it: one world serves
    every scenario, each round starting from the repair poll of the one before (a poll of
    the default recordings, as the baseline is)."""

    def __init__(self, world: World) -> None:
        self.world = world
        self._done: dict[str, Round] = {}

    def __call__(self, scenario: str) -> Round:
        if scenario not in self._done:
            self._done[scenario] = run_round(self.world, scenario)
        return self._done[scenario]
