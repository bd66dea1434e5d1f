"""Drift world: the warehouse a drift scenario module polls, its polls, and the checks
every scenario shares (tests/e2e/test_drift_renamed.py, test_drift_broken.py,
test_drift_failing.py).

Each scenario module has a world of its own: a DuckDB file, a folder for the spoilt
recordings, a webhook receiver. It starts from the baseline: two watches (on every card
with VRAM and on the RTX 4090) and one watch poll of the default recordings, every provider
at once. That poll is the same for every module, so it runs once per test run: the first
module to ask builds it (a file lock lets the other pytest-xdist workers wait for it), and
every module polls a copy of its DuckDB file, its watches pointed at the module's own
receiver. A world's state is its files: the warehouse (closed after the poll: its DuckDB
file, and a write-ahead log if one is left) and the poll's feeds and run reports (read,
never written, by the modules). Then the module runs its scenario's round: one poll of
the spoilt recordings and one poll of the default recordings again.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest

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
    posts: int


def run_round(world: World, scenario: str) -> Round:
    before = world.last
    drift = world.poll(mutated_recordings(world.tmp, scenario, PROVIDERS))
    repair = world.poll(None)
    world.last = repair
    return Round(before, drift, repair, world.outbox(), len(world.hook.received()))


# -- the baseline, once per test run; a world of a module's own ----------------------


def _baseline_poll(folder: Path) -> dict[str, Any]:
    """Add the watches to a new warehouse in `folder` and poll once; the poll's answer."""
    db = folder / DB_NAME
    with receiving() as hook:
        # Every card with VRAM: each provider's latest good run lists one, so every poll
        # crawls every provider; a second watch narrows to the commonest card.
        invoke("watch", "add", "--min-vram", "1", "--notify", hook.url, "--db", str(db))
        invoke("watch", "add", "--gpu", "RTX 4090", "--notify", hook.url, "--db", str(db))
        empty = World(db, folder, hook, Poll({}, {}, folder), Poll({}, {}, folder))
        baseline = empty.poll(None)
        assert set(baseline.statuses) == set(PROVIDERS), baseline.statuses
        assert baseline.result["alerts"] == [], "a watch's first poll is its baseline"
    return baseline.result


def _shared_baseline(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """The baseline warehouse (closed) and its poll's answer: built by the first module of
    this test run that asks, in a folder every pytest-xdist worker of the run shares (the
    parent of a worker's base temp folder; without xdist, the base temp folder itself)."""
    base = tmp_path_factory.getbasetemp()
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "drift-baseline"
    root.mkdir(exist_ok=True)
    folder, answer = root / "world", root / "answer.json"
    with (root / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        if not answer.is_file():
            shutil.rmtree(folder, ignore_errors=True)  # what a failed attempt left
            folder.mkdir()
            answer.write_text(json.dumps(_baseline_poll(folder)), encoding="utf-8")
    result: dict[str, Any] = json.loads(answer.read_text(encoding="utf-8"))
    return folder / DB_NAME, result


@contextmanager
def new_world(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[World]:
    """A world of the calling module's own, as the baseline poll left it (a module fixture's
    body: needs the session's Prefect harness)."""
    from warehouse.db import writing

    shared_db, result = _shared_baseline(tmp_path_factory)
    tmp = tmp_path_factory.mktemp(f"drift-{name}")
    db = tmp / DB_NAME
    for suffix in ("", ".wal"):  # DuckDB checkpoints on close; a WAL left is copied too
        if shared_db.with_name(DB_NAME + suffix).is_file():
            shutil.copyfile(shared_db.with_name(DB_NAME + suffix), db.with_name(DB_NAME + suffix))
    with receiving() as hook:
        with writing(db) as con:
            row = con.execute("UPDATE watches SET notify_urls = ?", [[hook.url]]).fetchone()
        assert row is not None and row[0] == 2, f"the two watches, not {row}"
        # The baseline's feeds stay where its poll wrote them (the scenario reads them).
        baseline = Poll(result, offers(db), shared_db.parent / "feeds" / result["run_id"])
        yield World(db, tmp, hook, baseline, baseline)


# -- what holds for every scenario ----------------------------------------------


@pytest.mark.prefect
class DriftScenario:
    """A scenario's world, its round, and the tests every scenario passes. A scenario module
    subclasses it (``class TestRenamed(DriftScenario): scenario = "renamed"``) and adds its
    own tests, which read the class fixtures ``world`` and ``done``: a world and a round per
    scenario, built once; pytest-xdist (``--dist loadscope``) runs each class on one worker,
    the three scenarios on different ones."""

    scenario: ClassVar[str]

    # Class methods: a class fixture defined on the instance is deprecated in pytest 9.
    @pytest.fixture(scope="class")
    @classmethod
    def world(
        cls, prefect_harness: None, tmp_path_factory: pytest.TempPathFactory
    ) -> Iterator[World]:
        with new_world(tmp_path_factory, cls.scenario) as built:
            yield built

    @pytest.fixture(scope="class")
    @classmethod
    def done(cls, world: World) -> Round:
        return run_round(world, cls.scenario)

    def test_no_watch_fires_on_drift_nor_on_its_repair(self, done: Round) -> None:
        assert done.drift.result["alerts"] == []
        assert done.repair.result["alerts"] == []
        assert done.outbox == [] and done.posts == 0

    @pytest.mark.parametrize("provider", PROVIDERS)
    def test_the_repair_poll_restores_fresh_rows(self, provider: str, done: Round) -> None:
        """The repair poll restores the provider's fresh rows, as they were before."""
        assert done.repair.statuses[provider] == done.before.statuses[provider]
        before, after = done.before.of(provider), done.repair.of(provider)
        assert after.keys() == before.keys()
        assert {k: state(r) for k, r in after.items()} == {k: state(r) for k, r in before.items()}
        assert not [k for k, r in after.items() if r["stale"]]
        assert {r["run_id"] for r in after.values()} == {done.repair.result["run_id"]}
