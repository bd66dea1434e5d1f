"""Decode speed from memory bandwidth, and what a million tokens then cost.

Generating one token per sequence reads every weight the step uses once (shared by the whole
batch) plus each sequence's KV cache, so decode is usually bound by memory bandwidth:

    step time = max(bytes read / (n x bandwidth x efficiency),
                    batch x 2 x active params / (n x dense TFLOPS x utilisation))
    tokens/s  = batch / step time

An MoE model reads only the experts its tokens are routed to (all of them once a large
batch touches every expert); dense models read every layer. These are estimates for
ranking offers, not benchmarks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from decimal import ROUND_HALF_EVEN, Decimal
from enum import StrEnum

from gpurent_core.catalog import GpuSku
from sizing.arch import ModelArch
from sizing.memory import kv_bytes_per_sequence
from sizing.quant import Precision, WeightScope, weight_bytes
from sizing.workload import Workload

BANDWIDTH_EFFICIENCY = 0.75
"""Share of the datasheet bandwidth decode kernels reach (typically 70-80 %)."""
COMPUTE_UTILISATION = 0.5
"""Share of dense tensor TFLOPS a large decode batch reaches."""
TP_EFFICIENCY = 0.9
"""Per-step all-reduces cost about a tenth of the step once more than one card works."""


class Bound(StrEnum):
    """What limits decode speed on a card."""

    BANDWIDTH = "bandwidth"
    """Reading weights and KV from memory: a faster-memory card decodes faster."""
    COMPUTE = "compute"
    """Tensor-core throughput: more bandwidth buys nothing at this batch."""


@dataclass(frozen=True)
class DecodeSpeed:
    tokens_per_s: float
    """All sequences together."""
    bytes_per_step: float
    """Bytes read from memory per decode step (all cards together)."""
    bound: Bound


def bytes_per_decode_step(arch: ModelArch, precision: Precision, workload: Workload) -> float:
    """Weights touched plus KV read in one decode step of ``workload.batch`` sequences."""
    counts = arch.param_counts()
    total = weight_bytes(counts, precision, arch)
    # The input embedding is a lookup (a few rows), not a read of the whole table.
    embedding_bits = precision.bits if precision.scope is WeightScope.ALL else 16
    if not arch.tie_word_embeddings:
        total -= counts.embedding * embedding_bits / 8
    total -= counts.vision * 2
    if arch.is_moe:
        linear_bits = precision.bits
        expert = arch.mlp_matrices * arch.hidden_size * arch.moe_intermediate_size
        routed = arch.moe_layers * arch.num_experts * expert * linear_bits / 8
        share = arch.experts_per_token / arch.num_experts
        touched = 1 - (1 - share) ** workload.batch
        total -= routed * (1 - touched)
    # Mid-generation each sequence holds its prompt and half its output.
    mean_context = workload.prompt_tokens + workload.gen_tokens / 2
    full = kv_bytes_per_sequence(arch, workload)
    kv = workload.batch * full * (mean_context / max(workload.context_tokens, 1))
    return total + kv


def decode_speed(
    arch: ModelArch,
    precision: Precision,
    workload: Workload,
    sku: GpuSku | None,
    gpus: int,
) -> DecodeSpeed | None:
    """Estimated decode throughput on ``gpus`` cards of ``sku``; None without bandwidth."""
    if sku is None or sku.mem_bandwidth_gbps is None:
        return None
    efficiency = BANDWIDTH_EFFICIENCY * (TP_EFFICIENCY if gpus > 1 else 1.0)
    read = bytes_per_decode_step(arch, precision, workload)
    memory_s = read / (gpus * float(sku.mem_bandwidth_gbps) * 1e9 * efficiency)
    compute_s = 0.0
    rate = compute_rate(sku, precision)
    if rate is not None:
        flops = workload.batch * 2 * arch.param_counts().active
        compute_s = flops / (gpus * rate * COMPUTE_UTILISATION)
    step = max(memory_s, compute_s)
    bound = Bound.BANDWIDTH if memory_s >= compute_s else Bound.COMPUTE
    return DecodeSpeed(tokens_per_s=workload.batch / step, bytes_per_step=read, bound=bound)


def cost_per_million_tokens(hourly: Decimal, tokens_per_s: float) -> Decimal | None:
    """Money per million generated tokens at ``tokens_per_s``, rounded to 4 places."""
    if tokens_per_s <= 0:
        return None
    rate = Decimal(str(round(tokens_per_s, 3)))
    if rate <= 0:
        return None
    value = hourly * Decimal(1_000_000) / (rate * 3600)
    return value.quantize(Decimal("0.0001"), rounding=ROUND_HALF_EVEN)


# ---------------------------------------------------------------- the speed step: TTFT too

PREFILL_EFFICIENCY = 0.5
"""Share of dense tensor TFLOPS a prefill reaches (model FLOPs utilisation). Prefill is
large GEMMs: vLLM and SGLang reach 40-60 % of the datasheet figure on H100/A100, less on
small prompts; 0.5 is the middle, the same figure decode's compute cap uses."""


