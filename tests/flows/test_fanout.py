"""The crawl fanned out over a Prefect work pool, end to end, and the fan-out's settings.

The end-to-end test starts a real Prefect server (its own process, its own PREFECT_HOME),
creates the process work pools of prefect.yaml, deploys the crawl and fan-out deployments
with `prefect deploy` from prefect.yaml, starts TWO workers as separate processes (each on
its own work queue, so which worker crawls which provider is decided, not raced), and runs
``fanout_crawl`` over two providers against the replay server into a temporary DuckDB file
with a folder as the shared storage. The offers loaded must be those `gpurent crawl
--replay` loads for the same providers. It takes about 1-2 minutes on 2 busy cores (server
start-up and two flow-run processes dominate).
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from flows.fanout import (
    CRAWL_DEPLOYMENT,
    LOAD_LIMIT,
    flag,
    number,
    provider_tag,
    setting,
)
from flows.storage import FeedStore
from tests.cli_helpers import invoke_json
from tests.conftest import REPO_ROOT

PROVIDERS = ("cudo", "vastai")
QUEUES = {"cudo": "crawl-a", "vastai": "crawl-b"}
WORKERS = {"crawl-a": "worker-a", "crawl-b": "worker-b"}
# Generous bounds for a busy 2-core machine; every wait below ends as soon as it can.
SERVER_START_S = 240
STEP_S = 300


# -- settings resolution (no server) -----------------------------------------------------


def test_a_setting_prefect_deploy_could_not_fill_is_read_where_the_flow_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GPURENT_STORAGE_URL", "/mnt/shared")
    assert setting("{{ $GPURENT_STORAGE_URL }}", "GPURENT_STORAGE_URL") == "/mnt/shared"
    assert setting(None, "GPURENT_STORAGE_URL") == "/mnt/shared"
    assert setting("s3://bucket/x", "GPURENT_STORAGE_URL") == "s3://bucket/x"
    monkeypatch.delenv("GPURENT_STORAGE_URL")
    assert setting("{{$GPURENT_STORAGE_URL}}", "GPURENT_STORAGE_URL", "dflt") == "dflt"
    assert setting("", "GPURENT_STORAGE_URL") is None


def test_yes_no_and_number_settings_from_yaml_strings_or_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GPURENT_REPLAY", raising=False)
    assert flag("{{ $GPURENT_REPLAY }}", "GPURENT_REPLAY", False) is False
    assert flag("true", "GPURENT_REPLAY", False) is True
    assert flag(False, "GPURENT_REPLAY", True) is False
    monkeypatch.setenv("GPURENT_REPLAY", "1")
    assert flag(None, "GPURENT_REPLAY", False) is True
    with pytest.raises(ValueError, match="not a yes/no value"):
        flag("perhaps", "GPURENT_REPLAY", False)
    monkeypatch.setenv("GPURENT_REPLAY_STEP", "2")
    assert number("{{ $GPURENT_REPLAY_STEP }}", "GPURENT_REPLAY_STEP", 1) == 2
    assert number(3, "GPURENT_REPLAY_STEP", 1) == 3
    monkeypatch.delenv("GPURENT_REPLAY_STEP")
    assert number(None, "GPURENT_REPLAY_STEP", 1) == 1


# -- a real server, two workers -----------------------------------------------------------


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


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    base = tmp_path_factory.mktemp("prefect-cluster")
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


@pytest.fixture(scope="module")
def workers(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The pools and queues, both fan-out deployments from prefect.yaml, two crawl workers.

    Yields the shared storage folder the deployments were given."""
    shared = tmp_path_factory.mktemp("shared-storage")
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
                env=cluster.env | {"GPURENT_CRAWLER_ID": name},
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
            procs.append(proc)
            out.close()
        yield shared
    finally:
        for proc in procs:
            stop(proc)


def offers_without_run(db: Path, provider: str) -> list[dict[str, Any]]:
    """A provider's offers as `gpurent offers` shows them, less what differs run to run."""
    volatile = {"run_id", "observed_at", "age_s", "age"}
    rows = invoke_json("offers", "--provider", provider, "--db", str(db))
    return sorted(
        ({k: v for k, v in r.items() if k not in volatile} for r in rows),
        key=lambda r: json.dumps(r, sort_keys=True),
    )


