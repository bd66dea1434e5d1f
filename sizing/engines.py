"""How each inference engine spends memory beyond weights and KV: the few constants sizing uses.

Each constant is physical (a buffer, a context, a utilisation cap) and named after what it
is; the values come from engine logs and docs (sizing/README.md, "Facts and their sources")
and from the calibration against ``measured_memory.csv`` (benchmarks/sizing_calibration.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Engine(StrEnum):
    """The runtime that serves the model."""

    VLLM = "vllm"
    """vLLM: paged KV in 16-token blocks, chunked prefill, CUDA graphs, tensor parallel."""
    SGLANG = "sglang"
    """SGLang: radix KV cache, chunked prefill, CUDA graphs, tensor parallel."""
    HF = "hf"
    """Hugging Face Transformers generate(): whole prompt in one prefill, layers split
    across GPUs with device_map="auto"."""
    LLAMACPP = "llamacpp"
    """llama.cpp / Ollama: GGUF weights, one KV pool of n_ctx tokens, layer split."""


class Mode(StrEnum):
    """What the GPUs are doing with the model."""

    INFERENCE = "inference"
    """Serving / generating."""
    LORA = "lora"
    """LoRA fine-tuning on 16-bit base weights (PEFT + Transformers Trainer)."""
    QLORA = "qlora"
    """LoRA on 4-bit base weights (bitsandbytes NF4 or GPTQ)."""
    FULL = "full"
    """Full fine-tuning, mixed-precision AdamW (DeepSpeed ZeRO-3 across GPUs)."""


@dataclass(frozen=True)
class EngineProfile:
    """The memory habits of one engine (inference)."""

    engine: Engine
    utilization: float | None
    """Share of the card the engine may take (vLLM gpu_memory_utilization, SGLang
    mem_fraction_static); None: the engine takes what it needs, sized with headroom."""
    prefill_chunk: int | None
    """Tokens in one prefill step the engine profiles for; None = batch x prompt at once."""
    act_bytes_per_ff: float
    """Transient bytes per prefill token per unit of MLP width (gate, up, act(gate)*up in
    16-bit plus the fp32 bits around them): 7.5 measured on Transformers 4.46 for every
    Qwen2.5 size and precision, 7.8 in vLLM's profile (sizing/README.md, "Activations")."""
    act_bytes_per_hidden: float
    """Transient bytes per prefill token per unit of hidden size (residual stream copies,
    attention output): vLLM's profile run keeps ~8 (Llama-3-8B: 1.26 GiB at 8192 tokens)."""
    profile_sequences: int
    """Sequences whose last-token fp32 logits the engine samples in its profile run
    (vLLM max_num_seqs 256); HF: the batch."""
    cuda_context_gib: float
    """CUDA context, cuBLAS handles and other memory torch does not allocate, per GPU."""
    cuda_graphs_gib: float
    """Captured CUDA graphs (vLLM/SGLang unless --enforce-eager), per GPU."""
    multi_gpu_gib: float
    """NCCL / custom all-reduce buffers per GPU when more than one GPU works together."""
    kv_block_tokens: int
    """KV is allocated in blocks of this many tokens per sequence (vLLM 16)."""
    materialises_mla: bool
    """Caches full K/V for MLA models instead of the latent (Transformers does)."""
    splits_layers: bool
    """Multi-GPU by putting whole layers on each card (HF device_map, llama.cpp), so the
    TP head-divisibility rule does not apply and each card has its own activation peak."""
    remote_code_activation_factor: float = 1.0
    """Multiplier on activations for models that run their own modeling code
    (trust_remote_code): GLM-4-9B's peak grows by 15-20 B x ff per prompt token against
    7.5 for native Transformers code (THUDM/GLM-4 README; calibration family hf_glm4)."""
    full_prompt_logits_bytes: float = 6.0
    """Transformers < 4.45 materialise logits for the whole prompt: bf16 plus an fp32
    upcast, T x V x 6 bytes (sizing/README.md, "Activations"). Only used when the workload
    asks for it."""


