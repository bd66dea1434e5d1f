"""What the crawl tests share: the real `scrapy crawl` process against the replay server.

`crawl()` runs `python -m scrapy crawl <provider> -O feed.jsonl` from the repo root, pointed
at a ReplayServer with GPURENT_BASE_URL, exactly as the flow runs a crawl, and hands back the
feed, the run report, the log and the requests the provider was sent. `crawl_scene()` does
the same against a server of its own (faults, edited recordings). The `assert_*` helpers are
the checks every keyed provider makes the same way: credentials missing, credentials
refused, secrets kept out of everything we write, and the facts of a plain API spider.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import scrapy
from scrapy.http import TextResponse
from scrapy.settings import Settings
from spider_fixture_cases import REPO_ROOT

from flows.crawl import CrawlOutcome, CrawlSpec, run_crawl
from flows.health import classify_run
from gpurent_core.model import RunStatus
from replay import Fault, ReplayServer, copy_default_scene
from replay.server import RecordedRequest
from spiders.base import ProviderSpider

RUN_ID = "crawl-test-run"
TOKEN = "tok-3c1f9e-not-a-real-token"

Routes = list[dict[str, Any]]


@dataclass
class Crawl:
    returncode: int
    feed: list[dict[str, Any]]
    report: dict[str, Any]
    log: str
    calls: list[RecordedRequest]
    """The requests the replay server answered for this provider, oldest first."""

    @property
    def offers(self) -> dict[str, dict[str, Any]]:
        return {r["offer_key"]: r for r in self.feed if r["kind"] == "offer"}

    @property
    def quarantined(self) -> list[dict[str, Any]]:
        return [r for r in self.feed if r["kind"] == "quarantine"]


def crawl(
    provider: str,
    server: ReplayServer,
    tmp_path: Path,
    *,
    token: str | None = None,
    settings: dict[str, str] | None = None,
    extra_feeds: Iterable[Path] = (),
) -> Crawl:
    """Run the spider to completion; `token` is AUTODL_TOKEN (never inherited otherwise).

    ``extra_feeds``: more feeds written beside the JSON Lines one (``-O``, format from the
    suffix, overwritten)."""
    feed = tmp_path / f"{provider}.jsonl"
    report = tmp_path / f"{provider}.report.json"
    args = {
        "GPURENT_BASE_URL": server.base_url(provider),
        "GPURENT_RUN_REPORT": str(report),
        "GPURENT_RUN_ID": RUN_ID,
        # Replay answers in milliseconds; the polite first-request delay only slows tests.
        "AUTOTHROTTLE_START_DELAY": "0",
        **(settings or {}),
    }
    cmd = [sys.executable, "-m", "scrapy", "crawl", provider, "-O", str(feed)]
    for extra in extra_feeds:
        cmd += ["-O", str(extra)]
    for name, value in args.items():
        cmd += ["-s", f"{name}={value}"]
    env = {k: v for k, v in os.environ.items() if k != "AUTODL_TOKEN"}
    if token is not None:
        env["AUTODL_TOKEN"] = token
    done = subprocess.run(
        cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=180, check=False
    )
    log = done.stdout + done.stderr
    assert report.is_file(), f"no run report; crawl log:\n{log[-3000:]}"
    lines = feed.read_text(encoding="utf-8").splitlines() if feed.is_file() else []
    return Crawl(
        returncode=done.returncode,
        feed=[json.loads(line) for line in lines if line.strip()],
        report=json.loads(report.read_text(encoding="utf-8")),
        log=log,
        calls=[r for r in server.requests if r.provider == provider],
    )


def crawl_scene(
    provider: str,
    tmp_path: Path,
    *,
    faults: Iterable[Fault] = (),
    root: Path | None = None,
    token: str | None = None,
    settings: dict[str, str] | None = None,
) -> Crawl:
    """`crawl()` against a server of its own: the recordings at `root`, spoilt by `faults`."""
    with ReplayServer(root=root, faults=faults) as server:
        return crawl(provider, server, tmp_path, token=token, settings=settings)


def copy_recordings(tmp_path: Path) -> Path:
    """A copy of the default recordings to edit; serve it with `root=` the returned folder."""
    return copy_default_scene(tmp_path / "recordings")


def recorded(root: Path, provider: str) -> Path:
    """The folder of `provider`'s recordings in a copy (`copy_recordings`), to rewrite."""
    return root / "default" / provider


def recordings_with_routes(tmp_path: Path, provider: str, edit: Callable[[Routes], None]) -> Path:
    """A copy of the default recordings whose `provider` routes `edit` changed in place."""
    root = copy_recordings(tmp_path)
    routes_file = recorded(root, provider) / "routes.json"
    routes = json.loads(routes_file.read_text(encoding="utf-8"))
    edit(routes)
    routes_file.write_text(json.dumps(routes), encoding="utf-8")
    return root


def assert_secrets_kept(result: Crawl, *secrets: str) -> None:
    """Rule of truth 8: a secret reaches the provider and nothing we write or log."""
    written = (json.dumps(result.report), json.dumps(result.feed), result.log)
    for secret in secrets:
        for text in written:
            assert secret not in text


