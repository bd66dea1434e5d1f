"""GPU memory for fine-tuning: LoRA, QLoRA and full fine-tuning (SIZING.md §1.5).

Per GPU, with gradient checkpointing (every trainer people rent cards for turns it on):

    weights    base model (16-bit for LoRA/full, 4-bit linears for QLoRA)
    optimizer  LoRA adapters at 16 B/param (fp32 weight, grad, Adam m and v); trained
               embeddings at 12 B/param (fp32 grad, m, v); full fine-tuning 18 B/param on
               top of the bf16 weight (bf16 grad 2, fp32 master 4, m and v 8, fp32
               gradient partition 4: DeepSpeed's mixed-precision layout)
    activations  tokens x (2 L h checkpoints + 7.5 ff + 20 h recompute + 12 V logits:
                 bf16 logits 2 + fp32 upcast 4 + log-softmax kept for backward 4 + bf16
                 grad 2; SIZING.md's 10 V runs ~20 % low on Qwen's LoRA profiles)
    overhead   a fixed runtime share plus ZeRO-3's gathered layers

On several GPUs the model is sharded with ZeRO-3 (weights and optimizer divided by n),
unless ``replicate_across_gpus`` asks for data-parallel replicas.
"""

from __future__ import annotations

from sizing.arch import ModelArch
from sizing.engines import Mode
from sizing.quant import Precision, get_precision, weight_bytes
from sizing.workload import GIB, Breakdown, MemoryEstimate, Workload

LORA_BYTES_PER_PARAM = 16
TRAINED_BASE_BYTES_PER_PARAM = 12
FULL_EXTRA_BYTES_PER_PARAM = 18

TRAIN_RUNTIME_GIB = 2.5
"""Per GPU: CUDA context, cuBLAS/cuDNN workspaces, optimizer temporaries, allocator slack
(SIZING.md §1.5; Qwen's LoRA profiles sit 2-4 GiB above weights + adapters + tokens)."""
TRAIN_CONTEXT_GIB = 0.75
"""The CUDA-context part of TRAIN_RUNTIME_GIB (not allocated by torch)."""
DEEPSPEED_BUCKET_GIB = 2e8 * 2 * 2 * 4.5 / 2**30
"""Single-GPU full fine-tuning runs DeepSpeed ZeRO-2 with overlap_comm, which keeps 4.5 x
the allgather and reduce buckets (2e8 elements each in Qwen's ds_config_zero2.json) in
16-bit: 3.35 GiB (DeepSpeed ZeRO docs, "overlap_comm")."""
TRAIN_SLACK_BYTES_PER_PARAM = 0.14
"""Autograd and allocator overhead that grows with the frozen base: Qwen's LoRA/QLoRA
profiles at 256 tokens sit 2.1 (1.8B), 3.1-3.5 (7B), 4.4-5.9 (14B) and 11 GiB (72B)
above weights + adapters + tokens, about 2.5 GiB + 0.14 B per base parameter."""


def lora_params(arch: ModelArch, rank: int) -> int:
    """Adapter parameters for LoRA on every linear layer: rank x (in + out) per matrix."""
    h = arch.hidden_size
    if arch.is_mla:
        attention = rank * (2 * h + arch.q_dim + arch.num_heads * arch.v_head_dim) * 2
    else:
        attention = rank * ((h + arch.q_dim) * 2 + (h + arch.kv_dim) * 2)
    dense_layers = arch.num_layers - arch.moe_layers
    mlp = dense_layers * arch.mlp_matrices * rank * (h + arch.intermediate_size)
    if arch.is_moe:
        per_expert = arch.mlp_matrices * rank * (h + arch.moe_intermediate_size)
        shared = (
            arch.mlp_matrices * rank * (h + arch.shared_expert_intermediate_size)
            if arch.shared_expert_intermediate_size
            else 0
        )
        mlp += arch.moe_layers * (arch.num_experts * per_expert + shared)
    return arch.num_layers * attention + mlp


