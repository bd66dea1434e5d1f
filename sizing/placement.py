"""Placement: how many cards, of which VRAM tier, and how many sequences then fit.

For each tensor-parallel degree 1, 2, 4, 8 the engine can start with (``tp_problem``: the
rules vLLM and SGLang enforce when they shard the layers; layer-split engines need none), the
per-GPU need is compared with each tier's *usable* memory, not its label: measured figures
where engines logged them, about 0.97 x nominal elsewhere (sizing/README.md, "Headroom and
usable memory"). Every card count sizing offers (placements, the offers' degrees, "N cards
of this kind would meet it", the runner-up) comes from ``valid_degrees``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache

from gpurent_core.catalog import GpuSku, get_catalog
from sizing.arch import ModelArch
from sizing.engines import profile_for
from sizing.memory import estimate_memory
from sizing.quant import Precision
from sizing.workload import MemoryEstimate, Workload

TP_DEGREES: tuple[int, ...] = (1, 2, 4, 8)

UNMEASURED_USABLE_SHARE = 0.97
"""Usable GiB per nominal GB where no engine log is known (an estimate: refine it with
nvidia-smi figures from offers)."""

MEASURED_USABLE_GIB: dict[tuple[str, int], tuple[float, str]] = {
    ("H100", 80): (79.22, "vLLM PR #10511 log: total 79.22 GiB on H100 80GB"),
    ("RTX 3090", 24): (23.58, "vLLM issue #10517 log: 23.58 GiB on RTX 3090"),
    ("B200", 180): (178.36, "vLLM PR #21489 log: 178.36 GiB on B200"),
}
"""Memory engines reported as the card's total, by (model, nominal GB)."""


def usable_gib(model: str, vram_gb: int) -> float:
    """Usable GiB of a card: measured where known, else 0.97 x nominal."""
    measured = MEASURED_USABLE_GIB.get((model, vram_gb))
    if measured is not None:
        return measured[0]
    return round(vram_gb * UNMEASURED_USABLE_SHARE, 2)


def sku_usable_gib(sku: GpuSku) -> float:
    return usable_gib(sku.model, sku.vram_gb)


@dataclass(frozen=True)
class Tier:
    """A VRAM size people rent, with the least usable memory of the cards sold at it."""

    vram_gb: int
    usable_gib: float
    example: str
    """A card of this tier, for people ("H100 80GB SXM")."""


@cache
def tiers() -> tuple[Tier, ...]:
    """Every VRAM size in the GPU catalog, smallest first."""
    best: dict[int, Tier] = {}
    for sku in get_catalog().all():
        usable = sku_usable_gib(sku)
        current = best.get(sku.vram_gb)
        if current is None or usable < current.usable_gib:
            best[sku.vram_gb] = Tier(sku.vram_gb, usable, sku.label)
    return tuple(sorted(best.values(), key=lambda t: t.vram_gb))


def tp_problem(arch: ModelArch, precision: Precision | None, degree: int) -> str | None:
    """Why vLLM/SGLang refuse to start ``arch`` at tensor parallelism ``degree``, or None.

    The engines shard every layer ``degree`` ways and assert that each shard is whole
    (vLLM ``model_executor/layers/linear.py``; SGLang reuses those layers):

    * attention heads: ``num_heads % degree == 0``;
    * KV heads (``QKVParallelLinear``): ``degree`` divides the KV heads, or the KV heads
      divide ``degree`` (each is then replicated); Phi-4's 10 KV heads rule out TP 4 and 8.
      MLA has one latent and no KV heads to split;
    * group-quantised weights (GPTQ/AWQ): the input of every row-parallel linear is split,
      and each rank's share must be a whole number of groups ("The input size is not
      aligned with the quantized weight shape", vLLM's GPTQ/AWQ layers; Marlin's
      "input_size_per_partition ... not divisible", vllm#13640). Qwen's 29568-wide MLP is
      231 groups of 128: no TP 2, 4 or 8 (QwenLM/Qwen2#578); Qwen3-30B-A3B's 768-wide
      experts are 6 groups: no TP 4 or 8 (vllm#17604).
    """
    if arch.num_heads % degree:
        return f"tensor parallelism must divide its {arch.num_heads} attention heads"
    kv = arch.num_kv_heads
    if not arch.is_mla and kv % degree and degree % kv:
        return (
            f"its {kv} KV heads do not split evenly (vLLM/SGLang need the tensor-parallel "
            "size to divide the KV heads, or the KV heads to divide it)"
        )
    if precision is None or precision.group_size is None:
        return None
    return _group_problem(arch, precision.name, precision.group_size, degree)


def _group_problem(arch: ModelArch, name: str, group: int, degree: int) -> str | None:
    """A row-parallel input that ``degree`` ranks cannot share in whole ``group``-wide groups."""
    for what, width in row_parallel_inputs(arch):
        if width % (degree * group):
            return (
                f"its {what} of {width} ({width / group:g} groups of {group}) does not split "
                f"into whole {name} groups per card (a checkpoint padded to a wider width says "
                "so in its config: pass --config)"
            )
    return None


