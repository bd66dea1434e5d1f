"""Run one provider's spider in its own OS process (Scrapy's reactor cannot restart in-process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from gpurent.model import utcnow

# Token shown to the replay server instead of real secrets: a recorded API only checks that an
# Authorization header is there, and real tokens must never leave for anything but the provider.
REPLAY_DEMO_TOKEN = "replay-demo-token"

# Generous upper bound for one provider's crawl; Scrapy's own timeouts and retries act first.
CRAWL_TIMEOUT_S = 600


@dataclass(frozen=True)
class CrawlSpec:
    provider: str
    run_id: str
    work_dir: Path
    base_url: str | None = None
    """Override of the spider's real base URL (the replay server in tests and demos)."""
    env: tuple[tuple[str, str | None], ...] = ()
    """Environment changes for the crawler process (value None removes the variable)."""


@dataclass(frozen=True)
class CrawlOutcome:
    provider: str
    run_id: str
    started_at: datetime
    finished_at: datetime
    returncode: int | None
    feed_path: Path
    report_path: Path
    log_path: Path

    def report(self) -> dict[str, Any] | None:
        try:
            return json.loads(self.report_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None


def crawl_command(spec: CrawlSpec) -> tuple[list[str], Path, Path, Path]:
    run_dir = spec.work_dir / spec.run_id
    feed = run_dir / f"{spec.provider}.jsonl"
    report = run_dir / f"{spec.provider}.run.json"
    log = run_dir / f"{spec.provider}.log"
    cmd = [
        sys.executable, "-m", "scrapy", "crawl", spec.provider,
        "-O", str(feed),
        "-s", f"GPURENT_RUN_ID={spec.run_id}",
        "-s", f"GPURENT_RUN_REPORT={report}",
        "-s", f"LOG_FILE={log}",
    ]  # fmt: skip
    if spec.base_url:
        cmd += ["-s", f"GPURENT_BASE_URL={spec.base_url}"]
    return cmd, feed, report, log


def run_crawl(spec: CrawlSpec) -> CrawlOutcome:
    """Run ``scrapy crawl`` for one provider and wait for it; never raises on crawl errors."""
    cmd, feed, report, log = crawl_command(spec)
    feed.parent.mkdir(parents=True, exist_ok=True)
    for stale in (feed, report):
        stale.unlink(missing_ok=True)
    env = dict(os.environ)
    env.setdefault("SCRAPY_SETTINGS_MODULE", "spiders.settings")
    for key, value in spec.env:
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    started = utcnow()
    # stderr keeps what Scrapy prints before its log file is open (import errors, bad settings).
    with log.with_suffix(".stderr").open("wb") as stderr:
        try:
            proc = subprocess.run(
                cmd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=stderr,
                stderr=stderr,
                timeout=CRAWL_TIMEOUT_S,
                check=False,
            )
            code: int | None = proc.returncode
        except subprocess.TimeoutExpired:
            code = None
    return CrawlOutcome(
        provider=spec.provider,
        run_id=spec.run_id,
        started_at=started,
        finished_at=utcnow(),
        returncode=code,
        feed_path=feed,
        report_path=report,
        log_path=log,
    )
