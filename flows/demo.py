"""Demo history: a month of synthetic-but-shaped polls, so the index, history and dashboard
show something on first run (``gpurent demo``).

The history is SYNTHETIC. What is real: the offers themselves. The bundled recordings are
crawled once, for real (each spider in its own ``scrapy crawl`` process against the local
replay server, no Prefect), and their offers are the templates. What is made up: how those
offers move over the past days. For every poll of every day, each offer gets a seeded,
deterministic variation (its price drifts a little each day; its stock flips, a provider's
cards of one GPU mostly rented out by day and free at night in China; a provider run fails
now and then), is written as a
feed in the staging-contract shape and loaded through ``warehouse.load.load_run`` with the
run's times on that day, exactly as a crawl would load it. The last poll, today, is the
recordings as crawled, so ``offers`` and ``cheapest`` show the bundled data.

Same seed, same templates, same ``now``: same database.
"""

from __future__ import annotations

import json
import random
import shutil
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any

from flows.crawl import REPLAY_DEMO_TOKEN, CrawlOutcome, CrawlSpec, run_crawl
from flows.health import classify_run
from flows.providers import provider_infos
from gpurent_core.model import OfferRecord, ProviderRun, RunStatus, StockStatus, parse_feed_line
from replay import ReplayServer
from warehouse.db import connect
from warehouse.load import LOADING_STATUSES, load_run

