"""The answer in words: which offer to rent and why, the runner-up, and what was set apart.

Every sentence is read off the ranked offers (the rows of the table, in their order), so the
words never contradict the table:

* **the pick** is row 1: the cheapest by the objective among the offers that fit, run the
  precision and meet the targets; its speed (per user while decoding, and in all with the
  prefill's share of the machine: ``sizing.speed``), its first token alone and with all of a
  copy's prompts at once, its cost per million tokens, and
  how it meets the targets when that takes more cards than its cheapest rental;
* **the runner-up** is the offer a renter would weigh against it: a faster offer that is also
  cheaper per token (then the workload is **bandwidth-bound**: speed is what you buy), else
  the least dear faster one (**capacity-bound**: you pay for the memory that holds it, and
  more speed costs more per token), else none is faster in stock (capacity-bound, with the
  catalog's next faster card, unpriced); on the per-token objective the pick is already the
  cheapest per token, so the runner-up is the next faster one;
* offers whose speed or support cannot be told, and offers left out, are counted and grouped
  by reason (``report.left_out_groups``); when no offer meets the targets, the closest misses
  and how many cards of a kind would meet them.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from gpurent_core.catalog import GpuSku, get_catalog
from sizing.checks import CheckedOffer, Exclusion, SpeedTargets
from sizing.objective import Objective
from sizing.placement import fits_card, sku_usable_gib
from sizing.speed import Bound, Latency, Serving, serving_latency
from sizing.support import Verdict, precision_support
from sizing.workload import Workload

FASTER_MARGIN = 1.02
"""A card counts as faster when it gives at least 2 % more tokens/s per user (estimates
closer than that are the same speed)."""

OBJECTIVE_WORDS: dict[Objective, str] = {
    Objective.MONTHLY: "true monthly cost",
    Objective.HOURLY: "true hourly cost",
    Objective.PER_TOKEN: "cost per million tokens",
}


def _ms(seconds: float | None) -> str:
    return "unknown" if seconds is None else f"{seconds * 1000:.0f} ms"


def _first_token(lat: Latency) -> str:
    """The first token alone and, with several users per copy of the model, for the last of
    their prompts sent at once (they share the copy's compute): "first token 895 ms for a
    prompt alone, up to 7160 ms with all 8 at once"."""
    text = f"first token {_ms(lat.ttft_s)}"
    if lat.batch == 1 or lat.ttft_worst_s is None:
        return text
    whose = " of a copy" if lat.all_users > lat.batch else ""
    return (
        f"{text} for a prompt alone, up to {_ms(lat.ttft_worst_s)} with all {lat.batch}"
        f"{whose} at once"
    )


def _row(index: int, limit: int) -> str:
    return f"row {index + 1}" + ("" if index < limit else f", beyond --limit {limit}")


def no_target_met(
    targets: SpeedTargets, excluded: Sequence[Exclusion], cannot_tell: Sequence[CheckedOffer]
) -> str:
    """No offer is known to meet the targets: the closest misses (one per card), and the
    offers whose figures are missing."""
    misses = [e for e in excluded if e.step == "speed"]
    by_card: dict[str, Exclusion] = {}
    for e in misses:
        by_card.setdefault(e.card or e.label, e)
    shown = "; ".join(f"{card}: {e.reason}" for card, e in list(by_card.items())[:3])
    more = f" (and {len(by_card) - 3} more cards)" if len(by_card) > 3 else ""
    text = f"No offer in stock is known to meet the targets ({targets.describe()})"
    if cannot_tell:
        text += (
            f"; {len(cannot_tell)} cannot be told (a figure the target needs is unknown), "
            "listed apart"
        )
    if shown:
        text += f". Closest: {shown}{more}"
    return (
        f"{text}. Loosen a target, rent more cards per copy (--gpus), serve fewer users, or "
        "use a smaller precision."
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


def recommendation(
    kept: Sequence[CheckedOffer],
    cannot_tell: Sequence[CheckedOffer],
    excluded: Sequence[Exclusion],
    targets: SpeedTargets,
    workload: Workload,
    objective: Objective,
    limit: int = 10,
) -> str | None:
    """Which offer to rent and why, then the runner-up; None when there is nothing to
    say (no offer at all, and no target missed)."""
    if not kept:
        if targets.any and (cannot_tell or any(e.step == "speed" for e in excluded)):
            return no_target_met(targets, excluded, cannot_tell)
        return None
    pick = kept[0]
    text = _pick(pick, targets, objective, workload)
    if workload.is_training:
        return text
    return f"{text} {_runner_up(pick, kept, objective, workload, limit)}"


def _pick(pick: CheckedOffer, targets: SpeedTargets, objective: Objective, w: Workload) -> str:
    c = pick.ranked.costed.cost
    cur = c.display_currency
    why = f"the cheapest by {OBJECTIVE_WORDS[objective]} that fits"
    if not w.is_training:
        why += f" and runs {pick.ranked.placement.estimate.precision.name}"
    if targets.any:
        why += f" and meets the targets ({targets.describe()})"
    text = (
        f"Rent {pick.label} (row 1): {why}, at {c.monthly_display:.2f} {cur}/month "
        f"({c.hourly_display:.4f}/h)"
    )
    lat = pick.latency
    if lat is None:
        return text + "."
    users = f"{w.batch} concurrent user{'s' if w.batch > 1 else ''}"
    if pick.per_user is None or lat.tokens_per_s is None:
        text += f"; its speed is unknown ({'; '.join(pick.marks) or 'no figures'})"
    else:
        text += (
            f"; at {users} it gives ~{pick.per_user:.1f} tokens/s per user "
            f"({lat.tokens_per_s:.0f} in all, prefill included), {_first_token(lat)}, "
            f"{pick.ranked.cost_per_million_tokens} {cur} per million tokens"
        )
    serving = pick.ranked
    if serving.cards > 1:
        copies = serving.copies
        text += (
            f" ({serving.cards} cards, {serving.placement.tensor_parallel} per copy of the model"
            + (f", {copies} copies" if copies > 1 else "")
            + ")"
        )
    if pick.note:
        text += f"; it {pick.note}"
    if "FP8 weight-only" in pick.support.reason:
        text += f"; {pick.support.reason}"
    return text + "."


def _runner_up(
    pick: CheckedOffer,
    kept: Sequence[CheckedOffer],
    objective: Objective,
    workload: Workload,
    limit: int,
) -> str:
    base_speed, base_cost = pick.per_user, pick.ranked.cost_per_million_tokens
    compute_bound = ""
    lat = pick.latency
    if lat is not None and lat.decode is not None and lat.decode.bound is Bound.COMPUTE:
        compute_bound = (
            " At this batch decode is compute-bound there: more memory bandwidth buys "
            "nothing, only more TFLOPS would."
        )
    timed = [
        (i, c)
        for i, c in enumerate(kept)
        if i > 0 and c.per_user is not None and c.ranked.cost_per_million_tokens is not None
    ]
    if base_speed is None or base_cost is None:
        if not timed:
            return "Speed unknown: the GPU catalog has no bandwidth figure for any fitting card."
        i, best = min(timed, key=lambda ic: _cost(ic[1]))
        return (
            f"Of the offers whose speed is known, {_row(i, limit)}, {best.label}, is the "
            f"cheapest per token ({best.ranked.cost_per_million_tokens} "
            f"{_currency(best)} per million tokens, ~{best.per_user:.1f} tokens/s per user)."
        )
    faster = [(i, c) for i, c in timed if (c.per_user or 0.0) > base_speed * FASTER_MARGIN]
    cheaper = [(i, c) for i, c in faster if _cost(c) < base_cost]
    if cheaper:
        i, best = min(cheaper, key=lambda ic: (_cost(ic[1]), -(ic[1].per_user or 0.0)))
        return _compare(pick, best, i, limit, bandwidth_bound=True) + compute_bound
    if faster:
        i, best = min(faster, key=lambda ic: (_cost(ic[1]), ic[1].per_user or 0.0))
        return _compare(pick, best, i, limit, bandwidth_bound=False) + compute_bound
    slower_cheaper = [(i, c) for i, c in timed if _cost(c) < base_cost]
    if slower_cheaper and objective is not Objective.PER_TOKEN:
        i, best = min(slower_cheaper, key=lambda ic: _cost(ic[1]))
        return (
            f"Runner-up: {_row(i, limit)}, {best.label}, is no faster but costs less per "
            f"token ({_cost(best)} vs {base_cost} {_currency(best)} per million tokens)."
            + compute_bound
        )
    return _no_faster(pick, workload) + compute_bound


def _cost(c: CheckedOffer) -> Decimal:
    value = c.ranked.cost_per_million_tokens
    assert value is not None
    return value


def _currency(c: CheckedOffer) -> str:
    return c.ranked.costed.cost.display_currency


def _compare(
    pick: CheckedOffer, other: CheckedOffer, index: int, limit: int, *, bandwidth_bound: bool
) -> str:
    base_cost, other_cost = _cost(pick), _cost(other)
    base_speed, other_speed = pick.per_user, other.per_user
    assert base_speed and other_speed
    speedup = other_speed / base_speed
    price = other.ranked.costed.cost.hourly_display / pick.ranked.costed.cost.hourly_display
    delta = abs(other_cost - base_cost)
    cur = _currency(other)
    what = (
        f"Runner-up: {_row(index, limit)}, {other.label}, decodes {speedup:.2f}x faster "
        f"({other_speed:.1f} tokens/s per user) for {price:.2f}x the hourly price"
    )
    if bandwidth_bound:
        return (
            f"{what}, so it saves {delta} {cur} per million tokens ({other_cost} vs "
            f"{base_cost}). This workload is bandwidth-bound: the faster card is the better "
            "buy for throughput."
        )
    return (
        f"{what}, so it costs {delta} {cur} more per million tokens ({other_cost} vs "
        f"{base_cost}). This workload is capacity-bound: you pay for the memory that holds "
        "it, so take the faster card only if you need its speed."
    )


def _no_faster(pick: CheckedOffer, workload: Workload) -> str:
    text = (
        "No offer in stock decodes faster. This workload is capacity-bound: the memory it "
        "needs decides the card."
    )
    nxt = next_faster_in_catalog(pick)
    if nxt is None:
        return f"{text} No faster card in the catalog holds it."
    est = pick.ranked.placement.estimate
    degree = pick.ranked.placement.tensor_parallel
    speed = serving_latency(
        est.arch, est.precision, workload, nxt, Serving(pick.ranked.cards, degree)
    )
    gain = speed.tokens_per_s_per_user
    sku = pick.ranked.sku
    assert sku is not None
    return (
        f"{text} The catalog's next faster card that holds it, {nxt.label} "
        f"({nxt.mem_bandwidth_gbps} GB/s against {sku.mem_bandwidth_gbps}"
        + (f", ~{gain:.1f} tokens/s per user" if gain else "")
        + "), is not in stock now: its cost per token cannot be priced."
    )
