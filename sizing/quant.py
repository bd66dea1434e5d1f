"""Precisions and KV-cache dtypes: real bits per weight, and which weights stay 16-bit.

GPTQ, AWQ, FP8 and bitsandbytes quantise the linear layers only: the token embedding, the
lm_head, norms and biases stay 16-bit. That is why Qwen2.5-7B AWQ weighs 5.19 GiB, not
3.55 GiB (sizing/README.md, "Weights"). GGUF bits are measured over whole files,
embeddings included.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from sizing.arch import ModelArch, ParamCounts


class WeightScope(StrEnum):
    """Which weights a precision's bits apply to."""

    ALL = "all"
    """Every tensor (plain 16-bit, or GGUF whose measured bits already include everything)."""
    LINEAR = "linear"
    """Attention and MLP linears; embeddings, lm_head, norms and biases stay 16-bit."""


@dataclass(frozen=True)
class Precision:
    """A weight format: its name, effective bits per quantised weight, and where they apply."""

    name: str
    bits: float
    scope: WeightScope
    family: str
    """bf16, fp8, int8, gptq, awq, bnb or gguf: the kernel family (workspaces, engines)."""
    note: str
    group_size: int | None = None
    """Weights per scale along a linear's input (GPTQ/AWQ: 128 unless the checkpoint says
    otherwise); None where the format has no such groups. Tensor parallelism must give every
    rank whole groups (``sizing.placement.tp_problem``)."""

    @property
    def is_quantised(self) -> bool:
        return self.bits < 16

    @property
    def kernel_workspace(self) -> bool:
        """GPTQ/AWQ kernels allocate scratch buffers, a few tenths of a GiB (sizing/README.md,
        "Runtime overhead")."""
        return self.family in ("gptq", "awq")


_GROUP = 128  # GPTQ/AWQ group size: one fp16 scale and one packed zero per 128 weights

PRECISIONS: dict[str, Precision] = {
    p.name: p
    for p in (
        Precision("fp32", 32, WeightScope.ALL, "fp32", "full precision"),
        Precision("bf16", 16, WeightScope.ALL, "bf16", "bfloat16 checkpoint"),
        Precision("fp16", 16, WeightScope.ALL, "bf16", "float16 checkpoint"),
        Precision(
            "fp8",
            8 + 32 / (128 * 128),
            WeightScope.LINEAR,
            "fp8",
            "FP8 linears with an fp32 scale per 128x128 block; embeddings and lm_head bf16",
        ),
        Precision(
            "int8",
            8 + 32 / 4096,
            WeightScope.LINEAR,
            "int8",
            "bitsandbytes LLM.int8(): int8 linears with an fp32 scale per row",
        ),
        Precision(
            "gptq-int8",
            8 + (16 + 8) / _GROUP,
            WeightScope.LINEAR,
            "gptq",
            "GPTQ 8-bit, group 128: fp16 scale + packed 8-bit zero per group",
            _GROUP,
        ),
        Precision(
            "gptq-int4",
            4 + (16 + 4) / _GROUP,
            WeightScope.LINEAR,
            "gptq",
            "GPTQ 4-bit, group 128: fp16 scale + packed 4-bit zero per group",
            _GROUP,
        ),
        Precision(
            "awq",
            4 + (16 + 4) / _GROUP,
            WeightScope.LINEAR,
            "awq",
            "AWQ 4-bit, group 128: fp16 scale + packed 4-bit zero per group",
            _GROUP,
        ),
        Precision(
            "nf4",
            4 + 32 / 64,
            WeightScope.LINEAR,
            "bnb",
            "bitsandbytes NF4/FP4, blocksize 64, fp32 absmax (4.13 bits with double quant)",
        ),
        Precision("q8_0", 8.50, WeightScope.ALL, "gguf", "GGUF Q8_0, measured whole-file bits"),
        Precision("q6_k", 6.56, WeightScope.ALL, "gguf", "GGUF Q6_K, measured whole-file bits"),
        Precision("q5_k_m", 5.70, WeightScope.ALL, "gguf", "GGUF Q5_K_M (Llama-3.1-8B: 5.33 GiB)"),
        Precision(
            "q4_k_m",
            4.89,
            WeightScope.ALL,
            "gguf",
            "GGUF Q4_K_M, 4.85-4.91 measured (Llama-3.1-8B: 4.58 GiB); not 4.0",
        ),
        Precision("q4_0", 4.55, WeightScope.ALL, "gguf", "GGUF Q4_0 (Llama-3.1-70B: 4.53 bpw)"),
        Precision("q3_k_m", 3.91, WeightScope.ALL, "gguf", "GGUF Q3_K_M"),
        Precision("q2_k", 3.35, WeightScope.ALL, "gguf", "GGUF Q2_K (3.0-3.35 measured)"),
    )
}

