"""The nightly crawl: every provider in its own process, then one single-writer load, then a summary.

One provider failing never stops the others: crawl tasks never raise for a bad provider
response (the run report says what happened); a crawler *process* that dies is retried with
backoff and, if it keeps dying, is recorded as a ``failed`` run.

Nothing a crawl found is lost to a busy warehouse: the load opens the file once per provider
run (short write windows, so readers get in between), waiting up to GPURENT_LOCK_WAIT_S for
another writer; the runs are listed in a pending-load manifest beside their feeds first and
struck off as each commits. A load that gives up reports the runs it could not store as
``failed`` with the command that loads them later (``gpurent load``), and keeps their feeds.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import shlex
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import duckdb
from prefect import flow, task
from prefect.artifacts import create_markdown_artifact
from prefect.futures import as_completed
from prefect.task_runners import ThreadPoolTaskRunner

from flows.crawl import (
    REPLAY_DEMO_TOKEN,
    CrawlOutcome,
    CrawlSpec,
    crawl_command,
    manifest_path,
    run_crawl,
    write_manifest,
)
from flows.health import Verdict, as_read, classify_run, run_scope
from flows.providers import check_names, provider_infos
from gpurent_core.model import ProviderRun, RunStatus, utcnow
from replay import ReplayServer
from warehouse.db import connect
from warehouse.errors import WarehouseLocked
from warehouse.lake import flush_inlined_data, is_lake, retrying_writes
from warehouse.load import LOADING_STATUSES, LoadResult, load_run
from warehouse.queries import recent_offer_counts

log = logging.getLogger(__name__)

# Chromium and several Scrapy processes on a 2-core machine: keep the fan-out modest.
MAX_PARALLEL_CRAWLS = 3


class CrawlerCrashed(RuntimeError):
    """The crawler process ended without writing its run report."""


@dataclass(frozen=True)
class RunSummary:
    provider: str
    status: str
    offers: int
    quarantined: int
    duration_s: float
    message: str


def new_run_id() -> str:
    return utcnow().strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


@task(
    retries=2,
    retry_delay_seconds=[2, 8],
    task_run_name="crawl-{spec.provider}",
)
def crawl_provider(spec: CrawlSpec) -> CrawlOutcome:
    outcome = run_crawl(spec)
    if outcome.report() is None:
        raise CrawlerCrashed(
            f"{spec.provider}: crawler exited {outcome.returncode} without a report "
            f"(see {outcome.log_path})"
        )
    return outcome


@dataclass(frozen=True)
class LoadedRun:
    """One run's fate in a load: ``result`` is None when the load gave up before it."""

    outcome: CrawlOutcome
    summary: RunSummary
    result: LoadResult | None

    @property
    def state(self) -> str:
        if self.result is None:
            return "not loaded"
        return "already stored" if self.result.skipped_duplicate_run else "loaded"


@dataclass(frozen=True)
class LoadReport:
    runs: list[LoadedRun]
    manifest: Path | None
    """The pending-load manifest, while it still lists runs (else None)."""
    busy: str | None = None
    """The warehouse-busy line when the load gave up waiting for the lock."""

    @property
    def summaries(self) -> list[RunSummary]:
        return [r.summary for r in self.runs]

    @property
    def pending(self) -> list[CrawlOutcome]:
        return [r.outcome for r in self.runs if r.result is None]


def load_later_command(manifest: Path, db_path: Path) -> str:
    # Absolute paths: the line is run later, from cron or another folder.
    where, target = manifest.absolute(), db_path.expanduser().absolute()
    return f"gpurent load {shlex.quote(str(where))} --db {shlex.quote(str(target))}"