@pytest.mark.prefect
def test_fanout_crawls_on_two_workers_and_loads_like_a_local_crawl(
    cluster: Cluster, workers: Path, tmp_path: Path
) -> None:
    shared = workers
    # The fan-out deployment took the settings prefect.yaml reads from the environment.
    [fanout] = cluster.api(
        "POST", "/deployments/filter", {"deployments": {"name": {"any_": ["gpurent-fanout"]}}}
    )
    assert fanout["parameters"]["storage_url"] == str(shared)
    assert fanout["parameters"]["replay"] == "true"
    # Not set when deploying: left empty, read where the flow runs (GPURENT_DB there).
    assert setting(fanout["parameters"]["db_path"], "GPURENT_NOT_SET_ANYWHERE") is None

    db = tmp_path / "fanout.duckdb"
    script = (
        "import json, sys; from flows.fanout import fanout_crawl; "
        "print('ROWS=' + json.dumps(fanout_crawl(**json.loads(sys.argv[1]))))"
    )
    run_id = "20260101T020000Z-fan001"
    params: dict[str, Any] = {
        "providers": list(PROVIDERS),
        "db_path": str(db),
        "storage_url": str(shared),
        "work_dir": str(tmp_path / "loader-feeds"),
        "replay": True,
        "run_id": run_id,
        "work_queues": QUEUES,
        "poll_s": 1.0,
        "wait_s": float(STEP_S),
    }
    proc = subprocess.run(
        [sys.executable, "-c", script, json.dumps(params)],
        cwd=REPO_ROOT, env=cluster.env, capture_output=True, text=True,
        timeout=STEP_S + 120, check=False,
    )  # fmt: skip
    worker_logs = "\n".join(
        p.read_text(errors="replace")[-4000:] for p in cluster.logs.glob("worker-*.log")
    )
    assert proc.returncode == 0, f"{proc.stdout}\n{proc.stderr[-4000:]}\n{worker_logs}"
    [line] = [ln for ln in proc.stdout.splitlines() if ln.startswith("ROWS=")]
    rows = {r["provider"]: r for r in json.loads(line.removeprefix("ROWS="))}
    assert rows.keys() == set(PROVIDERS)
    for row in rows.values():
        assert (row["status"], row["crawl_state"]) == ("ok", "Completed"), row
        assert row["message"] == f"{row['offers']} offers" and row["offers"] > 0, row

    # Each provider was crawled by its queue's worker, and only once.
    store = FeedStore(shared)
    stored = {s.provider: s.crawled_by for s in store.outcomes(run_id)}
    assert stored == {p: WORKERS[QUEUES[p]] for p in PROVIDERS}
    runs = cluster.api(
        "POST",
        "/flow_runs/filter",
        {"flow_runs": {"name": {"any_": [f"crawl-{p}-{run_id}" for p in PROVIDERS]}}},
    )
    assert sorted((r["name"], r["state"]["type"], r["work_queue_name"]) for r in runs) == sorted(
        (f"crawl-{p}-{run_id}", "COMPLETED", QUEUES[p]) for p in PROVIDERS
    )
    deployment_ids = {r["deployment_id"] for r in runs}
    [crawl_deployment] = cluster.api(
        "POST",
        "/deployments/filter",
        {"deployments": {"name": {"any_": [CRAWL_DEPLOYMENT.split("/")[1]]}}},
    )
    assert deployment_ids == {crawl_deployment["id"]}

    # The limits the fan-out relies on exist, with one slot each.
    for name in (LOAD_LIMIT, *(f"tag:{provider_tag(p)}" for p in PROVIDERS)):
        limit = cluster.api("GET", f"/v2/concurrency_limits/{name}")
        assert limit["limit"] == 1, limit

    # The same offers as a local `gpurent crawl --replay` of the same providers.
    local_db = tmp_path / "local.duckdb"
    args = [arg for p in PROVIDERS for arg in ("--provider", p)]
    local = subprocess.run(
        [sys.executable, "-m", "gpurent", "crawl", "--replay", *args, "--db", str(local_db),
         "--format", "json"],
        cwd=REPO_ROOT, env=cluster.env, capture_output=True, text=True, timeout=STEP_S,
        check=False,
    )  # fmt: skip
    assert local.returncode == 0, local.stderr[-3000:]
    for p in PROVIDERS:
        fanned = offers_without_run(db, p)
        assert fanned, p
        assert fanned == offers_without_run(local_db, p), p

    # Loading the same run again (a retried parent) stores nothing twice.
    again = subprocess.run(
        [sys.executable, "-c", script, json.dumps(params)],
        cwd=REPO_ROOT, env=cluster.env, capture_output=True, text=True,
        timeout=STEP_S + 120, check=False,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr[-4000:]
    [line] = [ln for ln in again.stdout.splitlines() if ln.startswith("ROWS=")]
    assert {r["message"] for r in json.loads(line.removeprefix("ROWS="))} == {"already stored"}
    assert offers_without_run(db, "cudo") == offers_without_run(local_db, "cudo")


def test_prefect_yaml_deploys_the_fanout_flows_with_parameters_they_take() -> None:
    import inspect

    import yaml

    from flows import fanout

    spec = yaml.safe_load((REPO_ROOT / "prefect.yaml").read_text(encoding="utf-8"))
    by_name = {d["name"]: d for d in spec["deployments"]}
    crawl, parent = by_name["gpurent-crawl-provider"], by_name["gpurent-fanout"]
    assert crawl["entrypoint"] == "flows/fanout.py:crawl_provider_flow"
    assert parent["entrypoint"] == "flows/fanout.py:fanout_crawl"
    assert f"{fanout.crawl_provider_flow.name}/{crawl['name']}" == CRAWL_DEPLOYMENT
    # Crawls on their own pool, several at once; the loader where the warehouse lives.
    assert crawl["work_pool"]["name"] == "gpurent-crawl" and crawl["concurrency_limit"] > 1
    assert parent["work_pool"]["name"] == "gpurent" and parent["concurrency_limit"] == 1
    for deployment, flow_fn in ((crawl, fanout.crawl_provider_flow), (parent, fanout.fanout_crawl)):
        accepted = set(inspect.signature(flow_fn.fn).parameters)
        assert set(deployment["parameters"]) <= accepted, deployment["name"]
    assert {"replay", "replay_dir", "scene", "step", "db_path", "storage_url"} <= set(
        parent["parameters"]
    )


def test_a_provider_whose_flow_run_stored_nothing_loads_as_failed(tmp_path: Path) -> None:
    from flows.fanout import _missing_outcome, _with_flow_state
    from flows.nightly import load_outcomes

    outcome = _missing_outcome("vastai", "20260101T020000Z-abc123", tmp_path / "feeds")
    [summary] = load_outcomes.fn(tmp_path / "g.duckdb", [outcome])
    summary = _with_flow_state(summary, "Crashed", stored=False)
    assert summary.status == "failed"
    assert summary.message.startswith("crawl flow run Crashed, nothing stored; ")
    rows = invoke_json("providers", "--db", str(tmp_path / "g.duckdb"))
    assert [r["last_status"] for r in rows if r["provider"] == "vastai"] == ["failed"]
