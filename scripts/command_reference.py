"""Write docs/commands.md, the command reference, from the CLI's own `--help` output.

Every command's help, as `gpurent ... --help` prints it: the app's, each command's, each
group's and each subcommand's. The CLI is built and asked in this process (no `gpurent`
process per command), at a fixed width and without colour, so the page is the same on every
machine. A test (tests/test_docs.py) fails when the page is stale. Run it after changing a
command, an option or a help text:

    .venv/bin/python scripts/command_reference.py           # rewrite docs/commands.md
    .venv/bin/python scripts/command_reference.py --check   # exit 1 if it is stale
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
from collections.abc import Iterator
from pathlib import Path

# Typer carries its own copy of Click (as gpurent/cli/app.py says): its types are these.
from typer import _click as click

REPO = Path(__file__).resolve().parents[1]
TARGET = REPO / "docs" / "commands.md"
WIDTH = 100
COMMAND = "scripts/command_reference.py"

HEADER = f"""# Command reference

Every `gpurent` command's `--help`, as the command line prints it at {WIDTH} columns.
Generated from the command line itself by `{COMMAND}`: do not edit
by hand. `tests/test_docs.py` fails when this page no longer matches, so after changing a
command, an option or a help text, run:

```sh
.venv/bin/python {COMMAND}
```

Which command answers which question: [Using gpurent](usage.md); where to start: the
[README](../README.md).
"""


@contextlib.contextmanager
def _plain_terminal() -> Iterator[None]:
    """Help at WIDTH columns without colour, whatever the terminal and the environment say
    (Typer reads FORCE_COLOR, TERMINAL_WIDTH and the like once, at import)."""
    from typer import rich_utils

    names = ("MAX_WIDTH", "COLOR_SYSTEM", "FORCE_TERMINAL")
    saved = {name: getattr(rich_utils, name) for name in names}
    columns = os.environ.get("COLUMNS")
    rich_utils.MAX_WIDTH = WIDTH
    rich_utils.COLOR_SYSTEM = None
    rich_utils.FORCE_TERMINAL = False
    os.environ["COLUMNS"] = str(WIDTH)  # for Click's own formatter, should one be used
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(rich_utils, name, value)
        if columns is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = columns


def _help(root: click.Command, path: list[str]) -> str:
    """What `gpurent PATH --help` prints, trailing blanks dropped."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        root.main(args=[*path, "--help"], prog_name="gpurent", standalone_mode=False)
    lines = [line.rstrip() for line in out.getvalue().splitlines()]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    if not lines:
        raise RuntimeError(f"`gpurent {' '.join(path)} --help` printed nothing")
    return "\n".join(lines)


def _paths(command: click.Command, ctx: click.Context, path: list[str]) -> Iterator[list[str]]:
    """Every command path under ``command``, in the order `--help` lists them (hidden
    commands left out, as `--help` leaves them out)."""
    from typer.core import TyperGroup

    yield path
    if isinstance(command, TyperGroup):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is None or sub.hidden:
                continue
            yield from _paths(sub, click.Context(sub, info_name=name, parent=ctx), [*path, name])


def render() -> str:
    """The whole page."""
    from typer.main import get_command

    from gpurent.cli.app import build_app

    root = get_command(build_app())
    sections = [HEADER]
    with _plain_terminal():
        paths = list(_paths(root, click.Context(root, info_name="gpurent"), []))
        index = ["## Commands", ""]
        for path in paths:
            name = " ".join(["gpurent", *path])
            index.append(f"{'  ' * max(len(path) - 1, 0)}- [`{name}`](#{_anchor(name)})")
        sections.append("\n".join(index) + "\n")
        for path in paths:
            name = " ".join(["gpurent", *path])
            sections.append(f"## `{name}`\n\n```\n{_help(root, path)}\n```\n")
    return "\n".join(sections)


def _anchor(title: str) -> str:
    """GitHub's anchor for a heading `` `title` ``: lower case, spaces to hyphens, other
    punctuation dropped."""
    keep = (c if c.isalnum() or c in "-_ " else "" for c in title.lower())
    return "".join(keep).replace(" ", "-")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="exit 1 if docs/commands.md is stale; write nothing"
    )
    args = parser.parse_args(argv)
    page = render()
    current = TARGET.read_text(encoding="utf-8") if TARGET.is_file() else None
    if args.check:
        if current != page:
            print(
                f"{TARGET.relative_to(REPO)} is stale: run .venv/bin/python {COMMAND}",
                file=sys.stderr,
            )
            return 1
        return 0
    if current != page:
        TARGET.write_text(page, encoding="utf-8")
        print(f"wrote {TARGET.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
