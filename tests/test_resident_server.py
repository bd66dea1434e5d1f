"""`gpurent serve` (issue 13, start-up): read-only commands answered by a resident process.

Each test runs the real server (`python -m gpurent serve`) and the real console script as
separate processes over a real Unix socket, against a real warehouse of 2,000 synthetic
offers. What a served command says must be exactly what it says alone (stdout, stderr, exit
status); the server's log line for each command proves it was served (or that it was not).
Waits have generous deadlines and no test depends on how fast anything is.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from benchmarks.market import write_feed

REPO_ROOT = Path(__file__).resolve().parents[1]
DEADLINE_S = 120.0
OFFERS = 2000


@pytest.fixture(scope="module")
def market(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("resident")
    feed = write_feed(root / "feed.jsonl", "bench", "bench-run-1", OFFERS)
    db = root / "market.duckdb"
    subprocess.run(
        [sys.executable, "-m", "benchmarks.load_child", "gpurent", str(feed), str(db),
         "bench", "bench-run-1", str(OFFERS)],
        cwd=REPO_ROOT, check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    return db


@dataclass
class Server:
    proc: subprocess.Popen[bytes]
    socket: Path
    log: Path

    def lines(self) -> list[str]:
        return self.log.read_text(errors="replace").splitlines()

    def served(self) -> list[str]:
        """The log's line for each command it ran."""
        return [line for line in self.lines() if "(pid " in line and ": exit " in line]

    def wait_for_line(self, needle: str) -> str:
        deadline = time.monotonic() + DEADLINE_S
        while time.monotonic() < deadline:
            found = [line for line in self.lines() if needle in line]
            if found:
                return found[-1]
            time.sleep(0.05)
        raise AssertionError(f"no {needle!r} in the server's log:\n{self.log.read_text()}")

    def env(self, **extra: str) -> dict[str, str]:
        return client_env(self.socket, **extra)


def client_env(sock: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "GPURENT_RESIDENT"}
    env.update({"GPURENT_SOCKET": str(sock), "COLUMNS": "150", **extra})
    return env


def start_server(
    folder: Path, *args: str, prelude: str = "", env_extra: dict[str, str] | None = None
) -> Server:
    sock = folder / "s.sock"
    log = folder / "server.log"
    program = f"{prelude}import sys\nfrom gpurent.cli.entry import main\nsys.argv = ['gpurent', 'serve', *sys.argv[1:]]\nmain()\n"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", program, *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=client_env(sock, **(env_extra or {})),
            cwd=folder,
        )
    server = Server(proc, sock, log)
    deadline = time.monotonic() + DEADLINE_S
    while "serving read-only commands" not in log.read_text(errors="replace"):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"the server did not start:\n{log.read_text()}")
        time.sleep(0.05)
    return server


def stop(server: Server) -> int:
    if server.proc.poll() is None:
        server.proc.send_signal(signal.SIGINT)
    return server.proc.wait(timeout=DEADLINE_S)


@pytest.fixture
def folder() -> Iterator[Path]:
    # A short, private folder: a socket's path is limited to 107 bytes.
    with tempfile.TemporaryDirectory(prefix="gr-", dir="/tmp") as name:
        yield Path(name)


@pytest.fixture
def server(folder: Path) -> Iterator[Server]:
    running = start_server(folder)
    try:
        yield running
    finally:
        stop(running)


def gpurent(
    *args: str, env: dict[str, str], cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpurent", *args],
        capture_output=True, text=True, env=env, cwd=cwd, timeout=DEADLINE_S, check=False,
    )  # fmt: skip


def steady(text: str) -> str:
    """JSON's offer ages in seconds tick between two runs; everything else must be equal."""
    return re.sub(r'"age_s": \d+', '"age_s": _', text)


def alone_env(env: dict[str, str]) -> dict[str, str]:
    return {**env, "GPURENT_RESIDENT": "0"}


# ------------------------------------------------------------------ same answers


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("cheapest", "--min-vram", "32"), 0),
        (("cheapest", "--min-vram", "24", "--gpus", "2", "--format", "json"), 0),
        (("offers", "--provider", "bench"), 0),  # (csv and json carry age_s, which ticks)
        (("providers",), 0),
        (("size", "--params-b", "7", "--prompt-tokens", "100", "--gen-tokens", "100"), 0),
        (("cheapest", "--min-vram", "-1"), 2),  # refused: one line on stderr
        (("cheapest", "--gpu", "no such card"), 2),
    ],
)
def test_a_served_command_says_exactly_what_it_says_alone(
    server: Server, market: Path, args: tuple[str, ...], code: int
) -> None:
    line = (*args, "--db", str(market))
    served = gpurent(*line, env=server.env())
    alone = gpurent(*line, env=alone_env(server.env()))
    assert (served.returncode, steady(served.stdout), served.stderr) == (
        alone.returncode,
        steady(alone.stdout),
        alone.stderr,
    )
    assert served.returncode == code, served.stderr
    assert code != 0 or served.stdout.strip()
    assert len(server.served()) == 1, server.lines()  # the first was served, the second not
    assert server.served()[0].split()[1] == args[0]
    assert f"exit {code}" in server.served()[0]