def prefill_flops(arch: ModelArch, prompt_tokens: int) -> float:
    """FLOPs to prefill one prompt: 2 x the matmul parameters per token (the embedding is a
    lookup, the lm_head runs on the last token only) plus causal attention, which grows with
    the square of the prompt (QK^T and AV, halved by the causal mask)."""
    counts = arch.param_counts()
    matmul = counts.active - counts.embedding - counts.lm_head
    linear = 2 * matmul * prompt_tokens
    attention = 2 * arch.attention_layers * arch.q_dim * prompt_tokens**2
    return float(linear + attention)


def compute_rate(sku: GpuSku, precision: Precision) -> float | None:
    """Dense FLOP/s of one card for this precision, None when the catalog has no figure.

    FP8 runs at the card's FP8 tensor figure where it has FP8 tensor cores and the catalog
    gives that figure (it is not always twice BF16: Gaudi 3). Everything else computes in
    16 bits: weight-only int4/int8 formats, and FP8 checkpoints on Ampere, which vLLM runs
    weight-only through Marlin (FP8 weights, BF16 maths, no FP8 speed-up). A card without
    tensor cores computes at its FP32 vector figure (``GpuSku.compute_tflops``)."""
    if precision.family == "fp8" and sku.fp8 and sku.fp8_dense_tflops is not None:
        return float(sku.fp8_dense_tflops) * 1e12
    tflops = sku.compute_tflops
    return None if tflops is None else float(tflops) * 1e12


def prefill_seconds(
    arch: ModelArch, precision: Precision, workload: Workload, sku: GpuSku | None, gpus: int
) -> float | None:
    """Seconds to first token for one request: its prompt's prefill at PREFILL_EFFICIENCY of
    the cards' TFLOPS, and never less than reading the weights once. None without TFLOPS.
    Waiting behind other users' prompts is not counted (chunked prefill interleaves them)."""
    if sku is None:
        return None
    rate = compute_rate(sku, precision)
    if rate is None:
        return None
    tp = TP_EFFICIENCY if gpus > 1 else 1.0
    compute_s = prefill_flops(arch, max(workload.prompt_tokens, 1)) / (
        gpus * rate * PREFILL_EFFICIENCY * tp
    )
    read_s = 0.0
    if sku.mem_bandwidth_gbps is not None:
        weights = weight_bytes(arch.param_counts(), precision, arch)
        read_s = weights / (gpus * float(sku.mem_bandwidth_gbps) * 1e9 * BANDWIDTH_EFFICIENCY * tp)
    return max(compute_s, read_s)


@dataclass(frozen=True)
class Latency:
    """What one user sees on a placement, at the workload's concurrency."""

    ttft_s: float | None
    """Time to first token (prefill of the user's prompt); None without TFLOPS."""
    decode: DecodeSpeed | None
    """Decode of the ``batch`` sequences one copy of the model serves; None without bandwidth."""
    batch: int
    """Sequences one copy serves at once."""
    users: int | None = None
    """Sequences the whole rental serves (several copies); None: one copy serves them all."""

    @property
    def tokens_per_s_per_user(self) -> float | None:
        return None if self.decode is None else self.decode.tokens_per_s / self.batch

    @property
    def tokens_per_s(self) -> float | None:
        """Every user together, over every copy of the model the rental holds."""
        per_user = self.tokens_per_s_per_user
        return None if per_user is None else per_user * (self.users or self.batch)


def latency(
    arch: ModelArch, precision: Precision, workload: Workload, sku: GpuSku | None, gpus: int
) -> Latency:
    return Latency(
        ttft_s=prefill_seconds(arch, precision, workload, sku, gpus),
        decode=decode_speed(arch, precision, workload, sku, gpus),
        batch=workload.batch,
    )


@dataclass(frozen=True)
class Serving:
    """How a rental of ``cards`` cards serves the workload: one copy of the model per
    ``tensor_parallel`` cards, the users shared between the copies."""

    cards: int
    tensor_parallel: int

    def __post_init__(self) -> None:
        if self.tensor_parallel < 1 or self.cards < self.tensor_parallel:
            raise ValueError("a rental needs at least tensor_parallel cards")

    def copies(self, users: int) -> int:
        """Copies that get users: cards // tensor_parallel, never more than the users."""
        return max(1, min(self.cards // self.tensor_parallel, users))

    def users_per_copy(self, users: int) -> int:
        return math.ceil(users / self.copies(users))


def serving_latency(
    arch: ModelArch, precision: Precision, workload: Workload, sku: GpuSku | None, serving: Serving
) -> Latency:
    """What a user sees on a rental: prefill on ``tensor_parallel`` cards, decode of one
    copy's share of the users (the busiest copy's, when they do not divide evenly)."""
    users = workload.batch
    share = serving.users_per_copy(users)
    per_copy = replace(workload, batch=share)
    tp = serving.tensor_parallel
    return Latency(
        ttft_s=prefill_seconds(arch, precision, per_copy, sku, tp),
        decode=decode_speed(arch, precision, per_copy, sku, tp),
        batch=share,
        users=users,
    )
