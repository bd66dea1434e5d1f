"""One line for every error a user can meet, instead of a traceback (`--debug` shows it).

The command line is a front door: a bad `--db`, a locked file or a failed migration is the
user's situation to fix, said in one line with what to do and a documented exit code. Only a
bug is worth a traceback, and then only on request (`--debug` or GPURENT_DEBUG=1).

Exit codes: 2 for something the user can fix (a bad path, a file that is not a warehouse, a
locked warehouse), 1 for an unexpected error, 130 for Ctrl-C.
"""

from __future__ import annotations

import os
import re
import sys
import traceback
from pathlib import Path
from typing import Any, NoReturn

from gpurent.cli.command_words import DEBUG_FLAG

USER_ERROR = 2
UNEXPECTED = 1
INTERRUPTED = 130


class Interrupted(BaseException):
    """Ctrl-C. Not a KeyboardInterrupt: Click turns that into "Aborted!" and exit 1."""


def refuse(message: str, code: int = 2) -> NoReturn:
    """Say why the command stops, in the one line every refusal has (``gpurent: ...``);
    with ``--debug``, a refusal made while handling an error shows that error's traceback
    first, as the front door does for the rest."""
    import typer

    if debug_requested(sys.argv[1:])[0] and sys.exc_info()[1] is not None:
        traceback.print_exc()
    typer.secho(f"gpurent: {message}", err=True, fg="red")
    raise typer.Exit(code)


def raise_interrupted(signum: int, frame: object) -> None:
    """SIGINT handler: unwind to the console script's `main()` (exit 130)."""
    raise Interrupted


def debug_requested(argv: list[str]) -> tuple[bool, list[str]]:
    """(debug on?, argv without the flag): `--debug` may stand anywhere on the line."""
    said = os.environ.get("GPURENT_DEBUG", "").strip().lower()
    # Off is said many ways ("0", "no", "false", "off"): only a yes turns tracebacks on.
    wanted = DEBUG_FLAG in argv or said in DEBUG_ON
    return wanted, [arg for arg in argv if arg != DEBUG_FLAG]


DEBUG_ON = frozenset({"1", "yes", "true", "on", "y"})


# The installable part (pyproject's extras) that brings each optional package.
PART_OF_PACKAGE = {
    "scrapy": "crawl",
    "scrapy_playwright": "crawl",
    "playwright": "crawl",
    "twisted": "crawl",
    "prefect": "crawl",
    "fsspec": "crawl",
    "streamlit": "dashboard",
}


def missing_part(exc: BaseException) -> str | None:
    """The extra to install when ``exc`` is an optional package not installed, else None."""
    if not isinstance(exc, ModuleNotFoundError) or not exc.name:
        return None
    return PART_OF_PACKAGE.get(exc.name.split(".")[0])


def explain(exc: BaseException) -> tuple[str, int]:
    """The one-line message and exit code for an error that reached the top."""
    if isinstance(exc, KeyboardInterrupt | Interrupted):
        return "interrupted", INTERRUPTED
    if isinstance(exc, ModuleNotFoundError) and (part := missing_part(exc)):
        return (
            f"this command needs gpurent's {part} part, which is not installed here"
            f" (no module {exc.name}): pip install 'gpurent[{part}]'"
        ), USER_ERROR
    message = " ".join(str(exc).split())
    # Imported lazily: the warehouse (and DuckDB) load only for commands that use them.
    warehouse_errors = sys.modules.get("warehouse.errors")
    if warehouse_errors is not None and isinstance(exc, warehouse_errors.WarehouseError):
        hint = "" if "crawl" in message else _hint(exc)
        return f"{message}{hint}", USER_ERROR
    config = sys.modules.get("gpurent_core.config")
    if config is not None and isinstance(exc, config.SettingError):
        return message, USER_ERROR
    fx = sys.modules.get("gpurent_core.fx")
    if fx is not None and isinstance(exc, fx.FxError):  # a bad GPURENT_FX, say
        return message, USER_ERROR
    api_errors = sys.modules.get("gpurent.api.errors")
    if api_errors is not None and isinstance(exc, api_errors.ApiError):
        return message, USER_ERROR
    lake = sys.modules.get("warehouse.lake")
    if lake is not None and lake.is_read_conflict(exc):  # a command's own read, not retried
        return lake.READ_CONFLICT_BUSY, USER_ERROR
    duckdb = sys.modules.get("duckdb")
    if duckdb is not None and isinstance(exc, duckdb.Error):
        return _database_message(message), USER_ERROR
    if isinstance(exc, PermissionError | IsADirectoryError | NotADirectoryError):
        where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
        return f"cannot use that path{where}: {exc.strerror or message}", USER_ERROR
    if isinstance(exc, OSError) and exc.errno is not None:
        return f"{exc.strerror or message}: {exc.filename or ''}".rstrip(": "), USER_ERROR
    return (
        f"unexpected error: {type(exc).__name__}: {message} (run again with --debug for details)",
        UNEXPECTED,
    )


def usage_line(exc: Any) -> str:
    """A Click usage error as one line: what was wrong, and where the help is."""
    message = " ".join(exc.format_message().split())
    ctx = getattr(exc, "ctx", None)
    return f"{message} (see `{ctx.command_path} --help`)" if ctx is not None else message


def _hint(exc: BaseException) -> str:
    name = type(exc).__name__
    if name == "WarehouseMissing":
        return ": run `gpurent crawl --replay` (offline demo) or `gpurent crawl`, or point --db / GPURENT_DB at a warehouse"
    if name == "WarehouseLocked":
        return ": a crawl or load is writing; try again when it is done"
    return ""


def _database_message(message: str) -> str:
    lowered = message.lower()
    path = _quoted_path(message)
    from warehouse.errors import damaged_message, is_damage, unreadable_message

    if is_damage(message):  # met while reading a file that opened
        return damaged_message(path or "file")
    unreadable = unreadable_message(message, path or "that file")
    if unreadable is not None:
        return unreadable.replace("  ", " ")
    if "read-only" in lowered or "readonly" in lowered or "permission" in lowered:
        return f"cannot write the warehouse {path or ''}: the location is read-only; choose a writable --db".replace(
            "  ", " "
        )
    if re.search(r"\block\b", lowered):
        return f"the warehouse {path or ''} is held by another process: try again when the crawl or load is done".replace(
            "  ", " "
        )
    return f"database error: {message}"


def _quoted_path(message: str) -> str | None:
    start = message.find('"')
    end = message.find('"', start + 1) if start >= 0 else -1
    if start >= 0 and end > start:
        return str(Path(message[start + 1 : end]))
    return None
