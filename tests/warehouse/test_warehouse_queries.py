"""The read side: latest offers with fees and plans, provider health, quarantine, FX."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Any

import duckdb
import polars as pl
import pytest
from wh_kit import FeedKit

from gpurent_core.model import RunStatus, StockStatus
from warehouse.db import query_frame, query_rows
from warehouse.load import load_run
from warehouse.queries import (
    fx_rate_on,
    latest_offers,
    provider_status,
    quarantine_rows,
    recent_offer_counts,
    upsert_fx_rate,
)


@pytest.fixture
def market(con: duckdb.DuckDBPyConnection, kit: FeedKit) -> duckdb.DuckDBPyConnection:
    """Two providers: acme (H100 in stock, low, sold out, unknown; a 4090) and zeta (A100)."""
    acme = kit.run(1)
    load_run(
        con,
        acme,
        kit.write(
            "acme",
            [
                kit.offer(acme, "h100-free"),
                kit.offer(acme, "h100-low", status=StockStatus.LOW),
                kit.offer(acme, "h100-gone", status=StockStatus.SOLD_OUT),
                kit.offer(acme, "h100-dunno", status=StockStatus.UNKNOWN, fees=(), plans=()),
                kit.offer(acme, "4090", gpu_model="RTX 4090", gpu_vram_gb=24),
            ],
        ),
    )
    zeta = kit.run(1, provider="zeta")
    load_run(con, zeta, kit.write("zeta", [kit.offer(zeta, "a100", gpu_model="A100")]))
    return con


def keys(frame: pl.DataFrame) -> list[str]:
    return sorted(frame["offer_key"].to_list())


def test_latest_offers_filters(market: duckdb.DuckDBPyConnection) -> None:
    everything = latest_offers(market)
    assert everything.height == 6
    assert keys(latest_offers(market, gpu_model="h100")) == [
        "h100-dunno",
        "h100-free",
        "h100-gone",
        "h100-low",
    ]
    assert keys(latest_offers(market, min_vram_gb=25, provider="acme")) == [
        "h100-dunno",
        "h100-free",
        "h100-gone",
        "h100-low",
    ]
    assert keys(latest_offers(market, provider="zeta")) == ["a100"]
    # In stock means rentable now: unknown is not sold out, but not in stock either.
    assert keys(latest_offers(market, gpu_model="H100", in_stock_only=True)) == [
        "h100-free",
        "h100-low",
    ]
    assert latest_offers(market, gpu_model="B200").is_empty()


def test_latest_offers_carry_fees_and_plans(market: duckdb.DuckDBPyConnection) -> None:
    offers = latest_offers(market, provider="acme")
    row = offers.filter(pl.col("offer_key") == "h100-free").row(0, named=True)
    assert [fee["fee_type"] for fee in row["fees"]] == ["data_disk", "egress"]
    disk = row["fees"][0]
    assert disk["included_quantity"] == Decimal("20")
    assert (disk["mandatory"], disk["charged_while_stopped"], disk["unit"]) == (True, True, "hour")
    assert row["fees"][1]["note"] == "first 1 TB free"
    assert row["fees"][1]["charged_while_stopped"] is None  # unknown stays unknown
    assert row["plans"] == [
        {
            "seq": 0,
            "price": Decimal("1500"),
            "currency": "USD",
            "billing_unit": "month",
            "price_basis": "gpu",
            "price_kind": "commitment",
        }
    ]
    bare = offers.filter(pl.col("offer_key") == "h100-dunno").row(0, named=True)
    assert (bare["fees"], bare["plans"]) == ([], [])
    for column in ("run_id", "observed_at", "run_finished_at", "age_s"):
        assert offers[column].null_count() == 0


def test_each_provider_has_its_own_latest_run(
    market: duckdb.DuckDBPyConnection, kit: FeedKit
) -> None:
    later = kit.run(5)
    load_run(market, later, kit.write("acme5", [kit.offer(later, "h100-new")]))
    offers = latest_offers(market)
    assert sorted(offers.select("provider", "run_id").unique().rows()) == [
        ("acme", "run-5"),
        ("zeta", "run-1"),
    ]


def test_recent_offer_counts_are_good_runs_newest_first(
    con: duckdb.DuckDBPyConnection, kit: FeedKit
) -> None:
    for n, size in [(1, 3), (2, 4), (3, 5)]:
        run = kit.run(n)
        load_run(con, run, kit.write(f"r{n}", [kit.offer(run, f"k{i}") for i in range(size)]))
    load_run(con, kit.run(4, RunStatus.FAILED), None)
    load_run(con, kit.run(5), kit.write("r5", []))  # ok but empty: not a good run
    assert recent_offer_counts(con, "acme") == [5, 4, 3]
    assert recent_offer_counts(con, "acme", limit=2) == [5, 4]
    assert recent_offer_counts(con, "nobody") == []


def test_partial_runs_count_what_they_kept_so_they_never_wear_the_usual_count_down(
    con: duckdb.DuckDBPyConnection, kit: FeedKit
) -> None:
    first = kit.run(1)
    load_run(con, first, kit.write("r1", [kit.offer(first, f"k{i}") for i in range(11)]))
    for n in (2, 3, 4):  # page 2 fails each time: 4 offers read, the other 7 kept stale
        run = kit.failed_page(n)
        load_run(con, run, kit.write(f"r{n}", [kit.offer(run, f"k{i}") for i in range(4)]))
    # The listing held 11 at every run: a listing cut to 4 after them is still far fewer.
    assert recent_offer_counts(con, "acme") == [11, 11, 11, 11]


def test_runs_that_read_a_public_table_instead_of_the_listing_do_not_count(
    con: duckdb.DuckDBPyConnection, kit: FeedKit
) -> None:
    first = kit.run(1)
    load_run(con, first, kit.write("r1", [kit.offer(first, f"k{i}") for i in range(3)]))
    refused = kit.run(2, RunStatus.AUTH_REQUIRED, unread_prefixes=("",))
    public = [kit.offer(refused, f"home:{i}") for i in range(15)]
    load_run(con, refused, kit.write("r2", public))
    assert recent_offer_counts(con, "acme") == [3]


def test_provider_status_without_a_good_run(con: duckdb.DuckDBPyConnection, kit: FeedKit) -> None:
    broken = kit.run(1, RunStatus.AUTH_REQUIRED, message="401: set ACME_TOKEN")
    feed = kit.write("r1", [kit.quarantine(broken), kit.quarantine(broken, "no price")])
    load_run(con, broken, feed)
    row = provider_status(con).row(0, named=True)
    assert (row["provider"], row["last_status"], row["last_quarantined"]) == (
        "acme",
        "auth_required",
        2,
    )
    assert row["last_good_run_id"] is None and row["last_good_at"] is None


def test_quarantine_rows_newest_run_first(con: duckdb.DuckDBPyConnection, kit: FeedKit) -> None:
    one, two = kit.run(1), kit.run(2)
    load_run(con, one, kit.write("r1", [kit.offer(one), "{bad"]))
    load_run(con, two, kit.write("r2", ["[]", kit.quarantine(two), kit.offer(two)]))
    other = kit.run(2, provider="zeta")
    load_run(con, other, kit.write("z", ["nope"]))

    acme = quarantine_rows(con, provider="acme")
    assert acme.select("run_id", "seq").rows() == [("run-2", 1), ("run-2", 2), ("run-1", 2)]
    # Lines the load set aside that the crawl did not report make an ok run partial.
    assert acme["run_status"].unique().to_list() == ["partial"]
    assert quarantine_rows(con, run_id="run-1")["raw"].to_list() == ["{bad"]
    assert quarantine_rows(con, limit=1).height == 1
    assert quarantine_rows(con, limit=None).height == 4


def test_a_run_whose_load_set_lines_aside_is_partial_and_says_how_many(
    con: duckdb.DuckDBPyConnection, kit: FeedKit
) -> None:
    # A shifting listing repeats an offer on two pages; one line is no offer at all.
    run = kit.run(1, message="3 offers")
    feed = kit.write("r1", [kit.offer(run, "a"), kit.offer(run, "a"), kit.offer(run, "b"), "{bad"])
    result = load_run(con, run, feed)
    assert result.status is RunStatus.PARTIAL and result.quarantined == 2
    status, message = con.execute(
        "SELECT status, message FROM crawl_runs WHERE run_id = 'run-1'"
    ).fetchone() or (None, None)
    assert status == "partial"
    assert message == "3 offers; 2 set aside while loading (`gpurent quarantine`)"
    # What the crawl itself reported (and so classified) is not counted twice.
    reported = kit.run(2, RunStatus.PARTIAL, quarantined=1, message="1 offer, 1 quarantined")
    again = load_run(
        con, reported, kit.write("r2", [kit.offer(reported, "a"), kit.quarantine(reported)])
    )
    assert again.status is RunStatus.PARTIAL
    clean = kit.run(3)
    assert load_run(con, clean, kit.write("r3", [kit.offer(clean, "a")])).status is RunStatus.OK


def test_fx_rates_by_date(con: duckdb.DuckDBPyConnection) -> None:
    upsert_fx_rate(con, date(2026, 11, 1), "USD", "CNY", Decimal("7.1234"), "test")
    upsert_fx_rate(con, date(2026, 11, 20), "USD", "CNY", Decimal("7.05"), "test")
    assert fx_rate_on(con, date(2026, 10, 31), "USD", "CNY") is None
    assert fx_rate_on(con, date(2026, 11, 1), "USD", "CNY") == (
        Decimal("7.1234"),
        date(2026, 11, 1),
    )
    rate, day = fx_rate_on(con, date(2026, 11, 19), "USD", "CNY") or (None, None)
    assert (rate, day) == (Decimal("7.1234"), date(2026, 11, 1))
    assert type(rate) is Decimal
    assert fx_rate_on(con, date(2027, 1, 1), "USD", "CNY") == (Decimal("7.05"), date(2026, 11, 20))
    assert fx_rate_on(con, date(2027, 1, 1), "CNY", "USD") is None  # no derived inverses
    assert fx_rate_on(con, date(2027, 1, 1), "CNY", "CNY") == (Decimal(1), date(2027, 1, 1))

    upsert_fx_rate(con, date(2026, 11, 1), "USD", "CNY", Decimal("7.0999999949"), "fix")
    assert fx_rate_on(con, date(2026, 11, 1), "USD", "CNY") == (
        Decimal("7.09999999"),
        date(2026, 11, 1),
    )
    sources = con.execute("SELECT rate_date, source FROM fx_rates ORDER BY rate_date").fetchall()
    assert sources == [(date(2026, 11, 1), "fix"), (date(2026, 11, 20), "test")]


@pytest.mark.parametrize(
    ("base", "quote", "rate"),
    [
        ("usd", "CNY", Decimal("7")),
        ("USD", "CNY", Decimal("0")),
        ("USD", "CNY", Decimal("-1")),
        ("USD", "CNY", Decimal("NaN")),
        ("USD", "CNY", 7.1),
    ],
)
def test_bad_fx_rates_are_refused(
    con: duckdb.DuckDBPyConnection, base: str, quote: str, rate: Decimal
) -> None:
    with pytest.raises(ValueError):
        upsert_fx_rate(con, date(2026, 11, 1), base, quote, rate, "test")
    assert con.execute("SELECT count(*) FROM fx_rates").fetchall() == [(0,)]


def _typed(value: Any) -> Any:
    """A value with its type beside it, all the way down (lists of fee and plan dicts)."""
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    if isinstance(value, datetime):
        return (datetime, value.isoformat(), value.utcoffset())
    return (type(value), value)


def test_rows_through_duckdb_alone_equal_the_polars_frame_rows(
    market: duckdb.DuckDBPyConnection,
) -> None:
    """`cheapest` reads its rows with query_rows (no Polars import); the costing must see
    exactly what the frame path gives: Decimal money, UTC times, fees and plans as dicts."""
    sql = "SELECT * FROM latest_offers ORDER BY provider, offer_key"
    framed = list(query_frame(market, sql).iter_rows(named=True))
    plain = query_rows(market, sql)
    assert len(plain) == 6
    assert [_typed(r) for r in plain] == [_typed(r) for r in framed]
    assert any(r["fees"] for r in plain) and any(r["plans"] for r in plain)
    assert isinstance(plain[0]["price"], Decimal)
