"""Run one provider's spider in its own OS process (Scrapy's reactor cannot restart in-process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gpurent_core.model import utcnow

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
    refused: str | None = None
    """Why the loader will not place this run in history as crawled (its crawler's clock
    is off, ``flows.clock``): stored as a failed run, in the loader's own times."""

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
        # A replay server answers in milliseconds: AutoThrottle's polite first delay (1 s,
        # then halved answer by answer) is for real providers and would only make a demo or
        # a test wait.
        cmd += ["-s", f"GPURENT_BASE_URL={spec.base_url}", "-s", "AUTOTHROTTLE_START_DELAY=0"]
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


# -- pending loads ----------------------------------------------------------------------
# A crawl's runs are listed in a manifest in their run folder before the load starts, and
# taken off it as each one commits: a load that gives up on the lock, or a process killed
# mid-load, leaves the manifest naming what is not stored yet, and `gpurent load` finishes
# the job (loading a stored run again changes nothing, so an entry left by a kill between
# a commit and its removal costs nothing).

PENDING_MANIFEST = "pending-load.json"
MANIFEST_FORMAT = "gpurent-pending-load/1"


class ManifestError(ValueError):
    """A pending-load manifest that cannot be read (not JSON, or not in our format)."""


def manifest_path(outcomes: list[CrawlOutcome]) -> Path | None:
    """Where a crawl's manifest goes: its run folder, beside the feeds (None: no runs)."""
    return outcomes[0].feed_path.parent / PENDING_MANIFEST if outcomes else None


def write_manifest(path: Path, outcomes: list[CrawlOutcome], *, db_path: Path) -> None:
    """Write (or rewrite) the manifest atomically: a reader sees the old list or the new."""
    if not outcomes:
        path.unlink(missing_ok=True)
        return
    doc = {
        "format": MANIFEST_FORMAT,
        "db": str(db_path),
        "written_at": utcnow().isoformat(),
        "runs": [_outcome_doc(o, path.parent) for o in outcomes],
    }
    path.parent.mkdir(parents=True, exist_ok=True)  # a crawler that never started made none
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with tmp.open("w", encoding="utf-8") as out:
        json.dump(doc, out, indent=2)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)


def manifest_db(path: Path) -> Path | None:
    """The warehouse a manifest's runs were crawled for (None: not said, or unreadable)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return Path(doc["db"]) if isinstance(doc, dict) and isinstance(doc.get("db"), str) else None


def read_manifest(path: Path) -> list[CrawlOutcome]:
    """The runs a manifest still lists; ``ManifestError`` names what is wrong with it."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ManifestError(f"{path}: not a readable pending-load manifest ({exc})") from exc
    if not isinstance(doc, dict) or doc.get("format") != MANIFEST_FORMAT:
        raise ManifestError(f"{path}: not a pending-load manifest (format {MANIFEST_FORMAT})")
    try:
        return [_outcome_from(entry, path.parent) for entry in doc["runs"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise ManifestError(f"{path}: a run entry is incomplete ({exc!r})") from exc


def find_manifests(paths: list[Path]) -> list[Path]:
    """Manifests named directly, or found anywhere under the folders named, in order."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(sorted(path.rglob(PENDING_MANIFEST)))
        else:
            found.append(path)
    return list(dict.fromkeys(p.resolve() for p in found))


def _outcome_doc(outcome: CrawlOutcome, base: Path) -> dict[str, Any]:
    def rel(path: Path) -> str:
        # Relative to the manifest, so a feeds folder that is moved keeps working.
        return path.name if path.parent == base else str(path)

    return {
        "provider": outcome.provider,
        "run_id": outcome.run_id,
        "started_at": outcome.started_at.isoformat(),
        "finished_at": outcome.finished_at.isoformat(),
        "returncode": outcome.returncode,
        "feed": rel(outcome.feed_path),
        "report": rel(outcome.report_path),
        "log": rel(outcome.log_path),
    }


def _outcome_from(entry: dict[str, Any], base: Path) -> CrawlOutcome:
    code = entry["returncode"]
    return CrawlOutcome(
        provider=str(entry["provider"]),
        run_id=str(entry["run_id"]),
        started_at=_utc(entry["started_at"]),
        finished_at=_utc(entry["finished_at"]),
        returncode=None if code is None else int(code),
        feed_path=base / entry["feed"],
        report_path=base / entry["report"],
        log_path=base / entry["log"],
    )


def _utc(text: str) -> datetime:
    value = datetime.fromisoformat(text)
    if value.tzinfo is None:
        raise ValueError(f"time without a zone: {text}")
    return value.astimezone(UTC)
