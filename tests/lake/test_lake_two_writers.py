"""Two loaders store the SAME run into one lake at the same moment: the run is stored once.

Rule of truth 6 (loading a feed twice changes nothing) must hold in lake mode when two
machines load at once: a fan-out retried beside a `gpurent load` of its pending manifest,
a crawl on a second machine with the lake settings. The lake has no primary keys and the
loader's "already stored?" check reads under snapshot isolation, so only the store can
make the second load wait its turn (``warehouse.lake.take_write_lease``): two load
transactions conflict on commit, and the loser's retry finds the run stored.

Two real processes, each with its own pending-load manifest of one stored run, are released
together by a file both wait for: one loads as `gpurent load` does (``load_manifests``),
the other as the crawl, the fan-out and the watch poll do (``load_and_track``). Whether
their transactions overlap is luck; what is checked is not: the run is stored once, every
offer once, and exactly one loader says it loaded the run, the other that it was already
stored (after a retry or not). Repeated on fresh lakes to give the race its chances.

Beside it, without luck: two transactions holding the lease conflict on commit (what the
loaders rely on, on the DuckLake installed here), and a load refused every time ends in
one busy line with its run left pending.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from pg import Postgres

from flows import nightly
from flows.crawl import write_manifest
from tests.conftest import REPO_ROOT
from tests.reliability.rel_kit import feed_keys, make_outcome
from warehouse import lake
from warehouse.lake import (
    LakeConfig,
    connect_lake,
    is_write_conflict,
    reading_lake,
    take_write_lease,
)

ROUNDS = 4
OFFERS = 300  # a load long enough for the two transactions to overlap, often
START_S = 120.0  # each child imports gpurent and says it is ready (slow on 2 busy cores)
LOAD_S = 240.0

LOADER = r"""
import json, logging, sys, time
from pathlib import Path

from flows.nightly import load_and_track
from gpurent.cli.load_cmd import load_manifests

how, manifest, ready, go = sys.argv[1:5]
logged = []  # the refusals it tried again after, and any flush that failed
handler = logging.Handler()
handler.emit = lambda record: logged.append(record.getMessage())
logging.getLogger("flows.nightly").addHandler(handler)
logging.getLogger("flows.nightly").setLevel(logging.INFO)
Path(ready).touch()
while not Path(go).exists():
    time.sleep(0.001)
db = Path("unused.duckdb")  # the lake settings choose the lake; the path is not used
if how == "cli":  # `gpurent load MANIFEST`
    rows, busy = load_manifests(db, [Path(manifest)])
    states = [(r["result"], r["message"]) for r in rows]
else:  # what `gpurent crawl`, the fan-out and the watch poll run (flows.nightly.load_outcomes)
    from flows.crawl import read_manifest

    report = load_and_track(db, read_manifest(Path(manifest)), manifest=Path(manifest))
    busy = report.busy
    states = [(r.state, r.summary.message) for r in report.runs]
