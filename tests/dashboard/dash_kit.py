"""A demo warehouse for the dashboard tests, loaded the real way (warehouse.load.load_run).

Three providers in two currencies, in-stock, low, sold-out and unknown offers, a failed
last run, quarantine rows, and hostile text from "a recording" in a provider name, a raw GPU
name, a region, a failure message and a quarantined line. Times are relative to ``now`` so
data ages read like a live warehouse's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from gpurent_core.model import (
    AddonFee,
    BillingUnit,
    FeeBasis,
    FeeType,
    OfferRecord,
    PriceBasis,
    ProviderRun,
    QuarantineRecord,
    RunStatus,
    StockStatus,
)
from warehouse.db import connect
from warehouse.load import load_run

HOSTILE = "<script>alert(1)</script><b>bold</b>"
HOSTILE_PROVIDER = f"x{HOSTILE}"


@dataclass(frozen=True)
class Spec:
    """One offer as the demo lists it."""

    key: str
    model: str
    vram: int
    price: str
    status: StockStatus
    free: int | None
    form: str | None = None
    count: int = 1
    region: str | None = None
    raw: str | None = None


OFFERS: dict[str, tuple[str, list[Spec]]] = {
    "autodl": (
        "CNY",
        [
            Spec("4090-bj", "RTX 4090", 24, "1.98", StockStatus.IN_STOCK, 5, region="北京"),
            Spec("3090-nm", "RTX 3090", 24, "1.32", StockStatus.LOW, 1, region="内蒙"),
            Spec("a800-bj", "A800", 80, "5.98", StockStatus.SOLD_OUT, 0, "SXM", region="北京"),
            Spec("h800-sh", "H800", 80, "9.80", StockStatus.UNKNOWN, None, "SXM", region="上海"),
            Spec("h100-sh", "H100", 80, "16.50", StockStatus.IN_STOCK, 2, "SXM", region="上海"),
        ],
    ),
    "vastai": (
        "USD",
        [
            Spec("h100-1", "H100", 80, "2.49", StockStatus.IN_STOCK, 3, "SXM", region="US"),
            Spec("4090-9", "RTX 4090", 24, "0.35", StockStatus.IN_STOCK, 2, region="CA"),
            Spec("a100-4", "A100", 80, "1.10", StockStatus.SOLD_OUT, 0, "SXM", region="DE"),
        ],
    ),
    "acme": (
        "USD",
        [
            Spec(
                "l40s-1",
                "L40S",
                48,
                "0.95",
                StockStatus.IN_STOCK,
                4,
                region=HOSTILE,
                raw=f"NVIDIA L40S {HOSTILE}",
            ),
        ],
    ),
    HOSTILE_PROVIDER: (
        "USD",
        [Spec("l4-1", "L4", 24, "0.40", StockStatus.IN_STOCK, 1, region=HOSTILE, raw=HOSTILE)],
    ),
}


def _offer(provider: str, currency: str, run: ProviderRun, spec: Spec) -> OfferRecord:
    fields: dict[str, Any] = {
        "provider": provider,
        "offer_key": spec.key,
        "run_id": run.run_id,
        "observed_at": run.started_at + timedelta(seconds=5),
        "gpu_vendor": "nvidia",
        "gpu_model": spec.model,
        "gpu_vram_gb": spec.vram,
        "gpu_form_factor": spec.form,
        "gpu_count": spec.count,
        "raw_gpu_name": spec.raw or f"NVIDIA {spec.model} {spec.vram}GB",
        "status": spec.status,
        "available_count": spec.free,
        "price": Decimal(spec.price),
        "currency": currency,
        "billing_unit": BillingUnit.HOUR,
        "price_basis": PriceBasis.GPU,
        "region": spec.region,
        "url": f"https://{provider.split('<')[0] or 'x'}.example.test/pricing",
        "fees": (
            AddonFee(
                fee_type=FeeType.DATA_DISK,
                amount=Decimal("0.0001") if currency == "USD" else Decimal("0.0007"),
                currency=currency,
                unit=BillingUnit.HOUR,
                basis=FeeBasis.GB,
                included_quantity=Decimal("20"),
                mandatory=True,
                charged_while_stopped=True,
            ),
        ),
    }
    return OfferRecord(**fields)


def _run(provider: str, at: datetime, n: int, status: RunStatus, message: str | None = None):
    return ProviderRun(
        run_id=f"{provider[:6]}-run-{n}",
        provider=provider,
        started_at=at,
        finished_at=at + timedelta(seconds=40),
        status=status,
        message=message,
    )


def _write(path: Path, lines: list[OfferRecord | QuarantineRecord]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(r.model_dump_json() for r in lines) + "\n", encoding="utf-8")
    return path


def _past(spec: Spec, provider: str, at: datetime, now: datetime) -> Spec:
    """How an offer stood at an earlier run: dearer the further back, with stock patterns
    (AutoDL's 4090s busy 09-18 UTC, Vast.ai's H100s gone at weekends)."""
    days_ago = (now - at).days
    price = (Decimal(spec.price) * (1 + Decimal(days_ago) / 50)).quantize(Decimal("0.01"))
    status, free = spec.status, spec.free
    if (provider, spec.model) == ("autodl", "RTX 4090") and 9 <= at.hour < 18:
        status, free = StockStatus.SOLD_OUT, 0
    if (provider, spec.model) == ("vastai", "H100") and at.weekday() >= 5:
        status, free = StockStatus.SOLD_OUT, 0
    return replace(spec, price=str(price), status=status, free=free)


# Hours between runs in the history. The hour-of-week pattern needs two polls per weekday
# and hour, so two weeks of hourly runs: only AutoDL gets them (loading is ~0.1 s a run).
STEP_HOURS = {"autodl": 1, "vastai": 6}
OTHER_STEP_HOURS = 12


def build_demo_db(root: Path, now: datetime, *, days: int = 0) -> Path:
    """A warehouse under ``root``: per provider, good runs back over ``days`` days (every
    STEP_HOURS, at least two runs), the newest 1h10m before ``now`` listing OFFERS as given.

    acme's newest run, 10 minutes before ``now``, failed with a hostile message, so its
    shown data is the good run's; its last three good runs quarantined a hostile line.
    """
    db = root / "demo.duckdb"
    newest = now - timedelta(hours=1, minutes=10)
    con = connect(db)
    try:
        for provider, (currency, specs) in OFFERS.items():
            step = STEP_HOURS.get(provider, OTHER_STEP_HOURS)
            count = max(2, days * 24 // step + 1)
            times = [newest - timedelta(hours=step * k) for k in reversed(range(count))]
            for n, at in enumerate(times):
                run = _run(provider, at, n, RunStatus.OK)
                shown = specs if at == newest else [_past(s, provider, at, now) for s in specs]
                lines: list[OfferRecord | QuarantineRecord] = [
                    _offer(provider, currency, run, s) for s in shown
                ]
                if provider == "acme" and n >= count - 3:
                    lines.append(
                        QuarantineRecord(
                            provider=provider,
                            run_id=run.run_id,
                            observed_at=run.started_at,
                            offer_key="mystery-1",
                            reason=f"unknown GPU name {HOSTILE}",
                            field="raw_gpu_name",
                            raw={"name": HOSTILE, "price": "=1+2"},
                        )
                    )
                feed = _write(root / "feeds" / f"{run.run_id}.jsonl", lines)
                load_run(con, run, feed)
            if provider == "acme":
                failed = _run(
                    provider, now - timedelta(minutes=10), count, RunStatus.FAILED,
                    f"HTTP 500 {HOSTILE}",
                )  # fmt: skip
                load_run(con, failed, None)
    finally:
        con.close()
    return db
