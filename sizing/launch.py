"""The engine flags a sizing answer assumes: what to launch the server with so that the
estimate holds (where the engine's own default would differ). Apart from the engine facts
(``sizing.engines``), since the flags read a workload and the workload reads the engines.
"""

from __future__ import annotations

from sizing.engines import KV_FP8, KV_GGML_BLOCKS, PROFILES, Engine
from sizing.workload import Workload

LLAMACPP_KV_NAMES: dict[str, str] = {"fp16": "f16", "bf16": "bf16", "fp32": "f32"}
"""gpurent's KV names as llama.cpp's --cache-type spells them (q8_0, q4_0 as they are)."""


def launch_flags(
    workload: Workload, window: int | None, tensor_parallel: int, sequences: int
) -> tuple[str, ...]:
    """The engine flags the estimate assumes for one server (one copy of the model on
    ``tensor_parallel`` cards, ``sequences`` users at once), where the engine's default
    would differ. ``window`` is the model's context window (the default context length of
    vLLM and SGLang). Transformers has no server to launch: generate() takes the workload."""
    engine = workload.engine
    if engine is Engine.VLLM:
        return _vllm_flags(workload, window, tensor_parallel, sequences)
    if engine is Engine.SGLANG:
        return _sglang_flags(workload, window, tensor_parallel, sequences)
    if engine is Engine.LLAMACPP:
        return _llamacpp_flags(workload, sequences)
    return ()


def _vllm_flags(
    workload: Workload, window: int | None, tensor_parallel: int, sequences: int
) -> tuple[str, ...]:
    # max_model_len defaults to the model's window, and vLLM refuses to start when one
    # sequence that long does not fit its KV pool; max_num_seqs defaults to 128, 256 or
    # 1024 by card (vllm engine/arg_utils.py), so concurrency is never left to it.
    flags = _tp_flag("--tensor-parallel-size", tensor_parallel)
    flags += _context_flag("--max-model-len", workload.context_tokens, window)
    flags += ("--max-num-seqs", str(sequences))
    kv = workload.kv_dtype.strip().lower()
    if kv in KV_FP8:
        flags += ("--kv-cache-dtype", kv)
    return flags


def _sglang_flags(
    workload: Workload, window: int | None, tensor_parallel: int, sequences: int
) -> tuple[str, ...]:
    # SGLang works out max_running_requests and mem_fraction_static from the card when not
    # given, so both are stated: the estimate holds at these values.
    flags = _tp_flag("--tp", tensor_parallel)
    flags += _context_flag("--context-length", workload.context_tokens, window)
    flags += ("--max-running-requests", str(sequences))
    kv = workload.kv_dtype.strip().lower()
    if kv in KV_FP8:  # SGLang spells the format: plain fp8 is E4M3
        flags += ("--kv-cache-dtype", "fp8_e4m3" if kv == "fp8" else kv)
    utilization = PROFILES[Engine.SGLANG].utilization
    flags += ("--mem-fraction-static", f"{utilization:g}")
    return flags


def _llamacpp_flags(workload: Workload, sequences: int) -> tuple[str, ...]:
    # llama-server shares one n_ctx among its -np slots, and keeps layers on the CPU unless
    # told (-ngl): the estimate is every layer on the cards, one slot per user.
    flags: tuple[str, ...] = (
        "-c",
        str(workload.context_tokens * sequences),
        "-np",
        str(sequences),
        "-ngl",
        "999",
    )
    kv = workload.kv_dtype.strip().lower()
    if kv in KV_GGML_BLOCKS:  # a quantised V cache needs flash attention
        flags += ("-ctk", kv, "-ctv", kv, "-fa", "on")
    elif kv in LLAMACPP_KV_NAMES and kv != "fp16":
        flags += ("-ctk", LLAMACPP_KV_NAMES[kv], "-ctv", LLAMACPP_KV_NAMES[kv])
    return flags


def _tp_flag(flag: str, tensor_parallel: int) -> tuple[str, ...]:
    return (flag, str(tensor_parallel)) if tensor_parallel > 1 else ()


def _context_flag(flag: str, tokens: int, window: int | None) -> tuple[str, ...]:
    return () if window == tokens else (flag, str(tokens))
