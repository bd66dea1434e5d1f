"""Prefill takes machine time too: throughput, cost per token, capacity and the first token
of a batch, worked by hand from the steady-state cycle of ``sizing.speed``.

One cycle of a copy of the model serving B users, each sending P tokens and getting G:

    cycle = B x prefill(P) + G / decode tokens/s per user

(the B prompts share the copy's compute; never less than one read of the weights), so
tokens/s in all = B x G / cycle, requests an hour = B x 3600 / cycle, and the last of B
prompts sent at once waits B x prefill(P) for its first token.
"""

from __future__ import annotations

import json
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from sizing_kit import build_warehouse, cli_app, offer, run_for
from typer.testing import CliRunner

from gpurent_core.catalog import GpuSku, get_catalog
from gpurent_core.model import PriceBasis
from sizing.checks import SpeedTargets
from sizing.models import get_model
from sizing.quant import get_precision, weight_bytes
from sizing.rent_or_api import FULL_LOAD, RentalSpeed, capacity_per_hour, rental_cost
from sizing.rent_or_api import Workload as Shape
from sizing.speed import (
    BANDWIDTH_EFFICIENCY,
    PREFILL_EFFICIENCY,
    TP_EFFICIENCY,
    Serving,
    compute_rate,
    cost_per_million_tokens,
    prefill_flops,
    serving_latency,
)
from sizing.workload import Workload

runner = CliRunner()


def sku(model: str, vram: int, form: str | None = None) -> GpuSku:
    found = get_catalog().find(model, vram, form)
    assert found is not None
    return found


# The audit's case: Llama-3.3-70B FP8 on eight RTX 3090s (TP 8, one copy), 16 users of
# 1000 + 300 tokens. Ampere runs FP8 weight-only: the maths is at the BF16 figure.
LLAMA70 = get_model("Llama-3.3-70B")
FP8 = get_precision("fp8")
AUDIT = Workload(prompt_tokens=1000, gen_tokens=300, batch=16)
RTX3090 = sku("RTX 3090", 24)


def test_the_audit_case_by_hand() -> None:
    lat = serving_latency(LLAMA70, FP8, AUDIT, RTX3090, Serving(8, 8))
    rate = compute_rate(RTX3090, FP8)
    assert rate is not None and lat.ttft_s is not None and lat.ttft_worst_s is not None
    one = prefill_flops(LLAMA70, 1000) / (8 * rate * PREFILL_EFFICIENCY * TP_EFFICIENCY)
    assert lat.ttft_s == pytest.approx(one)
    assert lat.ttft_s == pytest.approx(0.5407, abs=0.0005)  # what `size` printed
    per_user = lat.tokens_per_s_per_user
    assert per_user is not None
    assert per_user == pytest.approx(65.9, abs=0.05)  # decode speed is unchanged
    # Sixteen prompts share the machine's compute: the last one's first token, and the
    # prefill share of every cycle, is 16 x one prompt's.
    assert lat.ttft_worst_s == pytest.approx(16 * one)
    cycle = 16 * one + 300 / per_user  # 8.652 + 4.550 = 13.20 s
    assert lat.cycle_s == pytest.approx(cycle)
    assert lat.tokens_per_s == pytest.approx(16 * 300 / cycle)  # ~363.6, not 65.9 x 16 = 1054
    assert 360 < (lat.tokens_per_s or 0) < 367
    assert lat.requests_per_hour == pytest.approx(16 * 3600 / cycle)
    assert 4300 < (lat.requests_per_hour or 0) < 4420  # the audit's ~4,360, not 11,310


def test_tiny_prompts_barely_change_anything() -> None:
    """A prompt of a few tokens costs no more than one read of the weights, shared by the
    whole batch: throughput stays per user x users to within a step or two."""
    arch, bf16 = get_model("Llama-3.1-8B"), get_precision("bf16")
    wl = Workload(prompt_tokens=8, gen_tokens=1000, batch=4)
    h100 = sku("H100", 80, "SXM")
    lat = serving_latency(arch, bf16, wl, h100, Serving(1, 1))
    read = weight_bytes(arch.param_counts(), bf16, arch) / (
        float(h100.mem_bandwidth_gbps or 0) * 1e9 * BANDWIDTH_EFFICIENCY
    )
    # Bound by the weight read, alone and with all four prompts at once.
    assert lat.ttft_s == pytest.approx(read)
    assert lat.ttft_worst_s == pytest.approx(read)
    per_user = lat.tokens_per_s_per_user
    assert per_user is not None
    assert lat.tokens_per_s == pytest.approx(4 * 1000 / (read + 1000 / per_user))
    assert lat.tokens_per_s == pytest.approx(4 * per_user, rel=0.002)


def test_one_user_waits_for_its_own_prompt_only() -> None:
    lat = serving_latency(
        LLAMA70, FP8, Workload(prompt_tokens=1000, gen_tokens=300, batch=1), RTX3090, Serving(8, 8)
    )
    assert lat.ttft_worst_s == lat.ttft_s
    assert lat.tokens_per_s == pytest.approx(
        300 / ((lat.ttft_s or 0) + 300 / (lat.tokens_per_s_per_user or 1))
    )


def test_copies_prefill_side_by_side() -> None:
    """Eight users on eight copies (one card each): each copy prefills one prompt."""
    arch, bf16 = get_model("Llama-3.1-8B"), get_precision("bf16")
    wl = Workload(prompt_tokens=4000, gen_tokens=500, batch=8)
    lat = serving_latency(arch, bf16, wl, sku("H100", 80, "SXM"), Serving(8, 1))
    assert lat.batch == 1 and lat.ttft_worst_s == lat.ttft_s
    cycle = (lat.ttft_s or 0) + 500 / (lat.tokens_per_s_per_user or 1)
    assert lat.tokens_per_s == pytest.approx(8 * 500 / cycle)
    assert lat.requests_per_hour == pytest.approx(8 * 3600 / cycle)


