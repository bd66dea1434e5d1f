"""The steps after "fits": precision per card, context window, speed targets, the verdict,
the dominant training terms, and one composition for the CLI and the dashboard."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sizing_kit import build_warehouse, cli_app, offer, run_for
from typer.testing import CliRunner

from dashboards import sizer
from gpurent_core.catalog import get_catalog
from sizing.models import get_model
from sizing.quant import get_precision
from sizing.speed import prefill_seconds
from sizing.support import Verdict, precision_support
from sizing.workload import Workload

runner = CliRunner()


def sku(model: str, vram: int, form: str | None = None):  # type: ignore[no-untyped-def]
    found = get_catalog().find(model, vram, form)
    assert found is not None
    return found


@pytest.fixture
def market(tmp_path: Path) -> Path:
    acme = run_for("acme")
    return build_warehouse(
        tmp_path / "wh" / "gpurent.duckdb",
        {
            "acme": [
                offer(acme, "v100", "V100", 32, gpu_form_factor="SXM", price=Decimal("0.40")),
                offer(acme, "l4", "L4", 24, gpu_form_factor="PCIe", price=Decimal("0.45")),
                offer(acme, "h100", "H100", 80, gpu_form_factor="SXM", price=Decimal("2.00")),
                offer(acme, "h200", "H200", 141, gpu_form_factor="SXM", price=Decimal("2.40")),
            ]
        },
    )


def size(db: Path, *args: str) -> dict[str, Any]:
    base = ["size", "--model", "llama-3.1-8b", "--currency", "USD", "--db", str(db)]
    result = runner.invoke(cli_app(), [*base, *args, "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert isinstance(data, dict)
    return data


def keys(data: dict[str, Any]) -> set[str]:
    return {o["offer_key"] for o in data["offers"]}


def test_precision_support_from_the_catalog() -> None:
    fp8, bf16, awq = get_precision("fp8"), get_precision("bf16"), get_precision("awq")
    assert precision_support(sku("V100", 32, "SXM"), fp8).reason == "V100: no FP8"
    assert precision_support(sku("H100", 80, "SXM"), fp8).verdict is Verdict.YES
    assert precision_support(sku("T4", 16), bf16).verdict is Verdict.NO
    assert precision_support(sku("T4", 16), get_precision("fp16")).verdict is Verdict.YES
    assert precision_support(sku("A100", 80, "SXM"), bf16).verdict is Verdict.YES
    assert "Marlin" in precision_support(sku("RTX 4090", 24), awq).reason
    assert precision_support(sku("V100", 32, "SXM"), awq).verdict is Verdict.NO  # AWQ needs 7.5
    assert precision_support(sku("Ascend 910B3", 64), awq).verdict is Verdict.UNKNOWN
    assert precision_support(None, fp8).verdict is Verdict.UNKNOWN


def test_fp8_leaves_out_cards_without_fp8_with_the_reason(market: Path) -> None:
    data = size(market, "--precision", "fp8", "--prompt-tokens", "1000", "--gen-tokens", "200")
    assert "v100" not in keys(data) and "h100" in keys(data)
    [v100] = [e for e in data["excluded"] if e["offer_key"] == "v100"]
    assert v100["step"] == "precision" and v100["reason"] == "V100: no FP8"
    assert "V100: no FP8" in data["verdict"]


def test_prompt_beyond_the_context_window_is_refused_or_warned(market: Path) -> None:
    args = ["size", "--model", "llama-3.1-8b", "--prompt-tokens", "130000", "--gen-tokens", "2000"]
    refused = runner.invoke(cli_app(), [*args, "--db", str(market)])
    assert refused.exit_code == 2 and "context window of 131072" in refused.output
    data = size(market, "--prompt-tokens", "130000", "--gen-tokens", "2000",
                "--allow-beyond-context")  # fmt: skip
    assert data["notes"][0].startswith("WARNING: prompt + generation of 132000 tokens")


def test_prefill_time_from_compute() -> None:
    arch, bf16 = get_model("Llama-3.1-8B"), get_precision("bf16")
    wl = Workload(prompt_tokens=8000, gen_tokens=100)
    h100 = prefill_seconds(arch, bf16, wl, sku("H100", 80, "SXM"), 1)
    l4 = prefill_seconds(arch, bf16, wl, sku("L4", 24), 1)
    assert h100 is not None and l4 is not None
    # 2 x ~7.5e9 matmul params x 8000 tokens (+ attention) at half of 989.5 TFLOPS: ~0.26 s
    assert 0.2 < h100 < 0.35
    assert l4 / h100 == pytest.approx(989.5 / 121, rel=0.01)  # compute-bound: TFLOPS ratio
    assert prefill_seconds(arch, bf16, wl, sku("A10G", 24), 1) is None  # no TFLOPS known


def test_targets_drop_slow_placements_with_the_reason(market: Path) -> None:
    data = size(market, "--prompt-tokens", "8000", "--gen-tokens", "1000", "--ttft-ms", "500")
    assert "l4" not in keys(data) and {"h100", "h200"} <= keys(data)
    [l4] = [e for e in data["excluded"] if e["offer_key"] == "l4"]
    assert l4["step"] == "speed" and "first token" in l4["reason"] and "> 500 ms" in l4["reason"]
    for o in data["offers"]:
        assert o["ttft_ms"] <= 500
    fast = size(market, "--prompt-tokens", "8000", "--gen-tokens", "1000", "--tokens-per-s", "180")
    # One H100 gives ~156 tokens/s per user; the offer has 4 free, and 2 of them meet it.
    assert keys(fast) == {"h200", "h100"}
    h100 = next(o for o in fast["offers"] if o["offer_key"] == "h100")
    assert (h100["gpu_count"], h100["tensor_parallel"]) == (2, 2)
    assert h100["note"] == "meets 180 tokens/s per user with 2 cards (155.8 tokens/s per user on 1)"
    once = size(market, "--prompt-tokens", "8000", "--gen-tokens", "1000", "--tokens-per-s",
                "180", "--gpus", "1")  # fmt: skip
    assert keys(once) == {"h200"}  # H100 ~156, L4 ~14 tokens/s per user on one card


def test_a_target_no_card_meets_says_so(market: Path) -> None:
    data = size(market, "--prompt-tokens", "1000", "--gen-tokens", "100", "--tokens-per-s", "5000")
    assert data["offers"] == []
    assert "No offer in stock is known to meet the targets" in data["verdict"]
    assert ">= 5000 tokens/s per user" in data["verdict"]
    assert all(e["step"] in ("speed", "precision") for e in data["excluded"])


def hopper(tmp_path: Path, h200_price: str) -> Path:
    """The H100 vs H200 question: one of each, per card, per hour."""
    acme = run_for("acme")
    return build_warehouse(
        tmp_path / "hopper.duckdb",
        {
            "acme": [
                offer(acme, "h100", "H100", 80, gpu_form_factor="SXM", price=Decimal("2.00")),
                offer(acme, "h200", "H200", 141, gpu_form_factor="SXM", price=Decimal(h200_price)),
            ]
        },
    )


def test_verdict_depends_on_the_workload(tmp_path: Path) -> None:
    db = hopper(tmp_path, "2.40")
    args = ["--gpus", "1", "--prompt-tokens", "8000", "--gen-tokens", "1000"]
    one = size(db, *args, "--batch", "1")
    many = size(db, *args, "--batch", "64")
    assert one["speed_verdict"] != many["speed_verdict"]
    # batch 1: decode is bandwidth-bound; H200 (4.8 TB/s) is 1.43x the H100 (3.35) for 1.2x
    # the price, so it is cheaper per token.
    assert "This workload is bandwidth-bound" in one["speed_verdict"]
    assert "row 2, acme H200 141GB SXM x1, decodes 1.43x faster" in one["speed_verdict"]
    by_key = {o["offer_key"]: o for o in one["offers"]}
    saved = Decimal(by_key["h100"]["cost_per_million_tokens"]) - Decimal(
        by_key["h200"]["cost_per_million_tokens"]
    )
    assert saved > 0 and f"saves {saved} USD per million tokens" in one["speed_verdict"]
    # batch 64: 70 GiB of KV; only the H200 holds it, so memory decides the card.
    assert keys(many) == {"h200"}
    assert "capacity-bound" in many["speed_verdict"]
    assert "~41.7 tokens/s per user" in many["speed_verdict"]


def test_faster_card_that_costs_more_per_token_is_capacity_bound(tmp_path: Path) -> None:
    db = hopper(tmp_path, "4.00")
    data = size(db, "--gpus", "1", "--prompt-tokens", "2000", "--gen-tokens", "500")
    assert "This workload is capacity-bound" in data["speed_verdict"]
    assert "costs" in data["speed_verdict"] and "more per million tokens" in data["speed_verdict"]


def test_training_names_the_dominant_terms(tmp_path: Path) -> None:
    none = tmp_path / "none.duckdb"
    args = ["--prompt-tokens", "2048", "--gen-tokens", "0"]
    full = size(none, *args, "--mode", "full")
    assert full["dominant_terms"][0].startswith("optimizer states")
    lora = size(none, *args, "--mode", "lora")
    assert lora["dominant_terms"][0].startswith("weights")
    assert not any(t.startswith("optimizer states") for t in lora["dominant_terms"])
    long = size(none, "--prompt-tokens", "32768", "--gen-tokens", "0", "--mode", "qlora")
    assert any(t.startswith("logits") for t in long["dominant_terms"])


def test_cli_and_dashboard_give_the_same_reasons(market: Path) -> None:
    cli = size(market, "--precision", "fp8", "--prompt-tokens", "8000", "--gen-tokens", "1000",
               "--ttft-ms", "500")  # fmt: skip
    request = sizer.SizeRequest(
        model="llama-3.1-8b",
        precision="fp8",
        prompt_tokens=8000,
        gen_tokens=1000,
        display_currency="USD",
        ttft_ms=500,
        limit=10,
    )
    board = sizer.size_workload(market, request).report
    # V100: no FP8; the L4's 4 free cards meet 500 ms together, so it is not left out.
    assert cli["excluded"] == board["excluded"] and len(cli["excluded"]) == 1
    assert cli["left_out"] == board["left_out"] and cli["cannot_tell"] == board["cannot_tell"]
    assert cli["verdict"] == board["verdict"]
    assert cli["offers_reason"] == board["offers_reason"]
    missing = market.parent / "absent.duckdb"
    empty_cli = size(missing, "--prompt-tokens", "100", "--gen-tokens", "10")
    empty_board = sizer.size_workload(
        missing, sizer.SizeRequest(model="llama-3.1-8b", prompt_tokens=100, gen_tokens=10)
    ).report
    assert empty_cli["offers_reason"] == empty_board["offers_reason"]
    assert "no warehouse" in empty_board["offers_reason"]
