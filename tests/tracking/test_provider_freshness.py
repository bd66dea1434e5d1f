"""`gpurent providers` says how old the data it still shows is, not only when the last good
run finished: a partial run keeps what it could not see, and those rows are older than the run
(audit: the partial run's age stood for every row's)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from gpurent import api
from gpurent_core.model import RunStatus
from tests.tracking.test_confirmed_reads import Warehouse

PROVIDER = "vastai"  # any provider gpurent knows: `providers` lists the registry's


def test_a_partial_run_reports_the_rows_it_kept_and_how_old_they_are(tmp_path: Path) -> None:
    wh = Warehouse(tmp_path)
    kit = wh.kit
    first = kit.run(1, provider=PROVIDER)
    wh.load(first, [kit.offer(first, "a"), kit.offer(first, "b"), kit.offer(first, "c")])
    # Run 5 reads one page of two: it lists "a" again and cannot see "b" and "c".
    partial = kit.failed_page(5, provider=PROVIDER)
    wh.load(partial, [kit.offer(partial, "a")])
    (state,) = [p for p in api.providers(db=wh.close()) if p.provider == PROVIDER]

    assert state.last_status == RunStatus.PARTIAL.value
    assert state.good_data_from is not None and state.oldest_shown_at is not None
    assert state.stale_offers == 2
    # The rows kept were last seen at run 1, four hours before the partial run's data.
    assert state.good_data_from - state.oldest_shown_at > timedelta(hours=3)


def test_after_a_failed_run_every_row_shown_is_stale(tmp_path: Path) -> None:
    wh = Warehouse(tmp_path)
    kit = wh.kit
    first = kit.run(1, provider=PROVIDER)
    wh.load(first, [kit.offer(first, "a"), kit.offer(first, "b")])
    wh.load(kit.run(2, RunStatus.FAILED, provider=PROVIDER))
    (state,) = [p for p in api.providers(db=wh.close()) if p.provider == PROVIDER]

    assert state.last_status == RunStatus.FAILED.value
    assert state.stale_offers == 2
    assert state.oldest_shown_at is not None and state.oldest_shown_at < state.last_run_at


def test_a_run_that_confirms_everything_reports_nothing_stale(tmp_path: Path) -> None:
    wh = Warehouse(tmp_path)
    kit = wh.kit
    first = kit.run(1, provider=PROVIDER)
    wh.load(first, [kit.offer(first, "a")])
    (state,) = [p for p in api.providers(db=wh.close()) if p.provider == PROVIDER]

    assert state.stale_offers == 0
    assert state.oldest_shown_at is None
