"""The steps after "fits in memory": can the card run the precision, and is it fast enough.

The decision order is fits? -> runs? -> fast enough? -> at what true cost. Each offer comes
as the ways it can be rented (``recommend.offer_options``: how many cards, at which
tensor-parallel degree); ``check_offers`` judges each way and gives every offer one of three
outcomes:

* **kept**: the card runs the precision and some way of renting it meets every target
  (known figures only). The way kept is the cheapest that meets them, then the fastest; when
  it takes more cards, or a higher degree, than the cheapest way, the answer says so
  ("meets 1000 ms with 4 cards").
* **cannot tell**: the card's precision support, or a figure a target needs (TFLOPS for the
  first token, bandwidth for decode), is unknown. An unknown never meets a target: these
  offers are shown apart, never ranked among the kept ones.
* **left out** (``Exclusion``): the card cannot run the precision, or every way of renting
  it misses a target. When more cards of that kind would meet it, the reason says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpurent_core.normalize.gpu import FAMILIES
from sizing.objective import Objective
from sizing.placement import Placement
from sizing.recommend import RankedOffer, choice_key, rank_key
from sizing.speed import Latency, Serving, serving_latency
from sizing.support import Support, Verdict, precision_support


def _missing_figure(lat: Latency) -> str:
    """The catalog figure a speed of ``lat`` lacks. Both figures set each speed (decode:
    bandwidth, capped by compute; prefill: compute, floored by one read of the weights), so
    either unknown leaves it unknown. With bandwidth known (a decode ceiling exists) the
    missing one is TFLOPS; without it, bandwidth (whatever the TFLOPS)."""
    return "bandwidth" if lat.decode_ceiling is None else "TFLOPS"


def first_token_unknown(lat: Latency) -> str:
    """Why the first token of ``lat`` cannot be told."""
    return f"first-token latency unknown (no {_missing_figure(lat)} in the GPU catalog)"


def decode_unknown(lat: Latency) -> str:
    """Why the decode speed of ``lat`` cannot be told: no bandwidth, or bandwidth but no
    TFLOPS (the compute cap is unknown, so the bandwidth bound is only a ceiling)."""
    return f"decode speed unknown (no {_missing_figure(lat)} in the GPU catalog)"


@dataclass(frozen=True)
class SpeedTargets:
    """What the user needs: first-token latency, and decode speed per user."""

    ttft_ms: float | None = None
    """For every user at the workload's concurrency: checked against the first token of the
    last of a copy's prompts sent at once (``Latency.ttft_worst_s``), not one prompt alone."""
    tokens_per_s: float | None = None
    """Per user, at the workload's concurrency (batch)."""

    def __post_init__(self) -> None:
        for name in ("ttft_ms", "tokens_per_s"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"{name} target must be positive")

    @property
    def any(self) -> bool:
        return self.ttft_ms is not None or self.tokens_per_s is not None

    def describe(self) -> str:
        parts = []
        if self.ttft_ms is not None:
            parts.append(f"first token <= {self.ttft_ms:g} ms")
        if self.tokens_per_s is not None:
            parts.append(f">= {self.tokens_per_s:g} tokens/s per user")
        return ", ".join(parts)

    def short(self) -> str:
        """The targets in a few words: "1000 ms", "30 tokens/s per user", or both."""
        parts = []
        if self.ttft_ms is not None:
            parts.append(f"{self.ttft_ms:g} ms")
        if self.tokens_per_s is not None:
            parts.append(f"{self.tokens_per_s:g} tokens/s per user")
        return " and ".join(parts)

    def misses(self, lat: Latency) -> list[str]:
        """Why ``lat`` misses the targets, on known figures (empty: met, or not known)."""
        out = []
        if self.ttft_ms is not None and lat.ttft_worst_s is not None:
            ms = lat.ttft_worst_s * 1000
            if ms > self.ttft_ms:
                at_once = f" with {lat.batch} prompts at once" if lat.batch > 1 else ""
                out.append(f"first token {ms:.0f} ms{at_once} > {self.ttft_ms:g} ms target")
        miss = self._decode_miss(lat)
        if miss:
            out.append(miss)
        return out

    def _decode_miss(self, lat: Latency) -> str | None:
        """The per-user decode target missed, on the speed or, where the speed cannot be
        told (no TFLOPS), on the bandwidth ceiling it can never exceed."""
        target = self.tokens_per_s
        if target is None:
            return None
        per_user = lat.tokens_per_s_per_user
        if per_user is not None:
            return (
                f"{per_user:.1f} tokens/s per user < {target:g} target"
                if per_user < target
                else None
            )
        ceiling = lat.decode_ceiling
        if ceiling is not None and ceiling < target:
            return f"at most {ceiling:.1f} tokens/s per user < {target:g} target"
        return None

    def unknown(self, lat: Latency) -> list[str]:
        """Targets that cannot be checked on this card (catalog lacks the figure)."""
        out = []
        if self.ttft_ms is not None and lat.ttft_worst_s is None:
            out.append(first_token_unknown(lat))
        if self.tokens_per_s is not None and lat.tokens_per_s_per_user is None:
            out.append(decode_unknown(lat))
        return out

    def meets(self, lat: Latency | None) -> bool:
        """Every target met on known figures (no target: met). Unknown is never met."""
        if lat is None:
            return not self.any
        return not self.misses(lat) and not self.unknown(lat)


