"""The speed model's confident wrong answers found by the sizing audit, each held at the level
of its rule (findings 2, 5, 7 and 8 of the audit):

* layer-split engines (llama.cpp, HF device_map) run their cards one after another, so one
  step is about one card's speed however many cards hold the model;
* each rank reads the KV share the memory model says it holds (replicas included);
* sliding-window layers cost prompt x window in prefill, not prompt^2;
* a card without a TFLOPS figure has an unknown decode speed, never an uncapped one.
"""

from __future__ import annotations

import json
from dataclasses import replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sizing_kit import build_warehouse, cli_app, offer, run_for
from typer.testing import CliRunner

from gpurent_core.catalog import GpuSku, get_catalog
from gpurent_core.model import PriceBasis
from sizing.checks import SpeedTargets
from sizing.engines import Engine, profile_for
from sizing.memory import estimate_memory, kv_bytes_per_sequence, kv_share_per_gpu
from sizing.models import get_model
from sizing.quant import get_precision
from sizing.speed import (
    BANDWIDTH_EFFICIENCY,
    TP_EFFICIENCY,
    Serving,
    bytes_per_decode_step,
    cost_per_million_tokens,
    decode_speed,
    prefill_flops,
    prefill_seconds,
    serving_latency,
)
from sizing.workload import Workload

runner = CliRunner()


def sku(model: str, vram: int, form: str | None = None) -> GpuSku:
    found = get_catalog().find(model, vram, form)
    assert found is not None
    return found


RTX4090 = sku("RTX 4090", 24)
H200 = sku("H200", 141, "SXM")
H100 = sku("H100", 80, "SXM")
L40S = sku("L40S", 48)
RTX5000ADA = sku("RTX 5000 Ada", 32, "PCIe")  # bandwidth in the catalog, no TFLOPS
LLAMA70 = get_model("llama-3.1-70b")


# ---------------------------------------------------------------- finding 2: layer split


@pytest.mark.parametrize(
    ("engine", "precision"), [(Engine.LLAMACPP, "q4_k_m"), (Engine.HF, "bf16")]
)
def test_layer_split_decode_and_prefill_run_at_one_cards_speed(
    engine: Engine, precision: str
) -> None:
    """The audit's case: llama.cpp was 17.6 tokens/s per user on one RTX 4090 and 31.8,
    63.5, 127 on 2, 4, 8. The cards run their layers in turn: every count is one card's."""
    wl = Workload(prompt_tokens=1000, gen_tokens=200, engine=engine)
    prec = get_precision(precision)
    one = serving_latency(LLAMA70, prec, wl, RTX4090, Serving(1, 1))
    assert one.tokens_per_s_per_user is not None and one.ttft_s is not None
    for cards in (2, 4, 8):
        lat = serving_latency(LLAMA70, prec, wl, RTX4090, Serving(cards, cards))
        assert lat.tokens_per_s_per_user == pytest.approx(one.tokens_per_s_per_user)
        assert lat.ttft_s == pytest.approx(one.ttft_s)
        assert lat.tokens_per_s == pytest.approx(one.tokens_per_s)


def test_layer_split_reads_the_whole_copy_at_one_cards_bandwidth() -> None:
    """Bandwidth-bound at one user: weights + KV at 75 % of one card's bandwidth, with no
    all-reduce discount (nothing runs side by side)."""
    wl = Workload(prompt_tokens=1000, gen_tokens=200, engine=Engine.LLAMACPP)
    prec = get_precision("q4_k_m")
    speed = decode_speed(LLAMA70, prec, wl, RTX4090, 4)
    assert speed is not None
    bandwidth = float(RTX4090.mem_bandwidth_gbps or 0) * 1e9 * BANDWIDTH_EFFICIENCY
    by_hand = bandwidth / bytes_per_decode_step(LLAMA70, prec, wl)
    assert speed.tokens_per_s == pytest.approx(by_hand)
    assert 17 < speed.tokens_per_s < 18.5  # not 63.5


def test_tensor_parallel_still_splits_the_step() -> None:
    """The rule is the engine's: vLLM on the same cards runs them at once (x n x 0.9)."""
    wl = Workload(prompt_tokens=1000, gen_tokens=200)
    bf16 = get_precision("bf16")
    one = serving_latency(LLAMA70, bf16, wl, RTX4090, Serving(1, 1)).tokens_per_s_per_user
    four = serving_latency(LLAMA70, bf16, wl, RTX4090, Serving(4, 4)).tokens_per_s_per_user
    assert one is not None and four is not None
    assert four / one > 3.4


