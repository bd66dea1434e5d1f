"""The watch poll: crawl only what the active watches need, evaluate them, deliver the outbox.

Each poll crawls the providers the watches concern (their provider filter, else every
provider whose latest good run lists a matching card, plus providers never crawled
successfully), skipping a provider whose last run started less than its
``min_poll_interval_s`` ago. Crawling and loading are the nightly crawl's own code
(``crawl_all`` + ``load_outcomes``). Then every unevaluated good run is applied to the
watches (alerts go to the outbox in the same transaction), and due notifications are sent.
A poll with nothing to crawl still evaluates (a nightly run may be new) and delivers
(a failed notification may be due for its retry).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.task_runners import ThreadPoolTaskRunner

from flows.nightly import (
    MAX_PARALLEL_CRAWLS,
    crawl_all,
    crawl_env,
    load_outcomes,
    maybe_replay,
    new_run_id,
)
from flows.providers import ProviderInfo, provider_infos
from gpurent_core.config import load_settings
from gpurent_core.model import utcnow
from gpurent_core.notify import send
from warehouse.db import writing
from warehouse.lake import retrying_writes
from warehouse.queries import latest_offers, provider_status
from warehouse.watch.criteria import Watch
from warehouse.watch.evaluate import evaluate_watches
from warehouse.watch.outbox import Backoff, deliver_pending
from warehouse.watch.store import list_watches

log = logging.getLogger(__name__)

# The poll is the only writer while it runs, but the nightly crawl may hold the file for a
# moment: `writing` waits for it with backoff (GPURENT_LOCK_WAIT_S, like every writer) rather
# than fail the poll.


@dataclass(frozen=True)
class PollPlan:
    """Which providers this poll crawls, and why the others are left out."""

    crawl: list[str]
    skipped: dict[str, str] = field(default_factory=dict)


def relevant_providers(
    watches: Sequence[Watch],
    known: Sequence[str],
    listed: Mapping[str, Sequence[Mapping[str, Any]]],
) -> dict[str, str]:
    """Provider -> why a watch needs it. ``listed``: each provider's latest good offers
    (a provider absent from it never had a good run, so it may list anything)."""
    why: dict[str, str] = {}
    for watch in watches:
        for provider in known:
            if provider in why or not watch.covers_provider(provider):
                continue
            if watch.providers:
                why[provider] = f"watch #{watch.watch_id} names it"
            elif provider not in listed:
                why[provider] = "no good run yet"
            elif any(watch.matches(offer) for offer in listed[provider]):
                why[provider] = f"lists what watch #{watch.watch_id} wants"
    return why


def plan_poll(
    watches: Sequence[Watch],
    infos: Mapping[str, ProviderInfo],
    listed: Mapping[str, Sequence[Mapping[str, Any]]],
    last_started: Mapping[str, datetime | None],
    *,
    now: datetime,
    min_interval_s: int | None = None,
) -> PollPlan:
    """The providers to crawl now (pure). ``min_interval_s`` overrides every provider's own
    minimum interval (tests and benchmarks poll faster than providers would welcome)."""
    needed = relevant_providers(watches, list(infos), listed)
    crawl: list[str] = []
    skipped: dict[str, str] = {}
    for provider in infos:
        if provider not in needed:
            skipped[provider] = "no active watch needs it"
            continue
        interval = infos[provider].min_poll_interval_s if min_interval_s is None else min_interval_s
        last = last_started.get(provider)
        if last is not None and now - last < timedelta(seconds=interval):
            wait = int((last + timedelta(seconds=interval) - now).total_seconds()) + 1
            skipped[provider] = (
                f"polled {int((now - last).total_seconds())} s ago; next in {wait} s"
            )
            continue
        crawl.append(provider)
    return PollPlan(crawl=crawl, skipped=skipped)


@task(task_run_name="plan-poll")
def plan_task(db_path: Path, min_interval_s: int | None) -> PollPlan:
    with writing(db_path) as con:
        watches = list_watches(con)
        if not watches:
            return PollPlan(crawl=[], skipped={p: "no active watch" for p in provider_infos()})
        offers = latest_offers(con).select(
            "provider", "gpu_model", "gpu_vram_gb", "gpu_form_factor", "region", "price_kind"
        )
        listed: dict[str, list[dict[str, Any]]] = {}
        for row in offers.unique().iter_rows(named=True):
            listed.setdefault(row["provider"], []).append(row)
        last = {
            r["provider"]: r["last_run_started_at"]
            for r in provider_status(con).iter_rows(named=True)
        }
    return plan_poll(
        watches, provider_infos(), listed, last, now=utcnow(), min_interval_s=min_interval_s
    )


@task(task_run_name="evaluate-watches")
def evaluate_task(db_path: Path, display_currency: str) -> dict[str, Any]:
    def attempt() -> dict[str, Any]:
        with writing(db_path) as con:
            evaluation = evaluate_watches(con, now=utcnow(), display_currency=display_currency)
            return evaluation.as_dict()

    # On a lake, beside a poll on another machine: the evaluation committed second is
    # refused and runs again, finding the other's alerts queued (``retrying_writes``).
    return retrying_writes(attempt, what="the watches were evaluated", log=log.info)


@task(task_run_name="deliver-outbox")
def deliver_task(db_path: Path, retry_base_s: float) -> dict[str, Any]:
    with writing(db_path) as con:
        backoff = Backoff(base_s=retry_base_s, cap_s=max(retry_base_s, Backoff().cap_s))
        report = deliver_pending(con, send, now=utcnow(), backoff=backoff, clock=utcnow)
        return report.as_dict()


@flow(
    name="watch_poll",
    task_runner=ThreadPoolTaskRunner(max_workers=MAX_PARALLEL_CRAWLS),  # type: ignore[arg-type]
    log_prints=True,
)
def watch_poll(
    db_path: Path,
    work_dir: Path | None = None,
    replay: bool = False,
    replay_dir: Path | None = None,
    scene: str = "default",
    step: int = 1,
    replay_url: str | None = None,
    demo_credentials: bool = True,
    min_interval_s: int | None = None,
    display_currency: str | None = None,
    retry_base_s: float = 30.0,
    run_id: str | None = None,
) -> dict[str, Any]:
    """One poll: crawl what the watches need, load, evaluate the watches, deliver alerts.

    ``replay`` serves the recordings (``replay_dir``, scene, step) for this poll only;
    ``replay_url`` points at a replay server that is already running (tests, benchmark).
    ``min_interval_s`` overrides the providers' minimum poll intervals (0 by default when
    replaying); ``retry_base_s``
    is the first retry delay of a failed notification (doubling, capped at an hour).
    """
    timings: dict[str, float] = {}
    clock = time.perf_counter()
    run_id = run_id or new_run_id()
    work_dir = work_dir or db_path.parent / "feeds"
    currency = display_currency or load_settings().currency
    if min_interval_s is None and (replay or replay_url is not None):
        min_interval_s = 0  # a local replay server needs no politeness interval
    plan = plan_task(db_path, min_interval_s)
    timings["plan"] = time.perf_counter() - clock

    summaries: list[dict[str, Any]] = []
    if plan.crawl:
        replaying = replay or replay_url is not None
        env = crawl_env(plan.crawl, replay=replaying, demo_credentials=demo_credentials)
        clock = time.perf_counter()
        with maybe_replay(replay and replay_url is None, replay_dir, scene, step) as server:
            outcomes = crawl_all(
                plan.crawl,
                run_id=run_id,
                work_dir=work_dir,
                replay_url=replay_url or (server.url if server else None),
                env=env,
                pending_for=db_path,
            )
        timings["crawl"] = time.perf_counter() - clock
        clock = time.perf_counter()
        summaries = [asdict(s) | {"action": "polled"} for s in load_outcomes(db_path, outcomes)]
        timings["load"] = time.perf_counter() - clock

    clock = time.perf_counter()
    evaluation = evaluate_task(db_path, currency)
    timings["evaluate"] = time.perf_counter() - clock
    clock = time.perf_counter()
    delivery = deliver_task(db_path, retry_base_s)
    timings["deliver"] = time.perf_counter() - clock

    skipped = [
        {"provider": p, "action": "skipped", "status": None, "offers": None, "message": why}
        for p, why in plan.skipped.items()
    ]
    expired = sum(1 for a in evaluation["alerts"] if a["stale"])
    print(
        f"watch poll {run_id}: crawled {', '.join(plan.crawl) or 'nothing'}; "
        f"{len(evaluation['alerts']) - expired} alert(s)"
        + (f" ({expired} expired, not sent)" if expired else "")
        + f", {delivery['sent']} sent, {delivery['failed']} failed"
    )
    return {
        "run_id": run_id,
        "providers": sorted(summaries + skipped, key=lambda r: r["provider"]),
        **evaluation,
        "delivery": delivery,
        "timings_s": {k: round(v, 3) for k, v in timings.items()},
    }
