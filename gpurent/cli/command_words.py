"""Which commands only read, and the flag that asks for tracebacks (kept light: the front
door reads them before Typer is imported)."""

from __future__ import annotations

# Commands that read the warehouse (or nothing) and print: they write no warehouse, start no
# process and hand DuckDB no DataFrame (gpurent.cli.app.keep_pandas_out).
READ_ONLY_COMMANDS = frozenset(
    {"offers", "cheapest", "explain", "providers", "quarantine", "size", "models", "gpus",
     "index", "history", "rank", "tco"}
)  # fmt: skip

DEBUG_FLAG = "--debug"