def test_layer_split_copies_still_add_up_and_cost_follows() -> None:
    """More cards per copy buy memory, not speed; more copies buy throughput. Cost per token
    reads the same figure: two layer-split cards at twice the price cost twice per token."""
    prec = get_precision("q4_k_m")
    alone = Workload(prompt_tokens=1000, gen_tokens=200, engine=Engine.LLAMACPP)
    one_card = serving_latency(LLAMA70, prec, alone, RTX4090, Serving(1, 1))
    split = serving_latency(LLAMA70, prec, alone, RTX4090, Serving(2, 2))
    assert one_card.tokens_per_s is not None and split.tokens_per_s is not None
    assert split.tokens_per_s == pytest.approx(one_card.tokens_per_s)
    two_users = Workload(prompt_tokens=1000, gen_tokens=200, batch=2, engine=Engine.LLAMACPP)
    copies = serving_latency(LLAMA70, prec, two_users, RTX4090, Serving(2, 1))
    assert copies.tokens_per_s == pytest.approx(2 * one_card.tokens_per_s)
    per_card = cost_per_million_tokens(Decimal("1.00"), one_card.tokens_per_s)
    two_cards = cost_per_million_tokens(Decimal("2.00"), split.tokens_per_s)
    assert per_card is not None and two_cards is not None
    assert abs(two_cards - 2 * per_card) <= Decimal("0.0002")


def test_a_layer_split_target_is_not_met_by_adding_cards() -> None:
    wl = Workload(prompt_tokens=1000, gen_tokens=200, engine=Engine.LLAMACPP)
    lat = serving_latency(LLAMA70, get_precision("q4_k_m"), wl, RTX4090, Serving(2, 2))
    targets = SpeedTargets(tokens_per_s=30)
    assert not targets.meets(lat)
    [miss] = targets.misses(lat)
    assert miss.endswith("tokens/s per user < 30 target")


@pytest.fixture
def rtx4090s(tmp_path: Path) -> Path:
    """RTX 4090s per card, eight free."""
    acme = run_for("acme")
    return build_warehouse(
        tmp_path / "wh" / "gpurent.duckdb",
        {"acme": [offer(acme, "4090", "RTX 4090", 24, available_count=8)]},
    )


def size(db: Path, *args: str) -> dict[str, Any]:
    base = ["size", "--currency", "USD", "--db", str(db), "--format", "json"]
    result = runner.invoke(cli_app(), [*base, *args])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert isinstance(data, dict)
    return data


def test_size_does_not_promise_a_layer_split_speed(rtx4090s: Path) -> None:
    """`size --engine llamacpp --tokens-per-s 30` said "RTX 4090 x2 meets the targets
    (~31.8 tokens/s per user)"; on cards run in turn it is ~17.6, and no card count helps."""
    data = size(
        rtx4090s, "-m", "llama-3.1-70b", "-p", "q4_k_m", "--engine", "llamacpp",
        "--prompt-tokens", "1000", "--gen-tokens", "200", "--tokens-per-s", "30",
    )  # fmt: skip
    assert data["offers"] == []
    [group] = data["left_out"]
    assert "tokens/s per user < 30 target" in group["reason"]
    assert "would meet it" not in group["reason"]


# ---------------------------------------------------------------- finding 5: replicated KV


def _kv_read(arch_name: str, wl: Workload) -> float:
    """KV one decode step reads, each sequence's once: mid-generation, prompt + half the
    output of its full-length KV."""
    arch = get_model(arch_name)
    mean = wl.prompt_tokens + wl.gen_tokens / 2
    return wl.batch * kv_bytes_per_sequence(arch, wl) * mean / wl.context_tokens


@pytest.mark.parametrize(
    ("name", "precision", "tp"),
    [
        ("deepseek-v3", "fp8", 8),  # MLA: the latent is whole on every rank
        ("glm-4-9b", "bf16", 8),  # 2 KV heads at TP 8: each rank holds half the KV
        ("llama-3.1-70b", "bf16", 8),  # 8 KV heads at TP 8: an eighth, nothing replicated
        ("glm-4-9b", "bf16", 2),
    ],
)
def test_each_rank_reads_the_kv_share_memory_gives_it(name: str, precision: str, tp: int) -> None:
    """One definition: the share of the KV a rank reads per step is the share the memory
    estimate puts on it (its kv_cache over the total)."""
    arch, prec = get_model(name), get_precision(precision)
    wl = Workload(prompt_tokens=30000, gen_tokens=1000, batch=16)
    memory = estimate_memory(arch, prec, wl, tp)
    share = memory.breakdown.kv_cache / memory.kv_total_gib
    assert share == pytest.approx(kv_share_per_gpu(arch, profile_for(wl.engine), tp))
    kv = _kv_read(name, wl)
    weights = bytes_per_decode_step(arch, prec, wl) - kv
    per_rank = weights / tp + kv * share
    bandwidth = float(H200.mem_bandwidth_gbps or 0) * 1e9 * BANDWIDTH_EFFICIENCY * TP_EFFICIENCY
    speed = decode_speed(arch, prec, wl, H200, tp)
    assert speed is not None
    assert speed.tokens_per_s == pytest.approx(wl.batch * bandwidth / per_rank)


