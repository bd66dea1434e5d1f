"""A resident server (`gpurent serve`) of the benchmark's own, for the served start-up figure.

Its socket lies in a private folder of the run, so no other server answers, and the figure
counts only commands the server's log says it ran (a command that fell back to running
alone would time the other path under this name).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from benchmarks.measure import ROOT, child_env

START_DEADLINE_S = 120.0


@dataclass(frozen=True)
class Resident:
    env: dict[str, str]  # what a client needs to be served by this server
    log: Path

    def served(self) -> int:
        """Commands the server ran so far (one log line each)."""
        text = self.log.read_text(errors="replace")
        return sum(1 for line in text.splitlines() if "(pid " in line and ": exit 0" in line)


@contextmanager
def resident_server() -> Iterator[Resident]:
    # A short folder: a socket's path is limited to 107 bytes.
    with tempfile.TemporaryDirectory(prefix="gpurent-bench-", dir="/tmp") as name:
        folder = Path(name)
        env = {"GPURENT_SOCKET": str(folder / "s.sock"), "GPURENT_RESIDENT": "1"}
        log = folder / "server.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "gpurent", "serve"],
                cwd=ROOT,
                env={**child_env(), **env},
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        try:
            deadline = time.monotonic() + START_DEADLINE_S
            while "serving read-only commands" not in log.read_text(errors="replace"):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"gpurent serve did not start: {log.read_text()[-2000:]}")
                time.sleep(0.05)
            yield Resident(env, log)
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