def load_and_track(
    db_path: Path,
    outcomes: list[CrawlOutcome],
    *,
    lock_wait_s: float | None = None,
    manifest: Path | None = None,
) -> LoadReport:
    """The single writer: classify and load each run, one connection and transaction each.

    ``manifest`` (default: the crawl's run folder) lists the runs not stored yet, written
    before the first load and rewritten after each commit; it is gone once all are stored.
    ``lock_wait_s`` overrides GPURENT_LOCK_WAIT_S for each connection.
    """
    manifest = manifest or manifest_path(outcomes)
    if manifest is not None and not _listed(manifest, outcomes, db_path):
        manifest = None  # the runs are loaded all the same; only a resume is lost
    runs: list[LoadedRun] = []
    busy = None
    for index, outcome in enumerate(outcomes):
        try:
            runs.append(_load_retrying(db_path, outcome, lock_wait_s))
        except WarehouseLocked as exc:
            busy = str(exc)
            break
        if manifest is not None and not _listed(manifest, outcomes[index + 1 :], db_path):
            manifest = None
    left = outcomes[len(runs) :]
    if busy is not None:
        later = (
            f"`{load_later_command(manifest, db_path)}`"
            if manifest is not None
            else "a crawl again (the pending-load list could not be written)"
        )
        runs += [LoadedRun(o, _not_loaded(o, later), None) for o in left]
    return LoadReport(runs=runs, manifest=manifest if left else None, busy=busy)


def _listed(manifest: Path, pending: list[CrawlOutcome], db_path: Path) -> bool:
    """Write the pending-load list; False, said in the log, when it cannot be written (a
    full feeds disk): the runs crawled are loaded all the same (before, the whole load
    aborted and every provider's finished run was lost), only a resume is not possible."""
    try:
        write_manifest(manifest, pending, db_path=db_path)
    except OSError as exc:
        log.warning(
            "cannot write the pending-load list %s (%s): loading without it; a load that "
            "stops now cannot be finished with `gpurent load`",
            manifest,
            exc.strerror or exc,
        )
        return False
    return True


def _load_retrying(db_path: Path, outcome: CrawlOutcome, lock_wait_s: float | None) -> LoadedRun:
    """Load one run on a connection of its own; on a lake, again on a new connection while
    the load meets another writer (``warehouse.lake.take_write_lease``: two loads conflict
    on commit) or a flush under its reads. The retry of a run another loader has just
    stored finds it stored and skips it ("already stored")."""

    def attempt() -> LoadedRun:
        # A fresh connection each time: an internal error spoils this one's database.
        con = connect(db_path, wait_s=lock_wait_s)
        try:
            loaded = load_outcome(con, outcome)
            if loaded.state == "loaded":
                flush_lake(con)
            return loaded
        finally:
            con.close()

    return retrying_writes(
        attempt, what=f"{outcome.provider} {outcome.run_id} was loading", log=log.info
    )


def flush_lake(con: duckdb.DuckDBPyConnection) -> None:
    """On a DuckLake, move the run just committed out of the catalog into Parquet files.

    Here, not in ``warehouse.load``: a load is one transaction, and the flush is a commit of
    its own that must follow it; and this loop is the one writer every load goes through
    (crawl, fan-out, watch poll, ``gpurent load``), once per stored run. A flush that fails
    leaves the rows readable in the catalog (the next load's flush moves them), so it is
    logged, not raised: the run is stored."""
    if not is_lake(con):
        return
    try:
        flush_inlined_data(con)
    except duckdb.Error as exc:
        log.warning("lake: the rows stay inlined in the catalog until the next flush: %s", exc)


def load_outcome(con: duckdb.DuckDBPyConnection, outcome: CrawlOutcome) -> LoadedRun:
    """Classify one crawler outcome and store it (a run already stored is left as it is)."""
    # A run its crawler timed with a clock that is off (flows.clock) saw nothing that can be
    # placed in history: a failed look in the loader's own times, its feed left unread.
    report = None if outcome.refused else as_read(outcome.report())
    verdict = (
        Verdict(RunStatus.FAILED, outcome.refused)
        if outcome.refused
        else classify_run(
            report,
            returncode=outcome.returncode,
            recent_counts=recent_offer_counts(con, outcome.provider),
        )
    )
    lost = _feed_problem(outcome, report) if verdict.status in LOADING_STATUSES else None
    if lost is not None:
        # The report says what was read, but what was read is not all here (a feed deleted,
        # cut short by a full disk, a manifest pointing elsewhere): as ok or partial the run
        # would close, or turn sold out, every offer the feed "no longer lists" (rule of
        # truth 2: a failed fetch is no state change). As failed its offers stay, stale.
        verdict = Verdict(RunStatus.FAILED, lost)
    run = ProviderRun(
        run_id=outcome.run_id,
        provider=outcome.provider,
        started_at=outcome.started_at,
        finished_at=outcome.finished_at,
        status=verdict.status,
        offers=0 if lost is not None else int((report or {}).get("offers") or 0),
        quarantined=int((report or {}).get("quarantined") or 0),
        http_errors=len((report or {}).get("errors") or []),
        message=verdict.message,
        **run_scope(report, verdict.status).fields(),
    )
    feed = outcome.feed_path if outcome.feed_path.exists() and not outcome.refused else None
    result = load_run(con, run, feed)
    summary = RunSummary(
        provider=outcome.provider,
        status=result.status.value,
        offers=result.offers,
        quarantined=result.quarantined,
        duration_s=round(run.duration_s, 2),
        message="already stored" if result.skipped_duplicate_run else verdict.message,
    )
    return LoadedRun(outcome, summary, result)


