"""GPU memory for fine-tuning: LoRA, QLoRA and full fine-tuning.

Formulas and their sources: sizing/README.md, "Fine-tuning".

Per GPU, with gradient checkpointing (every trainer people rent cards for turns it on):

    weights    base model (16-bit for LoRA/full, 4-bit linears for QLoRA)
    optimizer  LoRA adapters at 16 B/param (fp32 weight, grad, Adam m and v); trained
               embeddings at 12 B/param (fp32 grad, m, v); full fine-tuning 18 B/param on
               top of the bf16 weight (bf16 grad 2, fp32 master 4, m and v 8, fp32
               gradient partition 4: DeepSpeed's mixed-precision layout)
    activations  tokens x (2 L h checkpoints + 7.5 ff + 20 h recompute + 16 V logits:
                 bf16 logits 2 + fp32 upcast 4 + fp32 log-softmax 4 + fp32 and bf16
                 grads 6 = 16 V on Transformers >= 4.45; 12 V on older ones)
    overhead   a fixed runtime share plus ZeRO-3's gathered layers

On several GPUs the model is sharded with ZeRO-3 (weights and optimizer divided by n),
unless ``replicate_across_gpus`` asks for data-parallel replicas.
"""

from __future__ import annotations

from sizing.arch import ModelArch
from sizing.engines import Mode
from sizing.quant import Precision, get_precision, weight_bytes
from sizing.workload import GIB, Breakdown, MemoryEstimate, Workload

TRAINED_BASE_BYTES_PER_PARAM = 12
"""Trained embeddings / lm_head of a LoRA(emb) run: fp32 gradient 4 + Adam m, v 8."""

TRAIN_RUNTIME_GIB = 2.5
"""Per GPU: CUDA context, cuBLAS/cuDNN workspaces, optimizer temporaries, allocator slack
(Qwen's LoRA profiles sit 2-4 GiB above weights + adapters + tokens; sizing/README.md,
"Fine-tuning")."""
TRAIN_CONTEXT_GIB = 0.75
"""The CUDA-context part of TRAIN_RUNTIME_GIB (not allocated by torch)."""
DEEPSPEED_BUCKET_GIB = 2e8 * 2 * 2 * 4.5 / 2**30
"""Single-GPU full fine-tuning runs DeepSpeed ZeRO-2 with overlap_comm, which keeps 4.5 x
the allgather and reduce buckets (2e8 elements each in Qwen's ds_config_zero2.json) in
16-bit: 3.35 GiB (DeepSpeed ZeRO docs, "overlap_comm")."""
RESERVED_SHARE = 0.07
"""PyTorch's caching allocator keeps memory reserved beyond what is allocated: blocks are
rounded up and split as shards load and optimizer states appear, and nvidia-smi-style
readings count the reserve. About 7 % of the resident weight bytes (Qwen's LoRA and QLoRA
profiles at 256 tokens sit 5-9 % of the weights above weights + states + context; PyTorch's
CUDA memory notes on fragmentation). Proportional to bytes, not parameters: a 4-bit base has a
quarter of the reserve of a 16-bit one."""

# Bytes per parameter of full fine-tuning with mixed-precision AdamW (ZeRO paper, Rajbhandari
# et al. 2020, section 3.1; EleutherAI "Transformer Math 101"):
FULL_GRADIENT_BYTES = 2
"""bf16 gradients."""
FULL_OPTIMIZER_BYTES = 12
"""fp32 master weights 4 + Adam m 4 + v 4 (8 without a master copy, pure-bf16 trainers)."""
DEEPSPEED_FP32_GRAD_BYTES = 4
"""DeepSpeed ZeRO-1/2/3 keeps an fp32 copy of each gradient partition for the optimizer
step (``single_partition_of_fp32_groups`` grads): 2 + 2 + 12 + 4 = 20 B/param in all."""
LORA_BYTES_PER_PARAM = 16
"""Adapters are trained in fp32 (PEFT upcasts them): weight 4 + gradient 4 + Adam m, v 8."""

QLORA_FP32_NON_QUANTISED = True
"""PEFT's prepare_model_for_kbit_training casts every non-quantised bitsandbytes-model
parameter (embeddings, lm_head, norms) to fp32; it skips GPTQ models."""

LAYER_SAVED_BYTES_PER_H = 8
LAYER_SAVED_BYTES_PER_Q = 4
LAYER_SAVED_BYTES_PER_KV = 4
LAYER_SAVED_BYTES_PER_FF = 8
"""Without checkpointing, a Llama-style block keeps for backward, in bf16, per token: the two
norm inputs and the two projection inputs (8 h), q and the attention output (4 q), k and v
(4 kv), and gate, up, act(gate) and the down projection's input (8 ff). FlashAttention keeps
no T x T matrix (Korthikanti et al. 2022 count 34 h per GPT layer the same way)."""


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


LOGITS_BYTES_PER_VOCAB = 16
"""Per token, Transformers >= 4.45 (``loss_function``): bf16 logits 2, the fp32 upcast the
loss runs on 4, the fp32 log-softmax kept for backward 4, and in backward the fp32
gradient of the log-probabilities 4 plus its bf16 cast 2 while the upcast is freed.
Unsloth's Hugging Face + FA2 baseline (Llama 3.1 8B QLoRA, 128k vocab) rises ~2.6 MB per
token of context, of which ~0.45 MB is the layers: 16-17 B per vocab entry."""
LEGACY_LOGITS_BYTES_PER_VOCAB = 12
"""Older Transformers (< 4.45, ``full_prompt_logits``): Qwen1's remote code ran the loss on
the bf16 logits; Qwen's LoRA profiles (Transformers 4.32) rise 12-14 B per vocab entry."""


