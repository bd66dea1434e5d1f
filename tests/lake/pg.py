"""A throwaway PostgreSQL server for the lake tests: Debian's package, a temp folder, a socket.

The server listens on a Unix socket in its own folder only (no TCP port, so parallel runs
cannot collide), with fsync off: it lives for one test module. It never skips: without the
server binaries the tests fail and say what to install (CI installs Debian's postgresql).
PostgreSQL refuses to run as root, so as root (CI, sessions) it runs as the ``postgres``
user that the Debian package creates.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PG_BIN_ENV = "GPURENT_PG_BIN"
INSTALL_HINT = (
    "PostgreSQL server binaries (initdb, pg_ctl) not found: install Debian's postgresql "
    f"package (apt-get install postgresql) or set {PG_BIN_ENV} to their folder"
)
START_TIMEOUT_S = 60


class PostgresUnavailable(RuntimeError):
    """The server could not be found or started (the message says why)."""


def find_bindir() -> Path:
    """The folder with initdb and pg_ctl: $GPURENT_PG_BIN, else Debian's newest
    /usr/lib/postgresql/N/bin, else wherever PATH has initdb."""
    candidates: list[Path] = []
    if os.environ.get(PG_BIN_ENV):
        candidates.append(Path(os.environ[PG_BIN_ENV]))
    debian = sorted(
        Path("/usr/lib/postgresql").glob("*/bin"),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else -1,
        reverse=True,
    )
    candidates.extend(debian)
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(Path(on_path).resolve().parent)
    for folder in candidates:
        if (folder / "initdb").is_file() and (folder / "pg_ctl").is_file():
            return folder
    raise PostgresUnavailable(INSTALL_HINT)


@dataclass
class Postgres:
    """A running server: ``dsn(name)`` is a libpq connection string for database ``name``."""

    bindir: Path
    root: Path
    user: str | None
    """The OS user the server runs as (None: this process's user)."""

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def socket_dir(self) -> Path:
        return self.root

    def dsn(self, dbname: str) -> str:
        return f"dbname={dbname} host={self.socket_dir} user=postgres"

    def create_database(self, name: str) -> str:
        """Create database ``name``; its connection string."""
        self._run("createdb", "-h", str(self.socket_dir), "-U", "postgres", name)
        return self.dsn(name)

    def start(self) -> None:
        self._run(
            "initdb",
            "-D",
            str(self.data),
            "-A",
            "trust",
            "-U",
            "postgres",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        )
        options = (
            f"-k {self.socket_dir} -c listen_addresses='' -c fsync=off"
            " -c synchronous_commit=off -c full_page_writes=off"
        )
        log = str(self.root / "server.log")
        self._run(
            "pg_ctl",
            "-D",
            str(self.data),
            "-l",
            log,
            "-o",
            options,
            "-w",
            "-t",
            str(START_TIMEOUT_S),
            "start",
        )

    def stop(self) -> None:
        with contextlib.suppress(PostgresUnavailable):
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def log_tail(self, lines: int = 20) -> str:
        log = self.root / "server.log"
        if not log.is_file():
            return ""
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])

    def _run(self, program: str, *args: str) -> None:
        try:
            done = subprocess.run(
                [str(self.bindir / program), *args],
                capture_output=True,
                text=True,
                timeout=START_TIMEOUT_S + 30,
                check=False,
                cwd=self.root,
                user=self.user,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise PostgresUnavailable(f"{program} failed to run: {exc}") from exc
        if done.returncode != 0:
            raise PostgresUnavailable(
                f"{program} exited {done.returncode}: {done.stderr.strip() or done.stdout.strip()}"
                f"\n{self.log_tail()}"
            )


def _server_user() -> str | None:
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam("postgres")
    except KeyError as exc:
        raise PostgresUnavailable(
            "running as root, and PostgreSQL refuses root: no 'postgres' user to run it as "
            "(Debian's postgresql package creates it)"
        ) from exc
    return "postgres"


@contextlib.contextmanager
def running_postgres() -> Iterator[Postgres]:
    """Start a server in a new temp folder; stop it and remove the folder afterwards."""
    bindir = find_bindir()
    user = _server_user()
    # Short and under /tmp: a Unix socket path must stay under ~100 bytes, and pytest's
    # tmp_path is neither short nor open to another user.
    root = Path(tempfile.mkdtemp(prefix="gpurent-pg-", dir="/tmp"))
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(root, entry.pw_uid, entry.pw_gid)
    server = Postgres(bindir=bindir, root=root, user=user)
    try:
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)
