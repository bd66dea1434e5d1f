"""GPU memory a workload needs: weights + KV cache + activations + runtime overhead + headroom.

Per GPU, for ``gpus`` cards working on one copy of the model (sizing/README.md, "Method"):

    need = W/n + KV_per_gpu + A + O        recommended = need x (1 + headroom)

Inference terms live here; fine-tuning terms (gradients, optimizer states, checkpointed
activations) in training.py. ``estimate_memory`` picks by ``workload.mode``.
"""

from __future__ import annotations

import math

from sizing.arch import ModelArch
from sizing.engines import (
    HF_TORCH_WORKSPACE_GIB,
    QUANT_WORKSPACE_DEQUANT_COPIES,
    Engine,
    EngineProfile,
    llamacpp_compute_buffer_gib,
    profile_for,
)
from sizing.quant import Precision, kv_bytes_per_element, weight_bytes
from sizing.workload import GIB, Breakdown, MemoryEstimate, Workload


def estimate_memory(
    arch: ModelArch,
    precision: Precision,
    workload: Workload,
    gpus: int = 1,
    *,
    weights_bytes: float | None = None,
) -> MemoryEstimate:
    """Memory per GPU for ``workload`` on ``gpus`` cards (tensor parallel or layer split).

    ``weights_bytes`` replaces the computed weight size with an exact one (a checkpoint's
    ``model.safetensors.index.json`` total_size, or a GGUF file size).
    """
    if gpus < 1:
        raise ValueError("gpus must be >= 1")
    if workload.is_training:
        from sizing.training import estimate_training

        return estimate_training(arch, precision, workload, gpus, weights_bytes=weights_bytes)
    return _estimate_inference(arch, precision, workload, gpus, weights_bytes)


def kv_bytes_per_sequence(arch: ModelArch, workload: Workload) -> float:
    """KV bytes of one sequence at full length, over all layers and heads (one copy)."""
    profile = profile_for(workload.engine)
    tokens = _round_up(workload.context_tokens, profile.kv_block_tokens)
    elements = arch.kv_elements(tokens, materialize_mla=profile.materialises_mla)
    return elements * kv_bytes_per_element(workload.kv_dtype) + arch.linear_state_bytes_per_seq


def kv_share_per_gpu(arch: ModelArch, profile: EngineProfile, gpus: int) -> float:
    """Share of the KV cache each GPU holds.

    Layer split (HF, llama.cpp): each card holds its layers' KV, 1/n. Tensor parallel:
    KV heads are split, and replicated once TP exceeds them; an MLA latent has no heads to
    split and is replicated on every rank (sizing/README.md, "KV cache").
    """
    if gpus == 1:
        return 1.0
    if profile.splits_layers:
        return 1 / gpus
    if arch.is_mla:
        return 1.0
    return max(arch.num_kv_heads / gpus, 1) / arch.num_kv_heads


def prefill_tokens(workload: Workload, profile: EngineProfile) -> int:
    """Tokens in the largest prefill step: the engine's chunk, or batch x prompt (HF)."""
    whole = workload.batch * max(workload.prompt_tokens, 1)
    chunk = workload.prefill_chunk or profile.prefill_chunk
    if chunk is None:
        return whole
    if profile.engine in (Engine.VLLM, Engine.SGLANG):
        # The profile run always processes a full chunk, whatever the requests are.
        return chunk
    return min(chunk, whole)


def activation_bytes(
    arch: ModelArch, workload: Workload, profile: EngineProfile, gpus: int
) -> float:
    """Transient peak of a forward pass on one GPU (sizing/README.md, "Activations")."""
    vocab_logits = arch.vocab_size * 4  # one fp32 logits row
    if profile.engine is Engine.LLAMACPP:
        n_ctx = workload.batch * workload.context_tokens
        return (
            llamacpp_compute_buffer_gib(n_ctx, arch.num_heads) * GIB + workload.batch * vocab_logits
        )
    tokens = prefill_tokens(workload, profile)
    tp = 1 if profile.splits_layers else gpus  # TP shards the MLP width, layer split does not
    per_token = profile.act_bytes_per_ff * _prefill_ff(arch, profile) / tp
    per_token += profile.act_bytes_per_hidden * arch.hidden_size
    if arch.trust_remote_code:
        per_token *= profile.remote_code_activation_factor
    total = tokens * per_token
    sequences = profile.profile_sequences or workload.batch
    total += sequences * vocab_logits
    if workload.full_prompt_logits:
        total += tokens * arch.vocab_size * profile.full_prompt_logits_bytes
    return total


