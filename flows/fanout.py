"""The crawl past one machine: a flow run per provider on a work pool, one serialised load.

``nightly_crawl`` (flows/nightly.py) stays the embedded default: one flow run crawls every
provider in threads on one machine and loads the DuckDB file beside it. This module builds
the distributed mode beside it, on the same pieces:

- ``crawl_provider_flow`` crawls ONE provider (``scrapy crawl`` in its own process, with the
  nightly crawl's task and retries), then puts the outcome on shared storage
  (``flows.storage.FeedStore``: an NFS path or an object store URL) under
  ``<storage>/<run_id>/<provider>/``. It is deployed on a work pool (``gpurent-crawl`` in
  prefect.yaml) with workers on several machines; any worker picks a run up.
- ``fanout_crawl`` is the parent: it starts one ``crawl_provider_flow`` run per provider
  through that deployment (``run_deployment``; idempotency key ``<run_id>/<provider>``, so a
  retried parent never crawls a provider twice), waits for all of them, fetches the stored
  outcomes to a local folder and loads them with the nightly crawl's load step, under the
  Prefect global concurrency limit ``gpurent-load`` (1 slot, created when missing): two
  parents, or a parent and a watch poll elsewhere, never load at the same time. The limit
  only saves work: what keeps a run from being stored twice is the store itself (the DuckDB
  file's lock; on a lake, the load lease, ``warehouse.lake.take_write_lease``), which also
  holds for a ``gpurent load`` or ``gpurent crawl`` that takes no Prefect slot. Statuses,
  stale rows and pending loads behave exactly as in the nightly crawl, because it is the
  same code: a provider whose flow run failed or stored nothing is a ``failed`` run.

Per-provider concurrency is a tag-based concurrency limit: the crawl task of
``crawl_provider_flow`` runs with the tag ``gpurent-crawl-<provider>``, whose limit (1 slot,
created when missing; ``prefect global-concurrency-limit update tag:<tag> --limit N``
changes it) keeps two crawls of one provider from running at once anywhere in the pool (a
fan-out overlapping a retried one). A deployment ``concurrency_limit`` could not say this:
it counts all providers together. It is used for the total instead: the crawl
deployment's ``concurrency_limit`` (prefect.yaml) and the pool's concurrency limit bound the
crawls at once over the pool, and each worker's ``--limit`` those on its machine.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast
from uuid import UUID

from prefect import flow, tags, task
from prefect.artifacts import create_markdown_artifact
from prefect.client.orchestration import get_client
from prefect.client.schemas.actions import GlobalConcurrencyLimitCreate
from prefect.concurrency.sync import concurrency
from prefect.deployments import run_deployment
from prefect.exceptions import ObjectAlreadyExists
from prefect.task_runners import ThreadPoolTaskRunner

from flows.clock import refuse_untimely, window_start
from flows.crawl import CrawlOutcome, CrawlSpec, crawl_command
from flows.nightly import (
    RunSummary,
    crawl_all,
    crawl_env,
    load_outcomes,
    maybe_replay,
    new_run_id,
    summary_markdown,
)
from flows.providers import check_names, provider_infos
from flows.storage import FeedStore, PutResult, check_segment, crawler_id
from gpurent_core.config import load_settings
from gpurent_core.model import RunStatus, utcnow

if TYPE_CHECKING:
    from prefect.client.schemas.objects import FlowRun

CRAWL_FLOW = "crawl_provider_flow"
CRAWL_DEPLOYMENT_NAME = "gpurent-crawl-provider"
CRAWL_DEPLOYMENT = f"{CRAWL_FLOW}/{CRAWL_DEPLOYMENT_NAME}"
LOAD_LIMIT = "gpurent-load"
"""The global concurrency limit every fan-out load holds (1 slot: one loader at a time; a
courtesy, the store enforces one writer: see the module docstring)."""
PROVIDER_TAG_PREFIX = "gpurent-crawl-"
PROVIDER_LIMIT = 1
STORAGE_ENV = "GPURENT_STORAGE_URL"  # Settings.storage_url
DEFAULT_POLL_S = 5.0
DEFAULT_WAIT_S = 3 * 3600.0
# A `{{ $VAR }}` prefect.yaml could not fill at deploy time (the variable was not set there).
_UNRESOLVED = re.compile(r"^\s*\{\{\s*\$?[\w.\-\[\]]+\s*\}\}\s*$")


def provider_tag(provider: str) -> str:
    return f"{PROVIDER_TAG_PREFIX}{provider}"


def setting(value: Any, env: str, default: str | None = None) -> str | None:
    """A string parameter, else the variable ``env`` where the flow runs, else ``default``.

    A value is missing when it is None, empty, or a ``{{ $VAR }}`` placeholder that
    ``prefect deploy`` left as it was (the variable was not set when deploying).
    """
    text = None if value is None else str(value)
    if text and not _UNRESOLVED.match(text):
        return text
    return os.environ.get(env) or default


def flag(value: Any, env: str, default: bool) -> bool:
    """A yes/no parameter given as a bool or a string ("1", "true", "yes", "on" and their
    opposites), else the variable ``env`` where the flow runs, else ``default``."""
    if isinstance(value, bool):
        return value
    text = setting(value, env)
    if text is None:
        return default
    word = text.strip().lower()
    if word in {"1", "true", "yes", "on"}:
        return True
    if word in {"0", "false", "no", "off", ""}:
        return False
    raise ValueError(f"{env}: {text!r} is not a yes/no value")


def number(value: Any, env: str, default: int) -> int:
    """A whole-number parameter given as an int or a string, else ``env``, else ``default``."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = setting(value, env)
    return default if text is None else int(text)