def test_cost_per_million_tokens_reads_the_cycle_with_prefill() -> None:
    lat = serving_latency(LLAMA70, FP8, AUDIT, RTX3090, Serving(8, 8))
    assert lat.tokens_per_s is not None
    # 11.64 an hour over ~363.5 tokens/s: ~8.9 per million, not ~3.07 at 1054 tokens/s.
    cost = cost_per_million_tokens(Decimal("11.64"), lat.tokens_per_s)
    assert cost is not None and Decimal("8.8") < cost < Decimal("9.0")


def test_the_first_token_target_is_checked_for_every_user() -> None:
    """First token <= 1000 ms at 16 users: one prompt alone makes it (541 ms), the last of
    16 sent at once does not (8652 ms)."""
    lat = serving_latency(LLAMA70, FP8, AUDIT, RTX3090, Serving(8, 8))
    targets = SpeedTargets(ttft_ms=1000)
    [miss] = targets.misses(lat)
    assert miss == "first token 8652 ms with 16 prompts at once > 1000 ms target"
    assert SpeedTargets(ttft_ms=9000).meets(lat)


def test_rent_or_api_capacity_counts_the_batch_prefill() -> None:
    shape = Shape(prompt_tokens=1000, gen_tokens=100, batch=4)
    # One prompt takes 0.5 s, four 2 s; then 100 tokens at 20 tokens/s: a 7-s cycle.
    speed = RentalSpeed(
        hourly=Decimal("2"),
        ttft_ms=Decimal("500"),
        tokens_per_s_per_user=Decimal("20"),
        ttft_worst_ms=Decimal("2000"),
    )
    assert capacity_per_hour(shape, speed) == Fraction(4 * 3600, 7)
    cost = rental_cost(shape, speed, FULL_LOAD)
    assert cost is not None
    assert cost.capacity_per_hour == Decimal("2057.1")
    assert cost.per_request == Decimal("0.000972")  # 2 / 2057.14
    # Prefill holds the machine 2 of every 7 s: that share of a request over 1000 tokens.
    assert cost.per_million_input == Decimal("0.277778")
    assert cost.per_million_output == Decimal("6.944444")


# ---------------------------------------------------------------- through `gpurent size`


@pytest.fixture
def machine(tmp_path: Path) -> Path:
    """One whole machine of eight RTX 3090s at 8 USD an hour."""
    acme = run_for("acme")
    return build_warehouse(
        tmp_path / "wh" / "gpurent.duckdb",
        {
            "acme": [
                offer(acme, "3090x8", "RTX 3090", 24, gpu_count=8, available_count=8,
                      price=Decimal("8.00"), price_basis=PriceBasis.INSTANCE),
            ]
        },
    )  # fmt: skip


def size(db: Path, *extra: str) -> dict[str, Any]:
    args = [
        "size", "-m", "Llama-3.3-70B", "--precision", "fp8", "--prompt-tokens", "1000",
        "--gen-tokens", "300", "--batch", "16", "--currency", "USD", "--db", str(db),
        "--format", "json", *extra,
    ]  # fmt: skip
    result = runner.invoke(cli_app(), args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert isinstance(data, dict)
    return data


def test_size_answers_with_the_cycle(machine: Path) -> None:
    data = size(machine, "--compare-api", "--utilisation", "0.3")
    [row] = data["offers"]
    assert row["tensor_parallel"] == 8 and row["copies"] == 1
    assert row["ttft_ms"] == pytest.approx(540.7, abs=0.1)
    assert row["ttft_worst_ms"] == pytest.approx(16 * 540.7, abs=1)
    cycle = row["ttft_worst_ms"] / 1000 + 300 / row["tokens_per_s_per_user"]
    assert row["tokens_per_s"] == pytest.approx(16 * 300 / cycle, abs=0.2)
    hourly = Decimal(row["true_hourly"])
    per_token = hourly * 1_000_000 / (Decimal(str(row["tokens_per_s"])) * 3600)
    assert abs(Decimal(row["cost_per_million_tokens"]) - per_token) < Decimal("0.01")
    [priced] = data["rent_or_api"]["offers"]
    assert float(priced["capacity_per_hour"]) == pytest.approx(16 * 3600 / cycle, abs=0.5)
    assert 4300 < float(priced["capacity_per_hour"]) < 4420
    # The pick's sentence says which first token is which.
    assert (
        "first token 541 ms for a prompt alone, up to 8652 ms with all 16 at once"
        in (data["verdict"])
    )
    assert "(364 in all, prefill included)" in data["verdict"]


def test_a_first_token_target_leaves_out_a_batch_that_cannot_make_it(machine: Path) -> None:
    data = size(machine, "--ttft-ms", "1000")
    assert data["offers"] == []
    [group] = data["left_out"]
    assert "first token 8652 ms with 16 prompts at once > 1000 ms target" in group["reason"]


def test_the_new_sentences_read_in_chinese(machine: Path) -> None:
    from dashboards.i18n import Lang
    from dashboards.verdicts import reason_text, verdict_text

    zh = verdict_text(size(machine)["verdict"], Lang.ZH)
    assert "（合计 364，含预填充），单个提示首字 541 毫秒，16 个提示同时到达时最多 8652 毫秒" in zh
    assert "prompt" not in zh and "prefill" not in zh
    assert reason_text("first token 8652 ms with 16 prompts at once > 1000 ms target", Lang.ZH) == (
        "首字 8652 毫秒（16 个提示同时到达） > 目标 1000 毫秒"
    )
