"""Rule of truth 11: only what the latest look confirmed is ranked.

An offer is confirmed when its provider's latest run (by start time, whatever its status) is
the run the latest state comes from and that run saw it. `offers` lists the others (stale:
their last good state, with its age); `cheapest`, `size`, the library API and the price index
leave them out, and say how many, unless asked for them (`--include-stale`).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pytest
from wh_kit import T0, FeedKit

from gpurent import api
from gpurent_core.cost.usage import UsageProfile
from gpurent_core.model import RunStatus, StockStatus
from tests.cli_helpers import invoke, invoke_json
from warehouse.costed import costed_latest_offers, left_out
from warehouse.db import connect
from warehouse.index import daily_offers, price_index
from warehouse.load import load_run
from warehouse.queries import latest_offers

D = Decimal
CHEAP, DEAR = D("1.00"), D("3.00")


def stale_by_key(con: duckdb.DuckDBPyConnection) -> dict[str, bool]:
    return dict(latest_offers(con).select("offer_key", "stale").iter_rows())


def ranked(con: duckdb.DuckDBPyConnection, **kw: Any) -> list[tuple[str, bool]]:
    costed = costed_latest_offers(
        con, UsageProfile(), display_currency="USD", in_stock_only=True, **kw
    )
    return [(c.offer["offer_key"], c.as_row()["stale"]) for c in costed]


# ------------------------------------------------------------------ what "confirmed" is


def test_every_offer_of_a_provider_whose_latest_run_failed_is_stale(
    con: duckdb.DuckDBPyConnection, kit: FeedKit
) -> None:
    one = kit.run(1)
    load_run(con, one, kit.write("r1", [kit.offer(one, "a"), kit.offer(one, "b")]))
    assert stale_by_key(con) == {"a": False, "b": False}
    load_run(con, kit.run(2, RunStatus.FAILED), None)
    # Its last good state, with the age of the run that saw it.
    frame = latest_offers(con)
    assert frame["stale"].to_list() == [True, True]
    assert set(frame["observed_at"]) == {one.started_at + timedelta(seconds=5)}
    assert set(frame["run_id"]) == {"run-1"}
    assert latest_offers(con, confirmed_only=True).is_empty()
    # Not ranked, counted; ranked on request, marked; limit or not, the same answer.
    for limit in (None, 1):
        assert ranked(con, limit=limit) == []
        assert ranked(con, limit=limit, include_stale=True)[:1] == [("a", True)]
    assert left_out(con, UsageProfile(), in_stock_only=True).stale == 2
    # A good run again: confirmed.
    three = kit.run(3)
    load_run(con, three, kit.write("r3", [kit.offer(three, "a")]))
    assert stale_by_key(con) == {"a": False}
    assert left_out(con, UsageProfile(), in_stock_only=True).stale == 0


@pytest.mark.parametrize(
    ("status", "feed"),
    [
        (RunStatus.LAYOUT_CHANGED, True),  # its offers were set aside, not stored
        (RunStatus.AUTH_REQUIRED, False),  # credentials refused, nothing public read
        (RunStatus.PARTIAL, False),  # every page failed: no offer read
        (RunStatus.OK, False),  # zero offers with no named reason: a layout problem
    ],
)
def test_a_latest_run_that_read_nothing_confirms_nothing(
    con: duckdb.DuckDBPyConnection, kit: FeedKit, status: RunStatus, feed: bool
) -> None:
    one = kit.run(1)
    load_run(con, one, kit.write("r1", [kit.offer(one, "a")]))
    two = kit.run(2, status)
    load_run(con, two, kit.write("r2", [kit.offer(two, "a")]) if feed else None)
    assert stale_by_key(con) == {"a": True}
    assert ranked(con) == []


def test_an_auth_required_run_with_public_prices_confirms_what_it_read(
    con: duckdb.DuckDBPyConnection, kit: FeedKit
) -> None:
    one, two = kit.run(1), kit.run(2, RunStatus.AUTH_REQUIRED)
    load_run(con, one, kit.write("r1", [kit.offer(one, "a")]))
    load_run(con, two, kit.write("r2", [kit.offer(two, "a", status=StockStatus.UNKNOWN)]))
    assert stale_by_key(con) == {"a": False}


def test_a_listing_read_whole_of_only_skipped_items_is_a_confirming_look(
    con: duckdb.DuckDBPyConnection, kit: FeedKit
) -> None:
    one = kit.run(1)
    load_run(con, one, kit.write("r1", [kit.offer(one, "gh200/us"), kit.offer(one, "a")]))
    # Nothing listed but where only capacity is: gh200 sold out (confirmed), a gone.
    two = kit.run(2, sold_out_unlisted=("gh200/",), skipped=(("not_a_gpu_offer", 1),))
    load_run(con, two, kit.write("r2", []))
    assert latest_offers(con).select("offer_key", "status", "stale").rows() == [
        ("gh200/us", "sold_out", False)
    ]


def test_a_run_loaded_late_never_makes_a_provider_look_failed(
    con: duckdb.DuckDBPyConnection, kit: FeedKit
) -> None:
    two = kit.run(2)
    load_run(con, two, kit.write("r2", [kit.offer(two, "a")]))
    # Stored after run 2, started before it: a backfill, not the latest look.
    load_run(con, kit.run(1, RunStatus.FAILED), None)
    zero = kit.run(0)
    load_run(con, zero, kit.write("r0", [kit.offer(zero, "a", price=DEAR)]))
    assert stale_by_key(con) == {"a": False}
    assert ranked(con) == [("a", False)]
    # A failed run that did start later does.
    load_run(con, kit.run(3, RunStatus.FAILED), None)
    assert stale_by_key(con) == {"a": True}


def test_a_partial_runs_unseen_offer_is_listed_stale_and_not_ranked(
    con: duckdb.DuckDBPyConnection, kit: FeedKit
) -> None:
    one = kit.run(1)
    load_run(con, one, kit.write("r1", [kit.offer(one, "a", price=CHEAP), kit.offer(one, "b")]))
    # a's item could not be read (its key is known): a stays, stale, in stock at 1.00.
    two = kit.run(2, RunStatus.PARTIAL, unread_keys=("a",))
    load_run(con, two, kit.write("r2", [kit.offer(two, "b")]))
    assert stale_by_key(con) == {"a": True, "b": False}
    for limit in (None, 1, 5):
        assert ranked(con, limit=limit) == [("b", False)]
    assert ranked(con, include_stale=True) == [("a", True), ("b", False)]
    assert left_out(con, UsageProfile(), in_stock_only=True).stale == 1
    # The filters count too: only offers the question would have ranked are counted.
    assert left_out(con, UsageProfile(), in_stock_only=True, min_vram_gb=100).stale == 0
    assert left_out(con, UsageProfile(gpus=8), in_stock_only=True).stale == 0  # 3 free


# ------------------------------------------------------------------ the price index


def test_the_index_counts_only_what_a_run_saw(con: duckdb.DuckDBPyConnection, kit: FeedKit) -> None:
    # Day 1: acme's run 1 sees a and b. Day 2: its run 25 (partial) cannot read b, which
    # stays stale; day 3: its run 49 fails. zeta quotes every day.
    day1, day2, day3 = T0.date(), T0.date() + timedelta(days=1), T0.date() + timedelta(days=2)
    one = kit.run(1)
    load_run(con, one, kit.write("a1", [kit.offer(one, "a"), kit.offer(one, "b", price=DEAR)]))
    two = kit.run(25, RunStatus.PARTIAL, unread_keys=("b",))
    load_run(con, two, kit.write("a2", [kit.offer(two, "a")]))
    load_run(con, kit.run(49, RunStatus.FAILED), None)
    for n in (1, 25, 49):
        z = kit.run(n, provider="zeta")
        load_run(con, z, kit.write(f"z{n}", [kit.offer(z, "z", price=CHEAP)]))

    seen = daily_offers(con, day1, day3, provider="acme")
    assert [(r["day"], r["offer_key"]) for r in seen.iter_rows(named=True)] == [
        (day1, "a"),
        (day1, "b"),
        (day2, "a"),
    ]
    index = {
        r["date"]: r
        for r in price_index(con, start=day1, end=day3, currencies=("USD",)).iter_rows(named=True)
    }
    # Day 1: acme's median of 2.49 and 3.00 with zeta's 1.00; day 2: b's stale 3.00 is no quote.
    assert (index[day1]["n_offers"], index[day1]["n_observed"]) == (3, 3)
    assert (index[day2]["n_offers"], index[day2]["n_observed"]) == (2, 2)
    assert index[day2]["index_price"] == (D("2.49") + CHEAP) / 2
    # Day 3: acme's run failed, it observed nothing: zeta alone, withheld.
    assert (index[day3]["n_observed"], index[day3]["n_providers"]) == (1, 1)
    assert index[day3]["index_price"] is None


def test_an_offer_seen_again_after_a_stale_stretch_counts_again(
    con: duckdb.DuckDBPyConnection, kit: FeedKit
) -> None:
    one, two, three = kit.run(1), kit.run(25, RunStatus.PARTIAL, unread_keys=("b",)), kit.run(49)
    load_run(con, one, kit.write("r1", [kit.offer(one, "a"), kit.offer(one, "b")]))
    load_run(con, two, kit.write("r2", [kit.offer(two, "a")]))
    load_run(con, three, kit.write("r3", [kit.offer(three, "a"), kit.offer(three, "b")]))
    days = [
        (r["day"] - T0.date()).days
        for r in daily_offers(con, T0.date(), date(2026, 11, 30)).iter_rows(named=True)
        if r["offer_key"] == "b"
    ]
    assert days == [0, 2]


# ------------------------------------------------------------------ API and CLI


@pytest.fixture
def market(tmp_path: Path) -> Iterator[Path]:
    """acme: a partial run kept a (cheapest) stale; zeta: its latest run failed."""
    kit = FeedKit(tmp_path)
    path = tmp_path / "w.duckdb"
    con = connect(path)
    try:
        # Ages land mid-hour (1h30m, 2h30m), so a slow machine between building the market and
        # asking it cannot move an age shown in whole hours.
        now = datetime.now(UTC).replace(microsecond=0)
        one = kit.run(1).model_copy(update={"started_at": now - timedelta(hours=2, minutes=30)})
        load_run(con, one, kit.write("a1", [
            kit.offer(one, "a", price=D("0.50")), kit.offer(one, "b"),
            kit.offer(one, "c", status=StockStatus.SOLD_OUT, available_count=0),
        ]))  # fmt: skip
        two = kit.run(2, RunStatus.PARTIAL, unread_keys=("a",)).model_copy(
            update={"started_at": now - timedelta(minutes=30)}
        )
        load_run(con, two, kit.write("a2", [
            kit.offer(two, "b"), kit.offer(two, "c", status=StockStatus.SOLD_OUT, available_count=0),
        ]))  # fmt: skip
        z1 = kit.run(1, provider="zeta").model_copy(
            update={"started_at": now - timedelta(hours=1, minutes=30)}
        )
        load_run(con, z1, kit.write("z1", [kit.offer(z1, "z", price=D("0.10"))]))
        z2 = kit.run(2, RunStatus.FAILED, provider="zeta").model_copy(
            update={"started_at": now - timedelta(minutes=15)}
        )
        load_run(con, z2, None)
    finally:
        con.close()
    yield path


def test_the_api_ranks_confirmed_offers_and_counts_the_rest(market: Path) -> None:
    found = api.cheapest(32, db=market)
    assert [(o.provider, o.offer_key, o.stale) for o in found] == [("acme", "b", False)]
    assert found.stale_left_out == 2
    asked = api.cheapest(32, db=market, include_stale=True)
    assert [(o.provider, o.offer_key, o.stale) for o in asked] == [
        ("zeta", "z", True),
        ("acme", "a", True),
        ("acme", "b", False),
    ]
    assert asked.stale_left_out == 0
    # A limit cuts the rows, not the count.
    assert api.cheapest(32, db=market, limit=1).stale_left_out == 2
    # offers lists stale rows (sold out or not), but never offers one as in stock.
    listed = api.offers(db=market)
    assert {(o.offer_key, o.stale) for o in listed} == {
        ("a", True), ("b", False), ("c", False), ("z", True),
    }  # fmt: skip
    assert listed.stale_left_out == 0
    in_stock = api.offers(in_stock=True, db=market)
    assert [o.offer_key for o in in_stock] == ["b"] and in_stock.stale_left_out == 2
    assert len(api.offers(in_stock=True, include_stale=True, db=market)) == 3
    without = api.offers(include_stale=False, db=market)
    assert {o.offer_key for o in without} == {"b", "c"} and without.stale_left_out == 2


def test_cheapest_says_what_it_left_out_and_marks_what_it_was_asked_for(
    market: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    note = "2 offers not confirmed by their provider's latest run left out"
    table = invoke("cheapest", "--min-vram", "32", "--db", str(market)).stdout
    line = note + " (--include-stale to add them)"
    assert line in table
    assert "stale" not in table.replace(line, "")
    asked = invoke("cheapest", "--min-vram", "32", "--include-stale", "--db", str(market)).stdout
    # zeta's z and acme's a, with the age of the look that last saw them (1h30m and 2h30m, less
    # the 5 s of the feed's observation).
    assert "stale 1h" in asked and "stale 2h" in asked
    assert "not confirmed" not in asked
    # JSON: stdout is the rows, each with "stale"; the count goes to stderr.
    result = invoke("cheapest", "--min-vram", "32", "--db", str(market), "--format", "json")
    assert [(r["offer_key"], r["stale"]) for r in _json(result.stdout)] == [("b", False)]
    assert note in result.stderr
    rows = invoke_json("cheapest", "--min-vram", "32", "--include-stale", "--db", str(market))
    assert [(r["offer_key"], r["stale"]) for r in rows] == [("z", True), ("a", True), ("b", False)]


def test_explain_says_a_stale_offer_is_its_last_good_state(market: Path) -> None:
    # zeta's latest run failed: z's price is what the run 1h30m ago saw, and explain says so.
    stale = invoke("explain", "zeta", "z", "--db", str(market)).stdout
    assert "Stale: its provider's latest run did not confirm this offer" in stale
    assert "seen 1h ago" in stale
    fresh = invoke("explain", "acme", "b", "--db", str(market)).stdout
    assert "Stale" not in fresh


def test_the_library_explanation_carries_the_same_caveats(market: Path) -> None:
    """Audit A3: ``Explanation.text()`` gave the sum without the stale line the CLI adds."""
    from gpurent import api

    stale = api.explain("zeta", "z", db=market)
    assert stale.caveats and stale.caveats[0].startswith("Stale: ")
    assert stale.caveats[0] in stale.text() and "seen 1h ago" in stale.text()
    assert not api.explain("acme", "b", db=market).caveats


def test_offers_lists_stale_rows_and_in_stock_leaves_them_out(
    market: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    listed = {r["offer_key"]: r["stale"] for r in invoke_json("offers", "--db", str(market))}
    assert listed == {"a": True, "b": False, "c": False, "z": True}
    table = invoke("offers", "--in-stock", "--db", str(market)).stdout
    assert "2 offers not confirmed by their provider's latest run left out" in table
    rows = invoke_json("offers", "--in-stock", "--db", str(market))
    assert [r["offer_key"] for r in rows] == ["b"]
    rows = invoke_json("offers", "--in-stock", "--include-stale", "--db", str(market))
    assert {r["offer_key"] for r in rows} == {"a", "b", "z"}
    # Nothing left to show: the empty answer still says what it left out.
    empty = invoke("offers", "--in-stock", "--provider", "zeta", "--db", str(market)).stdout
    assert "No latest offer matches" in empty
    assert "1 offer not confirmed by their provider's latest run left out" in empty


def test_size_ranks_confirmed_offers_and_counts_the_rest(
    market: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workload = ("size", "--model", "Qwen2.5-7B", "--prompt-tokens", "2048", "--gen-tokens", "512")
    report = invoke_json(*workload, "--db", str(market))
    assert [(o["offer_key"], o["stale"]) for o in report["offers"]] == [("b", False)]
    assert report["stale_left_out"] == 2
    asked = invoke_json(*workload, "--include-stale", "--db", str(market))
    assert [(o["offer_key"], o["stale"]) for o in asked["offers"]] == [
        ("z", True), ("a", True), ("b", False),
    ]  # fmt: skip
    assert asked["stale_left_out"] == 0
    monkeypatch.setenv("COLUMNS", "400")  # the table is for a terminal: one line per row
    table = invoke(*workload, "--db", str(market)).stdout
    assert "2 offers not confirmed by their provider's latest run left out" in table
    marked = invoke(*workload, "--include-stale", "--db", str(market)).stdout
    assert "in_stock (3 free), stale 1h" in marked
    answer = api.size("Qwen2.5-7B", db=market)
    assert answer.stale_left_out == 2 and [o.stale for o in answer.offers] == [False]
    assert len(api.size("Qwen2.5-7B", db=market, include_stale=True).offers) == 3


def test_the_switch_explains_itself_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    for command in ("cheapest", "size", "offers"):
        lines = invoke(command, "--help").stdout.splitlines()
        (line,) = [line for line in lines if line.startswith("│") and "--include-stale" in line]
        assert "did not confirm" in line and "marked stale" in line, command


def _json(text: str) -> Any:
    import json

    return json.loads(text)
