"""`gpurent` console script: one app made of the command modules' own apps."""

from __future__ import annotations

import atexit
import contextlib
import importlib
import inspect
import os
import signal
import sys
import traceback
from collections.abc import Sequence

import typer

# Typer carries its own copy of Click: its exceptions are the ones raised here.
from typer import _click as click

from gpurent.cli.children import stop_descendants
from gpurent.cli.command_words import READ_ONLY_COMMANDS
from gpurent.cli.errors import (
    Interrupted,
    debug_requested,
    explain,
    raise_interrupted,
    usage_line,
)

# The command modules (under gpurent.cli), in the order `gpurent --help` lists them.
COMMAND_MODULES = (
    "crawl",
    "load_cmd",
    "queries",
    "size",
    "api_prices",
    "tco",
    "watch",
    "schedule",
    "tracking",
    "dashboard",
    "gpus",
    "normalize",
    "replay_cmd",
)

# Where each top-level command or group lives, so `gpurent cheapest` imports and builds the
# one module that has it (Typer builds every registered command's parameters on each run,
# and the eleven modules' imports are ~70 ms); `--help` and unknown names get the whole app.
# tests/test_cli_basics.py keeps this table equal to what the modules register.
COMMAND_HOMES = {
    "crawl": "crawl",
    "load": "load_cmd",
    "offers": "queries",
    "cheapest": "queries",
    "providers": "queries",
    "explain": "queries",
    "quarantine": "queries",
    "size": "size",
    "models": "size",
    "api-prices": "api_prices",
    "tco": "tco",
    "watch": "watch",
    "schedule": "schedule",
    "history": "tracking",
    "rank": "tracking",
    "demo": "tracking",
    "index": "tracking",
    "dashboard": "dashboard",
    "gpus": "gpus",
    "normalize": "normalize",
    "replay": "replay_cmd",
}


# DuckDB 1.5 imports pandas (about 0.5 s) the first time a query binds a parameter, only to
# ask whether the value is a DataFrame. The read-only commands (READ_ONLY_COMMANDS) read and
# print and never hand DuckDB a DataFrame, so in their process pandas is marked absent and
# DuckDB takes its plain path at once. (The dashboard runs Streamlit, with pandas, in a
# process of its own.)
def keep_pandas_out(argv: Sequence[str]) -> None:
    if argv and argv[0] in READ_ONLY_COMMANDS:
        sys.modules.setdefault("pandas", None)  # type: ignore[arg-type]


# Options whose value may be left out (`--replay` alone means "the bundled recordings").
OPTIONAL_VALUE_OPTIONS = frozenset({"--replay"})


def build_app(modules: Sequence[str] = COMMAND_MODULES) -> typer.Typer:
    """A fresh app with the commands of ``modules`` registered (default: every command;
    tests build as many as they like)."""
    app = typer.Typer(
        name="gpurent",
        help="GPU-rental price and availability tracker: crawl providers, then ask what you "
        "can rent now, what it really costs, and whether it fits your model. "
        "`gpurent --version` prints the version.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_show_locals=False,
    )
    for name in modules:
        app.add_typer(importlib.import_module(f"gpurent.cli.{name}").app)
    _unwrap_help(app)
    return app


def _unwrap_help(app: typer.Typer) -> None:
    """Give every command its help with each paragraph on one line: in Rich's help, Typer
    keeps the line breaks of a help text (but for the first paragraph of a command's own
    help), so a break written at 92 columns showed as a short line in an 80-column help."""
    for command in app.registered_commands:
        text = command.help
        if text is None and command.callback is not None:
            text = inspect.getdoc(command.callback)
        if text:
            command.help = _one_line_paragraphs(text)
    for group in app.registered_groups:
        if group.typer_instance is not None:
            _unwrap_help(group.typer_instance)


def _one_line_paragraphs(text: str) -> str:
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(" ".join(paragraph.split()) for paragraph in paragraphs)


def app_for(argv: Sequence[str]) -> typer.Typer:
    """The app that runs ``argv``: only its command's module when the first word names one."""
    home = COMMAND_HOMES.get(argv[0]) if argv else None
    return build_app((home,)) if home else build_app()


def command_for(argv: Sequence[str]) -> click.Command:
    """The Click command that runs ``argv`` (only its command's module is built)."""
    return typer.main.get_command(app_for(argv))


def expand_optional_values(argv: Sequence[str]) -> list[str]:
    """Click has no optional option values: rewrite a bare ``--replay`` to ``--replay=``."""
    out: list[str] = []
    for i, arg in enumerate(argv):
        nxt = argv[i + 1] if i + 1 < len(argv) else None
        if arg in OPTIONAL_VALUE_OPTIONS and (nxt is None or nxt.startswith("-")):
            out.append(f"{arg}=")
        else:
            out.append(arg)
    return out


def _exit_after_cleanup(code: int) -> None:
    """Run the exit handlers and flush, then leave without tearing the interpreter down.

    Prefect leaves daemon threads behind after a flow run; at teardown they still hold
    modules, and DuckDB's bindings (nanobind) then print pages of "nanobind: leaked ..."
    warnings after every crawl. Nothing leaks (the connections are closed by then), so the
    process ends the way a normal exit would, minus the module teardown: exit handlers
    (Prefect's, logging's) run, output is flushed, the exit status is kept.
    """
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        # A closed pipe (`gpurent offers | head`): nothing more can be said there.
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


def main() -> None:
    debug, argv = debug_requested(sys.argv[1:])
    if argv[:1] == ["--version"]:
        from importlib.metadata import version

        print(f"gpurent {version('gpurent')}")
        _exit_after_cleanup(0)
    keep_pandas_out(argv)
    signal.signal(signal.SIGINT, raise_interrupted)
    # A service manager, `timeout` or `kill PID` stops a command with SIGTERM: it unwinds as
    # Ctrl-C does, ending what it started (a SIGTERM left the temporary Prefect server of a
    # crawl, and a dashboard's server, running for good).
    signal.signal(signal.SIGTERM, raise_interrupted)
    try:
        # Not standalone: usage errors come back here, to be said in one line.
        result = command_for(argv).main(
            args=expand_optional_values(argv), prog_name="gpurent", standalone_mode=False
        )
    except SystemExit as done:
        code = done.code
        if isinstance(code, str):
            print(code, file=sys.stderr)
        _exit_after_cleanup(code if isinstance(code, int) else (0 if code is None else 1))
    except click.exceptions.NoArgsIsHelpError as asked:
        asked.show()  # `gpurent` or `gpurent watch` alone: the help, as before
        _exit_after_cleanup(0)
    except click.ClickException as refused:
        print(f"gpurent: {usage_line(refused)}", file=sys.stderr)
        _exit_after_cleanup(refused.exit_code)
    except BaseException as exc:  # the front door: one line, the traceback only on request
        if debug:
            traceback.print_exception(exc)
        if isinstance(exc, KeyboardInterrupt | Interrupted):
            stop_descendants()  # the temporary Prefect server, crawlers, the replay server
        message, code = explain(exc)
        print(f"gpurent: {message}", file=sys.stderr)
        _exit_after_cleanup(code)
    # A command's own typer.Exit(code) comes back as that code; anything else ran through.
    _exit_after_cleanup(result if isinstance(result, int) and not isinstance(result, bool) else 0)
