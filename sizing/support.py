"""Can the workload run at all: on the engine (``engine_check``: its weight formats and KV-cache
dtypes), on a card (the precision's kernels), and within the model's context window.

Fitting in memory is not enough. A V100 holds an FP8 checkpoint's bytes but has no FP8 tensor
cores, so no engine serves it there; a T4 has no BF16 units. Each check answers yes, no (with
the reason a renter reads, e.g. "V100: no FP8") or unknown (never guessed as yes or no).

Facts used, by precision family:

* fp8: the catalog's ``fp8`` column (the vendor documents FP8 tensor/matrix support). On
  NVIDIA Ampere (compute capability 8.0+: A100, A800, A10, A40, RTX 30xx/A-series) vLLM runs
  FP8 checkpoints weight-only through its FP8 Marlin kernels: the weights stay 1 byte, the
  maths is BF16, so there is no FP8 speed-up (vLLM's quantization hardware table lists FP8
  on Ampere through the FP8 Marlin kernel, weight-only). Older NVIDIA cards and other
  vendors without FP8: no.
* bf16: NVIDIA from Ampere on (Pascal, Volta and Turing have no BF16 units: NVIDIA's
  architecture whitepapers); AMD CDNA 2 on, Intel Gaudi and Huawei Ascend 910B support it.
  fp16 and fp32 run on every card the catalog holds.
* gptq / awq (int4 weight-only): vLLM's kernels need CUDA compute capability 6.0 for GPTQ
  (exllama), 7.5 for AWQ, and 8.0 for the fast Marlin kernels (vLLM's quantization support
  table). Other vendors: unknown, unless the card cannot even do 16-bit.
* int8 / nf4 (bitsandbytes): CUDA cards from Turing on (bitsandbytes' int8 matmul needs
  compute capability 7.5); other vendors unknown.
* gguf (llama.cpp): CUDA from Pascal on and ROCm; others unknown.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from gpurent_core.catalog import GpuSku
from sizing.arch import ModelArch
from sizing.engines import Engine, formats_of
from sizing.quant import Precision
from sizing.workload import Workload

NVIDIA_CAPABILITY: dict[str, float] = {
    "Pascal": 6.0,
    "Volta": 7.0,
    "Turing": 7.5,
    "Ampere": 8.0,
    "Ada Lovelace": 8.9,
    "Hopper": 9.0,
    "Blackwell": 10.0,
    "Blackwell Ultra": 10.3,
}
"""CUDA compute capability by architecture (the lowest of the family: GA10x is 8.6 and
consumer Blackwell 12.0, both above their family's figure, so a check never overstates)."""

BF16_ARCHITECTURES: frozenset[str] = frozenset(
    {"CDNA 2", "CDNA 3", "CDNA 4", "Gaudi", "Da Vinci", "RDNA 3"}
)
"""Non-NVIDIA architectures with BF16 matrix support (AMD CDNA 2+ and RDNA 3 WMMA, Intel
Gaudi, Huawei Ascend 910B). CDNA (MI100) has BF16 too, but at a quarter rate: still runs."""


MARLIN_CAPABILITY = 8.0
"""vLLM's Marlin kernels (int4 GPTQ/AWQ, and FP8 weight-only) need Ampere or newer."""

FP8_WEIGHT_ONLY = "FP8 weight-only via Marlin (weights 1 byte, BF16 compute, no FP8 speed-up)"
"""What an FP8 checkpoint is on a card without FP8 tensor cores that Marlin serves."""


class Verdict(StrEnum):
    YES = "yes"
    NO = "no"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Support:
    verdict: Verdict
    reason: str
    """For people: "V100: no FP8" (no), "RTX 4090: AWQ via Marlin" (yes), or why unknown."""

    @property
    def runs(self) -> bool:
        """Not known to be impossible (unknown cards are kept, and marked)."""
        return self.verdict is not Verdict.NO


def _capability(sku: GpuSku) -> float | None:
    if sku.vendor != "NVIDIA":
        return None
    return NVIDIA_CAPABILITY.get(sku.architecture)


def _has_bf16(sku: GpuSku) -> bool | None:
    cap = _capability(sku)
    if cap is not None:
        return cap >= 8.0
    if sku.architecture in BF16_ARCHITECTURES or sku.architecture == "CDNA":
        return True
    return None


def precision_support(sku: GpuSku | None, precision: Precision) -> Support:
    """Whether ``sku`` can run ``precision`` (weights and the compute they need)."""
    if sku is None:
        return Support(Verdict.UNKNOWN, "card not in the GPU catalog: precision support unknown")
    name, family = sku.model, precision.family
    cap = _capability(sku)
    if family == "fp8":
        if sku.fp8:
            return Support(Verdict.YES, f"{name}: FP8 tensor cores")
        if cap is not None and cap >= MARLIN_CAPABILITY:
            return Support(Verdict.YES, f"{name}: {FP8_WEIGHT_ONLY}")
        return Support(Verdict.NO, f"{name}: no FP8")
    if precision.name == "bf16":
        bf16 = _has_bf16(sku)
        if bf16 is None:
            return Support(Verdict.UNKNOWN, f"{name}: BF16 support unknown")
        if not bf16:
            return Support(Verdict.NO, f"{name}: no BF16 ({sku.architecture}); use fp16")
        return Support(Verdict.YES, f"{name}: BF16")
    if family in ("bf16", "fp32"):  # fp16 / fp32: every catalog card computes them
        return Support(Verdict.YES, f"{name}: {precision.name.upper()}")
    if family in ("gptq", "awq"):
        return _int4_support(sku, cap, family)
    if family in ("int8", "bnb"):
        if cap is None:
            return Support(Verdict.UNKNOWN, f"{name}: bitsandbytes kernels unknown off CUDA")
        if cap < 7.5:
            return Support(Verdict.NO, f"{name}: no bitsandbytes int8/4-bit kernels before Turing")
        return Support(Verdict.YES, f"{name}: bitsandbytes")
    if family == "gguf":
        if cap is not None or sku.vendor == "AMD":
            return Support(Verdict.YES, f"{name}: llama.cpp (CUDA/ROCm)")
        return Support(Verdict.UNKNOWN, f"{name}: llama.cpp backend unknown")
    return Support(Verdict.UNKNOWN, f"{name}: {precision.name} support unknown")


def _int4_support(sku: GpuSku, cap: float | None, family: str) -> Support:
    name, label = sku.model, family.upper()
    if cap is None:
        return Support(Verdict.UNKNOWN, f"{name}: {label} int4 kernels unknown off CUDA")
    if cap >= MARLIN_CAPABILITY:
        return Support(Verdict.YES, f"{name}: {label} via Marlin kernels")
    need = 7.5 if family == "awq" else 6.0
    if cap < need:
        return Support(Verdict.NO, f"{name}: no {label} int4 kernels ({sku.architecture})")
    return Support(Verdict.YES, f"{name}: {label} (no Marlin before Ampere: slower kernels)")


class BeyondContext(ValueError):
    """The sequence is longer than the model's context window."""


def context_check(arch: ModelArch, workload: Workload, *, allow: bool) -> str | None:
    """None when the sequence fits the model's window (or the window is not known); a
    warning when it does not and ``allow`` (--allow-beyond-context); else BeyondContext."""
    window = arch.max_position_embeddings
    tokens = workload.context_tokens
    if window is None or tokens <= window:
        return None
    what = "training sequence" if workload.is_training else "prompt + generation"
    text = (
        f"{what} of {tokens} tokens is longer than {arch.name}'s context window of {window} tokens"
    )
    if not allow:
        raise BeyondContext(
            f"{text}: shorten it, or pass --allow-beyond-context to size it anyway "
            "(RoPE scaling such as YaRN)"
        )
    return f"WARNING: {text}; sized anyway (--allow-beyond-context): quality past the window is not promised"


class EngineCannotRun(ValueError):
    """The engine cannot load the weight format, or cannot keep the KV-cache dtype."""


def engine_check(workload: Workload, precision: Precision) -> str | None:
    """Refuse (EngineCannotRun, one line) a weight format or KV-cache dtype the engine has
    no loader or cache for (``engines.ENGINE_FORMATS``); a note when it runs with a caveat.

    Fine-tuning is sized for PEFT/Transformers whatever ``--engine`` says, so it is not
    checked here."""
    if workload.is_training:
        return None
    engine = workload.engine
    formats = formats_of(engine)
    if precision.family not in formats.weights:
        raise EngineCannotRun(
            f"--engine {engine.value} cannot run --precision {precision.name}: "
            f"{formats.weights_refused}"
        )
    kv = workload.kv_dtype.strip().lower() or "auto"
    if kv not in formats.kv:
        raise EngineCannotRun(
            f"--engine {engine.value} cannot keep --kv-dtype {kv}: {formats.kv_refused}"
        )
    if precision.family == "gguf" and engine is not Engine.LLAMACPP:
        return (
            f"{engine.value} loads {precision.name} GGUF, but its GGUF support is "
            "experimental (one-file GGUF only, per its docs); llama.cpp is GGUF's own engine"
        )
    return None