def default_storage_url() -> str:
    """GPURENT_STORAGE_URL, else a folder beside the local feeds (one machine only)."""
    return os.environ.get(STORAGE_ENV) or str(load_settings().feeds_dir() / "store")


def ensure_concurrency_limit(name: str, limit: int) -> bool:
    """Create the global concurrency limit ``name`` unless it exists (an existing one is
    left as the operator set it). True when this call created it."""
    with get_client(sync_client=True) as client:
        try:
            client.create_global_concurrency_limit(
                GlobalConcurrencyLimitCreate(name=name, limit=limit)
            )
        except ObjectAlreadyExists:
            return False
    return True


# -- one provider, on any worker --------------------------------------------------------


@task(retries=3, retry_delay_seconds=[2, 10, 30], task_run_name="store-{outcome.provider}")
def store_outcome(storage_url: str, outcome: CrawlOutcome) -> PutResult:
    return FeedStore(storage_url).put(outcome)


@flow(
    name=CRAWL_FLOW,
    flow_run_name="crawl-{provider}-{run_id}",
    task_runner=ThreadPoolTaskRunner(max_workers=1),  # type: ignore[arg-type]
    log_prints=True,
)
def crawl_provider_flow(
    provider: str,
    run_id: str,
    storage_url: str | None = None,
    replay_url: str | None = None,
    demo_credentials: bool = True,
    work_dir: str | None = None,
) -> dict[str, Any]:
    """Crawl one provider in its own process and put the outcome on shared storage.

    ``storage_url`` defaults to GPURENT_STORAGE_URL where the run executes; ``replay_url``
    is the root of a replay server every worker can reach (None: the real provider).
    ``work_dir`` is the local scratch folder (default: a temporary one, removed after).
    """
    check_names([provider])
    check_segment(run_id, "run id")
    storage = setting(storage_url, STORAGE_ENV) or default_storage_url()
    replay_root = setting(replay_url, "GPURENT_REPLAY_URL")
    scratch = Path(work_dir) if work_dir else Path(tempfile.mkdtemp(prefix="gpurent-crawl-"))
    ensure_concurrency_limit(f"tag:{provider_tag(provider)}", PROVIDER_LIMIT)
    try:
        env = crawl_env(
            [provider], replay=replay_root is not None, demo_credentials=demo_credentials
        )
        with tags(provider_tag(provider)):
            # One outcome, always: a crawler that keeps dying is an outcome without a report.
            [outcome] = crawl_all(
                [provider], run_id=run_id, work_dir=scratch, replay_url=replay_root, env=env
            )
        put = store_outcome(storage, outcome)
    finally:
        if not work_dir:
            shutil.rmtree(scratch, ignore_errors=True)
    report = outcome.report() if outcome.report_path.exists() else None
    offers = int((report or {}).get("offers") or 0) if report is not None else None
    print(
        f"{provider} {run_id}: exit {outcome.returncode}, {offers} offers crawled, "
        f"{'stored' if put.written else 'already stored'} at {put.location}"
    )
    return {
        "provider": provider,
        "run_id": run_id,
        "returncode": outcome.returncode,
        "location": put.location,
        "written": put.written,
        "crawled_by": put.stored.crawled_by,
    }


