"""Readers in a loop while a writer loads: every reader answers, from a committed state, or
says "warehouse busy" in one line; no traceback; the writer's runs all end up stored."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

from flows.crawl import PENDING_MANIFEST, write_manifest
from flows.nightly import load_and_track
from tests.reliability.rel_kit import (
    DEADLINE_S,
    PROVIDERS,
    REPO_ROOT,
    check_integrity,
    child_env,
    make_outcome,
    reader_verdict,
    run_gpurent,
)

OFFERS_PER_RUN = 200
READERS = 2
MAX_READS_PER_READER = 30


def test_readers_during_a_load_answer_or_say_busy_and_never_see_half_a_run(
    tmp_path: Path,
) -> None:
    db = tmp_path / "gpurent.duckdb"
    feeds = tmp_path / "feeds"
    baseline = make_outcome(feeds, "run-0", "vastai", OFFERS_PER_RUN, hour=0)
    assert load_and_track(db, [baseline]).busy is None  # readers have something to read
    outcomes = [make_outcome(feeds, "run-1", p, OFFERS_PER_RUN, hour=1) for p in PROVIDERS]
    manifest = feeds / "run-1" / PENDING_MANIFEST
    write_manifest(manifest, outcomes, db_path=db)

    writer = subprocess.Popen(
        [sys.executable, "-m", "gpurent", "load", str(manifest), "--db", str(db)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO_ROOT,
        env={**child_env(), "GPURENT_LOCK_WAIT_S": "120"},
    )
    verdicts: Counter[str] = Counter()
    problems: list[str] = []
    lock = threading.Lock()

    def read_loop(command: list[str]) -> None:
        for _ in range(MAX_READS_PER_READER):
            done = run_gpurent(*command, "--format", "json", "--db", str(db))
            try:
                verdict = reader_verdict(done)
                if verdict == "answered" and command[0] == "offers":
                    _assert_whole_runs(json.loads(done.stdout))
            except AssertionError as exc:
                with lock:
                    problems.append(f"{command[0]}: {exc}")
                return
            with lock:
                verdicts[verdict] += 1
            if writer.poll() is not None:
                return

    commands = [["cheapest", "--min-vram", "24"], ["offers"]]
    threads = [threading.Thread(target=read_loop, args=(commands[i % 2],)) for i in range(READERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=DEADLINE_S * 4)
    writer.wait(timeout=DEADLINE_S)
    assert not problems, problems
    assert sum(verdicts.values()) >= READERS

    # The writer stored everything, or gave up with the busy line and kept the rest pending.
    assert writer.returncode in (0, 2), writer.stderr.read() if writer.stderr else ""
    if writer.returncode == 2:
        finish = run_gpurent("load", str(feeds), "--db", str(db))
        assert finish.returncode == 0, finish.stderr
    assert not manifest.exists()
    integrity = check_integrity(db)
    assert integrity.runs == 1 + len(PROVIDERS)
    assert integrity.offers == OFFERS_PER_RUN * (1 + len(PROVIDERS))


def _assert_whole_runs(rows: list[dict[str, object]]) -> None:
    """Each provider run is one transaction: a reader sees all of its offers or none."""
    per_run = Counter((str(r["provider"]), str(r["run_id"])) for r in rows)
    partial = {run: n for run, n in per_run.items() if n != OFFERS_PER_RUN}
    assert not partial, f"runs seen in part: {partial}"
