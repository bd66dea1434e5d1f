"""The poll loop: crawl the replay server, load, evaluate the watches, ask gpurent, check.

Every part is the real one: the spiders crawl over HTTP on loopback in a Scrapy process of
their own (one process for the poll's providers, ``crawl_child``, or one per provider through
``flows.crawl.run_crawl``), each run is classified and loaded by ``flows.nightly
.load_and_track`` into a DuckDB file, ``warehouse.watch.evaluate_watches`` runs the alert
state machine and writes the outbox, and the answers come from ``gpurent.api`` (what the
``offers`` and ``cheapest`` commands print). No Prefect flow is started (its ephemeral
server costs 15-20 s a poll); these are the functions the flows call.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from benchmarks.market_sim.adapters import adapters
from benchmarks.market_sim.checks import CHECKS, Answers, Checks, Row
from benchmarks.market_sim.oracle import Cause, Knowledge, Pair, View, WatchOracle, WatchSpec
from benchmarks.market_sim.scene import SCENE, SceneWriter
from benchmarks.market_sim.truth import FaultKind, Market, ProviderPoll

ROOT = Path(__file__).resolve().parents[2]
WATCH_CARDS = (1, 2)
"""One watch per card count, each on every card of at least 1 GB at every provider: the
2-card one sees per-card offers whose free count does or does not cover it, and machines it
cannot rent."""
NOTIFY = "json://127.0.0.1:9/market-sim"
"""Never delivered: the outbox rows are what the checks read (through the evaluation)."""
CRAWL_MODES = ("process", "processes")
CRAWL_TIMEOUT_S = 600


@dataclass(frozen=True)
class Config:
    polls: int = 200
    seed: int = 20261204
    providers: tuple[str, ...] | None = None
    target: int = 10
    """Offers per provider the market keeps about."""
    crawl: str = "process"
    """``process``: one Scrapy process per poll; ``processes``: one per provider."""
    work_dir: Path | None = None
    """Keep the recordings, feeds and warehouse here (default: a temporary folder)."""


@dataclass
class Result:
    config: Config
    providers: list[str]
    checks: Checks
    events: Counter[str]
    statuses: Counter[str]
    timings: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    polls: int = 0

    @property
    def violations(self) -> dict[str, int]:
        return {name: self.checks[name].violations for name in CHECKS}

    @property
    def opportunities(self) -> dict[str, int]:
        return {name: self.checks[name].opportunities for name in CHECKS}

    def headline(self) -> dict[str, Any]:
        return {
            "polls": self.polls,
            "providers": len(self.providers),
            "seconds": round(self.seconds, 1),
            "seconds_per_poll": round(self.seconds / self.polls, 2) if self.polls else None,
            "crawl": self.config.crawl,
            "seed": self.config.seed,
            "violations": self.violations,
            "opportunities": self.opportunities,
        }

    def report(self) -> list[str]:
        """The result in lines: each check "V of O", its first violations, the events."""
        lines = [
            f"market over time: {self.polls} polls x {len(self.providers)} providers "
            f"({', '.join(self.providers)}), seed {self.config.seed}, "
            f"{self.seconds:.0f} s ({self.seconds / max(self.polls, 1):.1f} s a poll, "
            f"crawl: {self.config.crawl})",
            "  time: "
            + ", ".join(f"{k} {v:.0f} s" for k, v in self.timings.items())
            + " (crawl: waiting for it; one process a poll crawls during the load before)",
            "  events: " + ", ".join(f"{k} {v}" for k, v in sorted(self.events.items())),
            "  runs: " + ", ".join(f"{k} {v}" for k, v in sorted(self.statuses.items())),
        ]
        for name in CHECKS:
            tally = self.checks[name]
            by = (
                f" ({', '.join(f'{k} {v}' for k, v in sorted(tally.by.items()))})"
                if tally.by
                else ""
            )
            lines.append(f"  {name}: {tally.line()} violations{by}")
            lines.extend(f"      {example}" for example in tally.examples)
        return lines


def run(config: Config, *, progress: bool = False) -> Result:
    if config.crawl not in CRAWL_MODES:
        raise ValueError(f"crawl must be one of {CRAWL_MODES}, got {config.crawl!r}")
    with _work_dir(config.work_dir) as work:
        return _run(config, work, progress=progress)


@contextmanager
def _work_dir(kept: Path | None) -> Iterator[Path]:
    if kept is not None:
        kept.mkdir(parents=True, exist_ok=True)
        for ours in ("recordings", "runs"):  # a previous run's, never anything else
            shutil.rmtree(kept / ours, ignore_errors=True)
        for name in ("market.duckdb", "market.duckdb.wal"):
            (kept / name).unlink(missing_ok=True)
        yield kept
        return
    with tempfile.TemporaryDirectory(prefix="gpurent-market-") as tmp:
        yield Path(tmp)


def _run(config: Config, work: Path, *, progress: bool) -> Result:
    from flows.nightly import load_and_track
    from replay import Fault, ReplayServer

    started = time.perf_counter()
    chosen = adapters(list(config.providers) if config.providers else None)
    names = [a.name for a in chosen]
    market = Market(chosen, seed=config.seed, target=config.target)
    writer = SceneWriter(work / "recordings", chosen)
    listings: list[list[ProviderPoll]] = []
    for _ in range(config.polls):
        poll = market.poll()
        listings.append(poll)
        for listing in poll:
            writer.add(listing)
    recordings = writer.finish()
    db = work / "market.duckdb"
    watches = _add_watches(db)
    knowledge = {a.name: Knowledge(a) for a in chosen}
    oracle = WatchOracle(watches)
    checks = Checks(len(watches))
    statuses: Counter[str] = Counter()
    timings = dict.fromkeys(("scene", "crawl", "load", "watches", "answers", "checks"), 0.0)
    timings["scene"] = time.perf_counter() - started
    tokens, env = _crawl_env(names)
    with ReplayServer(root=recordings, scene=SCENE, step=1) as server:

        def start(index: int) -> _Crawl:
            server.set_state(SCENE, index)
            for listing in listings[index - 1]:
                if listing.fault is not None and listing.fault.kind is FaultKind.OUTAGE:
                    server.add_fault(Fault(listing.provider, "*", status=503))
            run_id = f"market-{config.seed}-p{index:04d}"
            return _Crawl.start(config.crawl, server, names, run_id, work / "runs", tokens, env)

        crawl = start(1)
        for index, poll in enumerate(listings, start=1):
            tick = time.perf_counter()
            outcomes = crawl.finish()
            server.clear_faults()
            if index < len(listings):
                # The next poll crawls while this one loads and is checked (one process a
                # poll): the crawler writes only its feeds, the loads below are the
                # warehouse's one writer.
                crawl = start(index + 1)
            timings["crawl"] += (tock := time.perf_counter()) - tick
            loaded = load_and_track(db, outcomes)
            timings["load"] += (tick := time.perf_counter()) - tock
            alerts = _evaluate(db, outcomes[0].run_id)
            timings["watches"] += (tock := time.perf_counter()) - tick
            got = _answers(db, alerts, loaded.runs)
            statuses.update(got.statuses.values())
            timings["answers"] += (tick := time.perf_counter()) - tock
            views: dict[str, View] = {}
            fires: dict[Pair, Cause] = {}
            for listing in poll:
                view = knowledge[listing.provider].advance(listing)
                views[listing.provider] = view
                fires.update(oracle.advance(view))
            checks.poll(index, views, fires, got)
            timings["checks"] += time.perf_counter() - tick
            if progress:
                bad = sum(t.violations for t in checks.tallies.values())
                faults = [f"{lst.provider}:{lst.fault.kind.value}" for lst in poll if lst.fault]
                print(
                    f"poll {index}/{config.polls}: {time.perf_counter() - started:.0f} s, "
                    f"{len(alerts)} alert(s), violations so far {bad}"
                    + (f", faults {' '.join(faults)}" if faults else ""),
                    file=sys.stderr,
                    flush=True,
                )
    return Result(
        config=config,
        providers=names,
        checks=checks,
        events=market.events,
        statuses=statuses,
        timings=timings,
        seconds=time.perf_counter() - started,
        polls=config.polls,
    )


def _add_watches(db: Path) -> list[WatchSpec]:
    from gpurent_core.model import utcnow
    from warehouse.db import connect
    from warehouse.watch.store import add_watch

    con = connect(db)
    try:
        made = [
            add_watch(con, created_at=utcnow(), notify_urls=[NOTIFY], min_vram_gb=1, gpu_count=n)
            for n in WATCH_CARDS
        ]
    finally:
        con.close()
    return [WatchSpec(w.watch_id, w.gpu_count) for w in made]


Tokens = tuple[tuple[str, str | None], ...]


def _crawl_env(providers: list[str]) -> tuple[Tokens, dict[str, str]]:
    """The crawlers' credentials as the flow sets them for a replay crawl (the demo token for
    every variable they read: the recorded routes only check that the header is there; never
    a real secret), and the whole environment of a one-process crawl."""
    from flows.nightly import crawl_env

    tokens = crawl_env(providers, replay=True, demo_credentials=True)
    env = dict(os.environ)
    env["SCRAPY_SETTINGS_MODULE"] = "spiders.settings"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    for name, value in tokens:
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return tokens, env


class _Crawl:
    """One poll's crawl: started, then finished (its outcomes, one per provider)."""

    def __init__(self, outcomes: list[Any], proc: subprocess.Popen[bytes] | None = None) -> None:
        self.outcomes = outcomes
        self.proc = proc

    @classmethod
    def start(
        cls,
        mode: str,
        server: Any,
        providers: list[str],
        run_id: str,
        runs: Path,
        tokens: Tokens,
        env: dict[str, str],
    ) -> _Crawl:
        from flows.crawl import CrawlOutcome, CrawlSpec, run_crawl
        from gpurent_core.model import utcnow

        if mode == "processes":  # as the flow crawls: `scrapy crawl` per provider (from ROOT)
            return cls(
                [
                    run_crawl(CrawlSpec(p, run_id, runs, base_url=server.base_url(p), env=tokens))
                    for p in providers
                ]
            )
        run_dir = runs / run_id
        run_dir.mkdir(parents=True, exist_ok=True)
        log = run_dir / "crawl.log"
        spec = {
            "run_id": run_id,
            "log": str(log),
            "crawls": [
                {
                    "provider": p,
                    "base_url": server.base_url(p),
                    "feed": str(run_dir / f"{p}.jsonl"),
                    "report": str(run_dir / f"{p}.run.json"),
                }
                for p in providers
            ],
        }
        spec_path = run_dir / "crawl.json"
        spec_path.write_text(json.dumps(spec), encoding="utf-8")
        started = utcnow()
        with log.with_suffix(".stderr").open("wb") as stderr:
            proc = subprocess.Popen(
                [sys.executable, "-m", "benchmarks.market_sim.crawl_child", str(spec_path)],
                cwd=ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=stderr,
                stderr=stderr,
            )
        outcomes = [
            CrawlOutcome(
                provider=p,
                run_id=run_id,
                started_at=started,
                finished_at=started,  # set by finish()
                returncode=None,
                feed_path=run_dir / f"{p}.jsonl",
                report_path=run_dir / f"{p}.run.json",
                log_path=log,
            )
            for p in providers
        ]
        return cls(outcomes, proc)

    def finish(self) -> list[Any]:
        from gpurent_core.model import utcnow

        if self.proc is None:
            return self.outcomes
        try:
            code: int | None = self.proc.wait(timeout=CRAWL_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            code = None
        finished = utcnow()
        return [replace(o, finished_at=finished, returncode=code) for o in self.outcomes]


def _evaluate(db: Path, run_id: str) -> set[Pair]:
    """The alerts this poll's runs raise (the evaluation writes them to the outbox)."""
    from gpurent_core.model import utcnow
    from warehouse.db import connect
    from warehouse.watch.evaluate import evaluate_watches

    con = connect(db)
    try:
        evaluation = evaluate_watches(con, now=utcnow())
    finally:
        con.close()
    late = [a for a in evaluation.alerts if a.run_id != run_id]
    if late:  # every poll is evaluated right after its load: nothing older can be pending
        raise RuntimeError(f"alerts from earlier runs in this poll's evaluation: {late[:3]}")
    return {(a.watch_id, a.provider, a.offer_key) for a in evaluation.alerts}


def _answers(db: Path, alerts: set[Pair], runs: list[Any]) -> Answers:
    from gpurent import api

    return Answers(
        offers=[Row.of(o) for o in api.offers(db=db)],
        in_stock=[Row.of(o) for o in api.offers(in_stock=True, db=db)],
        ranked=[Row.of(o) for o in api.cheapest(1, limit=None, db=db)],
        alerts=alerts,
        reports={r.outcome.provider: r.outcome.report() for r in runs},
        statuses={r.outcome.provider: r.summary.status for r in runs},
    )