def assert_auth_missing(result: Crawl, env: str) -> None:
    """Credentials unset: nothing asked, `auth: missing`, a run that needs auth (not failed,
    never sold out)."""
    assert result.returncode == 0, result.log[-2000:]
    assert result.feed == [] and result.calls == []
    report = result.report
    assert report["auth"] == "missing" and env in (report["auth_detail"] or "")
    assert report["errors"] == [] and report["layout_errors"] == []
    assert classify_run(report, returncode=result.returncode).status is RunStatus.AUTH_REQUIRED


def assert_auth_rejected(result: Crawl, *secrets: str) -> None:
    """Credentials refused: no rows, `auth: rejected`, not a layout change, secrets kept."""
    assert result.feed == []
    report = result.report
    assert report["auth"] == "rejected" and report["layout_errors"] == []
    assert classify_run(report, returncode=result.returncode).status is RunStatus.AUTH_REQUIRED
    assert_secrets_kept(result, *secrets)


def assert_api_spider(
    spider: type[ProviderSpider], *, home: str, auth_env: tuple[str, ...], needs_auth: bool
) -> None:
    """A JSON API spider: Scrapy's own HTTP client (no browser), robots.txt not asked (it is
    for page crawlers), and the facts `gpurent providers` shows."""
    settings = Settings()
    spider.update_settings(settings)
    assert not settings.getdict("DOWNLOAD_HANDLERS")
    assert settings.getbool("ROBOTSTXT_OBEY") is False
    assert (spider.home, spider.needs_browser) == (home, False)
    assert (spider.auth_env, spider.needs_auth) == (auth_env, needs_auth)


# -- a crawl as the flow runs it (flows.crawl.run_crawl), for tests that load what it found --


@dataclass(frozen=True)
class FlowCrawl:
    """One `run_crawl` of a provider and the requests it sent the replay server."""

    outcome: CrawlOutcome
    calls: list[RecordedRequest]

    @property
    def report(self) -> dict[str, Any]:
        report = self.outcome.report()
        assert report is not None, self.log()[-2000:]
        return report

    @property
    def feed(self) -> list[dict[str, Any]]:
        assert self.outcome.feed_path.is_file(), self.log()[-2000:]
        lines = self.outcome.feed_path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    @property
    def offers(self) -> dict[str, dict[str, Any]]:
        return {r["offer_key"]: r for r in self.feed if r["kind"] == "offer"}

    def log(self) -> str:
        """Scrapy's log, and what the process printed before it opened it."""
        logs = (self.outcome.log_path.with_suffix(".stderr"), self.outcome.log_path)
        return "".join(p.read_text(encoding="utf-8") for p in logs if p.is_file())


def flow_crawl(
    server: ReplayServer,
    provider: str,
    work: Path,
    run_id: str,
    env: tuple[tuple[str, str], ...] = (),
) -> FlowCrawl:
    """`run_crawl` of ``provider`` against ``server``, as the crawl flow runs it."""
    spec = CrawlSpec(
        provider=provider,
        run_id=run_id,
        work_dir=work,
        base_url=server.base_url(provider),
        env=env,
    )
    outcome = run_crawl(spec)
    return FlowCrawl(outcome, [r for r in server.requests if r.provider == provider])


@dataclass(frozen=True)
class DefaultThenSpoilt:
    """A provider crawled from its default recordings, then from spoilt ones (a page that
    fails, an empty answer), both loaded into one warehouse in that order."""

    default: FlowCrawl
    spoilt: FlowCrawl
    db: Path
    statuses: dict[str, str]
    """Run id to the status the load gave it."""


def default_then_spoilt(
    tmp: Path,
    provider: str,
    spoilt: Path,
    run_ids: tuple[str, str],
    env: tuple[tuple[str, str], ...] = (),
) -> DefaultThenSpoilt:
    """Two crawls as the flow runs them (``flow_crawl``), the second against the recordings
    at ``spoilt``, loaded as the nightly job loads them: the truth a failed read leaves."""
    from flows.nightly import load_and_track

    with ReplayServer() as server:
        default = flow_crawl(server, provider, tmp / "feeds", run_ids[0], env)
    with ReplayServer(root=spoilt) as server:
        second = flow_crawl(server, provider, tmp / "feeds", run_ids[1], env)
    db = tmp / "warehouse.duckdb"
    loaded = load_and_track(db, [default.outcome, second.outcome])
    statuses = {r.outcome.run_id: r.summary.status for r in loaded.runs}
    return DefaultThenSpoilt(default, second, db, statuses)


# -- a spider's callbacks in process (no crawl): its first requests, an answer to one ----------


def first_requests(spider: Any) -> list[scrapy.Request]:
    """What ``spider.start()`` yields, collected."""

    async def collect() -> list[scrapy.Request]:
        return [request async for request in spider.start()]

    return asyncio.run(collect())


def answer(request: scrapy.Request, body: bytes, status: int = 200) -> TextResponse:
    """The response ``request`` gets when the server says ``body`` with ``status``."""
    return TextResponse(request.url, body=body, status=status, request=request)


def requests_in(out: list[Any]) -> list[scrapy.Request]:
    """The follow-up requests among what a callback yielded."""
    return [o for o in out if isinstance(o, scrapy.Request)]