# Spellings people and checkpoints use, folded to a PRECISIONS key.
_ALIASES: dict[str, str] = {
    "bfloat16": "bf16",
    "float16": "fp16",
    "half": "fp16",
    "float32": "fp32",
    "fp8_e4m3": "fp8",
    "fbgemm_fp8": "fp8",
    "int4": "gptq-int4",
    "gptq": "gptq-int4",
    "gptq-4bit": "gptq-int4",
    "gptq-8bit": "gptq-int8",
    "awq-int4": "awq",
    "bnb-4bit": "nf4",
    "int4(bnb)": "nf4",
    "bnb4": "nf4",
    "fp4": "nf4",
    "bnb-8bit": "int8",
    "llm.int8": "int8",
    "q8": "q8_0",
    "q6": "q6_k",
    "q5": "q5_k_m",
    "q4": "q4_k_m",
    "q4_k": "q4_k_m",
    "q3": "q3_k_m",
    "q2": "q2_k",
}


class UnknownPrecision(ValueError):
    """A precision name gpurent does not know."""


def precision_names() -> list[str]:
    return list(PRECISIONS)


def get_precision(name: str) -> Precision:
    """The Precision for a name, case-insensitive (``GPTQ-Int4``, ``AWQ``, ``Q4_K_M``)."""
    key = name.strip().lower().replace(" ", "")
    key = _ALIASES.get(key, key)
    try:
        return PRECISIONS[key]
    except KeyError:
        raise UnknownPrecision(
            f"unknown precision {name!r}; known: {', '.join(PRECISIONS)}"
        ) from None


def with_group_size(precision: Precision, group_size: int | None) -> Precision:
    """``precision`` with the group size a checkpoint declares (``quantization_config``
    ``group_size``): its bits (one fp16 scale and one packed zero per group) and the tensor-
    parallel rule follow it. -1 (one scale per output channel, no groups) lifts the rule;
    None, or a format without groups, leaves ``precision`` as it is."""
    if group_size is None or precision.group_size is None or group_size == precision.group_size:
        return precision
    base = float(round(precision.bits))  # 4 or 8 packed bits per weight
    if group_size < 1:  # per-channel: the scales are a negligible share of the weights
        note = f"{precision.note}; this checkpoint: one scale per channel"
        return replace(precision, bits=base, group_size=None, note=note)
    note = f"{precision.note}; this checkpoint: group {group_size}"
    bits = base + (16 + base) / group_size
    return replace(precision, bits=bits, group_size=group_size, note=note)


def with_fp8_blocks(precision: Precision, block: object) -> Precision:
    """``precision`` with the weight blocks an FP8 checkpoint declares
    (``quantization_config.weight_block_size``, [rows, columns], e.g. [128, 128]): every rank
    must hold whole blocks, the same rule as group-quantised weights (vLLM refuses
    Qwen3-235B-A22B-FP8 on 8 cards: its 1536-wide experts give 192 per rank, not a whole
    number of 128-wide blocks). One scale per 16,384 weights changes the bits by nothing
    worth counting, so they stay 8. Anything else leaves ``precision`` as it is."""
    if precision.family != "fp8" or not isinstance(block, list | tuple) or len(block) != 2:
        return precision
    width = block[1]
    if isinstance(width, bool) or not isinstance(width, int) or width < 1:
        return precision
    note = f"{precision.note}; this checkpoint: {block[0]}x{width} weight blocks"
    return replace(precision, group_size=width, note=note)


GGUF_ANY = "gguf-any"
"""A checkpoint that is GGUF without saying which quant (a repository of several)."""
INT4_ANY = "int4-any"
"""A checkpoint that says "Int4" and no format: any 4-bit weight-only format fits it."""
INT8_ANY = "int8-any"
"""A checkpoint that says "Int8" and no format: any 8-bit weight-only format fits it."""


