"""`size` marks a true cost that leaves storage out, as `cheapest` does (audit: the same
offer was `2,117.00 *` in `cheapest` and unmarked as size's row 1)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from typer.testing import CliRunner

from gpurent import api
from gpurent_core.model import AddonFee, BillingUnit, FeeBasis, FeeType
from tests.sizing.sizing_kit import build_warehouse, cli_app, offer, run_for

DISK = AddonFee(
    fee_type=FeeType.DATA_DISK, amount=Decimal("0.0002"), currency="USD",
    unit=BillingUnit.HOUR, basis=FeeBasis.GB,
)  # fmt: skip
ASK = {"model": "qwen2.5-7b", "prompt_tokens": 1000, "gen_tokens": 100}


def market(tmp_path: Path) -> Path:
    run = run_for("acme")
    return build_warehouse(tmp_path / "wh.duckdb", {"acme": [
        offer(run, "no-storage-price", "H100", 80, price=Decimal("2.00")),
        offer(run, "with-disk", "H100", 80, price=Decimal("2.05"), fees=(DISK,)),
    ]})  # fmt: skip


def test_the_answer_says_which_costs_leave_storage_out(tmp_path: Path) -> None:
    answer = api.size(**ASK, db=market(tmp_path))
    flags = {o.offer_key: o.storage_price_unknown for o in answer.offers}
    assert flags == {"no-storage-price": True, "with-disk": False}
    assert not any(o.egress_price_unknown for o in answer.offers)  # no traffic asked for


def test_the_table_marks_them_and_says_why(tmp_path: Path) -> None:
    db = market(tmp_path)
    args = ["size", "-m", "qwen2.5-7b", "--prompt-tokens", "1000", "--gen-tokens", "100"]
    out = CliRunner().invoke(cli_app(), [*args, "--db", str(db)], env={"COLUMNS": "250"})
    assert out.exit_code == 0, out.output
    marked = [line for line in out.output.splitlines() if "acme" in line and " * " in line]
    assert len(marked) == 1
    assert "* storage price unknown" in out.output