def row_parallel_inputs(arch: ModelArch) -> list[tuple[str, int]]:
    """The input widths tensor parallelism splits (row-parallel linears): the attention
    output projection, and the down projection of every kind of MLP the model has."""
    out_heads = arch.v_head_dim if arch.is_mla else arch.head_dim
    widths = [("attention output width", arch.num_heads * out_heads)]
    if arch.num_layers > arch.moe_layers:  # dense layers (all of them unless MoE)
        widths.append(("MLP width", arch.intermediate_size))
    if arch.is_moe:
        widths.append(("expert MLP width", arch.moe_intermediate_size))
    if arch.shared_expert_intermediate_size:
        widths.append(("shared-expert MLP width", arch.shared_expert_intermediate_size))
    return widths


def splits_by_tensor_parallel(workload: Workload) -> bool:
    """The engine shards each layer over the cards (vLLM, SGLang), rather than giving each
    card whole layers (HF device_map, llama.cpp) or sharding with ZeRO-3 (training)."""
    return not (workload.is_training or profile_for(workload.engine).splits_layers)


def valid_degrees(
    arch: ModelArch, workload: Workload, precision: Precision | None = None
) -> list[int]:
    """Degrees that can split the model: under tensor parallelism those ``tp_problem``
    finds nothing wrong with; layer split (HF, llama.cpp) and training only need that many
    layers."""
    if not splits_by_tensor_parallel(workload):
        return [d for d in TP_DEGREES if d <= arch.num_layers]
    return [d for d in TP_DEGREES if tp_problem(arch, precision, d) is None]


def degree_notes(arch: ModelArch, precision: Precision, workload: Workload) -> list[str]:
    """One note per reason a card count is left out: "tensor parallel 4, 8 left out: its 10
    KV heads do not split evenly (...)", so an answer says why it offers no more cards."""
    if not splits_by_tensor_parallel(workload):
        return []
    by_reason: dict[str, list[int]] = {}
    for degree in TP_DEGREES:
        problem = tp_problem(arch, precision, degree)
        if problem is not None:
            by_reason.setdefault(problem, []).append(degree)
    return [
        f"tensor parallel {', '.join(map(str, degrees))} left out: {problem}"
        for problem, degrees in by_reason.items()
    ]


@dataclass(frozen=True)
class Placement:
    """One way to place the workload: ``tensor_parallel`` cards of the smallest tier that fits."""

    tensor_parallel: int
    estimate: MemoryEstimate
    tier: Tier | None
    """None when no tier is large enough at this degree."""
    max_concurrency: int | None
    """Sequences of the workload's length that fit on this tier at this degree."""

    @property
    def fits(self) -> bool:
        return self.tier is not None


def smallest_tier(per_gpu_gib: float) -> Tier | None:
    for tier in tiers():
        if per_gpu_gib <= tier.usable_gib:
            return tier
    return None


def fits_card(estimate: MemoryEstimate, card_usable_gib: float) -> bool:
    """The recommended size (need plus headroom; for vLLM need / utilisation) fits."""
    return estimate.per_gpu_gib <= card_usable_gib


def max_concurrency(
    arch: ModelArch,
    precision: Precision,
    workload: Workload,
    gpus: int,
    card_usable_gib: float,
    *,
    weights_bytes: float | None = None,
    limit: int = 1 << 20,
) -> int:
    """The largest batch whose recommended size fits the card (0 if not even one)."""

    def fits(batch: int) -> bool:
        trial = replace(workload, batch=batch)
        est = estimate_memory(arch, precision, trial, gpus, weights_bytes=weights_bytes)
        return fits_card(est, card_usable_gib)

    if not fits(1):
        return 0
    low, high = 1, 2
    while high <= limit and fits(high):
        low, high = high, high * 2
    high = min(high, limit + 1)
    while high - low > 1:  # fits(low) and not fits(high)
        mid = (low + high) // 2
        if fits(mid):
            low = mid
        else:
            high = mid
    return low


def plan(
    arch: ModelArch,
    precision: Precision,
    workload: Workload,
    *,
    gpus: int | None = None,
    weights_bytes: float | None = None,
) -> list[Placement]:
    """A placement per valid degree (or only ``gpus``), fewest cards first."""
    degrees = valid_degrees(arch, workload, precision)
    if gpus is not None:
        if gpus not in degrees:
            raise ValueError(_degree_error(arch, precision, gpus, degrees))
        degrees = [gpus]
    out = []
    for degree in degrees:
        est = estimate_memory(arch, precision, workload, degree, weights_bytes=weights_bytes)
        tier = smallest_tier(est.per_gpu_gib)
        concurrency = (
            max_concurrency(
                arch, precision, workload, degree, tier.usable_gib, weights_bytes=weights_bytes
            )
            if tier is not None
            else None
        )
        out.append(Placement(degree, est, tier, concurrency))
    return out


def choose(placements: list[Placement]) -> Placement | None:
    """The placement with the fewest cards that fits some tier."""
    return next((p for p in placements if p.fits), None)


def _degree_error(arch: ModelArch, precision: Precision, gpus: int, degrees: list[int]) -> str:
    if gpus not in TP_DEGREES:
        return f"--gpus must be one of {', '.join(map(str, TP_DEGREES))} (got {gpus})"
    problem = tp_problem(arch, precision, gpus) or f"it has {arch.num_layers} layers"
    return (
        f"{gpus} GPUs cannot split {arch.name}: {problem} "
        f"(valid here: {', '.join(map(str, degrees))})"
    )