def test_a_served_command_uses_the_callers_directory_and_environment(
    server: Server, market: Path
) -> None:
    # The warehouse named by a relative path, from the caller's folder, and by GPURENT_DB.
    by_path = gpurent("cheapest", "--min-vram", "32", "--db", market.name,
                      env=server.env(), cwd=market.parent)  # fmt: skip
    by_env = gpurent("cheapest", "--min-vram", "32", env=server.env(GPURENT_DB=str(market)))
    alone = gpurent("cheapest", "--min-vram", "32", "--db", str(market),
                    env=alone_env(server.env()))  # fmt: skip
    assert by_path.returncode == by_env.returncode == alone.returncode == 0, by_path.stderr
    assert by_path.stdout == by_env.stdout == alone.stdout
    assert len(server.served()) == 2
    # The caller's output encoding (Rich draws the table's lines in ASCII for it).
    ascii_env = {"PYTHONIOENCODING": "ascii:backslashreplace"}
    line = ("cheapest", "--min-vram", "32", "--db", str(market))
    served_ascii = gpurent(*line, env=server.env(**ascii_env))
    alone_ascii = gpurent(*line, env=alone_env(server.env(**ascii_env)))
    assert served_ascii.stdout == alone_ascii.stdout != alone.stdout
    assert served_ascii.stdout.isascii()
    assert len(server.served()) == 3


def test_writing_commands_and_opted_out_ones_run_alone(
    server: Server, market: Path, folder: Path
) -> None:
    crawl = gpurent("crawl", "--help", env=server.env())
    loaded = gpurent("load", str(folder / "missing"), "--db", str(market), env=server.env())
    opted_out = gpurent("providers", "--db", str(market), env=server.env(GPURENT_RESIDENT="0"))
    assert crawl.returncode == 0 and "Usage: gpurent crawl" in crawl.stdout
    assert loaded.returncode == 2
    assert opted_out.returncode == 0 and "autodl" in opted_out.stdout
    assert server.served() == []


# ------------------------------------------------------------------ signals


def _blocked_on_output(server: Server, market: Path) -> subprocess.Popen[bytes]:
    """A served `offers` whose output nobody reads: once its pipe is full it waits, so it is
    still running, whatever the machine's speed, when the test acts on it."""
    client = subprocess.Popen(
        [sys.executable, "-m", "gpurent", "offers", "--format", "csv", "--db", str(market)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=server.env(),
    )
    assert client.stdout is not None
    assert client.stdout.read(1) == b"p"  # the header's first letter: the command runs
    return client


def test_a_signal_to_the_client_reaches_its_command(server: Server, market: Path) -> None:
    client = _blocked_on_output(server, market)
    client.send_signal(signal.SIGTERM)
    assert client.wait(timeout=DEADLINE_S) == -signal.SIGTERM
    assert "exit -15" in server.wait_for_line("offers (pid")


def test_a_client_killed_takes_its_command_with_it(server: Server, market: Path) -> None:
    client = _blocked_on_output(server, market)
    client.kill()
    client.wait(timeout=DEADLINE_S)
    line = server.wait_for_line("client gone")
    assert "exit -15" in line
    # The server goes on serving.
    again = gpurent("providers", "--db", str(market), env=server.env())
    assert again.returncode == 0 and "autodl" in again.stdout
    assert len(server.served()) == 2


# ------------------------------------------------------------------ lifetime


def test_the_server_declines_and_leaves_when_its_code_changed(folder: Path, market: Path) -> None:
    module = folder / "extra_module.py"
    module.write_text("VALUE = 1\n")
    running = start_server(
        folder, prelude="import extra_module\n", env_extra={"PYTHONPATH": str(folder)}
    )
    try:
        module.write_text("VALUE = 22\n")  # another size: changed whatever the clock says
        answered = gpurent("providers", "--db", str(market), env=running.env())
        assert answered.returncode == 0 and "autodl" in answered.stdout  # run alone instead
        assert running.proc.wait(timeout=DEADLINE_S) == 0
        assert any("declined: code changed" in line for line in running.lines())
        assert running.served() == []
        assert not running.socket.exists()
    finally:
        stop(running)


def test_an_idle_server_leaves_by_itself(folder: Path) -> None:
    running = start_server(folder, "--idle-exit", "0.2")
    assert running.proc.wait(timeout=DEADLINE_S) == 0
    assert "stopped: idle for 0.2 s" in running.lines()[-1]
    assert not running.socket.exists()


def test_ctrl_c_stops_the_server_and_removes_its_socket(server: Server) -> None:
    assert server.socket.exists()
    assert stop(server) == 0
    assert not server.socket.exists()
    assert "stopped: SIGINT received" in server.lines()[-1]


def test_a_second_server_on_the_same_socket_is_refused(server: Server, folder: Path) -> None:
    second = subprocess.run(
        [sys.executable, "-m", "gpurent", "serve"],
        capture_output=True, text=True, env=server.env(), timeout=DEADLINE_S, check=False,
    )  # fmt: skip
    lines = [line for line in second.stderr.splitlines() if line.strip()]
    assert second.returncode == 2
    assert lines == [f"gpurent: a server already answers at {server.socket}"]
    assert server.proc.poll() is None  # the first one serves on


def test_a_socket_left_by_a_killed_server_is_not_an_error(folder: Path, market: Path) -> None:
    running = start_server(folder)
    running.proc.kill()
    running.proc.wait(timeout=DEADLINE_S)
    assert running.socket.exists()  # nobody listens there now
    answered = gpurent("providers", "--db", str(market), env=running.env())
    assert answered.returncode == 0 and "autodl" in answered.stdout
    # A new server takes the place of the dead one.
    again = start_server(folder)
    try:
        served = gpurent("providers", "--db", str(market), env=again.env())
        assert served.stdout == answered.stdout
        assert len(again.served()) == 1
    finally:
        stop(again)