def test_the_audit_cases_of_replicated_kv() -> None:
    """DeepSeek-V3 FP8, 16 x (30000 + 1000) on H200 x8: ~46.9 tokens/s per user, not 83.1;
    GLM-4-9B at TP 8, 32 x 31k: ~146, not 450."""
    ds = Workload(prompt_tokens=30000, gen_tokens=1000, batch=16)
    lat = serving_latency(get_model("deepseek-v3"), get_precision("fp8"), ds, H200, Serving(8, 8))
    assert lat.tokens_per_s_per_user == pytest.approx(46.9, abs=0.1)
    glm = Workload(prompt_tokens=30000, gen_tokens=1000, batch=32)
    lat = serving_latency(get_model("glm-4-9b"), get_precision("bf16"), glm, H200, Serving(8, 8))
    assert lat.tokens_per_s_per_user == pytest.approx(146.0, abs=0.1)


# ---------------------------------------------------------------- finding 7: sliding windows

GEMMA27 = get_model("gemma-3-27b")  # 52 of 62 layers see the last 1024 tokens


def _linear_flops(prompt: int) -> float:
    counts = GEMMA27.param_counts()
    return 2 * (counts.active - counts.embedding - counts.lm_head) * prompt


def test_windowed_layers_cost_prompt_times_window() -> None:
    """Per scored (query, key) pair QK^T and AV cost 4 x q_dim FLOPs; a full causal layer
    scores P^2/2 pairs, a windowed one P x W - W^2/2 once P > W."""
    p, w = 100_000, GEMMA27.sliding_window
    assert w is not None and GEMMA27.sliding_window_layers == 52
    full = GEMMA27.attention_layers - 52
    by_hand = _linear_flops(p) + 4 * GEMMA27.q_dim * (full * p * p / 2 + 52 * (p * w - w * w / 2))
    assert prefill_flops(GEMMA27, p) == pytest.approx(by_hand)
    assert prefill_flops(GEMMA27, p) == pytest.approx(6.03e15, rel=0.002)  # not 1.02e16


def test_a_prompt_inside_the_window_is_full_causal_attention() -> None:
    p = 1000  # shorter than the 1024 window: every layer sees every earlier token
    by_hand = _linear_flops(p) + 2 * GEMMA27.attention_layers * GEMMA27.q_dim * p * p
    assert prefill_flops(GEMMA27, p) == pytest.approx(by_hand)


def test_windows_shorten_the_first_token_and_a_target_is_met() -> None:
    """The audit: H100 x1 "first token 20614 ms > 20000 ms target" was left out though it
    takes ~12.2 s; L40S x2 (~18.5 s) already meets 20 s without renting four."""
    wl = Workload(prompt_tokens=100_000, gen_tokens=500)
    bf16 = get_precision("bf16")
    h100 = serving_latency(GEMMA27, bf16, wl, H100, Serving(1, 1))
    l40s = serving_latency(GEMMA27, bf16, wl, L40S, Serving(2, 2))
    assert h100.ttft_s == pytest.approx(12.18, abs=0.05)
    assert l40s.ttft_s == pytest.approx(18.49, abs=0.05)
    assert SpeedTargets(ttft_ms=20000).misses(h100) == []
    assert SpeedTargets(ttft_ms=20000).misses(l40s) == []


def test_transformers_masks_the_window_and_pays_the_full_square() -> None:
    """HF's eager/SDPA attention masks the keys outside the window instead of skipping them:
    its prefill keeps the full P^2 cost, slower than vLLM's on the same card."""
    bf16 = get_precision("bf16")
    vllm = prefill_seconds(GEMMA27, bf16, Workload(prompt_tokens=100_000, gen_tokens=1), H100, 1)
    hf_wl = Workload(prompt_tokens=100_000, gen_tokens=1, engine=Engine.HF)
    hf = prefill_seconds(GEMMA27, bf16, hf_wl, H100, 1)
    assert vllm is not None and hf is not None
    assert hf / vllm == pytest.approx(
        prefill_flops(GEMMA27, 100_000, honour_window=False) / prefill_flops(GEMMA27, 100_000)
    )
    assert hf > 1.6 * vllm


