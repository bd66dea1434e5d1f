"""The resident server: imports once, forks one process per read-only command.

A normal `gpurent cheapest` spends most of its time before it reads anything: the
interpreter, DuckDB's import (~0.1 s alone), Typer, Rich and gpurent's modules. The server
pays that once; each command then runs in a fork of it, a process that already has all of
it, with the client's terminal, arguments, environment, working directory and umask (as
Mercurial's chg does for hg).

What keeps that safe:
- it serves read-only commands only (``gpurent.cli.command_words``), and never opens a
  warehouse itself: each command opens its own as it would alone, so no lock is held between
  commands and a load never waits for the server;
- it has a single thread when it forks (checked at start: a thread in the parent would be
  missing, with whatever lock it held, in every child);
- only this user's processes are served (the socket's folder is private, and each client's
  uid is checked);
- code changed on disk since the start makes it decline and leave (``freshness``);
- each command gets a session of its own, so Ctrl-C in the server's terminal does not reach
  it; the client forwards its own signals instead, and a client that goes away takes its
  command with it (SIGTERM).
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import io
import locale
import os
import selectors
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn

from gpurent.cli.command_words import READ_ONLY_COMMANDS, command_word, is_read_only
from gpurent.cli.resident import wire
from gpurent.cli.resident.freshness import CodeSnapshot, module_files, package_data_files

# Modules the read-only commands import only when they run (each command module imports
# lazily, to keep a normal start-up short); importing them here saves each command that.
WARM_MODULES = (
    "gpurent_core.costing",
    "gpurent_core.billing_facts",
    "warehouse.costed",
    "warehouse.ranking",
)
# Packaged data the commands parse once per process (each loader caches what it read).
WARM_DATA = (
    "gpurent_core.billing_facts.load_billing_facts",
    "gpurent_core.catalog.gpus.get_catalog",
    "sizing.models.catalog",
    "sizing.placement.tiers",
)
# Our packages: their data files are watched for changes beside the imported modules.
PACKAGES = ("gpurent", "gpurent_core", "warehouse", "sizing")
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# A client sends its request at once; one that does not is not allowed to hold the server.
REQUEST_TIMEOUT_S = 5.0


class ServeError(Exception):
    """The server cannot start (said in one line by `gpurent serve`)."""


@dataclass
class Job:
    """One command running in a child: its client's connection and the child's pidfd."""

    pid: int
    command: str
    conn: socket.socket
    reader: wire.LineReader
    pidfd: int
    started: float = field(default_factory=time.monotonic)
    client_gone: bool = False


def warm_up() -> None:
    """Import what the read-only commands need, and render one table, so the children
    start with it all in memory."""
    from gpurent.cli.app import COMMAND_HOMES, keep_pandas_out, prebuild

    keep_pandas_out(["cheapest"])  # read-only commands only: see app.keep_pandas_out
    prebuild(sorted({COMMAND_HOMES[name] for name in READ_ONLY_COMMANDS}))
    for name in WARM_MODULES:
        importlib.import_module(name)
    for loader in WARM_DATA:
        module, _, function = loader.rpartition(".")
        getattr(importlib.import_module(module), function)()
    import duckdb

    # Importing DuckDB makes its default in-memory database, whose scheduler starts worker
    # threads; with one thread it runs its tasks on the caller and the workers are joined,
    # so the server forks from a single thread. (No command uses that database: each opens
    # its own warehouse, with DuckDB's usual threads, in the child.)
    duckdb.default_connection().execute("SET threads TO 1")
    from rich.console import Console
    from rich.table import Table

    # Rich imports some of its parts at the first render.
    table = Table("a", "b", title="warm")
    table.add_row("1", "二")
    Console(file=io.StringIO(), width=80, force_terminal=True).print(table)


def threads_running() -> int:
    """Threads of this process as the kernel sees them (Python's own count misses those
    started by native libraries)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


