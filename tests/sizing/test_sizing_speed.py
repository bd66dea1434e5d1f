"""Decode speed from bandwidth, MoE reading only active experts, cost per million tokens."""

from __future__ import annotations

from decimal import Decimal

import pytest

from gpurent_core.catalog import GpuSku, get_catalog
from sizing.models import get_model
from sizing.quant import get_precision, weight_bytes
from sizing.speed import Bound, bytes_per_decode_step, cost_per_million_tokens, decode_speed
from sizing.workload import Workload


def sku(model: str, vram: int, form: str | None = None) -> GpuSku:
    found = get_catalog().find(model, vram, form)
    assert found is not None
    return found


def test_dense_decode_reads_the_weights_once_per_step() -> None:
    arch, prec = get_model("Llama-3.1-8B"), get_precision("bf16")
    one = Workload(prompt_tokens=1, gen_tokens=1)
    read = bytes_per_decode_step(arch, prec, one)
    weights = weight_bytes(arch.param_counts(), prec, arch)
    embedding = arch.param_counts().embedding * 2
    assert read == pytest.approx(weights - embedding, rel=0.001)


def test_moe_reads_active_experts_and_more_with_batch() -> None:
    arch, prec = get_model("Qwen3-30B-A3B"), get_precision("bf16")
    single = bytes_per_decode_step(arch, prec, Workload(prompt_tokens=1, gen_tokens=1))
    assert single / 2 / 1e9 == pytest.approx(3.35 - 0.31, rel=0.05)  # active minus embedding
    batched = bytes_per_decode_step(arch, prec, Workload(prompt_tokens=1, gen_tokens=1, batch=64))
    total = weight_bytes(arch.param_counts(), prec, arch)
    assert single < batched <= total


def test_bandwidth_bound_speed_scales_with_bandwidth() -> None:
    arch, prec = get_model("Llama-3.1-70B"), get_precision("fp8")
    wl = Workload(prompt_tokens=2000, gen_tokens=500, batch=1)
    h100 = decode_speed(arch, prec, wl, sku("H100", 80, "SXM"), 1)
    h200 = decode_speed(arch, prec, wl, sku("H200", 141, "SXM"), 1)
    assert h100 is not None and h200 is not None
    assert h100.bound is Bound.BANDWIDTH and h200.bound is Bound.BANDWIDTH
    assert h200.tokens_per_s / h100.tokens_per_s == pytest.approx(4800 / 3350)
    # ~70 GiB read per step at 3.35 TB/s x 0.75: ~35 tokens/s
    assert 25 < h100.tokens_per_s < 45


def test_large_batches_become_compute_bound() -> None:
    arch, prec = get_model("Llama-3.1-8B"), get_precision("bf16")
    wl = Workload(prompt_tokens=100, gen_tokens=100, batch=1024)
    speed = decode_speed(arch, prec, wl, sku("RTX 4090", 24), 1)
    assert speed is not None and speed.bound is Bound.COMPUTE


def test_unknown_bandwidth_gives_no_speed() -> None:
    arch, prec = get_model("Llama-3.1-8B"), get_precision("bf16")
    wl = Workload(prompt_tokens=100, gen_tokens=100)
    assert decode_speed(arch, prec, wl, None, 1) is None
    assert decode_speed(arch, prec, wl, sku("A10G", 24), 1) is None


def test_cost_per_million_tokens() -> None:
    # 3.60 an hour at 100 tokens/s = 360,000 tokens an hour -> 10.00 per million
    assert cost_per_million_tokens(Decimal("3.60"), 100.0) == Decimal("10.0000")
    assert cost_per_million_tokens(Decimal("3.60"), 0.0) is None