# ---------------------------------------------------------------- finding 8: unknown TFLOPS

QWEN7 = get_model("qwen2.5-7b")
BF16 = get_precision("bf16")


def test_no_tflops_makes_decode_unknown_not_uncapped() -> None:
    """The audit's case: 256 users on an RTX 5000 Ada (576 GB/s, no TFLOPS in the catalog)
    was "meets 20 tokens/s: True" on the bandwidth bound alone."""
    assert RTX5000ADA.compute_tflops is None and RTX5000ADA.mem_bandwidth_gbps is not None
    wl = Workload(prompt_tokens=200, gen_tokens=200, batch=256)
    lat = serving_latency(QWEN7, BF16, wl, RTX5000ADA, Serving(1, 1))
    assert lat.decode is None and lat.tokens_per_s_per_user is None
    targets = SpeedTargets(tokens_per_s=20)
    assert not targets.meets(lat)
    assert targets.misses(lat) == []
    assert targets.unknown(lat) == ["decode speed unknown (no TFLOPS in the GPU catalog)"]


def test_the_bandwidth_ceiling_still_tells_a_miss() -> None:
    """Decode is never faster than its bandwidth bound: a target above it is a known miss,
    though the speed itself cannot be told."""
    wl = Workload(prompt_tokens=200, gen_tokens=200)
    lat = serving_latency(QWEN7, BF16, wl, RTX5000ADA, Serving(1, 1))
    assert lat.decode_ceiling is not None and 30 < lat.decode_ceiling < 31
    targets = SpeedTargets(tokens_per_s=40)
    assert targets.misses(lat) == ["at most 30.5 tokens/s per user < 40 target"]
    assert not targets.meets(lat)


def test_no_bandwidth_is_still_said_as_such() -> None:
    wl = Workload(prompt_tokens=200, gen_tokens=200)
    lat = serving_latency(QWEN7, BF16, wl, None, Serving(1, 1))
    assert SpeedTargets(tokens_per_s=20).unknown(lat) == [
        "decode speed unknown (no bandwidth in the GPU catalog)"
    ]


def test_size_sets_a_card_without_tflops_apart(tmp_path: Path) -> None:
    """Through `size`: the offer is "cannot tell", never ranked as meeting the target."""
    acme = run_for("acme")
    db = build_warehouse(
        tmp_path / "wh" / "gpurent.duckdb",
        {
            "acme": [
                offer(acme, "ada", "RTX 5000 Ada", 32, gpu_form_factor="PCIe",
                      price=Decimal("0.80"), price_basis=PriceBasis.GPU),
            ]
        },
    )  # fmt: skip
    data = size(
        db, "-m", "qwen2.5-7b", "-p", "bf16", "--prompt-tokens", "200", "--gen-tokens", "200",
        "--batch", "64", "--tokens-per-s", "20",
    )  # fmt: skip
    assert data["offers"] == []
    [untold] = data["cannot_tell"]
    assert "decode speed unknown (no TFLOPS in the GPU catalog)" in untold["note"]
    assert untold["tokens_per_s_per_user"] is None


def test_no_bandwidth_leaves_the_first_token_unknown_too() -> None:
    """Prefill is floored by one read of the weights: without bandwidth that floor, and so
    the first token, is unknown, never zero (no catalog card lacks only bandwidth today)."""
    no_bandwidth = replace(H100, mem_bandwidth_gbps=None)
    wl = Workload(prompt_tokens=8, gen_tokens=100)  # a tiny prompt: the read sets the time
    assert prefill_seconds(QWEN7, BF16, wl, H100, 1) is not None
    assert prefill_seconds(QWEN7, BF16, wl, no_bandwidth, 1) is None
    lat = serving_latency(QWEN7, BF16, wl, no_bandwidth, Serving(1, 1))
    targets = SpeedTargets(ttft_ms=5000, tokens_per_s=10)
    assert not targets.meets(lat)
    assert targets.unknown(lat) == [
        "first-token latency unknown (no bandwidth in the GPU catalog)",
        "decode speed unknown (no bandwidth in the GPU catalog)",
    ]
    # With bandwidth but no TFLOPS, TFLOPS is what the first token lacks.
    ada = serving_latency(QWEN7, BF16, wl, RTX5000ADA, Serving(1, 1))
    assert SpeedTargets(ttft_ms=5000).unknown(ada) == [
        "first-token latency unknown (no TFLOPS in the GPU catalog)"
    ]
