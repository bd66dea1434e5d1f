"""`gpurent` console script: builds the Typer app from one module per command group."""

from __future__ import annotations

import importlib

import typer

app = typer.Typer(
    name="gpurent",
    help="GPU-rental price and availability tracker: crawl providers, then ask what you can rent now.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)

# Each module exposes register(app). Kept as names so a broken optional command
# cannot stop the others from loading at import time of this list.
COMMAND_MODULES: tuple[str, ...] = ()


def build_app() -> typer.Typer:
    for name in COMMAND_MODULES:
        importlib.import_module(f"gpurent.cli.{name}").register(app)
    return app


def main() -> None:
    build_app()()
