"""Watches read what a run confirmed (rules of truth 7, 10 and 11): a stale row (kept by a
partial run, or every offer of a provider whose latest run failed) never fires, confirms or
re-arms; an offer a run closed (no longer listed where it read the listing whole) reads
absent, and one the warehouse turned sold out reads sold out, so both re-arm the watch."""

from __future__ import annotations

from datetime import timedelta

import duckdb

from gpurent_core.model import RunStatus, StockStatus
from tests.watch.watch_kit import T0, Market, states
from warehouse.queries import latest_offers
from warehouse.watch.evaluate import evaluate_watches
from warehouse.watch.store import add_watch

HOOK = "json://127.0.0.1:9/hook"


def evaluate(con: duckdb.DuckDBPyConnection, market: Market) -> list[str]:
    now = market.start + timedelta(minutes=market.n, seconds=30)
    return [a.kind.value for a in evaluate_watches(con, now=now).alerts]


def watch(con: duckdb.DuckDBPyConnection) -> None:
    add_watch(con, created_at=T0, notify_urls=[HOOK], gpu_model="RTX 4090")


def stale(con: duckdb.DuckDBPyConnection) -> dict[str, bool]:
    return dict(latest_offers(con).select("offer_key", "stale").iter_rows())


def test_a_provider_whose_latest_run_failed_gives_no_reading(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    watch(con)
    market.poll([market.offer(status=StockStatus.SOLD_OUT, available_count=0)])
    market.poll([market.offer(available_count=2)], status=RunStatus.FAILED)
    # The failed run's feed said in stock: nothing of it was stored, and its last good state
    # (sold out) is shown stale, so no restock fires from it.
    assert stale(con) == {"h1": True}
    assert latest_offers(con)["status"].to_list() == ["sold_out"]
    assert evaluate(con, market) == []
    assert states(con) == {(1, "acme", "h1"): "armed"}
    market.poll([market.offer(available_count=2)])
    assert stale(con) == {"h1": False}
    assert evaluate(con, market) == ["restock"]


def test_an_offer_a_partial_run_closed_reads_absent_and_re_arms(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    watch(con)
    other = market.offer("other", gpu_model="H100", gpu_vram_gb=80)
    free = market.offer(available_count=2)
    market.poll([other, free])  # fired at the baseline
    # Partial (another item quarantined without a key), but h1's listing was read whole and
    # no longer lists it: closed, not stale (rule 10). Twice: re-armed.
    market.poll([other], status=RunStatus.PARTIAL)
    market.poll([other], status=RunStatus.PARTIAL)
    assert stale(con) == {"other": False}
    assert evaluate(con, market) == []
    assert states(con) == {}  # armed after an absence: nothing worth remembering
    market.poll([other, free])
    assert evaluate(con, market) == ["restock"]


def test_an_offer_the_warehouse_turned_sold_out_re_arms(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    watch(con)
    free = market.offer(available_count=2)
    market.poll([free])  # fired at the baseline
    # The provider lists only what has capacity: h1 is gone from the listing, so it gets a
    # sold_out version (same identity). The listing is empty: an ok run of no offers.
    market.poll([], sold_out_unlisted=("h",))
    assert latest_offers(con).select("status", "stale").rows() == [("sold_out", False)]
    market.poll([], sold_out_unlisted=("h",))
    assert evaluate(con, market) == []
    assert states(con) == {(1, "acme", "h1"): "armed"}
    market.poll([free], sold_out_unlisted=("h",))
    assert evaluate(con, market) == ["restock"]


def test_a_listing_of_only_skipped_items_closes_and_re_arms(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    watch(con)
    free = market.offer(available_count=2)
    market.poll([free])
    market.poll([], skipped=(("no_public_price", 1),))  # read whole: h1 is gone
    market.poll([], skipped=(("no_public_price", 1),))
    assert stale(con) == {}
    assert evaluate(con, market) == []
    market.poll([free])
    assert evaluate(con, market) == ["restock"]


def test_a_stale_row_never_fires_even_in_stock(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    watch(con)
    other = market.offer("other", gpu_model="H100", gpu_vram_gb=80)
    market.poll([other, market.offer(status=StockStatus.SOLD_OUT, available_count=0)])
    # A partial run could not read h1's item (its key is known): h1 stays, stale, sold out.
    market.poll([other], status=RunStatus.PARTIAL, unread_keys=("h1",))
    market.poll([other], status=RunStatus.PARTIAL, unread_keys=("h1",))
    assert stale(con) == {"h1": True, "other": False}
    assert evaluate(con, market) == []
    assert states(con) == {(1, "acme", "h1"): "armed"}
