"""The documents: the README stays a front door, every relative link leads somewhere inside
the repository, and the command reference says what the command line says now."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
README_MAX_LINES = 250
LINKING_DOCS = [README, REPO / "CONTRIBUTING.md", *sorted((REPO / "docs").glob("*.md"))]

FENCE = re.compile(r"^ {0,3}(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
# [text](target "title") and ![alt](target); the target may be wrapped in <...>.
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^\s)>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^ {0,3}\[[^\]]+\]:[ \t]*<?(\S+?)>?(?:\s|$)", re.M)
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def prose_lines(path: Path) -> list[tuple[int, str]]:
    """The lines of ``path`` outside fenced code blocks, numbered from 1."""
    out, fenced = [], False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            out.append((number, line))
    return out


def links_of(path: Path) -> list[tuple[int, str]]:
    """Every link target of ``path`` (inline, image and reference), with its line; code
    left out. A link's text may wrap onto the next lines, as a code span may."""
    lines = dict(prose_lines(path))
    count = len(path.read_text(encoding="utf-8").splitlines())
    text = "\n".join(lines.get(number, "") for number in range(1, count + 1))
    # A code span is no link; keep its newlines so that line numbers stay right.
    text = CODE_SPAN.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    matches = [m for pattern in (INLINE_LINK, REFERENCE_LINK) for m in pattern.finditer(text)]
    matches.sort(key=lambda m: m.start())
    return [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in matches]


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: its text (no code ticks, link targets or emphasis
    marks) lower-cased, punctuation dropped, spaces made hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").lower()
    kept = "".join(c for c in text if c.isalnum() or c in " -_")
    return kept.replace(" ", "-")


def anchors_of(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    anchors = set()
    for _, line in prose_lines(path):
        found = HEADING.match(line)
        if not found:
            continue
        base = anchor(found.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        anchors.add(base if count == 0 else f"{base}-{count}")
    return anchors


def broken_links(path: Path, root: Path = REPO) -> list[str]:
    """What is wrong with the relative links of ``path`` (a file under ``root``)."""
    problems = []
    where = path.relative_to(root)
    for number, target in links_of(path):
        if SCHEME.match(target) or target.startswith("//"):
            continue  # a web address: not this test's business
        file_part, _, fragment = target.partition("#")
        if file_part.startswith("/"):
            problems.append(f"{where}:{number}: {target}: write links relative to the file")
            continue
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.is_relative_to(root):
            problems.append(f"{where}:{number}: {target} leaves the repository")
        elif not dest.exists():
            problems.append(f"{where}:{number}: {target}: no such file")
        elif fragment and dest.suffix == ".md" and fragment not in anchors_of(dest):
            problems.append(f"{where}:{number}: {target}: no heading #{fragment} there")
    return problems


def test_the_readme_is_a_front_door() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines (at most {README_MAX_LINES}): move the detail to "
        "a page of docs/ and link it"
    )
    targets = {target for _, target in links_of(README)}
    assert "docs/commands.md" in targets, "the README links the command reference"


@pytest.mark.parametrize("path", LINKING_DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_lead_to_files_inside_the_repository(path: Path) -> None:
    problems = broken_links(path)
    assert not problems, "\n".join(problems)


def test_the_link_check_finds_what_it_must(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "b.md").write_text("# B\n\n## The `b` part: two\n", encoding="utf-8")
    doc = root / "docs" / "a.md"
    doc.write_text(
        "# A\n\n"
        "[out](../../elsewhere/x.md) [gone](nowhere.md) [anchor](b.md#nothing)\n"
        "[fine](b.md#the-b-part-two) ![img](b.md) [self](#a) [web](https://example.com/x)\n"
        "`[code](no.md)` and `a code span\nthat wraps [code](no.md)`, [a link\nthat wraps](lost.md)\n"
        "\n```\n[fenced](no.md)\n```\n[ref]: gone.md\n",
        encoding="utf-8",
    )
    assert broken_links(doc, root) == [
        "docs/a.md:3: ../../elsewhere/x.md leaves the repository",
        "docs/a.md:3: nowhere.md: no such file",
        "docs/a.md:3: b.md#nothing: no heading #nothing there",
        "docs/a.md:6: lost.md: no such file",
        "docs/a.md:12: gone.md: no such file",
    ]


def test_the_command_reference_is_current() -> None:
    from scripts.command_reference import COMMAND, TARGET, render

    assert TARGET.is_file(), f"docs/commands.md is missing: run .venv/bin/python {COMMAND}"
    current = TARGET.read_text(encoding="utf-8") == render()
    assert current, (
        f"docs/commands.md is stale (a command, option or help text changed): "
        f"run .venv/bin/python {COMMAND}"
    )