@dataclass(frozen=True)
class Exclusion:
    """An offer that fits in memory but was left out, and why."""

    provider: str
    offer_key: str
    label: str
    step: str
    """"precision" (the card cannot run it) or "speed" (misses a target)."""
    reason: str
    card: str = ""
    """The card and count without the provider ("A800 80GB x1"): offers are grouped by it."""

    def as_row(self) -> dict[str, str]:
        return {
            "provider": self.provider,
            "offer_key": self.offer_key,
            "offer": self.label,
            "step": self.step,
            "reason": self.reason,
        }

    @property
    def line(self) -> str:
        return f"{self.label}: {self.reason}"


@dataclass(frozen=True)
class CheckedOffer:
    """A fitting offer after the precision and speed steps: kept, or "cannot tell"."""

    ranked: RankedOffer
    """The way of renting it that was judged (kept: the one that meets the targets best)."""
    support: Support
    marks: tuple[str, ...] = ()
    """What could not be checked on this card (kept, not guessed)."""
    note: str | None = None
    """How it meets the targets when that takes more than its cheapest rental ("meets
    1000 ms with 4 cards (2358 ms on 1)"), or why it cannot be told."""

    @property
    def label(self) -> str:
        return self.ranked.label

    @property
    def latency(self) -> Latency | None:
        """None for training runs (decode speed means nothing there)."""
        return self.ranked.latency

    @property
    def per_user(self) -> float | None:
        return self.ranked.per_user

    def as_row(self) -> dict[str, Any]:
        row = self.ranked.as_row()
        lat = self.latency
        row["precision_support"] = self.support.verdict.value
        row["precision_note"] = self.support.reason
        row["ttft_ms"] = _ms(None if lat is None else lat.ttft_s)
        row["ttft_worst_ms"] = _ms(None if lat is None else lat.ttft_worst_s)
        per_user = self.per_user
        row["tokens_per_s_per_user"] = round(per_user, 1) if per_user is not None else None
        row["marks"] = list(self.marks)
        row["note"] = self.note
        return row


@dataclass(frozen=True)
class Checked:
    """The three outcomes of ``check_offers``."""

    kept: list[CheckedOffer] = field(default_factory=list)
    """Offers that run the precision and meet every target, ranked by the objective."""
    cannot_tell: list[CheckedOffer] = field(default_factory=list)
    """Offers whose support or speed is unknown where a target needs it: shown apart."""
    excluded: list[Exclusion] = field(default_factory=list)


def check_offers(
    offers: Sequence[Sequence[RankedOffer]],
    targets: SpeedTargets,
    objective: Objective = Objective.MONTHLY,
    placements: Sequence[Placement] = (),
) -> Checked:
    """Judge every offer (given as its ways of being rented) against the precision and the
    targets. ``placements`` lets a miss say how many cards of that kind would meet it."""
    out = Checked()
    for ways in offers:
        if not ways:
            continue
        cheapest = min(ways, key=lambda r: (*choice_key(objective, r), _degree(r)))
        support = _support(cheapest)
        if support.verdict is Verdict.NO:
            out.excluded.append(_exclusion(cheapest, "precision", support.reason))
            continue
        if support.verdict is Verdict.UNKNOWN:
            note = f"cannot tell whether it runs {_precision(cheapest)}: {support.reason}"
            out.cannot_tell.append(CheckedOffer(cheapest, support, (support.reason,), note))
            continue
        if cheapest.latency is None:  # training: time cost only, fewest cards per copy
            out.kept.append(CheckedOffer(cheapest, support))
            continue
        _judge(ways, cheapest, support, targets, objective, placements, out)
    out.kept.sort(key=lambda c: rank_key(objective, c.ranked))
    out.cannot_tell.sort(key=lambda c: rank_key(objective, c.ranked))
    return out