print(json.dumps({"states": states, "busy": busy, "logged": logged}), flush=True)
"""

_names = itertools.count()


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_two_loaders_store_one_run_once(postgres: Postgres, tmp_path: Path, round_: int) -> None:
    """The race of the module docstring, on a fresh lake each round."""
    dsn = postgres.create_database(f"two_writers_{round_}_{next(_names)}")
    lake = LakeConfig(catalog=dsn, data_path=tmp_path / "lake-data")
    connect_lake(lake).close()  # a fresh lake, created and migrated before the race
    outcome = make_outcome(tmp_path / "stored", "run-1", "acme", OFFERS)
    keys = feed_keys(outcome)

    env = {
        **_child_env(),
        "GPURENT_LAKE_CATALOG": lake.catalog,
        "GPURENT_LAKE_DATA": str(lake.data_path),
    }
    go = tmp_path / "go"
    loaders = []
    for how in ("cli", "flow"):
        # Each loader has its own copy of the pending-load manifest, naming the same feed.
        manifest = tmp_path / how / "pending-load.json"
        write_manifest(manifest, [outcome], db_path=Path("unused.duckdb"))
        ready = tmp_path / f"{how}.ready"
        proc = subprocess.Popen(
            [sys.executable, "-c", LOADER, how, str(manifest), str(ready), str(go)],
            env=env,
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        loaders.append((how, proc, ready))
    try:
        deadline = time.monotonic() + START_S
        while not all(ready.exists() for _, _, ready in loaders):
            assert all(p.poll() is None for _, p, _ in loaders), _outputs(loaders)
            assert time.monotonic() < deadline, "a loader never got ready"
            time.sleep(0.01)
        go.touch()  # both go now
        said = {}
        for how, proc, _ in loaders:
            out, err = proc.communicate(timeout=LOAD_S)
            assert proc.returncode == 0, f"loader {how} exited {proc.returncode}:\n{err[-3000:]}"
            said[how] = json.loads(out.strip().splitlines()[-1])
    finally:
        for _, proc, _ in loaders:
            if proc.poll() is None:
                proc.kill()
                proc.wait()

    # Whether the two overlapped is luck; shown (pytest -rP) to see how often they did.
    print({how: s["logged"] for how, s in said.items()})
    assert all(s["busy"] is None for s in said.values()), said
    states = sorted(state for s in said.values() for state, _ in s["states"])
    assert states == ["already stored", "loaded"], said

    with reading_lake(lake) as con:
        runs = con.execute(
            "SELECT count(*) FROM crawl_runs WHERE run_id = 'run-1' AND provider = 'acme'"
        ).fetchall()[0][0]
        assert runs == 1, f"the run is stored {runs} times"
        for view in ("current_offers", "latest_offers"):
            rows = con.execute(
                f"SELECT offer_key, count(*) FROM {view} WHERE provider = 'acme' GROUP BY ALL"
            ).fetchall()
            assert {key for key, _ in rows} == keys, view
            doubled = [key for key, n in rows if n > 1]
            assert not doubled, f"{view}: {len(doubled)} offers more than once"
        # One open version per offer, each its own id (ids continue the stored maximum).
        versions = con.execute(
            "SELECT count(*), count(DISTINCT version_id) FROM current_offers"
        ).fetchall()[0]
        assert versions == (len(keys), len(keys)), versions


def test_two_transactions_holding_the_lease_conflict_on_commit(
    postgres: Postgres, tmp_path: Path
) -> None:
    """What the loaders rely on, on the DuckLake installed here, without luck: of two
    overlapping transactions that both take the lease and both append, the second to
    commit is refused as a write conflict, and nothing of it is stored."""
    lake = LakeConfig(
        catalog=postgres.create_database(f"two_writers_lease_{next(_names)}"),
        data_path=tmp_path / "lake-data",
    )
    first, second = connect_lake(lake), connect_lake(lake)
    try:
        for con, run_id in ((first, "run-a"), (second, "run-b")):
            con.execute("BEGIN TRANSACTION")
            take_write_lease(con)
            con.execute(
                "INSERT INTO crawl_runs (run_id, provider, started_at, finished_at,"
                " duration_s, status) VALUES (?, 'acme', now(), now(), 0, 'ok')",
                [run_id],
            )
        first.execute("COMMIT")
        with pytest.raises(duckdb.Error) as refused:
            second.execute("COMMIT")
        assert is_write_conflict(refused.value), refused.value
    finally:
        first.close()
        second.close()
    with reading_lake(lake) as con:
        assert con.execute("SELECT run_id FROM crawl_runs").fetchall() == [("run-a",)]


def test_a_load_refused_every_time_ends_busy_and_stays_pending(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Other writers getting in first every time (a made-up refusal, on a DuckDB file: the
    retry does not depend on which warehouse): the loader gives up after its tries with
    one busy line, and the run stays in its manifest for `gpurent load`."""
    outcome = make_outcome(tmp_path / "feeds", "run-1", "acme", 3)
    tries = []

    def refused(con: duckdb.DuckDBPyConnection, outcome: object) -> None:
        tries.append(outcome)
        raise duckdb.TransactionException(
            "TransactionContext Error: Failed to commit: Failed to commit DuckLake transaction."
            '\nTransaction conflict - attempting to insert into table with index "1"'
        )

    monkeypatch.delenv("GPURENT_LAKE_CATALOG", raising=False)
    monkeypatch.setattr(nightly, "load_outcome", refused)
    monkeypatch.setattr(lake.time, "sleep", lambda _s: None)
    manifest = tmp_path / "feeds" / "run-1" / "pending-load.json"
    report = nightly.load_and_track(tmp_path / "w.duckdb", [outcome], manifest=manifest)
    assert len(tries) == lake.WRITE_TRIES
    assert report.busy is not None and report.busy.startswith("warehouse busy: ")
    assert "\n" not in report.busy
    assert [r.state for r in report.runs] == ["not loaded"]
    assert report.manifest == manifest and manifest.exists()


def _child_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO_ROOT)}


def _outputs(loaders: list[tuple[str, subprocess.Popen[str], Path]]) -> str:
    done = []
    for how, proc, _ in loaders:
        if proc.poll() is not None:
            out, err = proc.communicate()
            done.append(f"loader {how} exited {proc.returncode}:\n{out}{err[-3000:]}")
    return "\n".join(done)
