"""The repository stands on its own: no tracked file cites a document that lives outside it
(a public clone has nothing beside it). Facts are stated where they are used, with their
public source; the sizing formulas' sources are in sizing/README.md."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# Written in parts so that a grep for them does not find this file.
CITED_OUTSIDE = (
    "../" + "shared",
    "shared/" + "data/provider-samples",
    "SIZING" + ".md",
    "PROVIDERS" + ".md",
)
OUTSIDE = re.compile("|".join(re.escape(s) for s in CITED_OUTSIDE))
ALLOWED = {
    "tests/test_docs.py",  # its link check's self-test names a path outside on purpose
    "tests/test_self_contained.py",
}
BINARY_SUFFIXES = {
    ".png", ".jpg", ".jpeg", ".gif", ".webp", ".ico", ".pdf", ".gz", ".zip", ".whl",
    ".parquet", ".sqlite", ".db", ".woff", ".woff2", ".ttf", ".pyc",
}  # fmt: skip


def tracked_files() -> list[str]:
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [name for name in out.decode("utf-8").split("\0") if name]


def outside_references(root: Path, names: list[str]) -> list[str]:
    """``file:line: text`` for every line of a text file in ``names`` that cites a document
    outside the repository; binaries (by suffix, or a NUL byte) are skipped."""
    found = []
    for name in names:
        if name in ALLOWED or Path(name).suffix.lower() in BINARY_SUFFIXES:
            continue
        try:
            raw = (root / name).read_bytes()
        except (FileNotFoundError, IsADirectoryError):
            continue  # deleted in the work tree, or a submodule
        if b"\0" in raw[:8192]:
            continue
        text = raw.decode("utf-8", errors="replace")
        if not OUTSIDE.search(text):
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            if OUTSIDE.search(line):
                found.append(f"{name}:{number}: {line.strip()[:120]}")
    return found


def test_no_tracked_file_cites_a_document_outside_the_repository() -> None:
    problems = outside_references(REPO, tracked_files())
    assert not problems, (
        "cite the public source (or the project's own document) instead:\n" + "\n".join(problems)
    )


def test_the_check_finds_what_it_must(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n# see " + "SIZING" + ".md §3\n", encoding="utf-8")
    (tmp_path / "b.js").write_text("/* " + "../" + "shared/x */\n", encoding="utf-8")
    (tmp_path / "c.png").write_bytes(b"PROVIDERS" + b".md")
    (tmp_path / "d.bin").write_bytes(b"\0" + b"PROVIDERS" + b".md")
    (tmp_path / "e.md").write_text("fine\n", encoding="utf-8")
    names = ["a.py", "b.js", "c.png", "d.bin", "e.md", "gone.txt"]
    assert [p.split(": ")[0] for p in outside_references(tmp_path, names)] == ["a.py:2", "b.js:1"]
