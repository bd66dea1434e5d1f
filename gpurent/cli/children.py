"""Stopping what a command started when the user presses Ctrl-C.

A crawl starts processes of its own: Prefect's temporary API server, one `scrapy crawl` per
provider, the replay server. Ctrl-C in a terminal reaches them too, but not every one of them
exits on SIGINT (the temporary server did not), and a process killed from elsewhere sends it
to gpurent alone. So on interrupt gpurent ends its descendants itself: SIGTERM, a grace
period, then SIGKILL. Linux only (it reads /proc); elsewhere it does nothing.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

PROC = Path("/proc")


def _parents() -> dict[int, int]:
    """pid -> parent pid of every process this user can see."""
    parents: dict[int, int] = {}
    for entry in PROC.iterdir() if PROC.is_dir() else ():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # gone meanwhile
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 1:
            parents[int(entry.name)] = int(fields[1])
    return parents


def descendants(pid: int | None = None) -> list[int]:
    """Every process below `pid` (default: this one), children first."""
    root = os.getpid() if pid is None else pid
    children: dict[int, list[int]] = {}
    for child, parent in _parents().items():
        children.setdefault(parent, []).append(child)
    found: list[int] = []
    frontier = [root]
    while frontier:
        nxt: list[int] = []
        for parent in frontier:
            for child in children.get(parent, []):
                found.append(child)
                nxt.append(child)
        frontier = nxt
    return found


def stop_descendants(grace_s: float = 3.0, rounds: int = 5) -> int:
    """End every descendant: SIGTERM, SIGKILL for those still there after `grace_s`. Scanned
    again until none is left (a library thread may start a process while others stop: the
    flow's client restarts a temporary server it lost); how many were ended."""
    ended: set[int] = set()
    for _ in range(rounds):
        targets = [pid for pid in descendants() if _exists(pid)]
        if not targets:
            break
        ended.update(targets)
        _signal_all(targets, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        alive = targets
        while alive and time.monotonic() < deadline:
            time.sleep(0.1)
            _reap()
            alive = [pid for pid in alive if _exists(pid)]
        _signal_all(alive, signal.SIGKILL)
        _reap()
    return len(ended)


def _signal_all(pids: list[int], signum: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)


def _exists(pid: int) -> bool:
    try:
        state = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return False
    return state[state.rfind(")") + 2 :].split()[0] != "Z"  # a zombie has exited


def _reap() -> None:
    # Collect exited children so they do not linger as zombies.
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
