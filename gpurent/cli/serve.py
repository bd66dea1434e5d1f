"""`gpurent serve`: keep one warm process that runs read-only commands for this user."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from gpurent.cli.command_words import READ_ONLY_COMMANDS
from gpurent.cli.errors import refuse

app = typer.Typer()

SERVED = ", ".join(sorted(READ_ONLY_COMMANDS))


@app.command("serve", epilog=f"Served: {SERVED}.")
def serve(
    idle_exit: Annotated[
        float,
        typer.Option(
            "--idle-exit",
            min=0,
            help="Leave after this many seconds without a command (0: stay until stopped).",
        ),
    ] = 0.0,
) -> None:
    """Answer read-only commands from one warm process: they start in a fraction of the time.

    A command normally spends most of its time loading Python, DuckDB, Typer and Rich
    before it reads anything. While `gpurent serve` runs, this user's read-only commands
    of this installation (listed below) run in a fork of this process, already loaded,
    with the caller's terminal, arguments, environment and working directory; output and
    exit status are the same. Commands that write (crawl, load, watch...) always run alone.
    The server never opens a warehouse itself, so it holds no lock.

    It stays in the foreground (Ctrl-C stops it; running commands finish), and declines and
    leaves when gpurent's code on disk changes. Without a server, commands run alone as
    ever. GPURENT_RESIDENT=0 makes a command run alone anyway; GPURENT_SOCKET names another
    socket. Linux only.
    """
    # Imported here: the server's warm-up imports every read-only command's module.
    from gpurent.cli.resident.server import ResidentServer, ServeError
    from gpurent.cli.resident.wire import socket_path

    server = ResidentServer(socket_path(), idle_exit_s=idle_exit)
    try:
        server.start()
    except ServeError as exc:
        refuse(str(exc))
    server.log(f"serving read-only commands at {server.path} (pid {os.getpid()}); Ctrl-C stops")
    why = server.serve_forever()
    server.log(f"stopped: {why}")