OFFER_LINE = b'{"kind":"offer"'
QUARANTINE_LINE = b'{"kind":"quarantine"'


def _feed_problem(outcome: CrawlOutcome, report: Mapping[str, Any] | None) -> str | None:
    """Why the feed cannot stand for the run its report describes, else None: missing, or
    holding fewer whole offer or quarantine lines than the crawl counted (a write that
    failed part-way: Scrapy logs the error and the crawl still ends "finished")."""
    counted = int((report or {}).get("offers") or 0)
    set_aside = int((report or {}).get("quarantined") or 0)
    if not outcome.feed_path.exists():
        if report is not None and report.get("auth") in ("missing", "rejected") and not counted:
            return None  # a refused key that read nothing has nothing to lose
        return f"feed missing: {outcome.feed_path} (the crawl counted {counted} offers; none read)"
    offers = quarantined = 0
    with outcome.feed_path.open("rb") as feed:
        for line in feed:
            whole = line.rstrip().endswith(b"}")
            offers += whole and line.startswith(OFFER_LINE)
            quarantined += whole and line.startswith(QUARANTINE_LINE)
    if offers < counted or quarantined < set_aside:
        return (
            f"feed cut short: the crawl counted {counted} offers and {set_aside} set aside, "
            f"the feed holds {offers} and {quarantined} (a write that failed: full disk?); "
            "nothing of it is trusted"
        )
    return None


def _not_loaded(outcome: CrawlOutcome, later: str) -> RunSummary:
    crawled = int((outcome.report() or {}).get("offers") or 0)
    seconds = (outcome.finished_at - outcome.started_at).total_seconds()
    return RunSummary(
        provider=outcome.provider,
        status=RunStatus.FAILED.value,
        offers=0,
        quarantined=0,
        duration_s=round(seconds, 2),
        message=f"not loaded, warehouse busy: {crawled} offers crawled, feed kept; "
        f"load it later with {later}",
    )


@task(task_run_name="load-warehouse")
def load_outcomes(
    db_path: Path, outcomes: list[CrawlOutcome], lock_wait_s: float | None = None
) -> list[RunSummary]:
    """The flow's load step (see ``load_and_track``); says how to finish a load it gave up."""
    loaded = load_and_track(db_path, outcomes, lock_wait_s=lock_wait_s)
    if loaded.busy is not None and loaded.manifest is not None:
        print(
            f"{len(loaded.pending)} run(s) not loaded ({loaded.busy}); feeds kept, "
            f"load them with: {load_later_command(loaded.manifest, db_path)}"
        )
    return loaded.summaries


def summary_markdown(run_id: str, summaries: list[RunSummary]) -> str:
    lines = [
        f"# gpurent crawl {run_id}",
        "",
        "| provider | status | offers | quarantined | seconds | message |",
        "|---|---|---:|---:|---:|---|",
    ]
    for s in summaries:
        message = s.message.replace("|", "\\|")
        lines.append(
            f"| {s.provider} | {s.status} | {s.offers} | {s.quarantined} | {s.duration_s} | {message} |"
        )
    return "\n".join(lines)


