"""What the resident server and its clients say to each other, and where they meet.

Stdlib only, and cheap to import: the client side runs before anything heavy is imported.

Where: one Unix socket per installation (a checkout with its own virtual environment is
another installation, with other code), in a folder only this user can enter:
``$XDG_RUNTIME_DIR/gpurent-UID/`` where that is set, else ``$TMPDIR`` or ``/tmp``. The name
is a checksum of the interpreter and the package's folder, so the server of one installation
never answers another's commands. ``GPURENT_SOCKET`` names another socket (tests, or a
socket somewhere else); its folder is checked the same way.

How: one JSON object per line, both ways, over a stream socket.
- client -> server, first, with its stdin, stdout and stderr attached (SCM_RIGHTS):
  ``{"v": VERSION, "argv": [...], "cwd": ..., "env": {...}, "umask": ..., "stdout": [encoding,
  errors], "stderr": [...]}``
- server -> client: ``{"pid": N}`` once the command runs, or ``{"decline": "why"}`` and the
  client runs the command itself (nothing ran).
- client -> server, any number: ``{"signal": N}``, a signal the client received, for the
  command.
- server -> client, last: ``{"exit": code}``, negative when a signal ended the command.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import struct
import sys
import zlib
from pathlib import Path
from typing import Any

VERSION = 1
SOCKET_ENV = "GPURENT_SOCKET"
# Set to 0 (or "off") to run every command in its own process even with a server up.
RESIDENT_ENV = "GPURENT_RESIDENT"
# Signals a client forwards to its command; any other number is ignored by the server.
FORWARDED_SIGNALS = (2, 15, 1, 3)  # SIGINT, SIGTERM, SIGHUP, SIGQUIT
# The longest message either side accepts (the client's environment is the big part).
MAX_MESSAGE = 4 * 1024 * 1024


class WireError(Exception):
    """The other side said something that is not this protocol, or went away mid-message."""


def resident_wanted(environ: dict[str, str] | os._Environ[str] = os.environ) -> bool:
    return environ.get(RESIDENT_ENV, "").strip().lower() not in ("0", "off", "no", "false")


def installation_key() -> str:
    """Names this installation: the interpreter and the folder the package is imported from."""
    package_dir = Path(__file__).resolve().parents[2]
    return f"{zlib.crc32(f'{sys.prefix}|{package_dir}'.encode()):08x}"


def socket_path(environ: dict[str, str] | os._Environ[str] = os.environ) -> Path:
    named = environ.get(SOCKET_ENV)
    if named:
        return Path(named)
    base = environ.get("XDG_RUNTIME_DIR") or environ.get("TMPDIR") or "/tmp"
    return Path(base) / f"gpurent-{os.getuid()}" / f"{installation_key()}.sock"


def private_folder_problem(folder: Path) -> str | None:
    """Why ``folder`` is not safe to meet in (None when it is): it must be a real folder of
    this user that nobody else may enter, or another user could stand in for the server and
    be handed this user's terminal."""
    try:
        info = folder.lstat()
    except OSError as exc:
        return f"{folder}: {exc.strerror or exc}"
    if not stat.S_ISDIR(info.st_mode):
        return f"{folder} is not a folder"
    if info.st_uid != os.getuid():
        return f"{folder} belongs to another user"
    if info.st_mode & 0o077:
        return f"{folder} is open to other users (mode {stat.S_IMODE(info.st_mode):o})"
    return None


def peer_uid(sock: socket.socket) -> int:
    """The user id of the process at the other end (Linux SO_PEERCRED: pid, uid, gid)."""
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return int(struct.unpack("3i", creds)[1])


def encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


class LineReader:
    """Reads one message at a time from a stream socket (JSON, one per line)."""

    def __init__(self, sock: socket.socket, first: bytes = b"") -> None:
        self.sock = sock
        self.buffer = first

    def next(self) -> dict[str, Any] | None:
        """The next message; None at a clean end (the other side closed between messages)."""
        while b"\n" not in self.buffer:
            if len(self.buffer) > MAX_MESSAGE:
                raise WireError("message too long")
            chunk = self.sock.recv(65536)
            if not chunk:
                if self.buffer:
                    raise WireError("the other side went away mid-message")
                return None
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return decode(line)

    def ready(self) -> list[dict[str, Any]]:
        """The messages already complete in the buffer after one ``recv`` (for a server that
        must not block on one client); an empty chunk means the other side closed."""
        chunk = self.sock.recv(65536)
        if not chunk:
            raise EOFError
        self.buffer += chunk
        out = []
        while b"\n" in self.buffer:
            line, _, self.buffer = self.buffer.partition(b"\n")
            out.append(decode(line))
        if len(self.buffer) > MAX_MESSAGE:
            raise WireError("message too long")
        return out


def decode(line: bytes) -> dict[str, Any]:
    try:
        message = json.loads(line)
    except ValueError as exc:
        raise WireError(f"not a message: {exc}") from None
    if not isinstance(message, dict):
        raise WireError("not a message: expected an object")
    return message
