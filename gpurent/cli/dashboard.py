"""`gpurent dashboard`: the read-only web dashboard (Streamlit) over the warehouse."""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import importlib.util
import ipaddress
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer

from gpurent.cli.common import DbOption, check_db_file, resolve_db

APP = Path(__file__).resolve().parents[2] / "dashboards" / "app.py"


def streamlit_command(port: int, db: Path, host: str = "127.0.0.1") -> list[str]:
    """The exact command line the dashboard runs under (tests start it the same way)."""
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(APP),
        "--server.port",
        str(port),
        "--server.address",
        host,
        "--server.headless",
        "true",
        # Nothing to reload in use, and a watcher costs an inotify handle per file.
        "--server.fileWatcherType",
        "none",
        "--browser.gatherUsageStats",
        "false",
        # A dashboard for readers: no "Deploy" button or developer menu.
        "--client.toolbarMode",
        "minimal",
        "--",
        "--db",
        str(db),
    ]


def dashboard(
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port to serve on.")] = 8501,
    host: Annotated[
        str,
        typer.Option(
            "--host",
            help="Address to listen on. The default serves this machine only; 0.0.0.0 shares "
            "it with your network (the dashboard has no login).",
        ),
    ] = "127.0.0.1",
    db: DbOption = None,
) -> None:
    """Start the web dashboard over the warehouse (read-only) and print its address.

    Pages: Now (cheapest in-stock offers, filters), Size my workload, Price index,
    Availability and Providers, in English or Chinese. Stop it with Ctrl+C.
    """
    if importlib.util.find_spec("streamlit") is None:  # the dashboard part not installed
        raise ModuleNotFoundError("No module named 'streamlit'", name="streamlit")
    host = _checked_host(host)
    path = resolve_db(db)
    check_db_file(path)  # a folder or a non-DuckDB file: one line, before the server starts
    if not path.exists():
        typer.secho(
            f"No database at {path} yet: the dashboard will say so until a crawl creates it "
            "(`gpurent crawl --replay` for the offline demo).",
            err=True,
            fg="yellow",
        )
    shown = "localhost" if host in ("127.0.0.1", "0.0.0.0") else host
    typer.echo(f"gpurent dashboard: http://{shown}:{port}  (Ctrl+C to stop)")
    try:
        code = subprocess.call(streamlit_command(port, path, host), preexec_fn=_die_with_parent)
    except KeyboardInterrupt:  # Streamlit got the same Ctrl+C and stops itself
        code = 0
    raise typer.Exit(code)


HOSTNAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9.-]{0,252}[A-Za-z0-9])?")


def _checked_host(host: str) -> str:
    """--host as an address or a host name; empty or malformed text is refused (an unset
    shell variable gave "" and the dashboard, which has no login, served every interface)."""
    text = host.strip()
    if not text:
        raise typer.BadParameter(
            "is empty: give 127.0.0.1 (this machine) or an address", param_hint="--host"
        )
    try:
        ipaddress.ip_address(text)
        return text
    except ValueError:
        pass
    if re.fullmatch(r"[0-9.]+", text) or not HOSTNAME.fullmatch(text):
        raise typer.BadParameter(f"{host!r} is no address or host name", param_hint="--host")
    return text


def _die_with_parent() -> None:
    """In the server's process, before it starts (Linux): end it when `gpurent dashboard`
    ends, however it ends (a `kill -9` of the command left the server serving for good)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


PR_SET_PDEATHSIG = 1  # linux/prctl.h


# The commands of this module; the console script (gpurent.cli.app) adds them to its app.
app = typer.Typer()

app.command("dashboard")(dashboard)