# -- the parent: fan out, wait, load once -----------------------------------------------


def start_crawl_runs(
    providers: list[str],
    *,
    run_id: str,
    deployment: str,
    parameters: dict[str, Any],
    work_queues: dict[str, str] | None = None,
) -> dict[str, UUID]:
    """One flow run of the crawl deployment per provider, not waited for (``timeout=0``)."""
    started = {}
    for p in providers:
        run = cast(
            "FlowRun",
            run_deployment(
                deployment,
                parameters={**parameters, "provider": p, "run_id": run_id},
                flow_run_name=f"crawl-{p}-{run_id}",
                timeout=0,
                idempotency_key=f"{run_id}/{p}",
                work_queue_name=(work_queues or {}).get(p),
                tags=["gpurent", provider_tag(p)],
            ),
        )  # sync dispatch: called from sync code it returns the flow run itself
        started[p] = run.id
    return started


def wait_for_runs(
    runs: dict[str, UUID], *, poll_s: float = DEFAULT_POLL_S, wait_s: float = DEFAULT_WAIT_S
) -> dict[str, str]:
    """Wait until every flow run is final (or ``wait_s`` is up); provider -> state name."""
    deadline = time.monotonic() + wait_s
    states: dict[str, str] = {}
    pending = dict(runs)
    with get_client(sync_client=True) as client:
        while pending:
            for p, run_id in list(pending.items()):
                run = client.read_flow_run(run_id)
                if run.state is not None and run.state.is_final():
                    states[p] = str(run.state.name)
                    del pending[p]
            if not pending:
                break
            if time.monotonic() >= deadline:
                for p in pending:
                    states[p] = "still running (not waited for)"
                break
            time.sleep(poll_s)
    return states


def _missing_outcome(provider: str, run_id: str, local_dir: Path) -> CrawlOutcome:
    """A provider whose flow run stored nothing: a run without a report, so ``failed``."""
    # The paths a local crawl would have used, with no files at them.
    _, feed, report, log = crawl_command(CrawlSpec(provider, run_id, local_dir))
    for stale in (feed, report):
        stale.unlink(missing_ok=True)
    now = utcnow()
    return CrawlOutcome(provider, run_id, now, now, None, feed, report, log)


