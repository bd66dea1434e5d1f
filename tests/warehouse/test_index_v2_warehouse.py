"""Price index method gpi-2 read from a real DuckDB warehouse: only confirmed observations,
form factors, price kinds and markets apart, the FX rate of a past day pinned."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

import duckdb
import pytest
from wh_kit import FeedKit

from gpurent_core.fx import FxRate, FxTable
from gpurent_core.model import (
    BillingUnit,
    OfferRecord,
    PriceBasis,
    PriceKind,
    PricePlan,
    ProviderRun,
    RunStatus,
    StockStatus,
)
from warehouse.index import price_index
from warehouse.index_v2 import daily_offer_days, price_index_v2
from warehouse.load import load_run

D = Decimal
DAY1, DAY2 = date(2026, 11, 1), date(2026, 11, 2)
FX = FxTable([FxRate("USD", "CNY", D("7.00"), date(2026, 1, 1), "test")])


def plan(
    price: str, kind: PriceKind, unit: BillingUnit = BillingUnit.HOUR, currency: str = "USD"
) -> PricePlan:
    return PricePlan(
        price=D(price), currency=currency, billing_unit=unit, price_basis=PriceBasis.GPU,
        price_kind=kind,
    )  # fmt: skip


def offer(kit: FeedKit, run: ProviderRun, key: str, price: str, **kw: Any) -> OfferRecord:
    kw.setdefault("plans", ())
    kw.setdefault("currency", "CNY" if D(price) >= 10 else "USD")
    return kit.offer(run, key, price=D(price), fees=(), **kw)


def load(con: duckdb.DuckDBPyConnection, kit: FeedKit, run: ProviderRun, *offers: Any) -> None:
    load_run(con, run, kit.write(f"{run.provider}-{run.run_id}", list(offers)))


@pytest.fixture
def market(con: duckdb.DuckDBPyConnection, kit: FeedKit) -> duckdb.DuckDBPyConnection:
    """Day 1 (09:00, runpod again at 10:00) and day 2 (09:00: intl only; runpod cannot read
    its "cheap" offer, which stays stale; gpushare's run fails). H100 80G throughout."""
    spot, member = PriceKind.SPOT, PriceKind.MEMBER
    for n in (1, 25):
        r = kit.run(n, provider="lambda")
        load(con, kit, r,
             offer(kit, r, "sxm", "2.00", plans=(
                 plan("1.20", spot), plan("1.00", member),
                 plan("1460", PriceKind.COMMITMENT, BillingUnit.MONTH),  # 2.00 an hour
             )),
             offer(kit, r, "pcie", "1.60", gpu_form_factor="PCIe"))  # fmt: skip
        v = kit.run(n, provider="vastai")
        load(con, kit, v,
             offer(kit, v, "sxm", "2.40", plans=(plan("1.00", spot),)),
             offer(kit, v, "nvl", "3.00", gpu_form_factor="NVL"),
             offer(kit, v, "unstated", "1.80", gpu_form_factor=None))  # fmt: skip
    for n, price in ((1, "2.20"), (2, "2.30")):  # the day's last quote counts
        r = kit.run(n, provider="runpod")
        load(con, kit, r,
             offer(kit, r, "sxm", price, plans=(plan("1.10", spot),)),
             offer(kit, r, "spot-only", "0.90", price_kind=spot),
             offer(kit, r, "cheap", "0.50"))  # fmt: skip
    r = kit.run(25, RunStatus.PARTIAL, provider="runpod", unread_keys=("cheap",))
    load(con, kit, r,
         offer(kit, r, "sxm", "2.30", plans=(plan("1.10", spot),)),
         offer(kit, r, "spot-only", "0.90", price_kind=spot))  # fmt: skip
    a = kit.run(1, provider="autodl")
    load(con, kit, a,
         offer(kit, a, "a", "14.00", plans=(plan("10220", PriceKind.COMMITMENT, BillingUnit.MONTH, "CNY"),)))  # fmt: skip
    g = kit.run(1, provider="gpushare")
    load(con, kit, g, offer(kit, g, "g", "15.00"))
    f = kit.run(1, provider="featurize")
    load(con, kit, f,
         offer(kit, f, "f", "16.00"),
         offer(kit, f, "f-out", "10.00", status=StockStatus.SOLD_OUT))  # fmt: skip
    load_run(con, kit.run(25, RunStatus.FAILED, provider="gpushare"), None)
    return con


Key = tuple[date, str | None, str, str, str]


def by_key(rows: list[dict[str, Any]]) -> dict[Key, dict[str, Any]]:
    keyed = {
        (r["date"], r["gpu_form_factor"], r["price_kind"], r["market"], r["currency"]): r
        for r in rows
    }
    assert len(keyed) == len(rows)
    return keyed


def test_rows_by_form_factor_price_kind_and_market(market: duckdb.DuckDBPyConnection) -> None:
    rows = by_key(price_index_v2(market, fx=FX))
    assert set(rows) == {
        (DAY1, "SXM", "on_demand", "intl", "USD"),
        (DAY1, "SXM", "spot", "intl", "USD"),
        (DAY1, "SXM", "monthly", "intl", "USD"),
        (DAY1, "PCIe", "on_demand", "intl", "USD"),
        (DAY1, "NVL", "on_demand", "intl", "USD"),
        (DAY1, None, "on_demand", "intl", "USD"),
        (DAY1, "SXM", "on_demand", "CN", "CNY"),
        (DAY1, "SXM", "monthly", "CN", "CNY"),
        # Day 2: the CN platforms did not run well: nothing of theirs was seen.
        (DAY2, "SXM", "on_demand", "intl", "USD"),
        (DAY2, "SXM", "spot", "intl", "USD"),
        (DAY2, "SXM", "monthly", "intl", "USD"),
        (DAY2, "PCIe", "on_demand", "intl", "USD"),
        (DAY2, "NVL", "on_demand", "intl", "USD"),
        (DAY2, None, "on_demand", "intl", "USD"),
    }
    # On demand, SXM: lambda 2.00; runpod the median of 2.30 (its 10:00 price) and 0.50;
    # vastai 2.40. Sorted 1.40, 2.00, 2.40: median 2.00, p25 1.70, p75 2.20.
    od = rows[(DAY1, "SXM", "on_demand", "intl", "USD")]
    assert (od["index_price"], od["p25"], od["p75"]) == (D("2"), D("1.7"), D("2.2"))
    assert (od["n_offers"], od["n_providers"], od["n_observed"]) == (4, 3, 4)
    assert od["in_stock_share"] == 1 and od["method_version"] == "gpi-2"
    # The spot prices (plans and a spot offer) are never blended with on-demand ones:
    # lambda 1.20, runpod median(1.10, 0.90) = 1.00, vastai 1.00.
    spot = rows[(DAY1, "SXM", "spot", "intl", "USD")]
    assert (spot["index_price"], spot["p25"], spot["p75"]) == (D(1), D(1), D("1.1"))
    assert spot["n_offers"] == 4
    # Monthly packages: lambda's alone (1460 / 730 = 2.00 an hour); the member plan nowhere.
    monthly = rows[(DAY1, "SXM", "monthly", "intl", "USD")]
    assert monthly["index_price"] is None and monthly["n_offers"] == 1
    assert "only 1 provider quotes (lambda)" in monthly["withheld_reason"]
    assert {k[2] for k in rows} == {"on_demand", "spot", "monthly"}
    # Form factors apart: the PCIe, NVL and unstated offers are not in the SXM figure.
    for form, who in (("PCIe", "lambda"), ("NVL", "vastai"), (None, "vastai")):
        row = rows[(DAY1, form, "on_demand", "intl", "USD")]
        assert (row["n_observed"], row["n_providers"], row["index_price"]) == (1, 1, None)
        assert f"({who})" in row["withheld_reason"]


def test_the_chinese_market_apart_in_its_currency(market: duckdb.DuckDBPyConnection) -> None:
    rows = by_key(price_index_v2(market, fx=FX))
    cn = rows[(DAY1, "SXM", "on_demand", "CN", "CNY")]
    # autodl 14, gpushare 15, featurize 16 (its sold-out offer is seen, not a quote).
    assert (cn["index_price"], cn["p25"], cn["p75"]) == (D(15), D("14.5"), D("15.5"))
    assert (cn["n_offers"], cn["n_providers"], cn["n_observed"]) == (3, 3, 4)
    assert str(cn["in_stock_share"]) == "0.7500"
    assert rows[(DAY1, "SXM", "monthly", "CN", "CNY")]["n_offers"] == 1  # 10220 CNY / 730
    in_usd = by_key(price_index_v2(market, fx=FX, currencies=["USD"], end=DAY1))
    assert {k[3:] for k in in_usd} == {("intl", "USD"), ("CN", "USD")}
    assert in_usd[(DAY1, "SXM", "on_demand", "CN", "USD")]["index_price"] == D("2.142857")
    assert (
        in_usd[(DAY1, "SXM", "on_demand", "intl", "USD")]
        == rows[(DAY1, "SXM", "on_demand", "intl", "USD")]
    )


def test_a_stale_offer_observes_nothing(market: duckdb.DuckDBPyConnection) -> None:
    # Day 2: runpod's partial run could not read "cheap": kept stale, not seen that day.
    seen = {(o.provider, o.offer_key) for o in daily_offer_days(market, DAY2, DAY2)}
    assert ("runpod", "cheap") not in seen and ("runpod", "sxm") in seen
    rows = by_key(price_index_v2(market, fx=FX, start=DAY2))
    od = rows[(DAY2, "SXM", "on_demand", "intl", "USD")]
    # lambda 2.00, runpod 2.30, vastai 2.40: median 2.30, p25 2.15, p75 2.35.
    assert (od["index_price"], od["p25"], od["p75"]) == (D("2.3"), D("2.15"), D("2.35"))
    assert (od["n_offers"], od["n_observed"]) == (3, 3)
    assert {k[0] for k in rows} == {DAY2}


def test_gpi_1_is_still_there_beside_it(market: duckdb.DuckDBPyConnection) -> None:
    v1 = price_index(market, fx=FX, currencies=["USD"], end=DAY1)
    assert set(v1["method_version"]) == {"gpi-1"} and "gpu_form_factor" not in v1.columns
    # gpi-1 blends form factors and markets in one on-demand figure per GPU.
    (row,) = v1.iter_rows(named=True)
    assert (row["n_providers"], row["n_observed"]) == (6, 12)


def test_a_past_day_keeps_its_rate_when_later_rates_come(
    market: duckdb.DuckDBPyConnection,
) -> None:
    first = FxTable([FxRate("USD", "CNY", D("7.00"), date(2026, 12, 1), "test")])
    later = first.with_rates([FxRate("USD", "CNY", D("8.00"), date(2027, 1, 1), "test")])
    before = price_index_v2(market, fx=first, currencies=["USD"], end=DAY1)
    assert price_index_v2(market, fx=later, currencies=["USD"], end=DAY1) == before
    cn = by_key(before)[(DAY1, "SXM", "on_demand", "CN", "USD")]
    assert cn["index_price"] == D("2.142857")  # 15 / 7: the pair's first rate, not 8
    # gpi-1 takes the table's latest rate for such a day: its figure moves.
    v1 = [price_index(market, fx=t, currencies=["CNY"], end=DAY1) for t in (first, later)]
    assert v1[0]["index_price"].to_list() != v1[1]["index_price"].to_list()


def test_an_empty_warehouse_has_no_rows(con: duckdb.DuckDBPyConnection) -> None:
    assert price_index_v2(con) == []
