"""Decode speed from memory bandwidth, and what a million tokens then cost.

Generating one token per sequence reads every weight the step uses once (shared by the whole
batch) plus each sequence's KV cache, so decode is usually bound by memory bandwidth:

    step time = max(stages x bytes one card reads / (bandwidth x efficiency),
                    batch x 2 x active params / (cards at once x dense TFLOPS x utilisation))
    tokens/s  = batch / step time

How the cards of one copy share a step depends on the engine (``cards_at_once``). Under
tensor parallel (vLLM, SGLang) every card works on its slice of every layer at once: one
stage, n cards at once, each reading 1/n of the weights and its share of the KV cache, the
share the memory model gives it (``sizing.memory.kv_share_per_gpu``: an MLA latent, or a
GQA KV head once TP exceeds the KV heads, is replicated, so every rank reads its own copy).
Under layer split (llama.cpp's default, HF device_map) the cards hold consecutive layers
and a token passes through them in turn: n stages, one card at a time, so one sequence's
step takes about one card's time however many cards hold the model. An MoE model reads
only the experts its tokens are routed to (all of them once a large batch touches every
expert); dense models read every layer. Without the card's TFLOPS the compute cap, and so
the speed, is unknown: the bandwidth bound is then only a ceiling (``Latency.decode_ceiling``).
These are estimates for ranking offers, not benchmarks.

Prefill takes the machine's time too. In the steady state of one copy of the model serving
B users, each sending a prompt of P tokens and generating G, a cycle of the copy is

    cycle = prefill(B prompts of P) + G / decode tokens/s per user
    prefill(B prompts of P) = max(B x compute of one prompt, one read of the weights)

Prefill is compute-bound and the B prompts share the copy's compute (chunked prefill
interleaves them with decode; it does not make them free), so they take B times one
prompt's compute, never less than one read of the weights (a batch of tiny prompts is one
forward pass). Then, per copy,

    tokens/s in all       = B x G / cycle
    requests an hour      = B x 3600 / cycle
    tokens/s per user     = decode speed (while decoding: what each user sees stream)
    first token, alone    = prefill(1 prompt)
    first token, at worst = prefill(B prompts): the last of B prompts sent at once

and a rental of several copies adds them up. Counting decode alone (tokens/s per user x B)
overstates throughput, and so understates cost per token, whenever prompts are long: 16
users of 1000 + 300 tokens on a 70B model over eight RTX 3090s spend 8.7 s of every 13.2-s
cycle in prefill. ``cycle_seconds`` is the one place this formula lives; ``Latency`` and
``sizing.rent_or_api`` both read it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from decimal import ROUND_HALF_EVEN, Decimal
from enum import StrEnum
from fractions import Fraction
from typing import TypeVar

from gpurent_core.catalog import GpuSku
from sizing.arch import ModelArch
from sizing.engines import Engine, profile_for
from sizing.memory import kv_bytes_per_sequence, kv_share_per_gpu
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
    """Bytes read from memory per decode step, all cards together (KV replicas included)."""
    bound: Bound


def cards_at_once(workload: Workload, gpus: int) -> int:
    """Cards of one copy that work on the same step at the same time.

    Tensor parallel: all of them, each on its slice of every layer. Layer split (llama.cpp's
    default ``--split-mode layer``, HF ``device_map``; ``EngineProfile.splits_layers``): one.
    The cards hold consecutive layers and a token goes through them one after another
    (llama.cpp's maintainers: the GPUs run sequentially by default, ggml-org/llama.cpp
    #5619; Transformers' device_map is "naive pipeline parallelism", huggingface/trl #210).
    llama.cpp can overlap the micro-batches of a large prompt batch across its stages
    (ggml-org/llama.cpp #6017), but a decode step of one token per sequence has nothing to
    overlap; prefill is taken the same conservative way (docs/sizing.md)."""
    return 1 if profile_for(workload.engine).splits_layers else gpus


def _split_efficiency(cards: int) -> float:
    """Per-step all-reduces cost TP_EFFICIENCY once several cards work at once; stages run
    in turn hand on one activation per token, which is taken as free."""
    return TP_EFFICIENCY if cards > 1 else 1.0


def _decode_weight_bytes(arch: ModelArch, precision: Precision, workload: Workload) -> float:
    """Weights one decode step of ``workload.batch`` sequences touches (one copy)."""
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
    return total


def _decode_kv_bytes(arch: ModelArch, workload: Workload) -> float:
    """KV one decode step reads, every sequence's once (one copy, no replicas)."""
    # Mid-generation each sequence holds its prompt and half its output.
    mean_context = workload.prompt_tokens + workload.gen_tokens / 2
    full = kv_bytes_per_sequence(arch, workload)
    return workload.batch * full * (mean_context / max(workload.context_tokens, 1))


def bytes_per_decode_step(arch: ModelArch, precision: Precision, workload: Workload) -> float:
    """Weights touched plus KV read in one decode step of ``workload.batch`` sequences, one
    copy of each (what one card alone reads)."""
    return _decode_weight_bytes(arch, precision, workload) + _decode_kv_bytes(arch, workload)


def bytes_per_card_step(
    arch: ModelArch, precision: Precision, workload: Workload, gpus: int
) -> float:
    """Bytes one of ``gpus`` cards reads in a decode step: its 1/n of the weights and the KV
    share the memory model says it holds (``kv_share_per_gpu``, the one definition). A
    replica held on every rank (an MLA latent under TP, GQA heads once TP exceeds them) is
    read on every rank, so it does not shrink with the card count."""
    share = kv_share_per_gpu(arch, profile_for(workload.engine), gpus)
    weights = _decode_weight_bytes(arch, precision, workload) / gpus
    return weights + _decode_kv_bytes(arch, workload) * share


def _decode_memory_s(
    arch: ModelArch, precision: Precision, workload: Workload, sku: GpuSku, gpus: int
) -> float | None:
    """Seconds a decode step spends reading memory; None without the card's bandwidth.

    The cards that work at once read side by side; stages run in turn, so their reads add
    up (layer split: gpus stages of 1/gpus each, the whole copy at one card's bandwidth)."""
    if sku.mem_bandwidth_gbps is None:
        return None
    at_once = cards_at_once(workload, gpus)
    stages = gpus // at_once
    read = stages * bytes_per_card_step(arch, precision, workload, gpus)
    bandwidth = float(sku.mem_bandwidth_gbps) * 1e9 * BANDWIDTH_EFFICIENCY
    return read / (bandwidth * _split_efficiency(at_once))


def _decode_compute_s(
    arch: ModelArch, precision: Precision, workload: Workload, sku: GpuSku, gpus: int
) -> float | None:
    """Seconds a decode step's matmuls take; None without the card's TFLOPS: the cap is
    then unknown, not absent (an unknown is never a yes)."""
    rate = compute_rate(sku, precision)
    if rate is None:
        return None
    flops = workload.batch * 2 * arch.param_counts().active
    return flops / (cards_at_once(workload, gpus) * rate * COMPUTE_UTILISATION)


def decode_speed(
    arch: ModelArch,
    precision: Precision,
    workload: Workload,
    sku: GpuSku | None,
    gpus: int,
) -> DecodeSpeed | None:
    """Estimated decode throughput on ``gpus`` cards of ``sku``; None without bandwidth or
    without TFLOPS (``decode_ceiling`` still bounds it from bandwidth alone)."""
    if sku is None:
        return None
    memory_s = _decode_memory_s(arch, precision, workload, sku, gpus)
    compute_s = _decode_compute_s(arch, precision, workload, sku, gpus)
    if memory_s is None or compute_s is None:
        return None
    step = max(memory_s, compute_s)
    bound = Bound.BANDWIDTH if memory_s >= compute_s else Bound.COMPUTE
    read = gpus * bytes_per_card_step(arch, precision, workload, gpus)
    return DecodeSpeed(tokens_per_s=workload.batch / step, bytes_per_step=read, bound=bound)


def decode_ceiling(
    arch: ModelArch,
    precision: Precision,
    workload: Workload,
    sku: GpuSku | None,
    gpus: int,
) -> float | None:
    """Tokens/s per user the bandwidth alone allows: decode is never faster, whatever the
    compute. Known without TFLOPS, so a target above it is missed even when the speed
    itself cannot be told; None without bandwidth."""
    if sku is None:
        return None
    memory_s = _decode_memory_s(arch, precision, workload, sku, gpus)
    return None if memory_s is None else 1 / memory_s


def cost_per_million_tokens(hourly: Decimal, tokens_per_s: float) -> Decimal | None:
    """Money per million generated tokens at ``tokens_per_s``, rounded to 4 places.

    ``tokens_per_s`` is the rental's throughput in all, prefill included
    (``Latency.tokens_per_s``): the hour pays for prefilling the prompts as well."""
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


def attention_pairs(prompt_tokens: int, window: int | None = None) -> float:
    """(query, key) pairs one causal attention layer scores over a prompt of P tokens.

    Every token sees those before it: P^2 / 2. A sliding window of W lets a token see only
    the last W, so once the prompt outgrows the window the pairs grow with P x W, not P^2:
    W^2 / 2 for the first W tokens, then W for each of the other P - W."""
    p = prompt_tokens
    if window is None or p <= window:
        return p * p / 2
    return p * window - window * window / 2


def windowed_layers(arch: ModelArch) -> int:
    """Attention layers that see only the last ``sliding_window`` tokens: the count the
    memory side caches that way (``ModelArch.kv_elements``)."""
    if not arch.sliding_window:
        return 0
    return min(arch.sliding_window_layers, arch.attention_layers)


def window_skips_compute(engine: Engine) -> bool:
    """Whether the engine's prefill kernels skip the keys outside a sliding window.

    vLLM and SGLang hand the window to FlashAttention (``window_size``; Dao-AILab/
    flash-attention #580), which never scores the keys outside it. llama.cpp keeps only the
    window plus one micro-batch in a windowed layer's KV (ggml-org/llama.cpp #13194), so it
    scores no more than that. Transformers' default attention (eager/SDPA) applies the window
    as a mask on the full score matrix (huggingface/transformers #29777): it still computes
    every pair, so an HF prefill pays the full square (only flash_attention_2 would not)."""
    return engine is not Engine.HF


def prefill_flops(arch: ModelArch, prompt_tokens: int, *, honour_window: bool = True) -> float:
    """FLOPs to prefill one prompt: 2 x the matmul parameters per token (the embedding is a
    lookup, the lm_head runs on the last token only) plus causal attention: QK^T and AV,
    2 x 2 x q_dim FLOPs for each (query, key) pair a layer scores (``attention_pairs``:
    the square of the prompt halved by the causal mask on full layers, prompt x window on
    sliding-window ones). ``honour_window=False`` charges every layer the full square (an
    engine that masks the window instead of skipping it, ``window_skips_compute``)."""
    counts = arch.param_counts()
    matmul = counts.active - counts.embedding - counts.lm_head
    linear = 2 * matmul * prompt_tokens
    windowed = windowed_layers(arch) if honour_window else 0
    full = arch.attention_layers - windowed
    pairs = full * attention_pairs(prompt_tokens) + windowed * attention_pairs(
        prompt_tokens, arch.sliding_window
    )
    return float(linear + 4 * arch.q_dim * pairs)


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
    arch: ModelArch,
    precision: Precision,
    workload: Workload,
    sku: GpuSku | None,
    gpus: int,
    prompts: int = 1,
) -> float | None:
    """Seconds to prefill ``prompts`` prompts of ``workload.prompt_tokens`` together on
    ``gpus`` cards: their compute at PREFILL_EFFICIENCY of the TFLOPS of the cards that work
    at once (the prompts share it, so ``prompts`` x one prompt's), never less than reading
    the weights once (one forward pass can hold them all). Layer split runs its stages in
    turn (``cards_at_once``): one card's compute and bandwidth, however many hold the model.
    None without TFLOPS or bandwidth: either may set the time, and an unknown figure is
    never taken as no limit.

    One prompt (the default) is the first token of a user whose prompt finds the copy free;
    a copy's whole batch is the first token of the last of its users when all send at once,
    and the prefill share of every steady-state cycle (``cycle_seconds``)."""
    if sku is None or sku.mem_bandwidth_gbps is None:
        return None
    rate = compute_rate(sku, precision)
    if rate is None:
        return None
    at_once = cards_at_once(workload, gpus)
    efficiency = _split_efficiency(at_once)
    flops = prefill_flops(
        arch,
        max(workload.prompt_tokens, 1),
        honour_window=window_skips_compute(workload.engine),
    )
    compute_s = flops / (at_once * rate * PREFILL_EFFICIENCY * efficiency)
    weights = weight_bytes(arch.param_counts(), precision, arch)
    bandwidth = float(sku.mem_bandwidth_gbps) * 1e9 * BANDWIDTH_EFFICIENCY
    read_s = weights / (at_once * bandwidth * efficiency)
    return max(max(prompts, 1) * compute_s, read_s)


Seconds = TypeVar("Seconds", float, Fraction)


def cycle_seconds(
    batch_prefill_s: Seconds, gen_tokens: int, tokens_per_s_per_user: Seconds
) -> Seconds:
    """One steady-state cycle of a copy of the model: prefill every prompt of its batch
    (``prefill_seconds(..., prompts=batch)``), then decode ``gen_tokens`` for them all at
    the decode speed each user sees. Floats for the answer's estimates, exact fractions for
    the money of ``sizing.rent_or_api``; the one place the cycle is defined (module docstring)."""
    return batch_prefill_s + gen_tokens / tokens_per_s_per_user


def per_hour(users: int, cycle_s: Seconds) -> Seconds:
    """Requests an hour: every user sends one each cycle."""
    return users * 3600 / cycle_s


def output_tokens_per_s(users: int, gen_tokens: int, cycle_s: Seconds) -> Seconds:
    """Generated tokens a second, every user together: ``gen_tokens`` each per cycle."""
    return users * gen_tokens / cycle_s


@dataclass(frozen=True)
class Latency:
    """What users see on a placement, at the workload's concurrency, and what the rental
    serves in the steady state (module docstring: the cycle)."""

    ttft_s: float | None
    """Time to first token of a prompt alone (its prefill, the copy otherwise idle); None
    without TFLOPS."""
    decode: DecodeSpeed | None
    """Decode of the ``batch`` sequences one copy of the model serves; None without bandwidth."""
    batch: int
    """Sequences one copy serves at once."""
    ttft_worst_s: float | None
    """First token of the last of ``batch`` prompts sent to one copy at once: the prefill of
    them all, and the prefill share of every cycle. Equal to ``ttft_s`` at one user."""
    gen_tokens: int
    """Tokens each user generates per request."""
    users: int | None = None
    """Sequences the whole rental serves (several copies); None: one copy serves them all."""
    decode_ceiling: float | None = None
    """Tokens/s per user the bandwidth alone allows (``decode_ceiling``): decode is never
    faster. Kept when the card's TFLOPS, and so ``decode``, are unknown, so that a target
    above it is still a known miss; None without bandwidth."""

    @property
    def tokens_per_s_per_user(self) -> float | None:
        """Decode speed each user sees once its first token is out."""
        return None if self.decode is None else self.decode.tokens_per_s / self.batch

    @property
    def cycle_s(self) -> float | None:
        """One steady-state cycle of a copy (``cycle_seconds``); None when a figure is
        unknown or nothing decodes."""
        per_user = self.tokens_per_s_per_user
        if self.ttft_worst_s is None or per_user is None or per_user <= 0:
            return None
        return cycle_seconds(self.ttft_worst_s, self.gen_tokens, per_user)

    @property
    def tokens_per_s(self) -> float | None:
        """Generated tokens a second, every user together over every copy the rental holds,
        prefill included; None when the first token or decode speed is unknown."""
        cycle = self.cycle_s
        return (
            None if cycle is None else output_tokens_per_s(self.all_users, self.gen_tokens, cycle)
        )

    @property
    def requests_per_hour(self) -> float | None:
        """Requests an hour the rental serves at full load, every copy together."""
        cycle = self.cycle_s
        return None if cycle is None else per_hour(self.all_users, cycle)

    @property
    def all_users(self) -> int:
        return self.users or self.batch


def latency(
    arch: ModelArch, precision: Precision, workload: Workload, sku: GpuSku | None, gpus: int
) -> Latency:
    return Latency(
        ttft_s=prefill_seconds(arch, precision, workload, sku, gpus),
        decode=decode_speed(arch, precision, workload, sku, gpus),
        batch=workload.batch,
        ttft_worst_s=prefill_seconds(arch, precision, workload, sku, gpus, workload.batch),
        gen_tokens=workload.gen_tokens,
        decode_ceiling=decode_ceiling(arch, precision, workload, sku, gpus),
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
    """What a user sees on a rental: prefill on each copy's ``tensor_parallel`` cards (all
    at once under tensor parallel, in turn under layer split: ``cards_at_once``), decode of one
    copy's share of the users (the busiest copy's, when they do not divide evenly, for every
    copy: the throughput is then a little understated, never overstated)."""
    users = workload.batch
    share = serving.users_per_copy(users)
    per_copy = replace(workload, batch=share)
    tp = serving.tensor_parallel
    return Latency(
        ttft_s=prefill_seconds(arch, precision, per_copy, sku, tp),
        decode=decode_speed(arch, precision, per_copy, sku, tp),
        batch=share,
        ttft_worst_s=prefill_seconds(arch, precision, per_copy, sku, tp, share),
        gen_tokens=workload.gen_tokens,
        users=users,
        decode_ceiling=decode_ceiling(arch, precision, per_copy, sku, tp),
    )
