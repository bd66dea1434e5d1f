"""Hand a read-only command to the resident server, when one is up (stdlib only).

The command then runs in a process forked from the server, which imported Typer, Rich,
DuckDB and gpurent once, so it starts in a fraction of a normal start-up. It runs with this
process's stdin, stdout and stderr (passed over the socket), its arguments, environment,
working directory and umask; signals this process receives are passed on to it, and its exit
status becomes this process's.

Anything short of a server that accepted the command (no socket, a stale one, a server of an
older protocol, one that declines because its code changed) returns None, and the caller
runs the command itself: the server is a shortcut, never a requirement.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
from types import FrameType
from typing import Any

from gpurent.cli.command_words import is_read_only
from gpurent.cli.resident import wire

# What the client says when the server went away before the command's end.
LOST = "gpurent: the resident server went away before the command ended (its output may be cut)"
LOST_CODE = 1
INTERRUPTED = 130  # as gpurent.cli.errors.INTERRUPTED (not imported: it is not stdlib-only)


def hand_over(argv: list[str]) -> int | None:
    """Run ``argv`` in the resident server; its exit code, or None if it did not run there."""
    if not is_read_only(argv) or not wire.resident_wanted():
        return None
    try:
        return _hand_over(argv)
    except KeyboardInterrupt:
        # Ctrl-C before the command started (its signals are forwarded once it runs): the
        # same line and status as a command interrupted while running alone.
        print("gpurent: interrupted", file=sys.stderr)
        return INTERRUPTED


def _hand_over(argv: list[str]) -> int | None:
    path = wire.socket_path()
    if wire.private_folder_problem(path.parent) is not None:
        return None
    if sys.stdout is None or sys.stderr is None:
        return None  # started without them: nothing to hand over
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
        if wire.peer_uid(sock) != os.getuid():
            raise OSError("the socket's server is another user's")
        socket.send_fds(sock, [wire.encode(_request(argv))], [0, 1, 2])
        reader = wire.LineReader(sock)
        reply = reader.next()
    except (OSError, wire.WireError):
        sock.close()
        return None  # no server, a stale socket, or one that left: run it here
    if reply is None or "pid" not in reply:
        sock.close()
        return None  # declined (or closed) before running anything
    return _wait_for_exit(sock, reader)


def _request(argv: list[str]) -> dict[str, Any]:
    umask = os.umask(0)
    os.umask(umask)
    return {
        "v": wire.VERSION,
        "argv": argv,
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        "umask": umask,
        "stdout": [sys.stdout.encoding, sys.stdout.errors],
        "stderr": [sys.stderr.encoding, sys.stderr.errors],
    }


def _wait_for_exit(sock: socket.socket, reader: wire.LineReader) -> int:
    def forward(signum: int, _frame: FrameType | None) -> None:
        # A closed socket here means the server already ended: nothing left to stop.
        with contextlib.suppress(OSError):
            sock.sendall(wire.encode({"signal": signum}))

    for signum in wire.FORWARDED_SIGNALS:
        signal.signal(signum, forward)
    try:
        while True:
            message = reader.next()
            if message is None:
                break
            if "exit" in message:
                return _as_own_exit(int(message["exit"]))
    except (OSError, wire.WireError):
        pass
    finally:
        sock.close()
    print(LOST, file=sys.stderr)
    return LOST_CODE


def _as_own_exit(code: int) -> int:
    """A command ended by a signal ends this process by the same signal (a shell then sees
    what it would have seen without the server); any other code is returned."""
    if code >= 0:
        return code
    signum = -code
    sys.stdout.flush()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    return 128 + signum  # the signal did not end this process (it is ignored here)
