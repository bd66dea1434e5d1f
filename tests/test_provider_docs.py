"""The provider table (docs/providers.md) says which bundled recordings keep an unreadable
offer on purpose, and it says what the recordings' PROVENANCE files say (the crawl test holds
the runs to them)."""

from __future__ import annotations

import re

from replay.loader import provider_recordings
from tests.conftest import REPO_ROOT


def on_purpose_in_provenance() -> set[str]:
    return {
        name
        for name, p in provider_recordings().items()
        if (p / "PROVENANCE").is_file()
        and "Unreadable on purpose:" in (p / "PROVENANCE").read_text(encoding="utf-8")
    }


def test_the_provider_table_names_the_recordings_partial_on_purpose() -> None:
    text = (REPO_ROOT / "docs" / "providers.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([a-z]+)` .*\|$", text, flags=re.MULTILINE)
    partial = set(re.findall(r"^\| `([a-z]+)` .*replay `partial` on purpose", text, re.MULTILINE))
    assert rows and partial == on_purpose_in_provenance()
