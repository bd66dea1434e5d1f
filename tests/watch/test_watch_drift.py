"""No alert from drift (rules of truth 7 and 10): layout changes, quarantined items and stale
rows never fire, confirm or re-arm a watch; a partial run still counts what it saw."""

from __future__ import annotations

from datetime import timedelta

import duckdb

from gpurent_core.model import RunStatus, StockStatus
from tests.watch.watch_kit import T0, Market, outbox, states
from warehouse.queries import latest_offers
from warehouse.watch.evaluate import evaluate_watches
from warehouse.watch.store import add_watch

HOOK = "json://127.0.0.1:9/hook"


def evaluate(con: duckdb.DuckDBPyConnection, market: Market) -> list[str]:
    now = market.start + timedelta(minutes=market.n, seconds=30)
    return [a.kind.value for a in evaluate_watches(con, now=now).alerts]


def watch(con: duckdb.DuckDBPyConnection, **kw: object) -> None:
    fields: dict[str, object] = {"created_at": T0, "notify_urls": [HOOK], "gpu_model": "RTX 4090"}
    add_watch(con, **(fields | kw))  # type: ignore[arg-type]


def test_in_stock_then_layout_changed_then_in_stock_again_is_no_alert(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    watch(con)
    free = market.offer(available_count=2)
    market.poll([market.offer(status=StockStatus.SOLD_OUT, available_count=0)])
    market.poll([free])
    assert evaluate(con, market) == ["restock"]
    # The renamed stock field read everything as sold out: the run ends layout_changed.
    market.poll([market.offer(status=StockStatus.SOLD_OUT, available_count=0)],
                status=RunStatus.LAYOUT_CHANGED)  # fmt: skip
    market.poll([free])
    assert evaluate(con, market) == []
    assert states(con) == {(1, "acme", "h1"): "fired"}
    assert len(outbox(con)) == 1


def test_an_item_quarantined_in_a_partial_run_and_back_is_no_alert(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    watch(con)
    other = market.offer("other", gpu_model="H100", gpu_vram_gb=80)
    free = market.offer(available_count=2)
    market.poll([other, free])  # baseline: in stock, fired
    # h1 quarantined twice running (its key read, so it stays, stale: rule 10): were it read
    # as absent, it would re-arm and fire again.
    market.poll([other], status=RunStatus.PARTIAL, unread_keys=("h1",))
    market.poll([other], status=RunStatus.PARTIAL, unread_keys=("h1",))
    stale = latest_offers(con).filter(latest_offers(con)["offer_key"] == "h1")
    assert stale["stale"].to_list() == [True]
    market.poll([other, free])
    assert evaluate(con, market) == []
    assert states(con) == {(1, "acme", "h1"): "fired"}


def test_a_stale_row_never_re_arms_a_leaving_pair(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    watch(con)
    other = market.offer("other", gpu_model="H100", gpu_vram_gb=80)
    free = market.offer(available_count=2)
    market.poll([other, free])  # fired at the baseline
    market.poll([other, market.offer(status=StockStatus.SOLD_OUT, available_count=0)])
    market.poll([other], status=RunStatus.PARTIAL, unread_keys=("h1",))  # h1 unseen: no reading
    market.poll([other, free])  # back in: a flap, not a restock
    assert evaluate(con, market) == []


def test_a_stale_row_never_counts_as_the_confirming_poll(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    watch(con)
    other = market.offer("other", gpu_model="H100", gpu_vram_gb=80)
    uncounted = market.offer(available_count=None)
    market.poll([other, market.offer(status=StockStatus.SOLD_OUT, available_count=0)])
    market.poll([other, uncounted])  # in stock, no free count: needs a second poll
    market.poll([other], status=RunStatus.PARTIAL, unread_keys=("h1",))  # h1 kept stale
    assert evaluate(con, market) == []
    assert states(con) == {(1, "acme", "h1"): "arriving"}
    market.poll([other, uncounted])  # the second poll that saw it
    assert evaluate(con, market) == ["restock"]


def test_a_partial_run_counts_the_offers_it_saw(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    # One bad item makes a run partial; the watch must not go blind to the rest.
    watch(con)
    market.poll([market.offer(status=StockStatus.SOLD_OUT, available_count=0)])
    market.poll([market.offer(available_count=2)], status=RunStatus.PARTIAL)
    assert evaluate(con, market) == ["restock"]


def test_unknown_vram_never_matches_a_vram_floor(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    watch(con, gpu_model=None, min_vram_gb=40)
    h20 = market.offer("h20", gpu_model="H20", gpu_vram_gb=None, raw_gpu_name="H20")
    market.poll([market.offer("h20", gpu_model="H20", gpu_vram_gb=None,
                              raw_gpu_name="H20", status=StockStatus.SOLD_OUT)])  # fmt: skip
    market.poll([h20])
    market.poll([h20])
    assert evaluate(con, market) == []
    assert states(con) == {}
