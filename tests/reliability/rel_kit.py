"""Reliability kit: crawl outcomes on disk, a process that holds the warehouse, kills at
known points, and the integrity check every crash is followed by.

Shared by the tests in this folder and by ``scripts/reliability.py`` (more rounds, figures).
Every wait here waits on a condition (a line from a child, a file appearing, a process
ending), bounded by a deadline; none sleeps for a guessed time.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:  # the script runs from scripts/
    sys.path.insert(0, str(REPO_ROOT))

from flows.crawl import CrawlOutcome  # noqa: E402
from gpurent_core.model import BillingUnit, OfferRecord, PriceBasis, StockStatus  # noqa: E402

T0 = datetime(2026, 11, 1, 8, 0, tzinfo=UTC)
# Real provider names, so every read command treats the rows as it would a crawl's.
PROVIDERS = ("autodl", "vastai", "cudo", "runpod", "lambda", "featurize")
# Generous bounds for a loaded 2-core machine; reached only when something hangs.
DEADLINE_S = 300.0

HOLD_WRITER = """
import sys
from warehouse.db import connect
con = connect(sys.argv[1])
print("ready", flush=True)
sys.stdin.readline()
con.close()
"""

# A load in a child process that announces where it is, so the parent can kill it there:
#   in_transaction: after the first INSERT of the load's transaction, then it blocks;
#   committed: after load_run returned (committed, not yet closed), then it blocks;
#   anywhere: it never blocks (the parent kills it at a moment of its choosing).
# The hook wraps the connection, not the loader's internals, so it survives their rewrite.
CHILD_LOAD = """
import sys
from pathlib import Path
from gpurent_core.model import ProviderRun
from warehouse.db import connect
from warehouse.load import load_run

mode, db, run_json, feed = sys.argv[1:5]

class Announcing:
    def __init__(self, con):
        self._con = con
        self._said = False
    def __getattr__(self, name):
        return getattr(self._con, name)
    def execute(self, sql, *args, **kwargs):
        result = self._con.execute(sql, *args, **kwargs)
        if mode == "in_transaction" and not self._said and sql.lstrip().upper().startswith("INSERT"):
            self._said = True
            print("in-transaction", flush=True)
            sys.stdin.readline()
        return result

con = connect(db)
print("loading", flush=True)
load_run(Announcing(con), ProviderRun.model_validate_json(run_json), Path(feed))
print("committed", flush=True)
if mode == "committed":
    sys.stdin.readline()
con.close()
print("closed", flush=True)
"""


def child_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO_ROOT)}


def offer(provider: str, run_id: str, n: int, started: datetime) -> OfferRecord:
    return OfferRecord(
        provider=provider,
        offer_key=f"{provider}-{n}",
        run_id=run_id,
        observed_at=started + timedelta(seconds=5),
        gpu_vendor="nvidia",
        gpu_model="H100",
        gpu_vram_gb=80,
        gpu_form_factor="SXM",
        gpu_count=1 + n % 8,
        raw_gpu_name="NVIDIA H100 80GB HBM3",
        status=StockStatus.IN_STOCK if n % 3 else StockStatus.SOLD_OUT,
        available_count=n % 5,
        price=Decimal("2.49") + Decimal(n % 97) / 100,
        currency="USD",
        billing_unit=BillingUnit.HOUR,
        price_basis=PriceBasis.GPU,
        region="us-east",
    )


def make_outcome(
    work_dir: Path, run_id: str, provider: str, offers: int, *, hour: int = 0
) -> CrawlOutcome:
    """A crawler outcome as `scrapy crawl` leaves it: a feed and a clean run report."""
    started = T0 + timedelta(hours=hour)
    run_dir = work_dir / run_id
    run_dir.mkdir(parents=True, exist_ok=True)
    feed = run_dir / f"{provider}.jsonl"
    lines = [offer(provider, run_id, n, started).model_dump_json() for n in range(offers)]
    feed.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = run_dir / f"{provider}.run.json"
    doc = {"offers": offers, "quarantined": 0, "responses_by_status": {"200": 1}, "errors": []}
    report.write_text(json.dumps(doc), encoding="utf-8")
    return CrawlOutcome(
        provider=provider,
        run_id=run_id,
        started_at=started,
        finished_at=started + timedelta(seconds=30),
        returncode=0,
        feed_path=feed,
        report_path=report,
        log_path=run_dir / f"{provider}.log",
    )


def feed_keys(outcome: CrawlOutcome) -> set[str]:
    lines = outcome.feed_path.read_text(encoding="utf-8").splitlines()
    return {json.loads(line)["offer_key"] for line in lines if line.strip()}


@contextlib.contextmanager
def writer_held(db: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the warehouse read-write until the block ends."""
    from warehouse.db import connect

    connect(db).close()  # created and migrated first: the holder only holds
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD_WRITER, str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO_ROOT,
        env=child_env(),
    )
    try:
        assert proc.stdout is not None and proc.stdin is not None
        assert proc.stdout.readline().strip() == "ready", "the holder did not start"
        yield proc
    finally:
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()  # EOF: the holder closes its connection and exits
        proc.wait(timeout=DEADLINE_S)