def _judge(
    ways: Sequence[RankedOffer],
    cheapest: RankedOffer,
    support: Support,
    targets: SpeedTargets,
    objective: Objective,
    placements: Sequence[Placement],
    out: Checked,
) -> None:
    def key(r: RankedOffer) -> tuple[Any, ...]:
        return (*choice_key(objective, r), _degree(r))

    meeting = [r for r in ways if r.latency is not None and targets.meets(r.latency)]
    if meeting:
        pick = min(meeting, key=key)
        marks = () if targets.any else tuple(_unknown_figures(pick))
        note = _took_more(pick, cheapest, targets) if targets.any else None
        out.kept.append(CheckedOffer(pick, support, marks, note))
        return
    # No way meets every target. One whose figures are missing might: cannot tell.
    untold = [r for r in ways if r.latency is not None and not targets.misses(r.latency)]
    if untold:
        pick = min(untold, key=key)
        assert pick.latency is not None
        reasons = targets.unknown(pick.latency)
        note = "cannot tell: " + "; ".join(reasons)
        out.cannot_tell.append(CheckedOffer(pick, support, tuple(reasons), note))
        return
    best = min(ways, key=_closest)
    assert best.latency is not None
    reason = "; ".join(targets.misses(best.latency))
    if best.cards > _degree(best):  # the closest way runs several copies
        per = _degree(best)
        reason += f" (at {per} card{'s' if per > 1 else ''} per copy)"
    hint = _more_cards_would(best, targets, placements)
    out.excluded.append(_exclusion(best, "speed", reason + (f"; {hint}" if hint else "")))


def _degree(r: RankedOffer) -> int:
    return r.placement.tensor_parallel


def _closest(r: RankedOffer) -> tuple[float, float]:
    """The way of renting that comes nearest the targets: quickest first token (for the
    last of a copy's prompts sent at once), then the most tokens per user."""
    return (r.ttft_worst_s or math.inf, -(r.per_user or 0.0))


def _took_more(pick: RankedOffer, cheapest: RankedOffer, targets: SpeedTargets) -> str | None:
    """Say so when the targets are met only by more cards (or more cards per copy) than the
    offer's cheapest rental: "meets 1000 ms with 4 cards (2358 ms on 1)"."""
    if pick is cheapest or cheapest.latency is None:
        return None
    missed = targets.misses(cheapest.latency)
    if not missed:
        return None
    was = _figure(cheapest, targets)
    if pick.cards > cheapest.cards:
        return f"meets {targets.short()} with {pick.cards} cards ({was} on {cheapest.cards})"
    return (
        f"meets {targets.short()} at {_degree(pick)} cards per copy of the model "
        f"({was} at {_degree(cheapest)})"
    )


def _figure(r: RankedOffer, targets: SpeedTargets) -> str:
    """The figure of ``r`` that a target reads: first-token ms (the worst: all of a copy's
    prompts at once), else tokens/s per user."""
    if targets.ttft_ms is not None and r.ttft_worst_s is not None:
        return f"{r.ttft_worst_s * 1000:.0f} ms"
    return f"{r.per_user or 0.0:.1f} tokens/s per user"


def _more_cards_would(
    best: RankedOffer, targets: SpeedTargets, placements: Sequence[Placement]
) -> str | None:
    """When this card at a higher degree than the offer can give would meet the targets."""
    sku = best.sku
    if sku is None:
        return None
    est = best.placement.estimate
    for placement in placements:
        degree = placement.tensor_parallel
        if not placement.fits or degree <= best.cards:
            continue
        lat = serving_latency(est.arch, est.precision, est.workload, sku, Serving(degree, degree))
        if targets.meets(lat):
            return f"{degree} cards of this kind would meet it ({_lat_figure(lat, targets)})"
    return None


def _lat_figure(lat: Latency, targets: SpeedTargets) -> str:
    if targets.ttft_ms is not None and lat.ttft_worst_s is not None:
        return f"{lat.ttft_worst_s * 1000:.0f} ms"
    return f"{lat.tokens_per_s_per_user or 0.0:.1f} tokens/s per user"


def _unknown_figures(r: RankedOffer) -> list[str]:
    """Without targets nothing is claimed, but a missing figure is still marked."""
    lat = r.latency
    out = []
    if lat is not None and lat.ttft_s is None:
        out.append(first_token_unknown(lat))
    if lat is not None and lat.tokens_per_s_per_user is None:
        out.append(decode_unknown(lat))
    return out


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 1)


def _precision(r: RankedOffer) -> str:
    return r.placement.estimate.precision.name


def _support(r: RankedOffer) -> Support:
    if r.sku is None:
        return Support(Verdict.UNKNOWN, _uncatalogued(r.costed.offer))
    return precision_support(r.sku, r.placement.estimate.precision)


def _uncatalogued(offer: Mapping[str, Any]) -> str:
    model = str(offer["gpu_model"])
    if model in FAMILIES:
        return f"{model}: variant unsaid, and the catalog has no figures for the family"
    return f"{model}: not in the GPU catalog"


def _exclusion(r: RankedOffer, step: str, reason: str) -> Exclusion:
    o = r.costed.offer
    return Exclusion(o["provider"], o["offer_key"], r.label, step, reason, card=r.card)