def crawl_env(
    providers: list[str], *, replay: bool, demo_credentials: bool
) -> tuple[tuple[str, str | None], ...]:
    """Credentials seen by crawler processes: real ones only when talking to real providers."""
    if not replay:
        return ()
    infos = provider_infos()
    names = sorted({var for p in providers for var in infos[p].auth_env})
    value = REPLAY_DEMO_TOKEN if demo_credentials else None
    return tuple((var, value) for var in names)


@contextlib.contextmanager
def maybe_replay(
    replay: bool, replay_dir: Path | None, scene: str, step: int
) -> Iterator[ReplayServer | None]:
    """A replay server for the run when ``replay`` is set, else nothing."""
    if not replay:
        yield None
        return
    with ReplayServer(root=replay_dir, scene=scene, step=step) as server:
        yield server


def crawl_all(
    providers: list[str],
    *,
    run_id: str,
    work_dir: Path,
    replay_url: str | None,
    env: tuple[tuple[str, str | None], ...],
    pending_for: Path | None = None,
) -> list[CrawlOutcome]:
    """Crawl providers in parallel tasks (inside a flow); one outcome per provider, always.

    ``replay_url``: the root of a replay server (each spider gets ``<root>/<provider>``);
    None crawls the real providers. Shared by the nightly crawl and the watch poll.
    ``pending_for``: the warehouse the runs are for; each run is then listed in the run's
    pending-load list as its crawler ends, so a crawl stopped before its load (a SIGTERM
    while slower providers still crawl) leaves what had finished to `gpurent load`.
    """
    specs = [
        CrawlSpec(
            provider=p,
            run_id=run_id,
            work_dir=work_dir,
            base_url=f"{replay_url.rstrip('/')}/{p}" if replay_url else None,
            env=env,
        )
        for p in providers
    ]
    futures = [crawl_provider.submit(spec) for spec in specs]
    ended: dict[str, CrawlOutcome] = {}
    spec_of = {id(future): spec for spec, future in zip(specs, futures, strict=True)}
    for future in as_completed(futures):
        spec = spec_of[id(future)]
        if future.state.is_completed():
            ended[spec.provider] = future.result()
        else:
            # Retries exhausted: record the provider as failed, keep the others going.
            _, feed, report, log = crawl_command(spec)
            now = utcnow()
            ended[spec.provider] = CrawlOutcome(
                spec.provider, run_id, now, now, None, feed, report, log
            )
        if pending_for is not None:
            done = [ended[s.provider] for s in specs if s.provider in ended]
            manifest = manifest_path(done)
            if manifest is not None:
                _listed(manifest, done, pending_for)
    return [ended[spec.provider] for spec in specs]


@flow(
    name="nightly_crawl",
    task_runner=ThreadPoolTaskRunner(max_workers=MAX_PARALLEL_CRAWLS),  # type: ignore[arg-type]
    log_prints=True,
)
def nightly_crawl(
    db_path: Path,
    work_dir: Path,
    providers: list[str] | None = None,
    replay: bool = False,
    replay_dir: Path | None = None,
    scene: str = "default",
    step: int = 1,
    demo_credentials: bool = True,
    run_id: str | None = None,
    lock_wait_s: float | None = None,
) -> list[dict[str, object]]:
    """Crawl providers (all by default), load the warehouse, publish a summary artifact.

    ``lock_wait_s``: how long the load waits for another writer (default GPURENT_LOCK_WAIT_S).
    """
    chosen = check_names(list(providers)) if providers else list(provider_infos())
    run_id = run_id or new_run_id()
    env = crawl_env(chosen, replay=replay, demo_credentials=demo_credentials)
    with maybe_replay(replay, replay_dir, scene, step) as server:
        outcomes = crawl_all(
            chosen,
            run_id=run_id,
            work_dir=work_dir,
            replay_url=server.url if server else None,
            env=env,
            pending_for=db_path,
        )
    summaries = load_outcomes(db_path, outcomes, lock_wait_s)
    create_markdown_artifact(
        key="crawl-summary",
        markdown=summary_markdown(run_id, summaries),
        description=f"gpurent crawl {run_id}",
    )
    bad = [s.provider for s in summaries if s.status != RunStatus.OK.value]
    print(f"crawl {run_id}: {len(summaries) - len(bad)} ok, not ok: {', '.join(bad) or 'none'}")
    return [asdict(s) | {"run_id": run_id} for s in summaries]