PROFILES: dict[Engine, EngineProfile] = {
    Engine.VLLM: EngineProfile(
        engine=Engine.VLLM,
        utilization=0.90,
        prefill_chunk=8192,
        act_bytes_per_ff=7.5,
        act_bytes_per_hidden=8.0,
        profile_sequences=256,
        cuda_context_gib=0.75,
        cuda_graphs_gib=0.75,
        multi_gpu_gib=1.5,
        kv_block_tokens=16,
        materialises_mla=False,
        splits_layers=False,
    ),
    Engine.SGLANG: EngineProfile(
        engine=Engine.SGLANG,
        utilization=0.88,
        prefill_chunk=8192,
        act_bytes_per_ff=7.5,
        act_bytes_per_hidden=8.0,
        profile_sequences=256,
        cuda_context_gib=0.75,
        cuda_graphs_gib=0.75,
        multi_gpu_gib=1.5,
        kv_block_tokens=1,
        materialises_mla=False,
        splits_layers=False,
    ),
    Engine.HF: EngineProfile(
        engine=Engine.HF,
        utilization=None,
        prefill_chunk=None,
        act_bytes_per_ff=7.5,
        act_bytes_per_hidden=0.0,
        profile_sequences=0,
        cuda_context_gib=0.75,
        cuda_graphs_gib=0.0,
        multi_gpu_gib=0.0,
        kv_block_tokens=1,
        materialises_mla=True,
        splits_layers=True,
        remote_code_activation_factor=2.3,
    ),
    Engine.LLAMACPP: EngineProfile(
        engine=Engine.LLAMACPP,
        utilization=None,
        prefill_chunk=512,
        act_bytes_per_ff=0.0,  # llama.cpp sizes a compute buffer instead: see compute_buffer
        act_bytes_per_hidden=0.0,
        profile_sequences=0,
        cuda_context_gib=0.45,  # "unaccounted" 466 MiB per GPU in llama_memory_breakdown
        cuda_graphs_gib=0.0,
        multi_gpu_gib=0.0,
        kv_block_tokens=1,
        materialises_mla=False,
        splits_layers=True,
    ),
}


def profile_for(engine: Engine | str) -> EngineProfile:
    return PROFILES[Engine(engine)]


QUANT_WORKSPACE_DEQUANT_COPIES = 1.0
"""GPTQ/AWQ kernels keep scratch for one dequantised fp16 copy of the largest linear layer
(exllama's temp_dq; AWQ dequantises for large prefills): 0.01 GiB on Qwen2.5-0.5B, 0.45 GiB
on Qwen2.5-72B, matching the 0.03-0.67 GiB residuals in the Qwen2.5 speed tables at one
prompt token (sizing/README.md, "Runtime overhead")."""

HF_TORCH_WORKSPACE_GIB = 0.05
"""cuBLAS workspaces and small buffers torch allocates in any HF forward (Qwen2.5 at one
prompt token: 0.03-0.1 GiB above weights + KV)."""

LONG_CONTEXT_TOKENS = 32768
"""From this context on, engines without a utilisation cap get 20 % headroom, not 10 %."""

HEADROOM_SHORT = 0.10
HEADROOM_LONG = 0.20
MIN_HEADROOM_GIB = 0.5
"""Engines without a utilisation cap keep at least this much free per GPU: 10 % of a small
model is less than the caching allocator's fragmentation alone."""


def llamacpp_compute_buffer_gib(context_tokens: int, num_heads: int) -> float:
    """llama.cpp's compute buffer for n_ubatch 512: (ctx/1024 x 2 + 0.75) x heads MiB.

    NyxKrage's calculator fit, the best public anchor for it (sizing/README.md, "Activations").
    """
    return (context_tokens / 1024 * 2 + 0.75) * num_heads / 1024


# ---------------------------------------------------------------- what each engine can load

KV_MODEL_DTYPE: frozenset[str] = frozenset({"auto", "fp16", "bf16", "fp32"})
"""KV at the model's own float dtype: every engine caches so by default."""
KV_FP8: frozenset[str] = frozenset({"fp8", "fp8_e4m3", "fp8_e5m2"})
KV_GGML_BLOCKS: frozenset[str] = frozenset({"q8_0", "q4_0"})
"""llama.cpp's block-quantised cache types gpurent sizes (it also has q4_1, q5_0, q5_1, iq4_nl)."""


@dataclass(frozen=True)
class EngineFormats:
    """The weight formats (``Precision.family``) an engine loads and the KV-cache dtypes
    (gpurent's ``--kv-dtype`` names) it can keep, with why anything else is refused."""

    weights: frozenset[str]
    weights_refused: str
    """Why a format outside ``weights`` does not run, and what to do instead."""
    kv: frozenset[str]
    kv_refused: str
    source: str


