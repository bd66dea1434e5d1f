"""Warehouses for the buy-or-rent answer (``gpurent.api.tco``), loaded the real way
(``warehouse.load.load_run`` of feed files written by ``tests.warehouse.wh_kit.FeedKit``).

``build_market``: RTX 4090 24 GB offers priced so that the median per card-hour of the ones
that count (confirmed by their provider's latest run, rentable now, on demand) is
``MEDIAN`` = 1.75 CNY, while every offer that must not count is cheaper than all of them:
counted by mistake, any one would pull the median down.

``build_unrentable``: RTX 4090 offers that are all sold out, of unknown stock or stale: no
rental price at all.

A module with a unique name (not conftest) so test modules can import it.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

from gpurent_core.model import PriceBasis, PriceKind, RunStatus, StockStatus
from tests.warehouse.wh_kit import FeedKit
from warehouse.db import writing
from warehouse.load import load_run

D = Decimal
COUNTED = (D("1.25"), D("1.50"), D("2.00"), D("3.00"))
"""Per card-hour, in CNY, of the offers that count (sorted)."""
MEDIAN = D("1.75")
COUNTED_PROVIDERS = 2


def card(kit: FeedKit, run: Any, key: str, price: str, **changes: Any) -> Any:
    """An RTX 4090 24 GB offer, per card-hour in CNY, with no add-on fees and no plans (its
    true cost per card-hour is its price)."""
    fields: dict[str, Any] = {
        "gpu_model": "RTX 4090",
        "gpu_vram_gb": 24,
        "gpu_form_factor": None,
        "raw_gpu_name": "RTX 4090",
        "price": D(price),
        "currency": "CNY",
        "fees": (),
        "plans": (),
        "region": None,
    }
    return kit.offer(run, key, **(fields | changes))


def build_market(root: Path) -> Path:
    kit = FeedKit(root)
    path = root / "market.duckdb"
    with writing(path) as con:
        a = kit.run(1, provider="autodl")
        load_run(con, a, kit.write("autodl", [
            card(kit, a, "a-1", "1.50"),
            # A two-card machine for 2.50 an hour, both cards free: 1.25 a card-hour.
            card(kit, a, "a-2x", "2.50", gpu_count=2, price_basis=PriceBasis.INSTANCE,
                 available_count=2),
            # What must not count, each cheaper than every counted offer:
            card(kit, a, "a-sold", "0.10", status=StockStatus.SOLD_OUT, available_count=0),
            card(kit, a, "a-unknown", "0.20", status=StockStatus.UNKNOWN, available_count=None),
            # A two-card machine with one card free: not rentable as listed.
            card(kit, a, "a-short", "0.30", gpu_count=2, price_basis=PriceBasis.INSTANCE,
                 available_count=1),
            # Another size of the model (the modded 48 GB board) and another model.
            card(kit, a, "a-48", "0.60", gpu_vram_gb=48, raw_gpu_name="RTX 4090 48G"),
            card(kit, a, "a-h100", "0.70", gpu_model="H100", gpu_vram_gb=80,
                 gpu_form_factor="SXM", raw_gpu_name="H100 SXM"),
        ]))  # fmt: skip
        b = kit.run(1, provider="gpushare")
        load_run(con, b, kit.write("gpushare", [
            card(kit, b, "b-1", "2.00", status=StockStatus.LOW, available_count=1),
            card(kit, b, "b-2", "3.00"),
            card(kit, b, "b-spot", "0.40", price_kind=PriceKind.SPOT),
        ]))  # fmt: skip
        # Confirmed in stock once, then the provider's latest run failed: stale.
        good = kit.run(1, provider="lambda")
        load_run(con, good, kit.write("lambda", [card(kit, good, "l-1", "0.05")]))
        load_run(con, kit.run(2, RunStatus.FAILED, provider="lambda", message="HTTP 500"), None)
    return path


def build_unrentable(root: Path) -> Path:
    kit = FeedKit(root)
    path = root / "unrentable.duckdb"
    with writing(path) as con:
        a = kit.run(1, provider="autodl")
        load_run(con, a, kit.write("autodl-none", [
            card(kit, a, "a-sold", "1.00", status=StockStatus.SOLD_OUT, available_count=0),
            card(kit, a, "a-unknown", "1.10", status=StockStatus.UNKNOWN, available_count=None),
        ]))  # fmt: skip
        good = kit.run(1, provider="lambda")
        load_run(con, good, kit.write("lambda-none", [card(kit, good, "l-1", "1.20")]))
        load_run(con, kit.run(2, RunStatus.FAILED, provider="lambda", message="HTTP 500"), None)
    return path
