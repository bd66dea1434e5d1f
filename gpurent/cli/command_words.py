"""Which commands only read: shared by the front door and the resident server.

Kept apart from `gpurent.cli.app` (which imports Typer) because the console script's entry
reads it before deciding whether to import anything heavy at all.
"""

from __future__ import annotations

from collections.abc import Sequence

# Commands that read the warehouse (or nothing) and print: they write no warehouse, start no
# process and hand DuckDB no DataFrame. `index export` writes the CSV it is asked for, in
# the caller's working directory, which a served command keeps.
READ_ONLY_COMMANDS = frozenset(
    {"offers", "cheapest", "explain", "providers", "quarantine", "size", "models", "gpus",
     "index", "history", "rank"}
)  # fmt: skip

DEBUG_FLAG = "--debug"


def command_word(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names (``--debug`` may stand anywhere, so it is skipped)."""
    return next((arg for arg in argv if arg != DEBUG_FLAG), None)


def is_read_only(argv: Sequence[str]) -> bool:
    return command_word(argv) in READ_ONLY_COMMANDS
