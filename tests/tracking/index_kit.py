"""A warehouse of two markets for the price index tests: three international platforms
(lambda, runpod, vastai: USD) and three Chinese ones (autodl, gpushare, featurize: CNY),
each listing an H100 SXM (on demand, with a spot or a monthly plan), an H100 PCIe and an
RTX 4090 whose form factor is not stated, polled at 09:00 UTC on the days asked for."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb

from gpurent_core.model import (
    BillingUnit,
    OfferRecord,
    PriceBasis,
    PriceKind,
    PricePlan,
    ProviderRun,
    RunStatus,
)
from tests.warehouse.wh_kit import T0, FeedKit
from warehouse.db import connect
from warehouse.load import load_run

D = Decimal
DAY1 = T0.date()
INTL = {"lambda": D("2.00"), "runpod": D("2.20"), "vastai": D("2.45")}
CN = {"autodl": D("14.00"), "gpushare": D("15.50"), "featurize": D("16.00")}
HOURS_A_MONTH = 730


def day(n: int) -> date:
    """Day n of the history (1: 2026-11-01)."""
    return DAY1 + timedelta(days=n - 1)


def run_of(kit: FeedKit, n: int, provider: str, hour: int = 1, **kw: Any) -> ProviderRun:
    """The run of ``provider`` on day ``n`` at 08:00 + ``hour`` UTC."""
    return kit.run(24 * (n - 1) + hour, provider=provider, **kw)


def offers(kit: FeedKit, run: ProviderRun, n: int, *, drift: Decimal = D(0)) -> list[OfferRecord]:
    """What ``run`` lists on day ``n``: prices that move a little from day to day."""
    cn = run.provider in CN
    base = (CN if cn else INTL)[run.provider] + D(n - 1) / 100 + drift
    currency = "CNY" if cn else "USD"

    def plan(price: Decimal, kind: PriceKind, unit: BillingUnit) -> PricePlan:
        return PricePlan(
            price=price, currency=currency, billing_unit=unit, price_basis=PriceBasis.GPU,
            price_kind=kind,
        )  # fmt: skip

    extra = (
        plan(base * HOURS_A_MONTH * D("0.8"), PriceKind.COMMITMENT, BillingUnit.MONTH)
        if cn
        else plan(base / 2, PriceKind.SPOT, BillingUnit.HOUR)
    )
    return [
        kit.offer(run, "sxm", price=base, currency=currency, fees=(), plans=(extra,)),
        kit.offer(run, "pcie", gpu_form_factor="PCIe", price=base * D("0.75"),
                  currency=currency, fees=(), plans=()),
        kit.offer(run, "4090", gpu_model="RTX 4090", gpu_vram_gb=24, gpu_form_factor=None,
                  price=base / 5, currency=currency, fees=(), plans=()),
    ]  # fmt: skip


def load_day(con: duckdb.DuckDBPyConnection, kit: FeedKit, n: int) -> None:
    """Every provider's good run of day ``n``."""
    for provider in (*INTL, *CN):
        run = run_of(kit, n, provider)
        load_run(con, run, kit.write(f"{provider}-{n}", offers(kit, run, n)))


def build_market(root: Path, days: int = 2) -> Path:
    """A warehouse file under ``root`` with days 1..``days``."""
    kit = FeedKit(root)
    path = root / "gpurent.duckdb"
    con = connect(path)
    try:
        for n in range(1, days + 1):
            load_day(con, kit, n)
    finally:
        con.close()
    return path


def load_later(path: Path, root: Path) -> None:
    """What comes after days 1 and 2 are published: day 3's runs (new prices, an offer
    gone, one left unread and kept stale, a failed run), then, late, runpod's second run of
    day 2 (after its day-3 run) with another price."""
    kit = FeedKit(root / "later")
    con = connect(path)
    try:
        for provider in (*INTL, *CN):
            if provider == "gpushare":
                load_run(con, run_of(kit, 3, provider, status=RunStatus.FAILED), None)
                continue
            if provider == "autodl":
                run = run_of(kit, 3, provider, status=RunStatus.PARTIAL, unread_keys=("sxm",))
                listed = [o for o in offers(kit, run, 3) if o.offer_key != "sxm"]
            else:
                run = run_of(kit, 3, provider)
                listed = offers(kit, run, 3, drift=D("0.3"))
                if provider == "lambda":
                    listed = [o for o in listed if o.offer_key != "pcie"]  # gone
            load_run(con, run, kit.write(f"{provider}-3", listed))
        late = run_of(kit, 2, "runpod", hour=3)  # day 2, 11:00, loaded after day 3
        load_run(con, late, kit.write("runpod-late", offers(kit, late, 2, drift=D("0.5"))))
    finally:
        con.close()