ENGINE_FORMATS: dict[Engine, EngineFormats] = {
    Engine.VLLM: EngineFormats(
        weights=frozenset({"bf16", "fp32", "fp8", "int8", "gptq", "awq", "bnb", "gguf"}),
        weights_refused="",
        kv=KV_MODEL_DTYPE | KV_FP8,
        kv_refused=(
            "vLLM's --kv-cache-dtype takes auto (the model's dtype) or fp8 (fp8_e4m3, "
            "fp8_e5m2), not llama.cpp's block types: use --kv-dtype fp8, or --engine llamacpp"
        ),
        source=(
            "vLLM docs, Quantization (GPTQ, AWQ, FP8, bitsandbytes; GGUF experimental, one "
            "file) and Quantized KV Cache; vllm/config/cache.py CacheDType"
        ),
    ),
    Engine.SGLANG: EngineFormats(
        weights=frozenset({"bf16", "fp32", "fp8", "int8", "gptq", "awq", "bnb", "gguf"}),
        weights_refused="",
        kv=KV_MODEL_DTYPE | KV_FP8,
        kv_refused=(
            "SGLang's --kv-cache-dtype takes auto, bf16 or fp8_e4m3/fp8_e5m2, not llama.cpp's "
            "block types: use --kv-dtype fp8, or --engine llamacpp"
        ),
        source=(
            "SGLang docs, Quantization (platform table: fp8, awq, gptq, gguf, bitsandbytes); "
            "server_args.py --kv-cache-dtype choices"
        ),
    ),
    Engine.HF: EngineFormats(
        weights=frozenset({"bf16", "fp32", "fp8", "int8", "gptq", "awq", "bnb"}),
        weights_refused=(
            "Transformers dequantises a GGUF file when it loads it on a GPU (to fp32 unless "
            "a dtype is given), so the card holds full-precision weights, not GGUF ones: "
            "size it as --precision bf16 (what it then runs), or use --engine llamacpp"
        ),
        kv=KV_MODEL_DTYPE,
        kv_refused=(
            "Transformers caches K/V in the model's dtype (its QuantizedCache is quanto/HQQ "
            "int2/int4, which gpurent does not size), not fp8 or llama.cpp block types: use "
            "--kv-dtype auto, or --engine vllm/llamacpp"
        ),
        source=(
            "Transformers docs, GGUF (the checkpoint is dequantised at load off Apple MPS) "
            "and KV cache strategies (Quantized Cache: quanto, HQQ)"
        ),
    ),
    Engine.LLAMACPP: EngineFormats(
        weights=frozenset({"gguf", "bf16", "fp32"}),
        weights_refused=(
            "llama.cpp loads GGUF files only (16-bit GGUF or a GGUF quant), not "
            "GPTQ/AWQ/FP8/bitsandbytes safetensors: pick a GGUF quant (q4_k_m, q8_0 ...) or "
            "--engine vllm"
        ),
        kv=KV_MODEL_DTYPE | KV_GGML_BLOCKS,
        kv_refused=(
            "llama.cpp has no fp8 KV cache (its cache types are f32, f16, bf16, q8_0, q4_0, "
            "q4_1, iq4_nl, q5_0, q5_1): use --kv-dtype q8_0"
        ),
        source=(
            "llama.cpp README (GGUF models) and common/arg.cpp --cache-type-k/-v types; an "
            "FP8 cache is an open pull request (ggml-org/llama.cpp#28392), not a release"
        ),
    ),
}
"""Engine x weight format x KV-cache dtype, from public facts (``source``; docs/sizing.md,
"Which engine runs which format"). A combination outside it is refused, never sized."""


def formats_of(engine: Engine | str) -> EngineFormats:
    return ENGINE_FORMATS[Engine(engine)]


# ---------------------------------------------------------------- launch settings

ENGINE_NAMES: dict[Engine, str] = {
    Engine.VLLM: "vLLM (vllm serve)",
    Engine.SGLANG: "SGLang (sglang.launch_server)",
    Engine.HF: "Transformers",
    Engine.LLAMACPP: "llama.cpp (llama-server)",
}
