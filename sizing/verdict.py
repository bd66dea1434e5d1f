"""The speed verdict: for this workload, what limits it and what the next faster card buys.

Every sentence comes from the numbers of the offers that passed the checks:

* the cheapest fitting card (by true hourly cost) and its speed per user, first-token
  latency and cost per million tokens;
* whether decode there is compute-bound (more bandwidth buys nothing), and otherwise how the
  next faster card in stock (the smallest step up in speed per user) compares per million
  tokens: cheaper per token means the workload is **bandwidth-bound** (speed is what you
  buy); dearer per token, or no faster card, means it is **capacity-bound** (you pay for
  the memory that holds it, and the cheapest card that does is also the cheapest per token);
* when no faster card is in stock, the catalog's next faster card that would hold the
  workload and run its precision, with its estimated speed;
* when speed targets were given and no card meets them, that, with the closest misses.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpurent_core.catalog import GpuSku, get_catalog
from sizing.checks import CheckedOffer, Exclusion, SpeedTargets
from sizing.placement import fits_card, sku_usable_gib
from sizing.speed import Bound, latency
from sizing.support import Verdict, precision_support
from sizing.workload import Workload

FASTER_MARGIN = 1.02
"""A card counts as faster when it gives at least 2 % more tokens/s per user (estimates
closer than that are the same speed)."""


def _ms(seconds: float | None) -> str:
    return "unknown" if seconds is None else f"{seconds * 1000:.0f} ms"


def no_target_met(targets: SpeedTargets, excluded: Sequence[Exclusion]) -> str:
    misses = [e for e in excluded if e.step == "speed"]
    shown = "; ".join(e.line for e in misses[:3])
    more = f" (and {len(misses) - 3} more)" if len(misses) > 3 else ""
    return (
        f"No in-stock card that fits meets the targets ({targets.describe()}): {shown}{more}. "
        "Loosen a target, use more cards per copy (--gpus), fewer users, or a smaller precision."
    )


def next_faster_in_catalog(offer: CheckedOffer) -> GpuSku | None:
    """The catalog card with the least bandwidth above this offer's card that holds the
    placement and runs its precision (vendor boards only)."""
    sku = offer.ranked.sku
    if sku is None or sku.mem_bandwidth_gbps is None:
        return None
    est = offer.ranked.placement.estimate
    candidates = [
        s
        for s in get_catalog().all()
        if s.mem_bandwidth_gbps is not None
        and s.mem_bandwidth_gbps > sku.mem_bandwidth_gbps
        and not s.modded
        and fits_card(est, sku_usable_gib(s))
        and precision_support(s, est.precision).verdict is Verdict.YES
    ]
    return min(candidates, key=lambda s: (s.mem_bandwidth_gbps, s.label), default=None)


def speed_verdict(
    kept: Sequence[CheckedOffer],
    excluded: Sequence[Exclusion],
    targets: SpeedTargets,
    workload: Workload,
) -> str | None:
    """The speed step's sentence, or None when there is nothing to say (training, no offers
    with a known speed and no target missed)."""
    if workload.is_training:
        return None
    if not kept:
        if targets.any and any(e.step == "speed" for e in excluded):
            return no_target_met(targets, excluded)
        return None
    timed = [c for c in kept if c.per_user is not None and c.latency is not None]
    if not timed:
        return "Speed unknown: the GPU catalog has no bandwidth figure for any fitting card."
    cheapest = min(timed, key=lambda c: (c.ranked.costed.cost.hourly_display, c.label))
    per_user = cheapest.per_user
    lat = cheapest.latency
    assert per_user is not None and lat is not None and lat.decode is not None
    cur = cheapest.ranked.costed.cost.display_currency
    head = (
        f"Speed at {workload.batch} concurrent user{'s' if workload.batch > 1 else ''}: the "
        f"cheapest fitting card, {cheapest.label}, gives ~{per_user:.1f} tokens/s per user "
        f"({lat.decode.tokens_per_s:.0f} in all), first token {_ms(lat.ttft_s)}, "
        f"{cheapest.ranked.cost_per_million_tokens} {cur} per million tokens."
    )
    if targets.any:
        head += f" It meets the targets ({targets.describe()})."
    faster = [c for c in timed if (c.per_user or 0.0) > per_user * FASTER_MARGIN]
    if lat.decode.bound is Bound.COMPUTE:
        head += (
            " At this batch decode is compute-bound there: more memory bandwidth buys "
            "nothing, only more TFLOPS would."
        )
    if not faster:
        return f"{head} {_no_faster(cheapest, workload)}"
    step = min(faster, key=lambda c: (c.per_user or 0.0, c.ranked.costed.cost.hourly_display))
    return f"{head} {_compare(cheapest, step)}"


def _compare(cheapest: CheckedOffer, step: CheckedOffer) -> str:
    base_cost, step_cost = (
        cheapest.ranked.cost_per_million_tokens,
        step.ranked.cost_per_million_tokens,
    )
    base_speed, step_speed = cheapest.per_user, step.per_user
    assert base_speed and step_speed
    speedup = step_speed / base_speed
    price = step.ranked.costed.cost.hourly_display / cheapest.ranked.costed.cost.hourly_display
    cur = step.ranked.costed.cost.display_currency
    if base_cost is None or step_cost is None:
        return f"The next faster card in stock, {step.label}, decodes {speedup:.2f}x faster."
    delta = abs(step_cost - base_cost)
    what = (
        f"the next faster card in stock, {step.label}, decodes {speedup:.2f}x faster "
        f"({step_speed:.1f} tokens/s per user) for {price:.2f}x the hourly price"
    )
    if step_cost < base_cost:
        return (
            f"This workload is bandwidth-bound: {what}, so it saves {delta} {cur} per million "
            f"tokens ({step_cost} vs {base_cost}); it is the better buy for throughput."
        )
    return (
        f"This workload is capacity-bound: {what}, so it costs {delta} {cur} more per million "
        f"tokens ({step_cost} vs {base_cost}); you pay for the memory that holds the "
        f"workload, and extra speed is only worth it if you need it."
    )


def _no_faster(cheapest: CheckedOffer, workload: Workload) -> str:
    text = (
        f"This workload is capacity-bound: {cheapest.label} is the fastest fitting card "
        f"in stock, so the memory it needs decides the card."
    )
    nxt = next_faster_in_catalog(cheapest)
    if nxt is None:
        return f"{text} No faster card in the catalog holds it."
    est = cheapest.ranked.placement.estimate
    speed = latency(
        est.arch, est.precision, workload, nxt, cheapest.ranked.placement.tensor_parallel
    )
    gain = speed.tokens_per_s_per_user
    sku = cheapest.ranked.sku
    assert sku is not None
    return (
        f"{text} The catalog's next faster card that holds it, {nxt.label} "
        f"({nxt.mem_bandwidth_gbps} GB/s against {sku.mem_bandwidth_gbps}"
        + (f", ~{gain:.1f} tokens/s per user" if gain else "")
        + "), is not in stock now: its cost per token cannot be priced."
    )
