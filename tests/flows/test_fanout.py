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
from collections.abc import Iterator
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
from tests.flows.fanout_kit import (
    PROVIDERS,
    QUEUES,
    WORKERS,
    Cluster,
    crawl_locally,
    fanout_params,
    fanout_rows,
    run_fanout,
    running_cluster,
    running_workers,
)

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


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with running_cluster(tmp_path_factory.mktemp("prefect-cluster")) as started:
        yield started


@pytest.fixture(scope="module")
def workers(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The pools and queues, both fan-out deployments from prefect.yaml, two crawl workers.

    Yields the shared storage folder the deployments were given."""
    shared = tmp_path_factory.mktemp("shared-storage")
    with running_workers(cluster, shared):
        yield shared


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
    run_id = "20260101T020000Z-fan001"
    params = fanout_params(db=db, shared=shared, work_dir=tmp_path / "loader-feeds", run_id=run_id)
    proc = run_fanout(params, cluster.env)
    assert proc.returncode == 0, f"{proc.stdout}\n{proc.stderr[-4000:]}\n{cluster.worker_logs()}"
    rows = {r["provider"]: r for r in fanout_rows(proc)}
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
    local = crawl_locally(local_db, cluster.env)
    assert local.returncode == 0, local.stderr[-3000:]
    for p in PROVIDERS:
        fanned = offers_without_run(db, p)
        assert fanned, p
        assert fanned == offers_without_run(local_db, p), p

    # Loading the same run again (a retried parent) stores nothing twice.
    again = run_fanout(params, cluster.env)
    assert again.returncode == 0, again.stderr[-4000:]
    assert {r["message"] for r in fanout_rows(again)} == {"already stored"}
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