def _prefill_ff(arch: ModelArch, profile: EngineProfile) -> float:
    """MLP width a prefill token's transient scales with.

    Fused-MoE kernels (vLLM/SGLang) hold every token's top-k expert outputs at once. The
    Transformers MoE loop runs one expert at a time on the tokens routed to it, so only
    the shared expert and a share k/E of the routed width are live together.
    """
    if not arch.is_moe or not profile.splits_layers:
        return arch.active_ff
    routed = arch.moe_intermediate_size * arch.experts_per_token / arch.num_experts
    return arch.shared_expert_intermediate_size + routed


def overhead_gib(
    arch: ModelArch, profile: EngineProfile, precision: Precision, gpus: int
) -> tuple[float, float]:
    """(overhead, of which not allocated by torch) per GPU."""
    non_torch = profile.cuda_context_gib + profile.cuda_graphs_gib
    if gpus > 1 and not profile.splits_layers:
        non_torch += profile.multi_gpu_gib
    torch_side = HF_TORCH_WORKSPACE_GIB if profile.engine is Engine.HF else 0.0
    if precision.kernel_workspace:
        torch_side += QUANT_WORKSPACE_DEQUANT_COPIES * largest_linear_params(arch) * 2 / GIB
    return non_torch + torch_side, non_torch


def largest_linear_params(arch: ModelArch) -> int:
    """Weights of the largest single linear layer (an MLP projection, as a rule)."""
    h = arch.hidden_size
    ff = max(arch.intermediate_size, arch.moe_intermediate_size)
    return max(h * ff, h * arch.q_dim)


def _estimate_inference(
    arch: ModelArch,
    precision: Precision,
    workload: Workload,
    gpus: int,
    weights_bytes: float | None,
) -> MemoryEstimate:
    profile = profile_for(workload.engine)
    notes: list[str] = []
    w_total = (
        weights_bytes
        if weights_bytes is not None
        else weight_bytes(arch.param_counts(), precision, arch)
    )
    kv_seq = kv_bytes_per_sequence(arch, workload)
    share = kv_share_per_gpu(arch, profile, gpus)
    kv_gpu = workload.batch * kv_seq * share
    act = activation_bytes(arch, workload, profile, gpus)
    overhead, non_torch = overhead_gib(arch, profile, precision, gpus)
    need = w_total / gpus / GIB + kv_gpu / GIB + act / GIB + overhead
    fraction = workload.headroom_fraction()
    if arch.is_mla and profile.materialises_mla:
        notes.append(
            "Transformers materialises full K/V for MLA (about 70x the latent vLLM/SGLang keep)"
        )
    if arch.is_mla and gpus > 1 and not profile.splits_layers:
        notes.append("the MLA latent cache is replicated on every tensor-parallel rank")
    if not profile.splits_layers and gpus > arch.num_kv_heads and not arch.is_mla:
        notes.append(f"TP {gpus} > {arch.num_kv_heads} KV heads: KV heads are replicated")
    if arch.sliding_window and arch.sliding_window_layers:
        notes.append(
            f"{arch.sliding_window_layers} of {arch.num_layers} layers keep only the last "
            f"{arch.sliding_window} tokens of KV (sliding window)"
        )
    if arch.trust_remote_code and profile.engine is Engine.HF:
        notes.append("custom modeling code (trust_remote_code) measured ~2.3x native activations")
    breakdown = Breakdown(
        weights=w_total / gpus / GIB,
        kv_cache=kv_gpu / GIB,
        activations=act / GIB,
        optimizer=0.0,
        overhead=overhead,
        headroom=workload.headroom_gib(need),
        non_torch=non_torch,
    )
    return MemoryEstimate(
        arch=arch,
        precision=precision,
        workload=workload,
        gpus=gpus,
        breakdown=breakdown,
        headroom_fraction=fraction,
        weights_total_gib=w_total / GIB,
        kv_total_gib=workload.batch * kv_seq / GIB,
        kv_per_sequence_gib=kv_seq * share / GIB,
        notes=tuple(notes),
    )


def _round_up(tokens: int, block: int) -> int:
    return math.ceil(tokens / block) * block if block > 1 else tokens