class PrecisionConflict(ValueError):
    """--precision names another format than the checkpoint's own."""


def checkpoint_precision(
    asked: str | None, declared: str | None, word: str | None, where: str
) -> tuple[Precision, str | None]:
    """The precision to size, and a note saying where it came from when not from ``asked``.

    ``declared`` is what the checkpoint says it is (a PRECISIONS name, GGUF_ANY, INT4_ANY,
    INT8_ANY, or a GGUF quant gpurent has no bits figure for), ``word`` how it says it
    ("AWQ", "Q4_K_M"), ``where`` the name or file that says it. Sizing a quantised checkpoint
    as anything else would size weights that are not there (an AWQ 32B is 18 GiB, not 61),
    so a contradiction raises PrecisionConflict rather than being sized silently."""
    if declared is None:
        return get_precision(asked or "bf16"), None
    said = f"{where}, which says {word}"
    if declared in (INT4_ANY, INT8_ANY):
        bits = 4 if declared == INT4_ANY else 8
        if asked is None:
            chosen = get_precision(f"gptq-int{bits}")
            return (
                chosen,
                f"precision {chosen.name}: {said} (read as GPTQ; pass --precision if not)",
            )
        chosen = get_precision(asked)
        if chosen.family in ("gptq", "awq", "bnb", "int8") and int(chosen.bits) == bits:
            return chosen, None
        raise _conflict(asked, said, f"a {bits}-bit weight-only format")
    known = get_precision(declared) if _known(declared) else None
    if known is None:  # GGUF without a quant, or a quant gpurent has no bits figure for
        if asked is None:
            raise PrecisionConflict(
                f"{said}: pass --precision with its GGUF quant "
                f"({', '.join(n for n, p in PRECISIONS.items() if p.family == 'gguf')})"
            )
        chosen = get_precision(asked)
        if chosen.family != "gguf" and chosen.name not in ("bf16", "fp16"):
            raise _conflict(asked, said, "a GGUF quant")
        if declared == GGUF_ANY or chosen.name == declared:
            return chosen, None
        return chosen, f"{said}, which gpurent has no bits figure for: sized as {chosen.name}"
    if asked is None:
        return known, f"precision {known.name}, read from {where}"
    chosen = get_precision(asked)
    if chosen != known:
        raise _conflict(asked, said, known.name)
    return chosen, None


def _known(name: str) -> bool:
    try:
        get_precision(name)
    except UnknownPrecision:
        return False
    return True


def _conflict(asked: str, said: str, wanted: str) -> PrecisionConflict:
    return PrecisionConflict(
        f"--precision {asked} contradicts {said}: drop --precision, or give {wanted}"
    )


def weight_bytes(counts: ParamCounts, precision: Precision, arch: ModelArch | None = None) -> float:
    """Bytes of the model's weights in ``precision``.

    Weight-only formats quantise the linears; the rest stays 16-bit. A model whose
    published FP8 checkpoint leaves attention in BF16 (``fp8_mlp_only``) gets that.
    """
    if precision.scope is WeightScope.ALL:
        return counts.total * precision.bits / 8
    quantised = counts.linear
    if precision.family == "fp8" and arch is not None and arch.fp8_mlp_only:
        quantised = counts.mlp_linear
    return quantised * precision.bits / 8 + (counts.total - quantised) * 2


# ---------------------------------------------------------------------- KV cache dtypes

KV_DTYPE_BYTES: dict[str, float] = {
    "fp32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "fp8_e4m3": 1.0,
    "fp8_e5m2": 1.0,
    "q8_0": 34 / 32,  # llama.cpp block: 32 int8 + an fp16 scale
    "q4_0": 18 / 32,  # 32 nibbles + an fp16 scale
}
"""Bytes per cached element. ``auto`` means the compute dtype: 2 bytes (bf16/fp16)."""


def kv_bytes_per_element(kv_dtype: str) -> float:
    key = kv_dtype.strip().lower()
    if key in ("auto", ""):
        return 2.0
    try:
        return KV_DTYPE_BYTES[key]
    except KeyError:
        raise UnknownPrecision(
            f"unknown KV-cache dtype {kv_dtype!r}; known: auto, {', '.join(KV_DTYPE_BYTES)}"
        ) from None
