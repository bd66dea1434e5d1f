"""The DuckLake warehouse end to end: PostgreSQL as its catalog (Debian's package, a throwaway
server), a real Prefect server, two workers as separate processes crawling different
providers at once, and the fan-out parent loading their outcomes into the lake, while a
reader asks `gpurent cheapest` over and over, from its own processes, without an error.
Then the lake's answer must be the embedded warehouse's answer for a local `gpurent crawl
--replay` of the same providers.

"While" is made of events, not of timing: the lake is created (empty) first; the reader's
first query has finished before the fan-out is launched; the reader stops only after a
query that began once the fan-out had returned. Each query records which of those events
had happened when it began and when it ended. Every answer the reader got must be a
committed state: each provider's run is one transaction, so an answer holds all of a
provider's final rows or none of them.

Never skipped: without PostgreSQL or a Prefect server the test fails and says which. It
takes about 3-4 minutes on 2 busy cores (server start-up, two crawl flow runs, the local
reference crawl).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pg import Postgres

from tests.conftest import REPO_ROOT
from tests.flows.fanout_kit import (
    PROVIDERS,
    STEP_S,
    Cluster,
    crawl_locally,
    fanout_params,
    fanout_rows,
    run_fanout,
    running_cluster,
    running_workers,
)
from warehouse.lake import LakeConfig, connect_lake

CHEAPEST = ("cheapest", "--min-vram", "16", "-f", "json", "--limit", "1000")
"""The reader's question: every in-stock card with 16 GB or more (no row cut off)."""
VOLATILE = frozenset({"run_id", "observed_at", "age_s", "age"})
"""What differs between two crawls of the same recordings: the run, when, how long ago."""
QUERY_GAP_S = 0.2  # between two reader queries: leaves the crawlers some CPU

BEFORE, LAUNCHED, FINISHED = "before launch", "fan-out launched", "fan-out finished"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with ExitStack() as stack:
        try:
            started = stack.enter_context(
                running_cluster(tmp_path_factory.mktemp("lake-prefect-cluster"))
            )
        except AssertionError as exc:
            pytest.fail(f"the lake end-to-end test needs a Prefect server: {exc}", pytrace=False)
        yield started


@dataclass(frozen=True)
class Query:
    returncode: int
    stdout: str
    stderr: str
    began: str
    ended: str
    """The last event (BEFORE, LAUNCHED, FINISHED) when the query began, and when it ended."""

    @property
    def blind(self) -> bool:
        """The lake held no offer yet: no answer, said (`gpurent.cli.queries.BLIND`)."""
        return self.returncode == 1 and "no provider has a good run on record" in self.stderr

    def answer(self) -> list[dict[str, Any]]:
        if self.blind:
            return []  # nothing is known of the market: no rows
        rows = json.loads(self.stdout)
        assert isinstance(rows, list), self.stdout[:500]
        return rows


class Reader:
    """`python -m gpurent cheapest ...` in a loop, one process per query, on a thread."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.queries: list[Query] = []
        self._event = BEFORE
        self._stop = False
        self._lock = threading.Lock()
        self._first = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="cheapest-reader", daemon=True)
        self._crash: BaseException | None = None

    def mark(self, event: str) -> None:
        with self._lock:
            self._event = event

    def _now(self) -> str:
        with self._lock:
            return self._event

    def _loop(self) -> None:
        try:
            while True:
                began = self._now()
                proc = subprocess.run(
                    [sys.executable, "-m", "gpurent", *CHEAPEST],
                    cwd=REPO_ROOT, env=self.env, capture_output=True, text=True,
                    timeout=STEP_S, check=False,
                )  # fmt: skip
                query = Query(proc.returncode, proc.stdout, proc.stderr[-3000:], began, self._now())
                with self._lock:
                    self.queries.append(query)
                    done = self._stop and began == FINISHED
                self._first.set()
                if done:
                    return
                time.sleep(QUERY_GAP_S)  # a pause between queries, not a wait for anything
        except BaseException as exc:  # reported by stop(), in the test's thread
            self._crash = exc
            self._first.set()

    def start(self) -> None:
        """Start the loop; return once its first query has finished."""
        self._thread.start()
        if not self._first.wait(timeout=STEP_S) or self._crash is not None:
            raise AssertionError(f"the reader's first query never finished: {self._crash!r}")

    def stop(self) -> list[Query]:
        """Finish with a query that began after FINISHED; every query made."""
        with self._lock:
            self._stop = True
        self._thread.join(timeout=2 * STEP_S)
        assert not self._thread.is_alive(), "the reader did not stop"
        if self._crash is not None:
            raise AssertionError(f"the reader crashed: {self._crash!r}")
        return list(self.queries)


def comparable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An answer less what differs from crawl to crawl (VOLATILE), in its order."""
    return [{k: v for k, v in r.items() if k not in VOLATILE} for r in rows]


