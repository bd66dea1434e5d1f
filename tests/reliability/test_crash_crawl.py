"""SIGKILL a whole `gpurent crawl` (and every process it started) mid-crawl and mid-load:
the warehouse opens, migrations intact, every stored run whole; the next crawl completes and
`gpurent load` finishes what the killed load had not stored."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from flows.crawl import PENDING_MANIFEST
from tests.reliability.rel_kit import (
    REPO_ROOT,
    check_integrity,
    child_env,
    kill_hard,
    wait_until,
)

pytestmark = pytest.mark.prefect

PROVIDERS = ("vastai", "cudo")


def crawl_env() -> dict[str, str]:
    from prefect.settings import PREFECT_API_URL

    api = PREFECT_API_URL.value()
    return {**child_env(), **({"PREFECT_API_URL": api} if api else {})}


def start_crawl(db: Path) -> subprocess.Popen[str]:
    args = ["crawl", "--replay", "--db", str(db), "--format", "json"]
    for provider in PROVIDERS:
        args += ["--provider", provider]
    return subprocess.Popen(
        [sys.executable, "-m", "gpurent", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO_ROOT,
        env=crawl_env(),
        start_new_session=True,  # its own process group: one kill takes every crawler too
    )


def new_files(feeds: Path, pattern: str, old: set[Path]) -> Callable[[], bool]:
    return lambda: any(p.parent not in old for p in feeds.glob(f"*/{pattern}"))


def test_a_crawl_killed_mid_crawl_or_mid_load_loses_nothing_stored(
    prefect_harness: None, tmp_path: Path
) -> None:
    db = tmp_path / "var" / "gpurent.duckdb"
    feeds = db.parent / "feeds"
    feeds.mkdir(parents=True)
    # Kill points, by what the crawl leaves on disk: a first run report (crawling), then
    # the pending-load manifest (the load has begun).
    for pattern in ("*.run.json", PENDING_MANIFEST):
        old = {p for p in feeds.iterdir() if p.is_dir()}
        crawl = start_crawl(db)
        try:
            wait_until(new_files(feeds, pattern, old), while_alive=crawl)
        finally:
            kill_hard(crawl, group=True)
        if db.exists():
            check_integrity(db)  # opens, migrations intact, every stored run whole

    done = subprocess.run(
        [sys.executable, "-m", "gpurent", "crawl", "--replay", "--db", str(db), "--format",
         "json", *(a for p in PROVIDERS for a in ("--provider", p))],
        capture_output=True, text=True, cwd=REPO_ROOT, env=crawl_env(), timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    summary = {r["provider"]: r for r in json.loads(done.stdout)}
    assert {summary[p]["status"] for p in PROVIDERS} == {"ok"}, summary
    assert all(summary[p]["offers"] > 0 for p in PROVIDERS)

    # What the killed load left pending loads now, once; nothing is left pending after.
    finish = subprocess.run(
        [sys.executable, "-m", "gpurent", "load", str(feeds), "--db", str(db), "--format", "json"],
        capture_output=True, text=True, cwd=REPO_ROOT, env=child_env(), timeout=600, check=False,
    )  # fmt: skip
    assert finish.returncode == 0, finish.stderr
    assert not list(feeds.glob(f"*/{PENDING_MANIFEST}"))
    integrity = check_integrity(db)
    assert integrity.runs >= len(PROVIDERS)


def test_a_crawl_stopped_while_a_provider_still_crawls_leaves_the_finished_ones_to_load(
    prefect_harness: None, tmp_path: Path
) -> None:
    """Audit (operations): SIGTERM to a crawl whose Vast.ai crawler still waited lost the
    providers that had finished: the pending-load list was written only when the load
    began. Each run is now listed as its crawler ends. Vast.ai's answer is held for an hour
    (and Scrapy waits as long): it cannot finish before the crawl is stopped."""
    import os
    import signal

    from replay.loader import copy_default_scene

    root = tmp_path / "recordings"
    copy_default_scene(root)
    slow = root / "slow-vastai" / "vastai"
    slow.mkdir(parents=True)
    (root / "slow-vastai" / "scene.json").write_text(
        json.dumps({"description": "Vast.ai answers after an hour", "extends": "default",
                    "steps": 1}), encoding="utf-8",
    )  # fmt: skip
    (slow / "routes.json").write_text(
        json.dumps([{"method": "POST", "path": "/api/v0/bundles/", "status": 500,
                     "body_text": "{}", "fault": {"delay_s": 3600}}]), encoding="utf-8",
    )  # fmt: skip
    db = tmp_path / "var" / "gpurent.duckdb"
    feeds = db.parent / "feeds"
    args = ["crawl", "--replay", str(root), "--scene", "slow-vastai", "--db", str(db),
            "--provider", "cudo", "--provider", "vastai"]  # fmt: skip
    crawl = subprocess.Popen(
        [sys.executable, "-m", "gpurent", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT,
        env={**crawl_env(), "DOWNLOAD_TIMEOUT": "3600"}, start_new_session=True,
    )  # fmt: skip
    try:
        listed = lambda: any(  # noqa: E731
            "cudo" in m.read_text(encoding="utf-8") for m in feeds.glob(f"*/{PENDING_MANIFEST}")
        )
        assert wait_until(listed, while_alive=crawl), crawl.communicate()[1][-3000:]
        os.kill(crawl.pid, signal.SIGTERM)  # the command, as a service manager stops it
        crawl.communicate(timeout=300)
    finally:
        if crawl.poll() is None:
            kill_hard(crawl, group=True)
    done = subprocess.run(
        [sys.executable, "-m", "gpurent", "load", str(feeds), "--db", str(db), "--format", "json"],
        capture_output=True, text=True, cwd=REPO_ROOT, env=child_env(), timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    rows = {r["provider"]: r for r in json.loads(done.stdout)}
    assert rows["cudo"]["result"] == "loaded" and rows["cudo"]["offers"] > 0
    assert "vastai" not in rows, "a crawler that never ended lists nothing"
