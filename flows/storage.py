"""Crawl outcomes on shared storage, so crawls on several machines feed one loader.

A ``FeedStore`` is a folder on any filesystem fsspec knows: a local or NFS path, ``file://``,
``memory://`` (one process; tests), or an object store URL such as ``s3://bucket/gpurent``
when the fsspec package for it (s3fs, gcsfs, adlfs, ...) is installed on every machine. A
crawled provider's files go under ``<root>/<run_id>/<provider>/``:

    <provider>.jsonl      the feed (absent when the crawler wrote none)
    <provider>.run.json   the spider's run report
    <provider>.log        Scrapy's log, and <provider>.stderr what it printed before the log
    outcome.json          written last: times, exit code, the files and their SHA-256

A provider's outcome exists once its ``outcome.json`` does; the files it names are checked
against their digests when fetched, so a reader never loads half of an upload. Putting the
same outcome again changes nothing; putting a different one for the same run and provider
(a retried crawler) replaces it, marker first removed, and the loader loads whichever it
finds (a run already stored in the warehouse is skipped, so a late replacement is ignored).

``fetch`` copies a run's outcomes into a local folder laid out as ``flows.crawl`` lays out a
crawl (``<dir>/<run_id>/<provider>.jsonl``, ...), so the loader, its pending-load manifest
and ``gpurent load`` work on them exactly as on a local crawl.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import socket
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fsspec.core import url_to_fs

from flows.crawl import CrawlOutcome

OUTCOME_MARKER = "outcome.json"
OUTCOME_FORMAT = "gpurent-stored-outcome/1"
SUMMARY_NAME = "summary.json"
# Run ids and provider names become path segments: keep them plain.
_SEGMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
_CHUNK = 1 << 20


class StoreError(RuntimeError):
    """Shared storage holds something that cannot be used (a bad marker, a torn upload)."""


@dataclass(frozen=True)
class StoredOutcome:
    """What ``outcome.json`` says about one provider's crawl in one run."""

    provider: str
    run_id: str
    started_at: datetime
    finished_at: datetime
    returncode: int | None
    files: dict[str, str] = field(default_factory=dict)
    """Kind (feed, report, log, stderr) -> file name, for the files the crawler wrote."""
    digests: dict[str, str] = field(default_factory=dict)
    """Kind -> SHA-256 of that file."""
    crawled_by: str = ""
    """Which machine and process crawled it (GPURENT_CRAWLER_ID, else host:pid)."""

    def doc(self) -> dict[str, Any]:
        return {
            "format": OUTCOME_FORMAT,
            "provider": self.provider,
            "run_id": self.run_id,
            "started_at": self.started_at.isoformat(),
            "finished_at": self.finished_at.isoformat(),
            "returncode": self.returncode,
            "files": dict(sorted(self.files.items())),
            "digests": dict(sorted(self.digests.items())),
            "crawled_by": self.crawled_by,
        }

    @classmethod
    def from_doc(cls, doc: Any, where: str) -> StoredOutcome:
        if not isinstance(doc, dict) or doc.get("format") != OUTCOME_FORMAT:
            raise StoreError(f"{where}: not a stored outcome (format {OUTCOME_FORMAT})")
        try:
            code = doc["returncode"]
            return cls(
                provider=check_segment(str(doc["provider"]), "provider"),
                run_id=check_segment(str(doc["run_id"]), "run id"),
                started_at=_utc(doc["started_at"]),
                finished_at=_utc(doc["finished_at"]),
                returncode=None if code is None else int(code),
                files={str(k): str(v) for k, v in dict(doc["files"]).items()},
                digests={str(k): str(v) for k, v in dict(doc["digests"]).items()},
                crawled_by=str(doc.get("crawled_by") or ""),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise StoreError(f"{where}: incomplete stored outcome ({exc!r})") from exc


@dataclass(frozen=True)
class PutResult:
    stored: StoredOutcome
    written: bool
    """False when the same outcome was already there (nothing was written)."""
    location: str


def check_segment(value: str, what: str) -> str:
    """A run id or provider name usable as one path segment, or ValueError."""
    if not _SEGMENT.match(value) or value in {".", ".."}:
        raise ValueError(f"{what} {value!r} cannot name a folder (letters, digits, _ . -)")
    return value


def crawler_id() -> str:
    return os.environ.get("GPURENT_CRAWLER_ID") or f"{socket.gethostname()}:{os.getpid()}"


def _utc(text: Any) -> datetime:
    value = datetime.fromisoformat(str(text))
    if value.tzinfo is None:
        raise ValueError(f"time without a zone: {text}")
    return value.astimezone(UTC)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as source:
        while chunk := source.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _local_files(outcome: CrawlOutcome) -> dict[str, Path]:
    return {
        "feed": outcome.feed_path,
        "report": outcome.report_path,
        "log": outcome.log_path,
        "stderr": outcome.log_path.with_suffix(".stderr"),
    }


class FeedStore:
    """Crawl outcomes under one root URL or path (see the module docstring for the layout)."""

    def __init__(self, url: str | os.PathLike[str], **storage_options: Any) -> None:
        self.url = os.fspath(url)
        if not self.url:
            raise ValueError("a feed store needs a path or URL")
        self.fs, root = url_to_fs(self.url, **storage_options)
        self.root = root.rstrip("/") or "/"

    def __repr__(self) -> str:
        return f"FeedStore({self.url!r})"

    def _path(self, *parts: str) -> str:
        return "/".join([self.root.rstrip("/"), *parts])

    def location(self, run_id: str, provider: str | None = None) -> str:
        """Where a run (or one provider's outcome in it) lives, as the store's URL sees it."""
        parts = [check_segment(run_id, "run id")]
        if provider is not None:
            parts.append(check_segment(provider, "provider"))
        return "/".join([self.url.rstrip("/"), *parts])

    # -- writing -------------------------------------------------------------------------

    def put(self, outcome: CrawlOutcome, *, crawled_by: str | None = None) -> PutResult:
        """Store one provider's crawl; the same outcome twice is written once."""
        provider = check_segment(outcome.provider, "provider")
        run_id = check_segment(outcome.run_id, "run id")
        local = {kind: p for kind, p in _local_files(outcome).items() if p.is_file()}
        stored = StoredOutcome(
            provider=provider,
            run_id=run_id,
            started_at=outcome.started_at.astimezone(UTC),
            finished_at=outcome.finished_at.astimezone(UTC),
            returncode=outcome.returncode,
            files={kind: p.name for kind, p in local.items()},
            digests={kind: _sha256(p) for kind, p in local.items()},
            crawled_by=crawled_by if crawled_by is not None else crawler_id(),
        )
        folder = self._path(run_id, provider)
        marker = f"{folder}/{OUTCOME_MARKER}"
        existing = self._read_marker(marker)
        where = self.location(run_id, provider)
        if existing is not None and _same_crawl(existing, stored):
            return PutResult(existing, written=False, location=where)
        if existing is not None:
            # A different crawl replaces this one: no marker while its files change.
            self.fs.rm_file(marker)
        self.fs.makedirs(folder, exist_ok=True)
        for kind, path in local.items():
            self.fs.put_file(str(path), f"{folder}/{stored.files[kind]}")
        for name in set(existing.files.values() if existing else ()) - set(stored.files.values()):
            # A file the earlier crawl had and this one has not (no feed this time).
            self._rm_if_there(f"{folder}/{name}")
        self._write_atomic(marker, json.dumps(stored.doc(), indent=2).encode("utf-8"))
        return PutResult(stored, written=True, location=where)

    def put_summary(self, run_id: str, rows: list[dict[str, Any]]) -> str:
        """The loader's summary of a run (one row per provider), beside its outcomes."""
        path = self._path(check_segment(run_id, "run id"), SUMMARY_NAME)
        self.fs.makedirs(self._path(run_id), exist_ok=True)
        doc = {"run_id": run_id, "runs": rows}
        self._write_atomic(path, json.dumps(doc, indent=2, default=str).encode("utf-8"))
        return f"{self.url.rstrip('/')}/{run_id}/{SUMMARY_NAME}"

    def _write_atomic(self, path: str, data: bytes) -> None:
        tmp = f"{path}.{secrets.token_hex(4)}.tmp"
        self.fs.pipe_file(tmp, data)
        try:
            self.fs.mv(tmp, path)
        finally:
            self._rm_if_there(tmp)

    def _rm_if_there(self, path: str) -> None:
        if self.fs.exists(path):
            self.fs.rm_file(path)

    # -- reading -------------------------------------------------------------------------

    def _read_marker(self, path: str) -> StoredOutcome | None:
        try:
            data = self.fs.cat_file(path)
        except FileNotFoundError:
            return None
        try:
            doc = json.loads(data)
        except ValueError as exc:
            raise StoreError(f"{path}: not JSON ({exc})") from exc
        return StoredOutcome.from_doc(doc, path)

    def runs(self) -> list[str]:
        """The run ids the store holds, oldest first (run ids start with their UTC time)."""
        if not self.fs.exists(self.root):
            return []
        entries = self.fs.ls(self.root, detail=True)
        names = [
            str(e["name"]).rstrip("/").rsplit("/", 1)[-1]
            for e in entries
            if e.get("type") == "directory"
        ]
        return sorted(n for n in names if _SEGMENT.match(n))

    def outcomes(self, run_id: str) -> list[StoredOutcome]:
        """The providers stored for a run (those with an outcome marker), by name."""
        folder = self._path(check_segment(run_id, "run id"))
        if not self.fs.exists(folder):
            return []
        found = []
        for entry in self.fs.ls(folder, detail=True):
            name = str(entry["name"]).rstrip("/").rsplit("/", 1)[-1]
            if entry.get("type") != "directory" or not _SEGMENT.match(name):
                continue  # the run's summary, a temporary file
            stored = self._read_marker(f"{folder}/{name}/{OUTCOME_MARKER}")
            if stored is None:
                continue  # an upload under way, or a folder that is not ours
            if (stored.run_id, stored.provider) != (run_id, name):
                raise StoreError(f"{folder}/{name}: marker names {stored.run_id}/{stored.provider}")
            found.append(stored)
        return sorted(found, key=lambda s: s.provider)

    def fetch(
        self, run_id: str, dest: Path, providers: list[str] | None = None
    ) -> list[CrawlOutcome]:
        """Copy a run's stored outcomes to ``dest/<run_id>/`` as a local crawl lays them out.

        ``providers`` limits the copy (a provider not stored is simply absent from the
        result). Each file is checked against its digest; fetching again overwrites.
        """
        wanted = None if providers is None else set(providers)
        run_dir = dest / check_segment(run_id, "run id")
        run_dir.mkdir(parents=True, exist_ok=True)
        fetched = []
        for stored in self.outcomes(run_id):
            if wanted is not None and stored.provider not in wanted:
                continue
            fetched.append(self._fetch_one(stored, run_dir))
        return fetched

    def _fetch_one(self, stored: StoredOutcome, run_dir: Path) -> CrawlOutcome:
        p = stored.provider
        local = {
            "feed": run_dir / f"{p}.jsonl",
            "report": run_dir / f"{p}.run.json",
            "log": run_dir / f"{p}.log",
            "stderr": run_dir / f"{p}.stderr",
        }
        folder = self._path(stored.run_id, p)
        for kind, target in local.items():
            name = stored.files.get(kind)
            if name is None:
                target.unlink(missing_ok=True)  # the crawler wrote none: none here either
                continue
            tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
            try:
                self.fs.get_file(f"{folder}/{name}", str(tmp))
                if _sha256(tmp) != stored.digests.get(kind):
                    raise StoreError(
                        f"{self.location(stored.run_id, p)}/{name}: does not match its "
                        "digest (being rewritten by a retried crawl?)"
                    )
                os.replace(tmp, target)
            finally:
                tmp.unlink(missing_ok=True)
        return CrawlOutcome(
            provider=p,
            run_id=stored.run_id,
            started_at=stored.started_at,
            finished_at=stored.finished_at,
            returncode=stored.returncode,
            feed_path=local["feed"],
            report_path=local["report"],
            log_path=local["log"],
        )


def _same_crawl(a: StoredOutcome, b: StoredOutcome) -> bool:
    """The same crawl put twice (who put it does not matter)."""
    return (a.started_at, a.finished_at, a.returncode, a.files, a.digests) == (
        b.started_at,
        b.finished_at,
        b.returncode,
        b.files,
        b.digests,
    )
