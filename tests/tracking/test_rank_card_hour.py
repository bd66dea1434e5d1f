"""`rank`'s median price of a card is `tco`'s rental price (``gpurent_core.cost.card_hour``):
the same offers (confirmed, rentable now, on demand), the same hour (no storage or traffic,
as rented). Before, it took every in-stock row, spot and committed prices and machines
short of free cards included, with 50 GB of storage on offers that publish a disk price
only: B200 came out 10% low, an RTX A6000 4.5% high."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from gpurent import api
from tests.api.tco_kit import MEDIAN, build_market
from warehouse.db import reading
from warehouse.trends import rental_heat


@pytest.fixture(scope="module")
def market(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_market(tmp_path_factory.mktemp("rank-card-hour"))


def test_rank_prices_a_card_as_tco_does(market: Path) -> None:
    with reading(market) as con:
        heat = rental_heat(con, display_currency="CNY")
    [row] = [r for r in heat.rows if (r["gpu_model"], r["gpu_vram_gb"]) == ("RTX 4090", 24)]
    always_on = api.tco(
        "RTX 4090", Decimal(15000), hours_per_day=Decimal(24), power_price=Decimal("0.6"),
        currency="CNY", db=market,
    )  # fmt: skip
    assert row["median_true_hourly"] == MEDIAN == always_on.rent_per_card_hour


def test_unknown_stock_is_counted_apart_never_as_sold_out(tmp_path: Path) -> None:
    """Audit (CLI): a card whose only offer's stock is unknown showed "0% in stock" and the
    second scarcest heat rank. Unknown is not sold out (rule of truth 1): the share is of
    the offers whose stock is known, and a card none of whose offers says is unranked."""
    from gpurent.cli.tracking import rank_rows
    from gpurent_core.model import StockStatus
    from tests.api.tco_kit import card
    from tests.warehouse.wh_kit import FeedKit
    from warehouse.db import writing
    from warehouse.load import load_run

    kit = FeedKit(tmp_path)
    db = tmp_path / "unknown.duckdb"
    unknown = {"status": StockStatus.UNKNOWN, "available_count": None}
    with writing(db) as con:
        run = kit.run(1, provider="autodl")
        load_run(con, run, kit.write("autodl", [
            card(kit, run, "h20", "5.00", gpu_model="H20", gpu_vram_gb=96,
                 raw_gpu_name="H20", **unknown),
            card(kit, run, "4090-free", "2.00"),
            card(kit, run, "4090-sold", "2.00", status=StockStatus.SOLD_OUT, available_count=0),
            card(kit, run, "4090-unknown", "2.00", **unknown),
        ]))  # fmt: skip
    rows, _ = rank_rows(db, "CNY")
    by_card = {r["gpu_model"]: r for r in rows}
    h20, rtx = by_card["H20"], by_card["RTX 4090"]
    assert (h20["in_stock_share"], h20["unknown_stock"], h20["heat_rank"]) == (None, 1, None)
    assert (rtx["in_stock_share"], rtx["unknown_stock"], rtx["heat_rank"]) == (0.5, 1, 1)
