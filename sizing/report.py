"""The sizing answer as one document: estimate, placements, ranked offers and a verdict.

The CLI renders it as JSON (this dict, as is) or as tables for people.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sizing.arch import ModelArch, describe
from sizing.checks import CheckedOffer, Exclusion, SpeedTargets
from sizing.engines import ENGINE_NAMES
from sizing.launch import launch_flags
from sizing.objective import Objective
from sizing.placement import Placement, choose
from sizing.quant import Precision
from sizing.speed import bytes_per_decode_step
from sizing.workload import GIB, Workload


@dataclass(frozen=True)
class ModelInfo:
    """Where the architecture came from."""

    origin: str
    """catalog, config or params."""
    source: str
    params_b: float | None = None
    """Published total, when the catalog has one."""


def _r(value: float) -> float:
    return round(value, 2)


def placement_dict(p: Placement) -> dict[str, Any]:
    b = p.estimate.breakdown
    return {
        "tensor_parallel": p.tensor_parallel,
        "per_gpu_gib": _r(b.per_gpu),
        "need_per_gpu_gib": _r(b.need),
        "total_gib": _r(p.estimate.total_gib),
        "tier_gb": p.tier.vram_gb if p.tier else None,
        "tier_usable_gib": p.tier.usable_gib if p.tier else None,
        "max_concurrency": p.max_concurrency,
        "breakdown_gib": b.as_dict(),
    }


def memory_verdict(
    arch: ModelArch, precision: Precision, workload: Workload, placements: Sequence[Placement]
) -> str:
    chosen = choose(list(placements))
    if workload.is_training:
        what = (
            f"{arch.name} {precision.name}, {workload.mode.value} fine-tuning on sequences of "
            f"{workload.context_tokens} tokens x {workload.batch}"
        )
    else:
        what = (
            f"{arch.name} {precision.name}, {workload.batch} x ({workload.prompt_tokens} + "
            f"{workload.gen_tokens}) tokens on {workload.engine.value}"
        )
    if chosen is None or chosen.tier is None:
        last = placements[-1]
        return (
            f"{what}: needs {last.estimate.per_gpu_gib:.1f} GiB per GPU even on "
            f"{last.tensor_parallel} cards, more than any single card offers. Use pipeline "
            "parallelism across nodes, a smaller precision, or less context."
        )
    b = chosen.estimate.breakdown
    cards = "1 card" if chosen.tensor_parallel == 1 else f"{chosen.tensor_parallel} cards"
    parts = [
        f"{what}: needs {b.per_gpu:.1f} GiB per GPU on {cards} (weights {b.weights:.1f}, "
        f"KV {b.kv_cache:.1f}, activations {b.activations:.1f}"
        + (f", optimizer {b.optimizer:.1f}" if b.optimizer else "")
        + f", overhead {b.overhead:.1f}, headroom {b.headroom:.1f}).",
        f"Smallest tier: {chosen.tensor_parallel} x {chosen.tier.vram_gb} GB "
        f"({chosen.tier.usable_gib:.1f} GiB usable each), room for "
        f"{chosen.max_concurrency} sequences of {workload.context_tokens} tokens"
        + (" per micro-batch." if workload.is_training else "."),
    ]
    others = [
        f"{p.tensor_parallel} x {p.tier.vram_gb} GB"
        for p in placements
        if p is not chosen and p.tier is not None
    ]
    if others:
        parts.append("Also fits: " + ", ".join(others) + ".")
    return " ".join(parts)


def launch_text(
    arch: ModelArch,
    workload: Workload,
    offers: Sequence[CheckedOffer],
    placements: Sequence[Placement],
) -> str | None:
    """The engine settings the answer assumes, as what to launch with: for row 1 when there
    is one (its cards per copy, and users per copy), else for the smallest placement. None
    for fine-tuning, when nothing fits, or for an engine with nothing to set (Transformers).

    Without them the estimate does not hold: vLLM sized for a 2500-token workload still
    reserves its default max_model_len, the model's whole window, and refuses to start when
    that one sequence does not fit the KV pool left."""
    if workload.is_training:
        return None
    if offers:
        serving = offers[0].ranked.serving
        tp, copies = serving.tensor_parallel, serving.copies(workload.batch)
        sequences, where = serving.users_per_copy(workload.batch), "for row 1"
    else:
        chosen = choose(list(placements))
        if chosen is None or chosen.tier is None:
            return None
        tp, copies, sequences = chosen.tensor_parallel, 1, workload.batch
        where = f"on {tp} x {chosen.tier.vram_gb} GB"
    flags = launch_flags(workload, arch.max_position_embeddings, tp, sequences)
    if not flags:
        return None
    per_copy = f", one server per {tp} card{'s' if tp > 1 else ''} ({copies} copies)"
    return (
        f"Launch {ENGINE_NAMES[workload.engine]} with {' '.join(flags)} {where}"
        + (per_copy if copies > 1 else "")
        + ": the estimate assumes these settings."
    )


STEP_WORDS: dict[str, str] = {
    "precision": "cannot run the precision",
    "speed": "miss a target",
}


def left_out_groups(excluded: Sequence[Exclusion]) -> list[dict[str, Any]]:
    """Left-out offers grouped by step, card and reason, largest group first: the same card
    listed by several providers (or several times by one) is one line with its count."""
    groups: dict[tuple[str, str, str], dict[str, Any]] = {}
    for e in excluded:
        key = (e.step, e.card or e.label, e.reason)
        group = groups.setdefault(
            key, {"step": e.step, "card": key[1], "reason": e.reason, "count": 0, "providers": []}
        )
        group["count"] += 1
        if e.provider not in group["providers"]:
            group["providers"].append(e.provider)
    steps = list(STEP_WORDS)
    return sorted(
        groups.values(),
        key=lambda g: (steps.index(g["step"]) if g["step"] in steps else len(steps), -g["count"]),
    )


def exclusions_verdict(excluded: Sequence[Exclusion], *, shown: int = 3) -> str | None:
    """One sentence per step that left offers out: how many, and the largest groups."""
    groups = left_out_groups(excluded)
    parts = []
    for step, what in STEP_WORDS.items():
        mine = [g for g in groups if g["step"] == step]
        if not mine:
            continue
        total = sum(g["count"] for g in mine)
        lines = "; ".join(_group_line(g) for g in mine[:shown])
        more = f"; and {len(mine) - shown} more" if len(mine) > shown else ""
        parts.append(f"Left out, {total} that {what}: {lines}{more}.")
    return " ".join(parts) or None


def _group_line(group: dict[str, Any]) -> str:
    count = group["count"]
    where = ", ".join(group["providers"])
    times = f"{count} offers" if count > 1 else "1 offer"
    return f"{group['card']}: {group['reason']} ({times}: {where})"


def cannot_tell_verdict(cannot_tell: Sequence[CheckedOffer]) -> str | None:
    """The offers set apart because a figure the answer needs is unknown."""
    if not cannot_tell:
        return None
    by_card: dict[str, list[CheckedOffer]] = {}
    for c in cannot_tell:
        by_card.setdefault(c.ranked.card, []).append(c)
    lines = "; ".join(
        f"{card}: {offers[0].note or '; '.join(offers[0].marks)} "
        f"({len(offers)} offer{'s' if len(offers) > 1 else ''})"
        for card, offers in list(by_card.items())[:3]
    )
    more = f"; and {len(by_card) - 3} more cards" if len(by_card) > 3 else ""
    return (
        f"Cannot tell, {len(cannot_tell)} offer{'s' if len(cannot_tell) > 1 else ''} set "
        f"apart (not ranked): {lines}{more}."
    )


def build_report(
    arch: ModelArch,
    precision: Precision,
    workload: Workload,
    placements: Sequence[Placement],
    info: ModelInfo,
    *,
    objective: Objective,
    offers: Sequence[CheckedOffer],
    offers_reason: str | None,
    display_currency: str,
    limit: int,
    excluded: Sequence[Exclusion] = (),
    speed_text: str | None = None,
    targets: SpeedTargets = SpeedTargets(),
    warnings: Sequence[str] = (),
    stale_left_out: int = 0,
    spot_left_out: int = 0,
    cannot_tell: Sequence[CheckedOffer] = (),
    notes: Sequence[str] = (),
) -> dict[str, Any]:
    """The whole answer as plain data (Decimals stay Decimal; the CLI serialises)."""
    chosen = choose(list(placements))
    shown = chosen or placements[-1]
    b = shown.estimate.breakdown
    all_notes = [*warnings, *notes, *dict.fromkeys(shown.estimate.notes)]
    if info.origin == "params":
        all_notes.append(
            "only a parameter count was given: the KV cache and activations assume a Llama-like shape"
        )
    precision = shown.estimate.precision  # training may swap it (QLoRA on NF4)
    launch = launch_text(arch, workload, offers, placements)
    if launch:
        all_notes.append(launch)
    memory = memory_verdict(arch, precision, workload, placements)
    # One answer first (which offer to rent, how to launch it, and the runner-up), then the
    # details: the memory it needs, what could not be told, and what was left out, grouped.
    # Without an offer to rent, the launch settings follow the placement they are for.
    parts = [
        speed_text,
        *([launch, memory] if offers else [memory, launch]),
        None if offers or not offers_reason else f"Offers: {offers_reason.rstrip('.')}.",
        cannot_tell_verdict(cannot_tell),
        exclusions_verdict(excluded),
    ]
    verdict = " ".join(p for p in parts if p)
    step_bytes = bytes_per_decode_step(arch, precision, workload)
    model = describe(arch)
    model.update({"origin": info.origin, "source": info.source})
    if info.params_b is not None:
        model["published_params_b"] = info.params_b
    return {
        "model": model,
        "precision": precision.name,
        "bits_per_weight": round(precision.bits, 3),
        "kv_dtype": workload.kv_dtype,
        "engine": workload.engine.value,
        "mode": workload.mode.value,
        "workload": {
            "prompt_tokens": workload.prompt_tokens,
            "gen_tokens": workload.gen_tokens,
            "batch": workload.batch,
            "context_tokens": workload.context_tokens,
        },
        "fits": chosen is not None,
        "tensor_parallel": shown.tensor_parallel,
        "gpus": shown.tensor_parallel,
        "tier_gb": shown.tier.vram_gb if shown.tier else None,
        "tier_usable_gib": shown.tier.usable_gib if shown.tier else None,
        "per_gpu_gib": _r(b.per_gpu),
        "need_per_gpu_gib": _r(b.need),
        "total_gib": _r(shown.estimate.total_gib),
        "headroom_fraction": round(shown.estimate.headroom_fraction, 3),
        "breakdown_gib": b.as_dict(),
        "weights_total_gib": _r(shown.estimate.weights_total_gib),
        "kv_cache_total_gib": _r(shown.estimate.kv_total_gib),
        "max_concurrency": shown.max_concurrency,
        "decode_read_gib_per_step": _r(step_bytes / GIB),
        "placements": [placement_dict(p) for p in placements],
        "objective": objective.value,
        "currency": display_currency,
        "offers": [o.as_row() for o in offers[:limit]],
        "offers_total": len(offers),
        # Offers left out because their provider's latest run did not confirm them (rule 11).
        "stale_left_out": stale_left_out,
        # Spot (interruptible) offers left out unless asked for (--include-spot).
        "spot_left_out": spot_left_out,
        "excluded": [e.as_row() for e in excluded],
        # The same offers grouped by step, card and reason, with counts (what people read).
        "left_out": left_out_groups(excluded),
        # Support or a figure a target needs is unknown: never ranked, never "meets".
        "cannot_tell": [c.as_row() for c in cannot_tell],
        "targets": {"ttft_ms": targets.ttft_ms, "tokens_per_s_per_user": targets.tokens_per_s},
        "speed_verdict": speed_text,
        "dominant_terms": list(shown.estimate.dominant_terms()),
        "offers_reason": offers_reason,
        "verdict": verdict,
        "notes": all_notes,
    }
