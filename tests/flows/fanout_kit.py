"""A real Prefect cluster for end-to-end tests: a server, the pools and deployments of
prefect.yaml, two process workers, and the fan-out parent run as a process.

Shared by tests/flows/test_fanout.py (into a DuckDB file) and tests/lake/test_lake_e2e.py
(into a DuckLake). A module with a unique name (not conftest) so test modules import it.
The server gets its own PREFECT_HOME and port; every process gets an environment without
the caller's PREFECT_* and GPURENT_* variables, plus what the test passes in.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import REPO_ROOT

PROVIDERS = ("cudo", "vastai")
QUEUES = {"cudo": "crawl-a", "vastai": "crawl-b"}
WORKERS = {"crawl-a": "worker-a", "crawl-b": "worker-b"}
# Generous bounds for a busy 2-core machine; every wait below ends as soon as it can.
SERVER_START_S = 240
STEP_S = 300

FANOUT_SCRIPT = (
    "import json, sys; from flows.fanout import fanout_crawl; "
    "print('ROWS=' + json.dumps(fanout_crawl(**json.loads(sys.argv[1]))))"
)
"""``fanout_crawl`` called directly in a process of its own: the parent as a loader runs it."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Cluster:
    api_url: str
    env: dict[str, str]
    home: Path
    logs: Path

    def prefect(self, *args: str, env: dict[str, str] | None = None) -> str:
        proc = subprocess.run(
            [sys.executable, "-m", "prefect", "--no-prompt", *args],
            cwd=REPO_ROOT,
            env=env or self.env,
            capture_output=True,
            text=True,
            timeout=STEP_S,
            check=False,
        )
        if proc.returncode != 0:
            raise AssertionError(f"prefect {' '.join(args)}: {proc.stdout}\n{proc.stderr}")
        return proc.stdout

    def api(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        request = urllib.request.Request(
            f"{self.api_url}{path}",
            data=None if body is None else json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
            method=method,
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read() or b"null")

    def worker_logs(self, tail: int = 4000) -> str:
        return "\n".join(
            p.read_text(errors="replace")[-tail:] for p in sorted(self.logs.glob("worker-*.log"))
        )


def wait_healthy(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + SERVER_START_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"prefect server exited {proc.returncode}:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.25)  # a polling interval, not a wait for something to have happened
    raise AssertionError(f"prefect server not healthy in {SERVER_START_S} s:\n{log.read_text()}")


def stop(proc: subprocess.Popen[Any]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


@contextmanager
def running_cluster(base: Path) -> Iterator[Cluster]:
    """A Prefect server on a free port with its home and logs under ``base``; stopped after."""
    home, logs = base / "home", base / "logs"
    home.mkdir()
    logs.mkdir()
    port = free_port()
    api_url = f"http://127.0.0.1:{port}/api"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "GPURENT_"))} | {
        "PREFECT_HOME": str(home),
        "PREFECT_API_URL": api_url,
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_UI_ENABLED": "false",
        "PREFECT_WORKER_QUERY_SECONDS": "1",
        "PYTHONPATH": str(REPO_ROOT),
        "PWD": str(REPO_ROOT),  # prefect.yaml's pull step: the working tree
    }
    server_env = {k: v for k, v in env.items() if k != "PREFECT_API_URL"}
    log = logs / "server.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "prefect", "server", "start",
             "--host", "127.0.0.1", "--port", str(port)],
            env=server_env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    try:
        wait_healthy(f"{api_url}/health", server, log)
        yield Cluster(api_url, env, home, logs)
    finally:
        stop(server)


@contextmanager
def running_workers(
    cluster: Cluster, shared: Path, env: dict[str, str] | None = None
) -> Iterator[None]:
    """The pools and queues, both fan-out deployments from prefect.yaml, two crawl workers
    (``WORKERS``, one per queue of ``QUEUES``), with ``env`` added to the workers'
    environment; the deployments are given ``shared`` as their storage. Stopped after."""
    cluster.prefect("work-pool", "create", "gpurent", "--type", "process")
    cluster.prefect("work-pool", "create", "gpurent-crawl", "--type", "process")
    cluster.prefect("work-pool", "set-concurrency-limit", "gpurent-crawl", "2")
    for queue in QUEUES.values():
        cluster.prefect("work-queue", "create", queue, "--pool", "gpurent-crawl")
    deploy_env = cluster.env | {"GPURENT_STORAGE_URL": str(shared), "GPURENT_REPLAY": "true"}
    cluster.prefect(
        "deploy", "--name", "gpurent-crawl-provider", "--name", "gpurent-fanout", env=deploy_env
    )
    procs = []
    try:
        for queue, name in WORKERS.items():
            out = (cluster.logs / f"{name}.log").open("wb")
            cmd = [sys.executable, "-m", "prefect", "worker", "start", "--pool", "gpurent-crawl",
                   "--work-queue", queue, "--name", name, "--limit", "1",
                   "--install-policy", "never"]  # fmt: skip
            proc = subprocess.Popen(
                cmd,
                cwd=REPO_ROOT,
                env=cluster.env | (env or {}) | {"GPURENT_CRAWLER_ID": name},
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
            procs.append(proc)
            out.close()
        yield
    finally:
        for proc in procs:
            stop(proc)


def fanout_params(
    *, db: Path, shared: Path, work_dir: Path, run_id: str, **more: Any
) -> dict[str, Any]:
    """``fanout_crawl``'s arguments: ``PROVIDERS`` on their ``QUEUES``, with the replay."""
    return {
        "providers": list(PROVIDERS),
        "db_path": str(db),
        "storage_url": str(shared),
        "work_dir": str(work_dir),
        "replay": True,
        "run_id": run_id,
        "work_queues": QUEUES,
        "poll_s": 1.0,
        "wait_s": float(STEP_S),
        **more,
    }


def run_fanout(params: dict[str, Any], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The fan-out parent in its own process (``FANOUT_SCRIPT``), waited for."""
    return subprocess.run(
        [sys.executable, "-c", FANOUT_SCRIPT, json.dumps(params)],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True,
        timeout=STEP_S + 120, check=False,
    )  # fmt: skip


def fanout_rows(proc: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    """The rows ``fanout_crawl`` returned, from the ``ROWS=`` line the script printed."""
    [line] = [ln for ln in proc.stdout.splitlines() if ln.startswith("ROWS=")]
    rows = json.loads(line.removeprefix("ROWS="))
    assert isinstance(rows, list)
    return rows


def crawl_locally(
    db: Path, env: dict[str, str], providers: tuple[str, ...] = PROVIDERS
) -> subprocess.CompletedProcess[str]:
    """`gpurent crawl --replay` of ``providers`` into the DuckDB file ``db`` (the reference)."""
    args = [arg for p in providers for arg in ("--provider", p)]
    return subprocess.run(
        [sys.executable, "-m", "gpurent", "crawl", "--replay", *args, "--db", str(db),
         "--format", "json"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=STEP_S,
        check=False,
    )  # fmt: skip
