"""Rule of truth 10: what a partial run could not see stays in the latest state, stale, with
its age; an ok run still closes what it no longer lists. And unknown VRAM (null) loads and
never passes a VRAM floor."""

from __future__ import annotations

from datetime import timedelta

import duckdb
from wh_kit import FeedKit

from gpurent_core.costing import UsageProfile
from gpurent_core.model import RunStatus, StockStatus
from warehouse.costed import costed_latest_offers
from warehouse.load import load_run
from warehouse.queries import latest_offers
from warehouse.snapshots import offers_of_run


def rows(con: duckdb.DuckDBPyConnection) -> dict[str, tuple[object, ...]]:
    frame = latest_offers(con)
    return {
        r["offer_key"]: (r["run_id"], r["status"], r["stale"], r["observed_at"])
        for r in frame.iter_rows(named=True)
    }


def test_a_partial_run_keeps_what_it_missed_stale_with_its_last_seen_time(
    con: duckdb.DuckDBPyConnection, kit: FeedKit
) -> None:
    one, two, three = kit.run(1), kit.run(2, RunStatus.PARTIAL), kit.run(3, RunStatus.PARTIAL)
    seen_1 = one.started_at + timedelta(seconds=5)
    load_run(con, one, kit.write("r1", [kit.offer(one, "a"), kit.offer(one, "b")]))
    # b's page failed: b keeps its in-stock state, stale since run 1 saw it.
    load_run(con, two, kit.write("r2", [kit.offer(two, "a", status=StockStatus.SOLD_OUT)]))
    assert rows(con) == {
        "a": ("run-2", "sold_out", False, two.started_at + timedelta(seconds=5)),
        "b": ("run-2", "in_stock", True, seen_1),
    }
    ages = dict(latest_offers(con).select("offer_key", "age_s").iter_rows())
    assert ages["b"] - ages["a"] == 3600  # type: ignore[operator]
    # Still missed: the first time it went stale is kept.
    load_run(con, three, kit.write("r3", [kit.offer(three, "a")]))
    assert rows(con)["b"] == ("run-3", "in_stock", True, seen_1)
    # The partial runs' own snapshots hold only what they saw.
    assert offers_of_run(con, "acme", "run-2")["offer_key"].to_list() == ["a"]
    # No state change: b is still the one version run 1 opened.
    assert con.execute("SELECT count(*) FROM version_rows WHERE offer_key = 'b'").fetchall() == [
        (1,)
    ]


def test_seen_again_it_is_fresh_and_an_ok_run_closes_what_it_no_longer_lists(
    con: duckdb.DuckDBPyConnection, kit: FeedKit
) -> None:
    one, two, three, four = kit.run(1), kit.run(2, RunStatus.PARTIAL), kit.run(3), kit.run(4)
    load_run(con, one, kit.write("r1", [kit.offer(one, "a"), kit.offer(one, "b")]))
    load_run(con, two, kit.write("r2", [kit.offer(two, "a")]))
    load_run(con, three, kit.write("r3", [kit.offer(three, "a"), kit.offer(three, "b")]))
    assert rows(con)["b"] == ("run-3", "in_stock", False, three.started_at + timedelta(seconds=5))
    load_run(con, four, kit.write("r4", [kit.offer(four, "a")]))  # ok: b is gone (rule 4)
    assert list(rows(con)) == ["a"]


def test_loading_a_partial_run_twice_changes_nothing(
    con: duckdb.DuckDBPyConnection, kit: FeedKit
) -> None:
    one, two = kit.run(1), kit.run(2, RunStatus.PARTIAL)
    load_run(con, one, kit.write("r1", [kit.offer(one, "a"), kit.offer(one, "b")]))
    feed = kit.write("r2", [kit.offer(two, "a")])
    load_run(con, two, feed)
    before = (rows(con), con.execute("SELECT * FROM stale_spans").fetchall())
    assert load_run(con, two, feed).skipped_duplicate_run
    assert (rows(con), con.execute("SELECT * FROM stale_spans").fetchall()) == before


def test_unknown_vram_loads_and_never_fits_a_vram_floor(
    con: duckdb.DuckDBPyConnection, kit: FeedKit
) -> None:
    run = kit.run(1)
    h20 = kit.offer(run, "h20", gpu_model="H20", gpu_vram_gb=None, raw_gpu_name="H20")
    load_run(con, run, kit.write("r1", [h20, kit.offer(run, "h100")]))
    assert latest_offers(con).select("offer_key", "gpu_vram_gb").rows() == [
        ("h100", 80),
        ("h20", None),
    ]
    assert latest_offers(con, min_vram_gb=1)["offer_key"].to_list() == ["h100"]
    costed = costed_latest_offers(
        con, UsageProfile(), display_currency="USD", min_vram_gb=1, in_stock_only=True
    )
    assert [c.offer["offer_key"] for c in costed] == ["h100"]
    assert costed[0].as_row()["stale"] is False


def test_tables_show_unknown_vram_as_a_question_mark_and_mark_stale_rows() -> None:
    from gpurent.cli.queries import age_label, vram_label

    assert vram_label(None) == "?" and vram_label(48) == "48"
    assert age_label({"age": "2h ago", "stale": True}) == "stale 2h"
    assert age_label({"age": "5m ago", "stale": False}) == "5m"
