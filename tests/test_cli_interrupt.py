"""Ctrl-C during a crawl: one line, exit 130, no process left behind, the next crawl completes.

The crawl runs as a user runs it (`python -m gpurent crawl --replay`, its own temporary Prefect
server), in a session of its own so that SIGINT reaches its whole process group, as a
terminal's Ctrl-C does. The signal is sent once the crawl has started processes of its own;
whenever it lands after that, the outcome asserted is the same.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpurent.cli.children import descendants
from gpurent.cli.errors import INTERRUPTED

pytestmark = pytest.mark.prefect

WAIT_S = 240  # upper bounds on a loaded 2-core machine, not timings under test


def crawl_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")}
    env["PREFECT_HOME"] = str(tmp_path / "prefect-home")
    return env


def in_group(pgid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.getpgid(int(entry.name)) == pgid:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def wait_for(condition, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.2)


def test_ctrl_c_during_a_crawl(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    command = [sys.executable, "-m", "gpurent", "crawl", "--replay", "--db", str(db)]
    proc = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=crawl_env(tmp_path),
        start_new_session=True,
    )
    try:
        wait_for(lambda: bool(descendants(proc.pid)) or proc.poll() is not None, "a child")
        assert proc.poll() is None, "the crawl ended before it started a process"
        os.killpg(proc.pid, signal.SIGINT)
        _, stderr = proc.communicate(timeout=WAIT_S)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == INTERRUPTED, stderr[-2000:]
    assert "Traceback" not in stderr
    assert stderr.strip().splitlines()[-1] == "gpurent: interrupted"
    wait_for(lambda: not in_group(proc.pid), "the crawl's processes to end")

    # Nothing half-done blocks the next crawl, and it completes.
    done = subprocess.run(
        [*command, "--provider", "vastai", "--format", "json"],
        capture_output=True,
        text=True,
        env=crawl_env(tmp_path),
        timeout=WAIT_S * 2,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = json.loads(done.stdout)
    assert [row["provider"] for row in rows] == ["vastai"]
    assert rows[0]["offers"] > 0


def _streamlit_serving(port: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"streamlit" in b" ".join(cmdline) and str(port).encode() in cmdline:
                found.append(int(entry.name))
    return found


def _answers(port: int) -> bool:
    import socket

    with socket.socket() as client:
        client.settimeout(1)
        return client.connect_ex(("127.0.0.1", port)) == 0


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
def test_a_stopped_dashboard_leaves_no_server_behind(tmp_path: Path, how: int) -> None:
    """Audit (CLI): `timeout 20 gpurent dashboard` ended gpurent, and its Streamlit server
    (no login) kept serving for minutes. A SIGTERM now unwinds as Ctrl-C does, ending what
    the command started; a SIGKILL of the command takes the server with it (Linux)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpurent", "dashboard", "--port", str(port),
         "--db", str(tmp_path / "none.duckdb")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        wait_for(lambda: bool(_streamlit_serving(port)), "the dashboard's server")
        wait_for(lambda: _answers(port), "the dashboard to answer on its port")
        os.kill(proc.pid, how)  # the command alone, as `kill PID` or a service manager does
        proc.communicate(timeout=WAIT_S)
        wait_for(lambda: not _streamlit_serving(port), "the server to end with the command")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        for pid in _streamlit_serving(port):
            os.kill(pid, signal.SIGKILL)
