"""Spot prices in a ranking: an interruptible machine's month is no month's rent.

`cheapest` leaves spot headlines out and says how many; `--include-spot` ranks them, marked;
a spot headline may be rented through its own spot cap (Vultr's monthly cap), an on-demand
one never through a spot plan. Through the real app, in process, on a warehouse built here.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from gpurent import api
from gpurent_core.model import BillingUnit, PriceBasis, PriceKind, PricePlan, StockStatus
from tests.cli_helpers import invoke, invoke_json
from tests.warehouse.wh_kit import FeedKit
from warehouse.db import connect
from warehouse.load import load_run

D = Decimal
MACHINE = {
    "gpu_model": "H100",
    "gpu_vram_gb": 80,
    "gpu_form_factor": "SXM",
    "gpu_count": 1,
    "currency": "USD",
    "price_basis": PriceBasis.INSTANCE,
    "available_count": None,
    "fees": (),
}
# 1.00 USD/h spot, capped at 600 USD a month (Vultr bills hourly up to a monthly cap).
SPOT_CAP = PricePlan(
    price=D("600"),
    currency="USD",
    billing_unit=BillingUnit.MONTH,
    price_basis=PriceBasis.INSTANCE,
    price_kind=PriceKind.SPOT,
)


YEAR = PricePlan(
    price=D("7300"),
    currency="CNY",
    billing_unit=BillingUnit.YEAR,
    price_basis=PriceBasis.GPU,
    price_kind=PriceKind.COMMITMENT,
)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("spot")
    kit = FeedKit(root)
    path = root / "gpurent.duckdb"
    con = connect(path)
    try:
        run = kit.run(1, provider="vultr")
        load_run(con, run, kit.write("v", [
            kit.offer(run, "spot", price=D("1.00"), price_kind=PriceKind.SPOT,
                      plans=(SPOT_CAP,), **MACHINE),
            # The same spot cap beside an on-demand rate is another bargain: not counted.
            kit.offer(run, "on-demand", price=D("2.00"), price_kind=PriceKind.ON_DEMAND,
                      plans=(SPOT_CAP,), **MACHINE),
        ]))  # fmt: skip
        # A year's package cheaper than 730 hours: its month is a twelfth of a year up front.
        chenyu = kit.run(1, provider="chenyu")
        load_run(con, chenyu, kit.write("c", [
            kit.offer(chenyu, "a100-year", gpu_model="A100", gpu_vram_gb=40, price=D("5.00"),
                      currency="CNY", price_basis=PriceBasis.GPU, available_count=None,
                      status=StockStatus.UNKNOWN, fees=(), plans=(YEAR,)),
        ]))  # fmt: skip
    finally:
        con.close()
    return path


def test_cheapest_leaves_spot_out_and_says_how_many(db: Path) -> None:
    rows = invoke_json("cheapest", "--min-vram", "80", "--db", str(db))
    assert [r["offer_key"] for r in rows] == ["on-demand"]
    table = invoke("cheapest", "--min-vram", "80", "--db", str(db)).stdout
    assert "1 spot offer left out: interruptible" in table
    assert "--include-spot" in table
    # The library says the same, and a limited answer counts the same as a full one.
    for limit in (None, 1):
        found = api.cheapest(80, db=db, limit=limit)
        assert [o.offer_key for o in found] == ["on-demand"] and found.spot_left_out == 1


def test_include_spot_ranks_it_marked_at_its_own_monthly_cap(db: Path) -> None:
    rows = invoke_json(
        "cheapest", "--min-vram", "80", "--include-spot", "--currency", "USD", "--db", str(db)
    )
    assert [r["offer_key"] for r in rows] == ["spot", "on-demand"]
    spot, on_demand = rows
    assert spot["price_kind"] == "spot"
    # 730 h at 1.00 would be 730; the spot cap says 600 a month.
    assert D(spot["true_monthly"]) == D("600")
    # The on-demand rate is never rented through the spot cap: 730 h x 2.00.
    assert D(on_demand["true_monthly"]) == D("1460")
    table = invoke("cheapest", "--min-vram", "80", "--include-spot", "--db", str(db)).stdout
    assert "1 USD/h spot" in table
    assert "spot offer left out" not in table
    found = api.cheapest(80, db=db, include_spot=True, limit=1)
    assert [o.offer_key for o in found] == ["spot"] and found.spot_left_out == 0


def test_explain_says_why_a_spot_plan_does_not_count_beside_an_on_demand_rate(db: Path) -> None:
    text = invoke("explain", "vultr", "on-demand", "--db", str(db)).stdout
    assert "spot plans do not count beside an on_demand price" in text
    spot = invoke("explain", "vultr", "spot", "--db", str(db)).stdout
    assert "plan spot: 600 USD/month" in spot


def test_size_leaves_spot_out_and_counts_it_unless_asked(db: Path) -> None:
    workload = {"precision": "bf16", "prompt_tokens": 1000, "gen_tokens": 200, "db": db}
    answer = api.size("qwen2.5-7b", **workload)
    assert [o.offer_key for o in answer.offers] == ["on-demand"]
    assert answer.spot_left_out == 1
    both = api.size("qwen2.5-7b", include_spot=True, **workload)
    assert {o.offer_key for o in both.offers} == {"spot", "on-demand"}
    assert both.spot_left_out == 0
    table = invoke("size", "--model", "qwen2.5-7b", "--precision", "bf16", "--prompt-tokens",
                   "1000", "--gen-tokens", "200", "--db", str(db)).stdout  # fmt: skip
    assert "1 spot offer left out" in table


def test_a_month_that_is_a_twelfth_of_a_year_up_front_is_marked(db: Path) -> None:
    rows = invoke_json("offers", "--provider", "chenyu", "--db", str(db))
    assert [(r["true_monthly"], r["monthly_plan"]) for r in rows] == [
        ("608.333333", "0.083333 x year (commitment)")
    ]
    table = invoke("offers", "--provider", "chenyu", "--db", str(db)).stdout
    line = next(x for x in table.splitlines() if "a100" in x.lower() or "A100" in x)
    assert "608.33 * ‡" in line  # (* : no storage fee in this feed)
    assert "‡ a year's package, paid up front" in table
    # A month paid as a month is not marked.
    plain = invoke("offers", "--provider", "vultr", "--db", str(db)).stdout
    assert "‡" not in plain
