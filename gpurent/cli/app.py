"""`gpurent` console script: builds the Typer app from one module per command group."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

import typer

# Each module exposes register(app).
COMMAND_MODULES: tuple[str, ...] = (
    "crawl",
    "queries",
    "size",
    "watch",
    "schedule",
    "tracking",
    "dashboard",
    "gpus",
    "normalize",
    "replay_cmd",
)

# Options whose value may be left out (`--replay` alone means "the bundled recordings").
OPTIONAL_VALUE_OPTIONS = frozenset({"--replay"})


def build_app() -> typer.Typer:
    """A fresh app with every command registered (tests build as many as they like)."""
    app = typer.Typer(
        name="gpurent",
        help="GPU-rental price and availability tracker: crawl providers, then ask what you "
        "can rent now, what it really costs, and whether it fits your model.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_show_locals=False,
    )
    for name in COMMAND_MODULES:
        importlib.import_module(f"gpurent.cli.{name}").register(app)
    return app


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


def main() -> None:
    build_app()(args=expand_optional_values(sys.argv[1:]), prog_name="gpurent")
