"""The crawl figure: gpurent's GPUShare spider against a minimal spider, same pages.

A synthetic GPUShare market (machines cycled from the bundled recording, new ids) is
written as a recordings folder and served by ``replay.ReplayServer`` on 127.0.0.1; both
spiders run as their own ``scrapy`` process (start-up included) and page through it one
page after another. Pages hold ``PAGE_SIZE`` machines, so 100k offers are 200 pages: the
page cap ``GPURENT_MAX_PAGES`` (default 200) is raised for the benchmark, or the run would
end ``partial`` at the cap.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.measure import ROOT, child_env, paired
from gpurent_core.providers import provider

PAGE_SIZE = 500
PAGE_CAP = 100_000
RECORDING = provider("gpushare").recordings / "machine_list_page1.json"
QUERY = {"models": ["-1"], "gpuName": [""], "priceOrder": ["asc"]}


def write_market(root: Path, offers: int) -> Path:
    """A recordings folder holding a GPUShare market of ``offers`` machines."""
    template = json.loads(RECORDING.read_text(encoding="utf-8"))
    machines = template["data"]["list"]
    scene = root / "default"
    folder = scene / "gpushare"
    folder.mkdir(parents=True)
    (scene / "scene.json").write_text(
        json.dumps({"description": "synthetic market", "extends": None, "steps": 1}),
        encoding="utf-8",
    )
    routes: list[dict[str, Any]] = []
    pages = (offers + PAGE_SIZE - 1) // PAGE_SIZE
    for page in range(1, pages + 1):
        first = (page - 1) * PAGE_SIZE
        items = []
        for i in range(first, min(offers, first + PAGE_SIZE)):
            machine = dict(machines[i % len(machines)])
            machine["id"] = 1_000_000 + i
            machine["machineName"] = f"S区-{i}"
            items.append(machine)
        body = f"page{page}.json"
        (folder / body).write_text(
            json.dumps({"data": {"list": items, "total": offers}}, ensure_ascii=False),
            encoding="utf-8",
        )
        routes.append(
            {
                "method": "GET",
                "path": "/app/api/market/machine/list",
                "query": QUERY | {"pn": [str(page)], "ps": [str(PAGE_SIZE)]},
                "headers": {"Authorization": "*"},
                "status": 200,
                "content_type": "application/json",
                "body": body,
            }
        )
    (folder / "routes.json").write_text(json.dumps(routes), encoding="utf-8")
    return root


def _run(cmd: list[str], cwd: Path, feed: Path) -> dict[str, float]:
    env = child_env()
    env["GPUSHARE_TOKEN"] = "bench"  # any value: the replay route only needs the header
    feed.unlink(missing_ok=True)
    started = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:4])} failed: {done.stderr[-2000:]}")
    with feed.open("rb") as handle:
        lines = sum(1 for line in handle if line.strip())
    return {"seconds": seconds, "items": float(lines)}


def crawl_pair(root: Path, offers: int, repeats: int) -> tuple[dict[str, float], dict[str, float]]:
    """Median wall seconds (and items written) of each spider over the same market."""
    from replay import ReplayServer

    recordings = write_market(root / "crawl-recordings", offers)
    outside = root / "crawl-baseline"  # no scrapy.cfg here: Scrapy's default settings
    outside.mkdir()
    feed_ours, feed_base = root / "crawl-ours.jsonl", root / "crawl-base.jsonl"
    with ReplayServer(recordings) as server:
        base_url = server.base_url("gpushare")
        ours_cmd = [sys.executable, "-m", "scrapy", "crawl", "gpushare", "-O", str(feed_ours)]
        for name, value in {
            "GPURENT_BASE_URL": base_url,
            "GPURENT_PAGE_SIZE": PAGE_SIZE,
            "GPURENT_MAX_PAGES": PAGE_CAP,
            "GPURENT_RUN_ID": "bench-crawl",
            "AUTOTHROTTLE_START_DELAY": 0,  # as the replay tests: no polite first wait
            "LOG_LEVEL": "WARNING",
        }.items():
            ours_cmd += ["-s", f"{name}={value}"]
        base_cmd = [
            sys.executable, "-m", "scrapy", "runspider", str(Path(__file__).with_name("minimal_spider.py")),
            "-O", str(feed_base), "-a", f"base={base_url}", "-a", f"page_size={PAGE_SIZE}",
            "-s", "LOG_LEVEL=WARNING",
        ]  # fmt: skip
        ours, base = paired(
            lambda _k: _run(ours_cmd, ROOT, feed_ours),
            lambda _k: _run(base_cmd, outside, feed_base),
            repeats,
        )
    if ours["items"] < offers or base["items"] < offers:
        raise RuntimeError(
            f"short crawl: gpurent {ours['items']:.0f}, minimal {base['items']:.0f} of {offers}"
        )
    return ours, base