class ResidentServer:
    def __init__(self, path: Path, *, idle_exit_s: float = 0.0) -> None:
        self.path = path
        self.idle_exit_s = idle_exit_s
        self.jobs: dict[int, Job] = {}
        self.selector = selectors.DefaultSelector()
        self.listener: socket.socket | None = None
        self.stopping: str | None = None
        self.code: CodeSnapshot | None = None
        self._wake_r, self._wake_w = -1, -1
        self._signals: list[int] = []  # received, not acted on yet

    # -- start -------------------------------------------------------------------------

    def start(self) -> None:
        """Warm up, check it is safe to fork, and listen; ServeError if it cannot."""
        if not hasattr(os, "pidfd_open"):
            raise ServeError("gpurent serve needs Linux (5.3 or later)")
        warm_up()
        if threads_running() != 1:
            raise ServeError(
                "a library started threads while loading; forking commands from this process "
                "would not be safe, so it does not serve"
            )
        self.code = CodeSnapshot.of([*module_files(), *package_data_files(PACKAGES)])
        self._listen()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)
        signal.set_wakeup_fd(self._wake_w)
        for signum in STOP_SIGNALS:
            signal.signal(signum, self._on_stop_signal)
        self.selector.register(self._wake_r, selectors.EVENT_READ, ("wake", None))
        # Objects made so far are never freed: moving them out of the collector's reach keeps
        # each child from copying the pages the collector would touch.
        gc.collect()
        gc.freeze()

    def _listen(self) -> None:
        folder = self.path.parent
        if not folder.exists():
            try:
                folder.mkdir(mode=0o700, parents=True)
            except OSError as exc:
                raise ServeError(f"cannot make {folder}: {exc.strerror or exc}") from None
        problem = wire.private_folder_problem(folder)
        if problem:
            raise ServeError(f"cannot serve there: {problem}")
        if self.path.exists() or self.path.is_symlink():
            if _answers(self.path):
                raise ServeError(f"a server already answers at {self.path}")
            self.path.unlink()  # left by a server that was killed
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(str(self.path))
        except OSError as exc:
            listener.close()
            raise ServeError(f"cannot listen at {self.path}: {exc.strerror or exc}") from None
        listener.listen(16)
        self.listener = listener
        self.selector.register(listener, selectors.EVENT_READ, ("listen", None))

    # -- loop --------------------------------------------------------------------------

    def serve_forever(self) -> str:
        """Serve until stopped, idle too long, or the code changed; why it stopped."""
        last_busy = time.monotonic()
        while True:
            if self.stopping and not self.jobs:
                break
            timeout = None
            if self.idle_exit_s and not self.jobs and not self.stopping:
                timeout = max(0.0, last_busy + self.idle_exit_s - time.monotonic())
            events = self.selector.select(timeout)
            if not events and not self.jobs and self.idle_exit_s:
                if time.monotonic() - last_busy >= self.idle_exit_s:
                    self._stop(f"idle for {self.idle_exit_s:g} s")
                continue
            for key, _ in events:
                kind, job = key.data
                if kind == "listen" and self.listener is not None:
                    self._accept()
                elif kind == "wake":
                    self._drain_wake()
                elif job is not None and job.pid not in self.jobs:
                    continue  # finished earlier in this batch
                elif kind == "done":
                    self._finish(job)
                elif kind == "client" and not job.client_gone:
                    self._client_said(job)
            self._act_on_signals()
            last_busy = time.monotonic()
        self.close()
        return self.stopping or "stopped"

    def _on_stop_signal(self, signum: int, _frame: object) -> None:
        # Only noted here (the loop may be anywhere); the wake-up pipe ends the wait at once.
        self._signals.append(signum)

    def _act_on_signals(self) -> None:
        while self._signals:
            signum = self._signals.pop(0)
            if self.stopping:  # asked twice: do not wait for the commands
                for job in self.jobs.values():
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(job.pid, signal.SIGTERM)
            self._stop(f"{signal.Signals(signum).name} received")

    def _drain_wake(self) -> None:
        with contextlib.suppress(BlockingIOError, OSError):
            os.read(self._wake_r, 512)

    def _stop(self, why: str) -> None:
        """Take no more commands (the socket goes at once); the running ones finish."""
        if self.stopping is None:
            self.stopping = why
        if self.listener is not None:
            self.selector.unregister(self.listener)
            self.listener.close()
            self.listener = None
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()

    def close(self) -> None:
        self._stop(self.stopping or "closed")
        signal.set_wakeup_fd(-1)
        for fd in (self._wake_r, self._wake_w):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._wake_r = self._wake_w = -1
        self.selector.close()

    # -- one command ---------------------------------------------------------------------

    def _accept(self) -> None:
        assert self.listener is not None
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        conn.settimeout(REQUEST_TIMEOUT_S)
        fds: list[int] = []
        try:
            if wire.peer_uid(conn) != os.getuid():
                self.log("refused a client of another user")
                conn.close()
                return
            first, fds, _, _ = socket.recv_fds(conn, 65536, 3)
            reader = wire.LineReader(conn, first)
            request = _valid_request(reader.next(), fds)
        except (OSError, wire.WireError, ValueError) as exc:
            self.log(f"refused a request: {exc}")
            _close_all(fds)
            conn.close()
            return
        assert self.code is not None
        changed = self.code.changed()
        if changed:
            self._decline(conn, fds, f"code changed since the server started: {changed}")
            self._stop(f"code changed on disk ({changed})")
            return
        for stream in (sys.stdout, sys.stderr):
            stream.flush()  # or the child would print the parent's pending output again
        pid = os.fork()
        if pid == 0:
            self._become_command(request, fds, conn)
        _close_all(fds)
        # A client gone already is seen below as a closed connection, and its child ended.
        with contextlib.suppress(OSError):
            conn.sendall(wire.encode({"pid": pid}))
        pidfd = os.pidfd_open(pid)
        job = Job(pid, str(command_word(request["argv"])), conn, reader, pidfd)
        self.jobs[pid] = job
        self.selector.register(pidfd, selectors.EVENT_READ, ("done", job))
        self.selector.register(conn, selectors.EVENT_READ, ("client", job))

    def _decline(self, conn: socket.socket, fds: list[int], why: str) -> None:
        _close_all(fds)
        with contextlib.suppress(OSError):
            conn.sendall(wire.encode({"decline": why}))
        conn.close()
        self.log(f"declined: {why}")

    def _client_said(self, job: Job) -> None:
        try:
            messages = job.reader.ready()
        except (EOFError, OSError, wire.WireError):
            # The client is gone (killed, or its terminal closed): its command goes too.
            self.selector.unregister(job.conn)
            job.client_gone = True
            with contextlib.suppress(ProcessLookupError):
                os.kill(job.pid, signal.SIGTERM)
            return
        for message in messages:
            signum = message.get("signal")
            if isinstance(signum, int) and signum in wire.FORWARDED_SIGNALS:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(job.pid, signum)

    def _finish(self, job: Job) -> None:
        _, status = os.waitpid(job.pid, 0)
        code = os.waitstatus_to_exitcode(status)
        self.selector.unregister(job.pidfd)
        os.close(job.pidfd)
        if not job.client_gone:
            self.selector.unregister(job.conn)
            with contextlib.suppress(OSError):
                job.conn.sendall(wire.encode({"exit": code}))
        job.conn.close()
        del self.jobs[job.pid]
        gone = ", client gone" if job.client_gone else ""
        self.log(
            f"{job.command} (pid {job.pid}): exit {code}{gone}, {time.monotonic() - job.started:.2f} s"
        )

    def _become_command(
        self, request: dict[str, Any], fds: list[int], conn: socket.socket
    ) -> NoReturn:
        """In the child: take the client's place and run its command; never returns."""
        try:
            os.setsid()  # Ctrl-C in the server's terminal is not this command's
            signal.set_wakeup_fd(-1)
            for signum in (*STOP_SIGNALS, signal.SIGQUIT):
                signal.signal(signum, signal.SIG_DFL)
            conn.close()
            if self.listener is not None:
                self.listener.close()
            for job in self.jobs.values():
                job.conn.close()
                os.close(job.pidfd)
            os.close(self._wake_r)
            os.close(self._wake_w)
            self.selector.close()
            for target, fd in enumerate(fds):
                os.dup2(fd, target)
                os.close(fd)
            _take_client_streams(request)
            os.environ.clear()
            os.environ.update(request["env"])
            _take_client_locale()
            os.umask(request["umask"])
            os.chdir(request["cwd"])
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.write(2, f"gpurent: {exc.strerror or exc}\n".encode(errors="replace"))
            os._exit(2)
        # The collector stays frozen: a full collection would walk (and copy) every page of
        # the server's objects for a process that lives a fraction of a second.
        sys.argv = ["gpurent", *request["argv"]]
        try:
            from gpurent.cli.app import main

            main()  # ends the process itself (os._exit with the command's status)
        finally:
            os._exit(1)

    def log(self, message: str) -> None:
        stamp = datetime.now(UTC).strftime("%H:%M:%SZ")
        print(f"{stamp} {message}", file=sys.stderr, flush=True)


