"""Placement: TP divides heads, usable memory per card, smallest tier, max concurrency."""

from __future__ import annotations

from dataclasses import replace

import pytest

from sizing.engines import Engine
from sizing.memory import estimate_memory
from sizing.models import get_model
from sizing.placement import (
    choose,
    max_concurrency,
    plan,
    smallest_tier,
    tiers,
    usable_gib,
    valid_degrees,
)
from sizing.quant import get_precision
from sizing.workload import Workload


def test_tp_must_divide_the_attention_heads() -> None:
    wl = Workload(prompt_tokens=1000, gen_tokens=100)
    assert valid_degrees(get_model("Qwen2.5-7B"), wl) == [1, 2, 4]  # 28 heads
    assert valid_degrees(get_model("Qwen2.5-32B"), wl) == [1, 2, 4, 8]  # 40 heads
    assert valid_degrees(get_model("Qwen2.5-1.5B"), wl) == [1, 2, 4]  # 12 heads
    # layer split (HF device_map, llama.cpp) has no head rule
    hf = Workload(prompt_tokens=1000, gen_tokens=100, engine=Engine.HF)
    assert valid_degrees(get_model("Qwen2.5-7B"), hf) == [1, 2, 4, 8]
    with pytest.raises(ValueError, match="divide its 28 attention heads"):
        plan(get_model("Qwen2.5-7B"), get_precision("bf16"), wl, gpus=8)
    with pytest.raises(ValueError, match="one of 1, 2, 4, 8"):
        plan(get_model("Qwen2.5-7B"), get_precision("bf16"), wl, gpus=3)


def test_usable_memory_is_not_the_label() -> None:
    assert usable_gib("H100", 80) == 79.22
    assert usable_gib("RTX 3090", 24) == 23.58
    assert usable_gib("B200", 180) == 178.36
    assert usable_gib("RTX 4090", 24) == pytest.approx(24 * 0.97)
    sizes = [t.vram_gb for t in tiers()]
    assert sizes == sorted(sizes) and {24, 48, 80, 141}.issubset(sizes)
    # a tier is only as large as the least usable card sold at that size
    assert next(t for t in tiers() if t.vram_gb == 80).usable_gib == pytest.approx(77.6)


def test_smallest_tier_and_card_count() -> None:
    # Worked example: Qwen2.5-72B BF16, 32k x 8 -> TP2 2x141GB, TP4 4x80GB, TP8 8x48GB;
    # one 256 GB card (MI325X) also holds it
    placements = plan(
        get_model("Qwen2.5-72B"),
        get_precision("bf16"),
        Workload(prompt_tokens=31000, gen_tokens=1000, batch=8),
    )
    by_tp = {p.tensor_parallel: p for p in placements}
    for p in placements:  # the tier is the smallest whose usable memory holds the need
        assert p.tier is not None and p.estimate.per_gpu_gib <= p.tier.usable_gib
        smaller = [t for t in tiers() if t.vram_gb < p.tier.vram_gb]
        assert all(t.usable_gib < p.estimate.per_gpu_gib for t in smaller)
    assert by_tp[1].tier is not None and by_tp[1].tier.vram_gb == 256
    assert by_tp[2].tier is not None and by_tp[2].tier.vram_gb <= 141
    assert by_tp[4].tier is not None and by_tp[4].tier.vram_gb <= 80
    assert by_tp[8].tier is not None and by_tp[8].tier.vram_gb <= 48
    chosen = choose(placements)
    assert chosen is not None and chosen.tensor_parallel == 1  # fewest cards first
    assert smallest_tier(10_000) is None
    too_big = plan(
        get_model("Llama-3.1-405B"),
        get_precision("bf16"),
        Workload(prompt_tokens=100_000, gen_tokens=1000, batch=64),
    )
    assert choose(too_big) is None  # beyond TP8 of any card: pipeline parallel


def test_max_concurrency_is_the_largest_batch_that_fits() -> None:
    arch, prec = get_model("Llama-3.1-8B"), get_precision("bf16")
    wl = Workload(prompt_tokens=7000, gen_tokens=1000)
    card = usable_gib("H100", 80)
    n = max_concurrency(arch, prec, wl, 1, card)
    # vLLM logged 53.29 GiB of KV on this card (PR #10511): ~426k tokens -> ~52 x 8k
    assert 45 <= n <= 60
    assert estimate_memory(arch, prec, replace(wl, batch=n)).per_gpu_gib <= card
    assert estimate_memory(arch, prec, replace(wl, batch=n + 1)).per_gpu_gib > card
    assert max_concurrency(arch, prec, wl, 1, 10.0) == 0