@flow(name="fanout_crawl", log_prints=True)
def fanout_crawl(
    providers: list[str] | None = None,
    db_path: str | None = None,
    storage_url: str | None = None,
    work_dir: str | None = None,
    replay: bool | str | None = None,
    replay_dir: str | None = None,
    scene: str | None = None,
    step: int | str | None = None,
    replay_url: str | None = None,
    demo_credentials: bool = True,
    run_id: str | None = None,
    lock_wait_s: float | None = None,
    deployment: str = CRAWL_DEPLOYMENT,
    work_queues: dict[str, str] | None = None,
    poll_s: float = DEFAULT_POLL_S,
    wait_s: float = DEFAULT_WAIT_S,
) -> list[dict[str, object]]:
    """Crawl providers (all by default) as flow runs on the crawl pool, then load them.

    Settings left None (or as a ``{{ $VAR }}`` that ``prefect deploy`` could not fill) are
    read where this flow runs: ``db_path`` GPURENT_DB, ``storage_url`` GPURENT_STORAGE_URL,
    ``work_dir`` GPURENT_WORK_DIR, ``replay`` GPURENT_REPLAY (default off), ``replay_dir``
    GPURENT_REPLAY_DIR, ``scene`` GPURENT_REPLAY_SCENE (default "default"), ``step``
    GPURENT_REPLAY_STEP (default 1), ``replay_url`` GPURENT_REPLAY_URL.

    ``db_path`` (default GPURENT_DB) is the warehouse this run loads: run the parent where
    that file lives. ``storage_url`` (default GPURENT_STORAGE_URL) is the shared storage the
    crawlers put their outcomes on; ``work_dir`` (default GPURENT_WORK_DIR, else beside the
    DB) the local folder they are fetched to and kept in (the pending-load manifest of a load
    that gave up is there, for ``gpurent load``). ``replay`` starts a replay server here for
    workers on this machine; for workers elsewhere give ``replay_url`` (a ``gpurent replay
    serve`` they can reach) instead. ``work_queues`` pins providers to work queues of the
    pool (provider -> queue; say, the Chinese platforms on a machine in China).
    """
    settings = load_settings()
    chosen = check_names(list(providers)) if providers else list(provider_infos())
    run_id = check_segment(run_id or new_run_id(), "run id")
    db = Path(setting(db_path, "GPURENT_DB") or settings.db)
    local = Path(setting(work_dir, "GPURENT_WORK_DIR") or db.parent / "feeds")
    storage = setting(storage_url, STORAGE_ENV) or default_storage_url()
    store = FeedStore(storage)
    given_replay = setting(replay_url, "GPURENT_REPLAY_URL")
    use_local_replay = flag(replay, "GPURENT_REPLAY", False) and given_replay is None
    recordings = setting(replay_dir, "GPURENT_REPLAY_DIR")
    with maybe_replay(
        use_local_replay,
        Path(recordings) if recordings else None,
        setting(scene, "GPURENT_REPLAY_SCENE") or "default",
        number(step, "GPURENT_REPLAY_STEP", 1),
    ) as server:
        root = server.url if server is not None else given_replay
        sent = utcnow()  # the window each crawler's times must fall in (flows.clock)
        runs = start_crawl_runs(
            chosen,
            run_id=run_id,
            deployment=deployment,
            parameters={
                "storage_url": storage,
                "replay_url": root,
                "demo_credentials": demo_credentials,
            },
            work_queues=work_queues,
        )
        states = wait_for_runs(runs, poll_s=poll_s, wait_s=wait_s)
    fetched = {o.provider: o for o in store.fetch(run_id, local, chosen)}
    outcomes = [fetched.get(p) or _missing_outcome(p, run_id, local) for p in chosen]
    outcomes = refuse_untimely(outcomes, window_start(run_id, sent), utcnow())
    ensure_concurrency_limit(LOAD_LIMIT, 1)
    with concurrency(LOAD_LIMIT, occupy=1, strict=True):
        summaries = load_outcomes(db, outcomes, lock_wait_s)
    summaries = [
        _with_flow_state(s, states.get(s.provider), s.provider in fetched) for s in summaries
    ]
    rows = [
        asdict(s) | {"run_id": run_id, "crawl_state": states.get(s.provider)} for s in summaries
    ]
    store.put_summary(run_id, rows)
    create_markdown_artifact(
        key="fanout-crawl-summary",
        markdown=summary_markdown(run_id, summaries),
        description=f"gpurent fan-out crawl {run_id}",
    )
    bad = [s.provider for s in summaries if s.status != RunStatus.OK.value]
    print(
        f"fan-out crawl {run_id}: {len(summaries) - len(bad)} ok, not ok: "
        f"{', '.join(bad) or 'none'}; outcomes at {store.location(run_id)}, loaded by {crawler_id()}"
    )
    return rows


def _with_flow_state(summary: RunSummary, state: str | None, stored: bool) -> RunSummary:
    if stored:
        return summary
    return replace(
        summary,
        message=f"crawl flow run {state or 'not started'}, nothing stored; {summary.message}",
    )