def activation_bytes_per_token(arch: ModelArch) -> float:
    """Checkpointed activations, one layer's recompute and the logits, per token (bytes)."""
    h, layers = arch.hidden_size, arch.num_layers
    return 2 * layers * h + 7.5 * arch.active_ff + 20 * h + 12 * arch.vocab_size


def zero3_gather_bytes(arch: ModelArch) -> float:
    """ZeRO-3 gathers whole 16-bit layers to run them: the current and the prefetched one,
    and the embedding/lm_head (the largest single module)."""
    counts = arch.param_counts()
    per_layer = (counts.attention_linear + counts.mlp_linear) / arch.num_layers
    return 2 * (per_layer + counts.embedding) * 2


def base_precision(precision: Precision, mode: Mode) -> tuple[Precision, str | None]:
    """The base weights' precision for a training mode, and a note when it was changed."""
    if mode is Mode.QLORA and not precision.is_quantised:
        return get_precision("nf4"), "QLoRA: base weights as bitsandbytes NF4"
    if mode is Mode.FULL and precision.is_quantised:
        raise ValueError("full fine-tuning trains 16-bit weights: use --precision bf16")
    if mode is Mode.LORA and precision.is_quantised:
        return precision, f"LoRA on {precision.name} base weights is QLoRA"
    return precision, None


def estimate_training(
    arch: ModelArch,
    precision: Precision,
    workload: Workload,
    gpus: int,
    *,
    weights_bytes: float | None = None,
) -> MemoryEstimate:
    precision, note = base_precision(precision, workload.mode)
    notes = [note] if note else []
    counts = arch.param_counts()
    w_total = weights_bytes if weights_bytes is not None else weight_bytes(counts, precision, arch)
    if workload.mode is Mode.FULL:
        states = counts.total * FULL_EXTRA_BYTES_PER_PARAM
    else:
        states = lora_params(arch, workload.lora_rank) * LORA_BYTES_PER_PARAM
        if workload.train_embeddings:
            states += (counts.embedding + counts.lm_head) * TRAINED_BASE_BYTES_PER_PARAM
    sharded = gpus > 1 and not workload.replicate_across_gpus
    shards = gpus if sharded else 1
    tokens = workload.batch * workload.context_tokens
    activations = tokens * activation_bytes_per_token(arch)
    overhead = TRAIN_RUNTIME_GIB + counts.total * TRAIN_SLACK_BYTES_PER_PARAM / shards / GIB
    if sharded:
        overhead += zero3_gather_bytes(arch) / GIB
    elif workload.mode is Mode.FULL:
        overhead += DEEPSPEED_BUCKET_GIB
        notes.append(f"DeepSpeed ZeRO-3 across {gpus} GPUs: weights and optimizer sharded")
    elif gpus > 1:
        notes.append(f"{gpus} data-parallel replicas: each GPU holds the whole model")
    if arch.is_moe and workload.mode is not Mode.FULL:
        notes.append("LoRA on every expert's linears; adapters on attention only need far less")
    notes.append("gradient checkpointing on; fused/chunked-loss trainers (Unsloth) use less")
    need = (w_total + states) / shards / GIB + activations / GIB + overhead
    fraction = workload.headroom_fraction()
    breakdown = Breakdown(
        weights=w_total / shards / GIB,
        kv_cache=0.0,
        activations=activations / GIB,
        optimizer=states / shards / GIB,
        overhead=overhead,
        headroom=workload.headroom_gib(need),
        non_torch=TRAIN_CONTEXT_GIB,
    )
    return MemoryEstimate(
        arch=arch,
        precision=precision,
        workload=workload,
        gpus=gpus,
        breakdown=breakdown,
        headroom_fraction=fraction,
        weights_total_gib=w_total / GIB,
        kv_total_gib=0.0,
        kv_per_sequence_gib=0.0,
        notes=tuple(notes),
    )