def _take_client_streams(request: dict[str, Any]) -> None:
    """New sys.stdin/stdout/stderr over fds 0-2 (now the client's), in its encodings, and
    buffered as Python buffers them: stdout by line on a terminal, stderr always by line."""
    out_enc, out_err = request["stdout"]
    err_enc, err_err = request["stderr"]
    sys.stdin = open(0, encoding=out_enc, closefd=False)  # noqa: SIM115
    sys.stdout = open(1, "w", encoding=out_enc, errors=out_err, closefd=False)  # noqa: SIM115
    sys.stderr = io.TextIOWrapper(
        open(2, "wb", buffering=0, closefd=False),  # noqa: SIM115
        encoding=err_enc,
        errors=err_err,
        line_buffering=True,
        write_through=True,
    )


def _take_client_locale() -> None:
    """The client's character type and time zone (Python and the C library read them from
    the environment once, at start, so the server's would stay otherwise)."""
    with contextlib.suppress(locale.Error):
        locale.setlocale(locale.LC_CTYPE, "")
    time.tzset()


def _valid_request(request: dict[str, Any] | None, fds: list[int]) -> dict[str, Any]:
    """The request, checked: this protocol, three descriptors, a read-only command."""
    if request is None:
        raise ValueError("the client closed before asking")
    if request.get("v") != wire.VERSION:
        raise ValueError(f"protocol {request.get('v')!r}, not {wire.VERSION}")
    if len(fds) != 3:
        raise ValueError(f"{len(fds)} descriptors, not 3")
    argv = request.get("argv")
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        raise ValueError("no command line")
    if not is_read_only(argv):
        raise ValueError(f"not a read-only command: {command_word(argv)!r}")
    env = request.get("env")
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise ValueError("no environment")
    if not isinstance(request.get("cwd"), str) or not isinstance(request.get("umask"), int):
        raise ValueError("no working directory or umask")
    for stream in ("stdout", "stderr"):
        value = request.get(stream)
        if not (
            isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value)
        ):
            raise ValueError(f"no {stream} encoding")
    return request


def _answers(path: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(path))
    except OSError:
        return False
    finally:
        probe.close()
    return True


def _close_all(fds: list[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)
