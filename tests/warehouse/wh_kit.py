"""Warehouse test kit: runs, offers and feed files built from gpurent_core.model records.

A module with a unique name (not conftest) so test modules can import it directly.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb

# pytest puts tests/ on sys.path (tests/conftest.py has no package), where this folder looks
# like a namespace package called "warehouse"; the editable install's finder runs after the
# path scan, so the real package must be findable on sys.path. Lead: `pythonpath = ["."]`
# in [tool.pytest.ini_options] makes this unnecessary.
REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))
if getattr(sys.modules.get("warehouse"), "__file__", None) is None:
    sys.modules.pop("warehouse", None)

from gpurent_core.model import (  # noqa: E402
    AddonFee,
    BillingUnit,
    FeeBasis,
    FeeType,
    OfferRecord,
    PriceBasis,
    PriceKind,
    PricePlan,
    ProviderRun,
    QuarantineRecord,
    RunStatus,
    StockStatus,
)

T0 = datetime(2026, 11, 1, 8, 0, tzinfo=UTC)
TABLES = ("crawl_runs", "observations", "addon_fees", "price_plans", "quarantine", "fx_rates")


class FeedKit:
    """Builds runs, offers and feed files; run n starts n hours after T0."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def run(
        self,
        n: int,
        status: RunStatus = RunStatus.OK,
        *,
        provider: str = "acme",
        message: str | None = None,
        **scope: Any,
    ) -> ProviderRun:
        """Run ``n`` (an hour after the last); ``scope``: the ProviderRun fields of what it
        skipped and could not read (``unread_prefixes=("",)``: a page failed, nothing it
        did not list is closed)."""
        started = T0 + timedelta(hours=n)
        return ProviderRun(
            run_id=f"run-{n}",
            provider=provider,
            started_at=started,
            finished_at=started + timedelta(seconds=42),
            status=status,
            message=message,
            **scope,
        )

    def failed_page(self, n: int, **kw: Any) -> ProviderRun:
        """A partial run ``n`` whose failed page or request leaves every offer unread."""
        return self.run(n, RunStatus.PARTIAL, unread_prefixes=("",), **kw)

    def offer(self, run: ProviderRun, offer_key: str = "h100-1", **changes: Any) -> OfferRecord:
        fields: dict[str, Any] = {
            "provider": run.provider,
            "offer_key": offer_key,
            "run_id": run.run_id,
            "observed_at": run.started_at + timedelta(seconds=5),
            "gpu_vendor": "nvidia",
            "gpu_model": "H100",
            "gpu_vram_gb": 80,
            "gpu_form_factor": "SXM",
            "gpu_count": 1,
            "raw_gpu_name": "NVIDIA H100 80GB HBM3",
            "status": StockStatus.IN_STOCK,
            "available_count": 3,
            "price": Decimal("2.49"),
            "currency": "USD",
            "billing_unit": BillingUnit.HOUR,
            "price_basis": PriceBasis.GPU,
            "region": "us-east",
            "url": "https://example.test/pricing",
            "fees": (
                AddonFee(
                    fee_type=FeeType.DATA_DISK,
                    amount=Decimal("0.0001369863"),
                    currency="USD",
                    unit=BillingUnit.HOUR,
                    basis=FeeBasis.GB,
                    included_quantity=Decimal("20"),
                    mandatory=True,
                    charged_while_stopped=True,
                ),
                AddonFee(
                    fee_type=FeeType.EGRESS,
                    amount=Decimal("0.05"),
                    currency="USD",
                    basis=FeeBasis.GB,
                    note="first 1 TB free",
                ),
            ),
            "plans": (
                PricePlan(
                    price=Decimal("1500"),
                    currency="USD",
                    billing_unit=BillingUnit.MONTH,
                    price_basis=PriceBasis.GPU,
                    price_kind=PriceKind.COMMITMENT,
                ),
            ),
        }
        fields.update(changes)
        return OfferRecord(**fields)

    def quarantine(self, run: ProviderRun, reason: str = "unknown GPU name") -> QuarantineRecord:
        return QuarantineRecord(
            provider=run.provider,
            run_id=run.run_id,
            observed_at=run.started_at,
            offer_key="mystery-1",
            reason=reason,
            field="raw_gpu_name",
            raw={"name": "RTX 9999 Ti", "price": "1.20"},
        )

    def write(self, name: str, lines: Iterable[OfferRecord | QuarantineRecord | str]) -> Path:
        """A JSON Lines feed; str items are written verbatim (bad lines)."""
        path = self.root / "feeds" / f"{name}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        text = [line if isinstance(line, str) else line.model_dump_json() for line in lines]
        path.write_text("\n".join(text) + "\n", encoding="utf-8")
        return path


def table_counts(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Rows per warehouse table."""
    return {t: con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in TABLES}
