"""Helpers for the sizing tests: a CLI app with `size`/`models`, and a tiny warehouse.

A module with a unique name (not conftest), so test modules import it directly.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import typer

from gpurent.cli import size as size_cli
from gpurent_core.model import (
    BillingUnit,
    OfferRecord,
    PriceBasis,
    ProviderRun,
    RunStatus,
    StockStatus,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
SIZING_DATA = REPO_ROOT / "sizing" / "data"
T0 = datetime(2026, 11, 1, 8, 0, tzinfo=UTC)


def cli_app() -> typer.Typer:
    app = typer.Typer()
    app.add_typer(size_cli.app)
    return app


def run_for(provider: str) -> ProviderRun:
    return ProviderRun(
        run_id=f"run-{provider}",
        provider=provider,
        started_at=T0,
        finished_at=T0 + timedelta(seconds=30),
        status=RunStatus.OK,
    )


def offer(run: ProviderRun, key: str, model: str, vram: int, **changes: Any) -> OfferRecord:
    """An in-stock, per-GPU, USD-per-hour offer without fees (so costs are easy to check)."""
    fields: dict[str, Any] = {
        "provider": run.provider,
        "offer_key": key,
        "run_id": run.run_id,
        "observed_at": run.started_at + timedelta(seconds=5),
        "gpu_vendor": "nvidia",
        "gpu_model": model,
        "gpu_vram_gb": vram,
        "gpu_form_factor": None,
        "gpu_count": 1,
        "raw_gpu_name": f"NVIDIA {model} {vram}GB",
        "status": StockStatus.IN_STOCK,
        "available_count": 4,
        "price": Decimal("1.00"),
        "currency": "USD",
        "billing_unit": BillingUnit.HOUR,
        "price_basis": PriceBasis.GPU,
        "region": "test-1",
        "url": "https://example.test/pricing",
    }
    fields.update(changes)
    return OfferRecord(**fields)


def build_warehouse(path: Path, offers_by_provider: dict[str, Iterable[OfferRecord]]) -> Path:
    """A warehouse file holding one ok run per provider with the given offers."""
    from warehouse.db import connect
    from warehouse.load import load_run

    con = connect(path)
    try:
        for provider, offers in offers_by_provider.items():
            feed = path.parent / f"{provider}.jsonl"
            feed.write_text("\n".join(o.model_dump_json() for o in offers) + "\n", encoding="utf-8")
            load_run(con, run_for(provider), feed)
    finally:
        con.close()
    return path
