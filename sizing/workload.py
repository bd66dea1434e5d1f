"""What the user wants to run (Workload) and what it needs per GPU (Breakdown, MemoryEstimate).

All memory figures are GiB (2**30 bytes), per GPU unless named total.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sizing.arch import ModelArch
from sizing.engines import (
    HEADROOM_LONG,
    HEADROOM_SHORT,
    LONG_CONTEXT_TOKENS,
    MIN_HEADROOM_GIB,
    Engine,
    Mode,
    profile_for,
)
from sizing.quant import Precision

GIB = 2**30
DOMINANT_SHARE = 0.2
"""A part of the memory need "dominates" from a fifth of it on."""


@dataclass(frozen=True)
class Workload:
    """A workload: sequences of prompt + generated tokens, how many at once, on what."""

    prompt_tokens: int
    """Prompt length per sequence (size for the p95, not the mean). For fine-tuning: the
    training sequence length."""
    gen_tokens: int
    """New tokens per sequence (max_new_tokens)."""
    batch: int = 1
    """Sequences at once: concurrency for serving, micro-batch for training."""
    engine: Engine = Engine.VLLM
    mode: Mode = Mode.INFERENCE
    kv_dtype: str = "auto"
    """KV-cache dtype: auto (= 16-bit compute dtype), fp8, q8_0, q4_0, fp16, bf16, fp32."""
    prefill_chunk: int | None = None
    """Override the engine's prefill chunk (vLLM max_num_batched_tokens)."""
    lora_rank: int = 16
    """LoRA rank on every linear layer (lora/qlora)."""
    train_embeddings: bool = False
    """Also train the token embedding and lm_head (LoRA "emb" variant)."""
    replicate_across_gpus: bool = False
    """Training on several GPUs as data-parallel replicas (DDP) instead of sharding the
    model with ZeRO-3: each card then needs what one card alone would."""
    full_prompt_logits: bool = False
    """Transformers < 4.45 (no num_logits_to_keep): logits for the whole prompt, and a
    training loss over a 12-byte rather than 16-byte copy of them per vocabulary entry."""
    gradient_checkpointing: bool = True
    """Training: recompute each layer in backward (HF gradient_checkpointing, the default of
    every LoRA/QLoRA recipe); off, every layer's activations stay until backward."""

    def __post_init__(self) -> None:
        if self.prompt_tokens < 0 or self.gen_tokens < 0:
            raise ValueError("token counts must be >= 0")
        if self.prompt_tokens + self.gen_tokens < 1:
            raise ValueError("a sequence needs at least one token")
        if self.batch < 1:
            raise ValueError("batch must be >= 1")
        if self.lora_rank < 1:
            raise ValueError("lora_rank must be >= 1")
        if self.prefill_chunk is not None and self.prefill_chunk < 1:
            raise ValueError("prefill_chunk must be >= 1")
        object.__setattr__(self, "engine", Engine(self.engine))
        object.__setattr__(self, "mode", Mode(self.mode))

    @property
    def context_tokens(self) -> int:
        """Tokens one sequence holds at its longest: prompt + generated."""
        return self.prompt_tokens + self.gen_tokens

    @property
    def is_training(self) -> bool:
        return self.mode is not Mode.INFERENCE

    def headroom_fraction(self) -> float:
        """Memory kept free above the estimate, as a share of it.

        vLLM and SGLang cap themselves at a utilisation u, so a card fits when need <= u x
        usable, i.e. the headroom is 1/u - 1. Engines without a cap (HF, llama.cpp,
        training) get 10 %, or 20 % from 32k tokens of context on (sizing/README.md, "Headroom
        and usable memory").
        """
        profile = profile_for(self.engine)
        if not self.is_training and profile.utilization is not None:
            return 1 / profile.utilization - 1
        return HEADROOM_LONG if self.context_tokens >= LONG_CONTEXT_TOKENS else HEADROOM_SHORT

    def headroom_gib(self, need_gib: float) -> float:
        """Headroom per GPU for a need: the fraction above, at least MIN_HEADROOM_GIB for
        engines without a utilisation cap (a capped engine takes u of the card anyway)."""
        headroom = need_gib * self.headroom_fraction()
        if self.is_training or profile_for(self.engine).utilization is None:
            headroom = max(headroom, MIN_HEADROOM_GIB)
        return headroom


@dataclass(frozen=True)
class Breakdown:
    """Memory per GPU, GiB, by what it holds."""

    weights: float
    kv_cache: float
    activations: float
    optimizer: float
    """Training only: gradients, optimizer states, LoRA adapters (0 for inference)."""
    overhead: float
    """CUDA context, CUDA graphs, communication buffers, kernel workspaces."""
    headroom: float
    non_torch: float
    """The part of ``overhead`` the PyTorch allocator never sees (CUDA context, graphs,
    NCCL): what torch.cuda.max_memory_allocated leaves out."""

    @property
    def need(self) -> float:
        """What the run occupies at its peak, without headroom."""
        return self.weights + self.kv_cache + self.activations + self.optimizer + self.overhead

    @property
    def per_gpu(self) -> float:
        """The recommended size per GPU: need plus headroom."""
        return self.need + self.headroom

    @property
    def torch_allocated(self) -> float:
        """The peak torch.cuda.max_memory_allocated would report (no CUDA context)."""
        return self.need - self.non_torch

    def as_dict(self, places: int = 2) -> dict[str, float]:
        return {
            "weights": round(self.weights, places),
            "kv_cache": round(self.kv_cache, places),
            "activations": round(self.activations, places),
            "optimizer": round(self.optimizer, places),
            "overhead": round(self.overhead, places),
            "headroom": round(self.headroom, places),
        }


@dataclass(frozen=True)
class MemoryEstimate:
    """The memory a workload needs on ``gpus`` cards working together."""

    arch: ModelArch
    precision: Precision
    workload: Workload
    gpus: int
    breakdown: Breakdown
    headroom_fraction: float
    weights_total_gib: float
    kv_total_gib: float
    """KV of every sequence at full length, all GPUs together (before replication)."""
    kv_per_sequence_gib: float
    """KV of one sequence at full length on one GPU (after TP split or replication)."""
    notes: tuple[str, ...] = field(default=())
    terms: tuple[tuple[str, float], ...] = field(default=())
    """Finer parts of the need per GPU (GiB), when the estimator has them (training:
    weights, gradients, optimizer states, activations, logits, framework)."""

    def dominant_terms(self, share: float = DOMINANT_SHARE) -> tuple[str, ...]:
        """The parts holding at least ``share`` of the need per GPU, largest first, as
        "optimizer states 12.3 GiB (41 %)" (at least the largest one)."""
        b = self.breakdown
        parts = self.terms or (
            ("weights", b.weights),
            ("KV cache", b.kv_cache),
            ("activations", b.activations),
            ("optimizer", b.optimizer),
            ("overhead", b.overhead),
        )
        need = sum(v for _, v in parts) or 1.0
        ranked = sorted(parts, key=lambda kv: kv[1], reverse=True)
        big = [kv for kv in ranked if kv[1] / need >= share] or ranked[:1]
        return tuple(f"{name} {value:.1f} GiB ({value / need:.0%})" for name, value in big)

    @property
    def per_gpu_gib(self) -> float:
        return self.breakdown.per_gpu

    @property
    def need_per_gpu_gib(self) -> float:
        return self.breakdown.need

    @property
    def total_gib(self) -> float:
        return self.breakdown.per_gpu * self.gpus
