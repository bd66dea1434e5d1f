"""Rule of truth 10: a run closes what it no longer lists, partial or not; only what it could
not read (a failed page or request, a quarantined item whose key is known) stays in the
latest state, stale, with its age. Rule 11: where the provider lists only what has capacity,
an offer it stopped listing is sold out, under the same identity. And unknown VRAM (null)
loads and never passes a VRAM floor."""

from __future__ import annotations

from datetime import timedelta

import duckdb
from wh_kit import FeedKit

from gpurent_core.cost.usage import UsageProfile
from gpurent_core.model import ProviderRun, QuarantineRecord, RunStatus, StockStatus
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
    one, two, three = kit.run(1), kit.failed_page(2), kit.failed_page(3)
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
    one, two, three, four = kit.run(1), kit.failed_page(2), kit.run(3), kit.run(4)
    load_run(con, one, kit.write("r1", [kit.offer(one, "a"), kit.offer(one, "b")]))
    load_run(con, two, kit.write("r2", [kit.offer(two, "a")]))
    load_run(con, three, kit.write("r3", [kit.offer(three, "a"), kit.offer(three, "b")]))
    assert rows(con)["b"] == ("run-3", "in_stock", False, three.started_at + timedelta(seconds=5))
    load_run(con, four, kit.write("r4", [kit.offer(four, "a")]))  # ok: b is gone (rule 4)
    assert list(rows(con)) == ["a"]


def test_loading_a_partial_run_twice_changes_nothing(
    con: duckdb.DuckDBPyConnection, kit: FeedKit
) -> None:
    one, two = kit.run(1), kit.failed_page(2)
    load_run(con, one, kit.write("r1", [kit.offer(one, "a"), kit.offer(one, "b")]))
    feed = kit.write("r2", [kit.offer(two, "a")])
    load_run(con, two, feed)
    before = (rows(con), con.execute("SELECT * FROM stale_spans").fetchall())
    assert load_run(con, two, feed).skipped_duplicate_run
    assert (rows(con), con.execute("SELECT * FROM stale_spans").fetchall()) == before


def quarantined(run: ProviderRun, key: str | None) -> QuarantineRecord:
    return QuarantineRecord(
        provider=run.provider, run_id=run.run_id, observed_at=run.started_at, offer_key=key,
        reason="price_unparsed: no number in price text", field="price", raw={"price": "?"},
    )  # fmt: skip


def test_a_partial_run_closes_what_it_no_longer_lists_and_says_so(
    con: duckdb.DuckDBPyConnection, kit: FeedKit
) -> None:
    one, two = kit.run(1), kit.run(2, RunStatus.PARTIAL, message="1 offers, 1 quarantined")
    load_run(con, one, kit.write("r1", [kit.offer(one, "a"), kit.offer(one, "gh200")]))
    # gh200 left the listing; another item of it is unreadable and has no key.
    result = load_run(con, two, kit.write("r2", [kit.offer(two, "a"), quarantined(two, None)]))
    assert list(rows(con)) == ["a"]
    assert (result.gone, result.kept_stale) == (1, 0)
    message = con.execute("SELECT message FROM crawl_runs WHERE run_id = 'run-2'").fetchone()
    assert message == ("1 offers, 1 quarantined; 1 no longer listed, closed"
                       " (1 unreadable item(s) without a key among them)",)  # fmt: skip


def test_a_quarantined_item_whose_key_is_read_keeps_its_offer_stale(
    con: duckdb.DuckDBPyConnection, kit: FeedKit
) -> None:
    one, two = kit.run(1), kit.run(2, RunStatus.PARTIAL)
    load_run(con, one, kit.write("r1", [kit.offer(one, k) for k in ("a", "b", "c")]))
    result = load_run(con, two, kit.write("r2", [kit.offer(two, "a"), quarantined(two, "b")]))
    assert {k: v[2] for k, v in rows(con).items()} == {"a": False, "b": True}
    assert (result.gone, result.kept_stale) == (1, 1)


def test_only_what_a_failed_request_decided_is_kept(
    con: duckdb.DuckDBPyConnection, kit: FeedKit
) -> None:
    one = kit.run(1)
    load_run(con, one, kit.write("r1", [kit.offer(one, k) for k in ("eu/a", "eu/b", "us/a", "x")]))
    # The "us/" request failed and the spider named offer x as decided by it too.
    two = kit.run(2, RunStatus.PARTIAL, unread_prefixes=("us/",), unread_keys=("x",))
    load_run(con, two, kit.write("r2", [kit.offer(two, "eu/a")]))
    assert {k: v[2] for k, v in rows(con).items()} == {"eu/a": False, "us/a": True, "x": True}


def test_where_only_capacity_is_listed_an_unlisted_offer_is_sold_out_not_gone(
    con: duckdb.DuckDBPyConnection, kit: FeedKit
) -> None:
    one = kit.run(1)
    load_run(con, one, kit.write("r1", [kit.offer(one, "gh200/us-east"), kit.offer(one, "gh200/eu", available_count=None),
                                        kit.offer(one, "a100/us-east", available_count=3)]))  # fmt: skip
    # gh200 has no region with capacity now; a100 still lists us-east... with no capacity.
    two = kit.run(2, sold_out_unlisted=("gh200/", "a100/"))
    result = load_run(con, two, kit.write("r2", []))
    assert result.sold_out == 3
    assert {k: v[1:3] for k, v in rows(con).items()} == {
        "gh200/us-east": ("sold_out", False), "gh200/eu": ("sold_out", False),
        "a100/us-east": ("sold_out", False),
    }  # fmt: skip
    counts = latest_offers(con).select("offer_key", "available_count").rows()
    assert dict(counts)["a100/us-east"] == 0 and dict(counts)["gh200/eu"] is None
    # Sold out still: no new version. Back in one region: the same identity, in stock.
    three = kit.run(3, sold_out_unlisted=("gh200/",))
    load_run(con, three, kit.write("r3", [kit.offer(three, "gh200/eu")]))
    assert {k: v[1] for k, v in rows(con).items()} == {
        "gh200/us-east": "sold_out",
        "gh200/eu": "in_stock",
    }  # a100 left the listing: gone
    versions = con.execute(
        "SELECT offer_key, count(*), count(DISTINCT identity_id) FROM version_rows"
        " GROUP BY ALL ORDER BY 1"
    ).fetchall()
    assert versions == [("a100/us-east", 2, 1), ("gh200/eu", 3, 1), ("gh200/us-east", 2, 1)]


def test_a_listing_of_only_skipped_items_closes_what_it_no_longer_lists(
    con: duckdb.DuckDBPyConnection, kit: FeedKit
) -> None:
    one, two = kit.run(1), kit.run(2, skipped=(("no_public_price", 2),))
    load_run(con, one, kit.write("r1", [kit.offer(one, "a")]))
    assert load_run(con, two, kit.write("r2", [])).gone == 1
    assert rows(con) == {}
    stored = con.execute("SELECT skipped FROM crawl_runs WHERE run_id = 'run-2'").fetchone()
    assert stored == ('{"no_public_price": 2}',)
    # Zero offers without a named reason is still a layout problem: nothing changes.
    three, four = kit.run(3), kit.run(4)
    load_run(con, three, kit.write("r3", [kit.offer(three, "b")]))
    load_run(con, four, kit.write("r4", []))
    assert list(rows(con)) == ["b"]


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


def test_tables_mark_stale_rows() -> None:
    from gpurent.cli.queries import age_label

    assert age_label({"age": "2h ago", "stale": True}) == "stale 2h"
    assert age_label({"age": "5m ago", "stale": False}) == "5m"
