"""Fixture cases for the parser tests: `spiders/providers/<folder>/fixtures/<case>/`.

Each provider keeps its cases in its own folder (`gpurent_core.providers`), beside its
recordings. A case folder holds the input and what parsing it must give:

* `input.json` / `input.html`: the page itself, or `input.path`: one line naming a page kept
  elsewhere, `recording:<provider>/<file>` (the provider's `recordings/`, the default replay
  scene) or `fixture:<provider>/<case>/<file>` (another case's input, in its `fixtures/`);
* `output.json`: the records as feed lines, without `run_id` and `observed_at`;
* `page.json` (optional): expected page facts (layout_error, last_id, max_page, ...).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gpurent_core.host import HOST_FIELDS
from gpurent_core.model import parse_parser_record
from gpurent_core.providers import BY_NAME, PROVIDERS
from spiders.parsers.common import feed_dicts

REPO_ROOT = Path(__file__).resolve().parents[2]


def recordings_of(provider: str) -> Path:
    """`provider`'s answers in the default replay scene: its folder's `recordings/`."""
    return BY_NAME[provider].recordings


def fixtures_of(provider: str) -> Path:
    """`provider`'s fixture cases: its folder's `fixtures/`."""
    return BY_NAME[provider].fixtures


FIXTURE_PROVIDERS = [p.name for p in PROVIDERS if p.fixtures.is_dir()]
"""Providers with fixture cases (every one: tests/test_provider_folders.py)."""


def resolve_ref(ref: str) -> Path:
    """`recording:<provider>/<file>` or `fixture:<provider>/<file>`, as a path."""
    kind, _, rel = ref.strip().partition(":")
    provider, _, rest = rel.partition("/")
    base = {"recording": recordings_of, "fixture": fixtures_of}[kind]
    return base(provider) / rest


RUN_ID = "test-run"
OBSERVED_AT = datetime(2026, 10, 4, 12, 0, tzinfo=UTC)
VOLATILE = ("run_id", "observed_at")


@dataclass(frozen=True)
class Case:
    provider: str
    name: str
    folder: Path

    @property
    def source(self) -> Path:
        ref = self.folder / "input.path"
        if ref.is_file():
            return resolve_ref(ref.read_text(encoding="utf-8"))
        for name in ("input.json", "input.html"):
            if (self.folder / name).is_file():
                return self.folder / name
        raise FileNotFoundError(f"{self.folder}: no input.json, input.html or input.path")

    @property
    def is_html(self) -> bool:
        return self.source.suffix == ".html"

    def input_bytes(self) -> bytes:
        return self.source.read_bytes()

    def expected_records(self) -> list[dict[str, Any]]:
        return json.loads((self.folder / "output.json").read_text(encoding="utf-8"))

    def expected_page(self) -> dict[str, Any]:
        path = self.folder / "page.json"
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def cases(provider: str) -> list[Case]:
    root = fixtures_of(provider)
    return [Case(provider, d.name, d) for d in sorted(root.iterdir()) if d.is_dir()]


def strip_volatile(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records without their volatile fields, and without the host attributes they leave
    null (``gpurent_core.host.HOST_FIELDS``: a case's `output.json` lists only the ones its
    provider publishes)."""
    return [
        {k: v for k, v in r.items() if k not in VOLATILE and not (v is None and k in HOST_FIELDS)}
        for r in records
    ]


def assert_matches_case(page: Any, case: Case) -> None:
    """A parsed page is what the case folder says: its records are `output.json` (volatile
    fields aside), its facts are `page.json`'s, and each record is a valid feed line of the
    test run."""
    lines = feed_dicts(page.records)
    assert strip_volatile(lines) == case.expected_records()
    for key, value in case.expected_page().items():
        assert getattr(page, key) == value, key
    for line in lines:
        assert line["run_id"] == RUN_ID
        parse_parser_record(line)


def recorded_bodies(provider: str) -> set[str]:
    """Body files the default scene serves for `provider` (scripts excluded)."""
    routes = json.loads((recordings_of(provider) / "routes.json").read_text(encoding="utf-8"))
    return {r["body"] for r in routes if "body" in r and not r["body"].endswith(".js")}


def covered_recordings(provider: str) -> set[str]:
    covered: set[str] = set()
    for case in cases(provider):
        ref = case.folder / "input.path"
        if ref.is_file():
            kind, _, rel = ref.read_text(encoding="utf-8").strip().partition(":")
            if kind == "recording" and rel.startswith(f"{provider}/"):
                covered.add(rel.split("/", 1)[1])
    return covered