def start_child_load(mode: str, db: Path, outcome: CrawlOutcome) -> subprocess.Popen[str]:
    from gpurent_core.model import ProviderRun, RunStatus

    run = ProviderRun(
        run_id=outcome.run_id,
        provider=outcome.provider,
        started_at=outcome.started_at,
        finished_at=outcome.finished_at,
        status=RunStatus.OK,
        message="crash test",
    )
    return subprocess.Popen(
        [sys.executable, "-c", CHILD_LOAD, mode, str(db), run.model_dump_json(),
         str(outcome.feed_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO_ROOT,
        env=child_env(),
    )  # fmt: skip


def wait_for_line(proc: subprocess.Popen[str], wanted: str) -> list[str]:
    """Read the child's lines until ``wanted`` (or its end); returns what was read."""
    assert proc.stdout is not None
    seen: list[str] = []
    while len(seen) < 100:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line.strip())
        if seen[-1] == wanted:
            break
    return seen


def kill_hard(proc: subprocess.Popen[Any], *, group: bool = False) -> None:
    """SIGKILL (the process group when ``group``: a crawl and every process it started)."""
    with contextlib.suppress(ProcessLookupError):
        if group:
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    proc.wait(timeout=DEADLINE_S)


def wait_until(condition: Callable[[], bool], *, while_alive: subprocess.Popen[Any]) -> bool:
    """Poll ``condition`` until true (True) or the process ends first (False), bounded."""
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        if condition():
            return True
        if while_alive.poll() is not None:
            return condition()
        time.sleep(0.02)  # a polling interval, not a guess at how long anything takes
    raise AssertionError(f"condition not met within {DEADLINE_S} s")


@dataclass(frozen=True)
class Integrity:
    runs: int
    offers: int
    migrations: list[int]


def check_integrity(db: Path) -> Integrity:
    """The warehouse opens, every migration is recorded, and every stored run is whole:
    the offers ``crawl_runs`` counts for it are exactly the rows of its snapshot."""
    from warehouse.db import connect
    from warehouse.migrations import MIGRATIONS, applied_migrations
    from warehouse.queries import latest_offers
    from warehouse.snapshots import offers_of_run

    con = connect(db, wait_s=DEADLINE_S)  # a writer: replays the WAL a killed one left
    try:
        versions = [v for v, _ in applied_migrations(con)]
        assert versions == [m.version for m in MIGRATIONS], versions
        runs = con.execute("SELECT provider, run_id, offers FROM crawl_runs").fetchall()
        total = 0
        for provider, run_id, offers in runs:
            stored = offers_of_run(con, provider, run_id).height
            assert stored == offers, f"{provider} {run_id}: {offers} counted, {stored} stored"
            total += offers
        latest_offers(con)  # the read path works on what is there
        return Integrity(runs=len(runs), offers=total, migrations=versions)
    finally:
        con.close()


def stored_keys(db: Path, provider: str, run_id: str) -> set[str]:
    from warehouse.db import connect
    from warehouse.snapshots import offers_of_run

    con = connect(db, read_only=True, wait_s=DEADLINE_S)
    try:
        return set(offers_of_run(con, provider, run_id)["offer_key"].to_list())
    finally:
        con.close()


def run_gpurent(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m gpurent ARGS` as a user runs it (the console script's error handling)."""
    return subprocess.run(
        [sys.executable, "-m", "gpurent", *args],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env={**child_env(), **(env or {})},
        timeout=DEADLINE_S,
        check=False,
    )


def reader_verdict(done: subprocess.CompletedProcess[str]) -> str:
    """'answered' or 'busy' for a read command that behaved; AssertionError otherwise."""
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    if done.returncode == 0:
        json.loads(done.stdout)
        return "answered"
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert len(lines) == 1 and lines[0].startswith("gpurent: warehouse busy: "), lines
    return "busy"