DEFAULT_DAYS = 30
DEFAULT_POLLS_PER_DAY = 3
DEFAULT_SEED = 20261101
# How often a synthetic provider run fails (the state then stays as it was: rule 2).
FAIL_RATE = 0.02
# Chance that a provider's whole line of one GPU is rented out at a poll, by hour in
# Asia/Shanghai (demand moves together: by day most cards are taken, at night they free up),
# and the chance that an offer of a line that is not rented out has a card free.
BUSY_BY_DAY = 0.85
BUSY_AT_NIGHT = 0.1
NIGHT_HOURS_CST = range(1, 8)
FREE_WHEN_NOT_BUSY = 0.6
MAX_PARALLEL_CRAWLS = 3

Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)``: ``crawl`` (providers crawled for the templates), then
``polls`` (synthetic polls loaded, today's live one last). Called after each step."""


class DemoError(RuntimeError):
    """The demo could not be built (no recordings crawled, database already there)."""


@dataclass(frozen=True)
class DemoSummary:
    db: Path
    providers: tuple[str, ...]
    first_day: date
    last_day: date
    runs: int
    failed_runs: int
    offers_per_poll: int


def build_demo_history(
    db_path: Path,
    *,
    days: int = DEFAULT_DAYS,
    polls_per_day: int = DEFAULT_POLLS_PER_DAY,
    seed: int = DEFAULT_SEED,
    now: datetime | None = None,
    providers: list[str] | None = None,
    replay_dir: Path | None = None,
    progress: Progress | None = None,
) -> DemoSummary:
    """Crawl the recordings once, then load ``days`` days of varied polls and today's real
    one into a new database at ``db_path`` (which must not exist yet); ``progress`` hears
    of each provider crawled and each poll loaded."""
    if days < 1 or polls_per_day < 1:
        raise DemoError("days and polls per day must be at least 1")
    if db_path.exists():
        raise DemoError(f"{db_path} already exists: the demo builds a fresh database")
    now = (now or datetime.now(UTC)).astimezone(UTC)
    with _scratch() as work:
        templates = crawl_templates(
            work / "crawl", providers=providers, replay_dir=replay_dir, progress=progress
        )
        if not templates:
            raise DemoError("no provider's recordings could be crawled; see the crawl logs")
        con = connect(db_path)
        try:
            runs = failed = 0
            rng_root = f"{seed}"
            total = days * polls_per_day + 1  # and today's live poll
            for done, when in enumerate(poll_times(now, days, polls_per_day), start=1):
                stamp = when.strftime("%Y%m%dT%H%MZ")
                for provider, records in sorted(templates.items()):
                    rng = random.Random(f"{rng_root}/{provider}/{stamp}")
                    run = _run(provider, f"demo-{stamp}", when, failed=rng.random() < FAIL_RATE)
                    feed = None
                    if run.status is RunStatus.OK:
                        lines = [vary(r, run, when, seed) for r in records]
                        feed = _write(work / "feeds" / f"{run.run_id}-{provider}.jsonl", lines)
                    load_run(con, run, feed)
                    runs += 1
                    failed += run.status is RunStatus.FAILED
                if progress is not None:
                    progress("polls", done, total)
            today = f"demo-{now.strftime('%Y%m%dT%H%MZ')}-live"
            for provider, records in sorted(templates.items()):
                run = _run(provider, today, now, failed=False)
                lines = [_as_of(r, run, now) for r in records]
                load_run(con, run, _write(work / "feeds" / f"{today}-{provider}.jsonl", lines))
                runs += 1
            if progress is not None:
                progress("polls", total, total)
        finally:
            con.close()
    first = (now - timedelta(days=days)).date()
    return DemoSummary(
        db=db_path,
        providers=tuple(sorted(templates)),
        first_day=first,
        last_day=now.date(),
        runs=runs,
        failed_runs=failed,
        offers_per_poll=sum(len(r) for r in templates.values()),
    )


def poll_times(now: datetime, days: int, polls_per_day: int) -> Iterator[datetime]:
    """Polls on each of the ``days`` days before ``now``'s day, evenly spaced, the grid
    shifted by an hour a day so that over a month every hour of the day gets polled."""
    spacing = timedelta(hours=24) / polls_per_day
    today = datetime.combine(now.date(), time(), UTC)
    for back in range(days, 0, -1):
        start = today - timedelta(days=back) + timedelta(hours=back % max(1, 24 // polls_per_day))
        for k in range(polls_per_day):
            yield start + k * spacing + timedelta(minutes=7)


def vary(record: OfferRecord, run: ProviderRun, when: datetime, seed: int) -> str:
    """The template offer as a poll at ``when`` might have seen it (deterministic)."""
    key = f"{seed}/{record.provider}/{record.offer_key}"
    day = (when.date() - date(2000, 1, 1)).days
    update: dict[str, Any] = {"price": _drifted(record.price, key, day)}
    if record.status is not StockStatus.UNKNOWN:  # unknown stays unknown: rule of truth 1
        hour_cst = (when + timedelta(hours=8)).hour
        busy_chance = BUSY_AT_NIGHT if hour_cst in NIGHT_HOURS_CST else BUSY_BY_DAY
        line = f"{seed}/{record.provider}/{record.gpu_model}/{when.isoformat()}"
        busy = random.Random(line).random() < busy_chance
        draw = random.Random(f"{key}/{when.isoformat()}")
        free = not busy and draw.random() < FREE_WHEN_NOT_BUSY
        status = StockStatus.IN_STOCK if free else StockStatus.SOLD_OUT
        count = record.available_count
        if count is not None:
            count = draw.randint(1, max(1, record.gpu_count, count)) if free else 0
            if free and count == 1 and record.gpu_count > 1:
                status = StockStatus.LOW
        update |= {"status": status, "available_count": count}
    return _as_of(record.model_copy(update=update), run, when)


@lru_cache(maxsize=65536)
def _drift(key: str, day: int) -> Decimal:
    """A bounded random walk: +-2% steps a day, never beyond +-25% of the recorded price;
    a 60-day cycle keeps it short and repeatable."""
    factor = Decimal(1)
    walk = random.Random(key)
    for _ in range(day % 60):
        step = Decimal(walk.randint(-20, 20)) / 1000
        factor = min(Decimal("1.25"), max(Decimal("0.75"), factor * (1 + step)))
    return factor


def _drifted(price: Decimal, key: str, day: int) -> Decimal:
    factor = _drift(key, day)
    exponent = price.as_tuple().exponent
    places = max(2, -exponent if isinstance(exponent, int) else 2)
    return (price * factor).quantize(Decimal(1).scaleb(-places))


def _as_of(record: OfferRecord, run: ProviderRun, when: datetime) -> str:
    moved = record.model_copy(
        update={"run_id": run.run_id, "observed_at": when + timedelta(seconds=20)}
    )
    return moved.model_dump_json()


def _run(provider: str, run_id: str, when: datetime, *, failed: bool) -> ProviderRun:
    return ProviderRun(
        run_id=run_id,
        provider=provider,
        started_at=when,
        finished_at=when + timedelta(seconds=45),
        status=RunStatus.FAILED if failed else RunStatus.OK,
        message="demo: synthetic outage (HTTP 503)" if failed else "demo: synthetic poll",
    )


def _write(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@contextmanager
def _scratch() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="gpurent-demo-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def crawl_templates(
    work_dir: Path,
    *,
    providers: list[str] | None = None,
    replay_dir: Path | None = None,
    progress: Progress | None = None,
) -> dict[str, list[OfferRecord]]:
    """Crawl the default replay scene once; the offers of each provider whose run was good."""
    infos = provider_infos()
    chosen = providers or list(infos)
    env = tuple(
        (var, REPLAY_DEMO_TOKEN) for var in sorted({v for p in chosen for v in infos[p].auth_env})
    )
    with ReplayServer(root=replay_dir, scene="default", step=1) as server:
        specs = [
            CrawlSpec(
                provider=p,
                run_id="demo-template",
                work_dir=work_dir,
                base_url=server.base_url(p),
                env=env,
            )
            for p in chosen
        ]
        outcomes = []
        with ThreadPoolExecutor(max_workers=MAX_PARALLEL_CRAWLS) as pool:
            for done, outcome in enumerate(pool.map(run_crawl, specs), start=1):
                outcomes.append(outcome)
                if progress is not None:
                    progress("crawl", done, len(specs))
    templates = {}
    for outcome in outcomes:
        records = _good_offers(outcome)
        if records:
            templates[outcome.provider] = records
    return templates


def _good_offers(outcome: CrawlOutcome) -> list[OfferRecord]:
    verdict = classify_run(outcome.report(), returncode=outcome.returncode)
    if verdict.status not in LOADING_STATUSES or not outcome.feed_path.exists():
        return []
    records = []
    for line in outcome.feed_path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            record = parse_feed_line(json.loads(line, parse_float=Decimal))
        except ValueError:
            continue  # the loader would quarantine it; a template needs valid offers only
        if isinstance(record, OfferRecord):
            records.append(record)
    return records


__all__ = [
    "DemoError",
    "DemoSummary",
    "Progress",
    "build_demo_history",
    "crawl_templates",
    "poll_times",
]