def by_provider(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Each provider's rows of an answer, without volatile fields, in a fixed order."""
    out: dict[str, list[dict[str, Any]]] = {}
    for row in comparable(rows):
        out.setdefault(row["provider"], []).append(row)
    return {p: sorted(rs, key=lambda r: json.dumps(r, sort_keys=True)) for p, rs in out.items()}


def cheapest(env: dict[str, str], *db: str) -> list[dict[str, Any]]:
    proc = subprocess.run(
        [sys.executable, "-m", "gpurent", *CHEAPEST, *db],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=STEP_S, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = json.loads(proc.stdout)
    assert isinstance(rows, list)
    return rows


@pytest.mark.prefect
def test_two_workers_load_the_lake_while_a_reader_asks_and_it_answers_as_embedded(
    postgres: Postgres, cluster: Cluster, tmp_path: Path
) -> None:
    data = tmp_path / "lake-data"
    catalog = postgres.create_database("lake_e2e")
    lake_env = {"GPURENT_LAKE_CATALOG": catalog, "GPURENT_LAKE_DATA": str(data)}
    env = cluster.env | lake_env
    # The lake exists, empty, before anyone reads it: the reader's first answer is "blind".
    connect_lake(LakeConfig(catalog=catalog, data_path=data)).close()

    shared = tmp_path / "shared-storage"
    shared.mkdir()
    unused_db = tmp_path / "not-used.duckdb"  # the lake setting wins over db_path
    run_id = "20260101T030000Z-lake01"
    params = fanout_params(
        db=unused_db, shared=shared, work_dir=tmp_path / "loader-feeds", run_id=run_id
    )
    with running_workers(cluster, shared, lake_env):
        # GPURENT_DEBUG: a failed read shows its traceback here, not only the one line.
        reader = Reader(env | {"GPURENT_DEBUG": "1"})
        reader.start()
        reader.mark(LAUNCHED)
        try:
            proc = run_fanout(params, env)
        finally:
            reader.mark(FINISHED)
            queries = reader.stop()
    assert proc.returncode == 0, f"{proc.stdout}\n{proc.stderr[-4000:]}\n{cluster.worker_logs()}"
    rows = {r["provider"]: r for r in fanout_rows(proc)}
    assert rows.keys() == set(PROVIDERS)
    for row in rows.values():
        assert (row["status"], row["crawl_state"]) == ("ok", "Completed"), row
        assert row["offers"] > 0, row
    assert not unused_db.exists()

    # The reader: no error, from before the launch to after the end, and over the load
    # (before the first run is stored the lake holds no offer: the answer is "blind").
    failed = [q for q in queries if q.returncode != 0 and not q.blind]
    assert not failed, "\n".join(f"exit {q.returncode} ({q.began}): {q.stderr}" for q in failed)
    assert len(queries) >= 2
    assert (queries[0].began, queries[0].ended) == (BEFORE, BEFORE)
    assert queries[-1].began == FINISHED
    overlapping = [q for q in queries if q.began != FINISHED and q.ended != BEFORE]
    assert overlapping, [(q.began, q.ended) for q in queries]  # in flight while it loaded
    print(f"reader: {len(queries)} queries, {len(overlapping)} in flight during the fan-out")

    final = cheapest(env)
    assert final, "the lake answers nothing after the load"
    assert {r["run_id"] for r in final} == {run_id}  # the fan-out's run, not another
    assert {r["provider"] for r in final} == set(PROVIDERS)
    assert queries[0].blind  # the empty lake: no answer, never "nothing fits"
    assert not queries[-1].blind
    assert comparable(queries[-1].answer()) == comparable(final)  # the final state
    # Every answer on the way is a committed state: a provider's rows all there, or none.
    final_rows = by_provider(final)
    for query in queries:
        for provider, seen in by_provider(query.answer()).items():
            assert seen == final_rows.get(provider), (query.began, query.ended, provider)

    # The loader flushed what DuckLake inlined in the catalog out to Parquet files
    # (flows.nightly.flush_lake): a run's one crawl_runs row would otherwise stay inlined.
    # (One run per provider: every version is open, in current_offers; none closed yet.)
    written = {p.parent.name for p in data.rglob("*.parquet")}
    assert {"crawl_runs", "current_offers", "fee_set_lists"} <= written, written

    # The embedded warehouse, loaded by a local crawl of the same recordings, agrees.
    local_db = tmp_path / "local.duckdb"
    local = crawl_locally(local_db, cluster.env)
    assert local.returncode == 0, local.stderr[-3000:]
    embedded = cheapest(cluster.env, "--db", str(local_db))
    assert comparable(final) == comparable(embedded)