def logits_bytes_per_vocab(workload: Workload) -> int:
    """Loss-path bytes per token per vocabulary entry for the workload's Transformers."""
    return LEGACY_LOGITS_BYTES_PER_VOCAB if workload.full_prompt_logits else LOGITS_BYTES_PER_VOCAB


def layer_bytes_per_token(arch: ModelArch) -> float:
    """What one block keeps for backward per token (bytes), without checkpointing."""
    return (
        LAYER_SAVED_BYTES_PER_H * arch.hidden_size
        + LAYER_SAVED_BYTES_PER_Q * arch.q_dim
        + LAYER_SAVED_BYTES_PER_KV * arch.kv_dim
        + LAYER_SAVED_BYTES_PER_FF * arch.active_ff
    )


def layer_activation_bytes_per_token(arch: ModelArch, checkpointing: bool) -> float:
    """Activations of the blocks per token (bytes). With checkpointing: every block's bf16
    input plus one block recomputed during backward (7.5 ff + 20 h, Qwen's LoRA slopes);
    without: every block's saved tensors."""
    h, layers = arch.hidden_size, arch.num_layers
    if checkpointing:
        return 2 * layers * h + 7.5 * arch.active_ff + 20 * h
    return layers * layer_bytes_per_token(arch)


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


def _weights_bytes(
    arch: ModelArch, precision: Precision, mode: Mode, given: float | None
) -> tuple[float, str | None]:
    """Base weights as trained: bitsandbytes QLoRA keeps its non-quantised tensors in fp32."""
    counts = arch.param_counts()
    w = given if given is not None else weight_bytes(counts, precision, arch)
    if mode is Mode.QLORA and precision.family == "bnb" and QLORA_FP32_NON_QUANTISED:
        extra = counts.sixteen_bit * 2
        return w + extra, "QLoRA (bitsandbytes): embeddings, lm_head and norms cast to fp32"
    return w, None


def _states_bytes(arch: ModelArch, workload: Workload) -> tuple[float, float, float]:
    """(gradients, optimizer states, DeepSpeed fp32 gradient copy), all GPUs together."""
    counts = arch.param_counts()
    if workload.mode is Mode.FULL:
        return (
            counts.total * FULL_GRADIENT_BYTES,
            counts.total * FULL_OPTIMIZER_BYTES,
            counts.total * DEEPSPEED_FP32_GRAD_BYTES,
        )
    adapters = lora_params(arch, workload.lora_rank)
    grads = adapters * 4.0  # fp32 adapter gradients
    states = adapters * (LORA_BYTES_PER_PARAM - 4)  # fp32 adapter weights + Adam m, v
    if workload.train_embeddings:
        trained = counts.embedding + counts.lm_head
        grads += trained * 4
        states += trained * (TRAINED_BASE_BYTES_PER_PARAM - 4)
    return grads, states, 0.0


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
    w_total, cast = _weights_bytes(arch, precision, workload.mode, weights_bytes)
    if cast:
        notes.append(cast)
    grads, states, fp32_grads = _states_bytes(arch, workload)
    sharded = gpus > 1 and not workload.replicate_across_gpus
    shards = gpus if sharded else 1
    tokens = workload.batch * workload.context_tokens
    checkpointing = workload.gradient_checkpointing
    layers = tokens * layer_activation_bytes_per_token(arch, checkpointing) / GIB
    logits = tokens * logits_bytes_per_vocab(workload) * arch.vocab_size / GIB
    framework = TRAIN_RUNTIME_GIB + RESERVED_SHARE * w_total / shards / GIB
    if sharded:
        framework += zero3_gather_bytes(arch) / GIB
        notes.append(f"DeepSpeed ZeRO-3 across {gpus} GPUs: weights and optimizer sharded")
    elif workload.mode is Mode.FULL:
        framework += DEEPSPEED_BUCKET_GIB
    elif gpus > 1:
        notes.append(f"{gpus} data-parallel replicas: each GPU holds the whole model")
    if arch.is_moe and workload.mode is not Mode.FULL:
        notes.append("LoRA on every expert's linears; adapters on attention only need far less")
    notes.append(
        "gradient checkpointing on; fused/chunked-loss trainers (Unsloth) use less"
        if checkpointing
        else "gradient checkpointing off: every layer's activations are kept for backward"
    )
    terms = (
        ("weights", w_total / shards / GIB),
        ("gradients", (grads + fp32_grads) / shards / GIB),
        ("optimizer states", states / shards / GIB),
        ("activations", layers),
        ("logits", logits),
        ("framework", framework),
    )
    optimizer = (grads + states + fp32_grads) / shards / GIB
    need = w_total / shards / GIB + optimizer + layers + logits + framework
    breakdown = Breakdown(
        weights=w_total / shards / GIB,
        kv_cache=0.0,
        activations=layers + logits,
        optimizer=optimizer,
        overhead=framework,
        headroom=workload.headroom_gib(need),
        non_torch=TRAIN_CONTEXT_GIB,
    )
    return MemoryEstimate(
        arch=arch,
        precision=precision,
        workload=workload,
        gpus=gpus,
        breakdown=breakdown,
        headroom_fraction=workload.headroom_fraction(),
        weights_total_gib=w_total / GIB,
        kv_total_gib=0.0,
        kv_per_sequence_gib=0.0,
        notes=tuple(notes),
        terms=terms,
    )
