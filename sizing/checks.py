"""The steps after "fits in memory": can the card run the precision, and is it fast enough.

The decision order is fits? -> runs? -> fast enough? -> at what true cost. Offers that fit
(``recommend.fitting_offers``) pass through ``check_offers``: an offer whose card cannot run
the precision, or that misses a speed target, is excluded with its reason; one whose support
or speed cannot be told (no catalog entry, no TFLOPS or bandwidth figure) is kept and marked.
Each offer is judged at the fewest cards that hold the workload.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sizing.recommend import RankedOffer
from sizing.speed import Latency, latency
from sizing.support import Support, Verdict, precision_support


@dataclass(frozen=True)
class SpeedTargets:
    """What the user needs: first-token latency, and decode speed per user."""

    ttft_ms: float | None = None
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

    def misses(self, lat: Latency) -> list[str]:
        """Why ``lat`` misses the targets (empty: met, or not known)."""
        out = []
        if self.ttft_ms is not None and lat.ttft_s is not None:
            ms = lat.ttft_s * 1000
            if ms > self.ttft_ms:
                out.append(f"first token {ms:.0f} ms > {self.ttft_ms:g} ms target")
        per_user = lat.tokens_per_s_per_user
        if self.tokens_per_s is not None and per_user is not None and per_user < self.tokens_per_s:
            out.append(f"{per_user:.1f} tokens/s per user < {self.tokens_per_s:g} target")
        return out

    def unknown(self, lat: Latency) -> list[str]:
        """Targets that cannot be checked on this card (catalog lacks the figure)."""
        out = []
        if self.ttft_ms is not None and lat.ttft_s is None:
            out.append("first-token latency unknown (no TFLOPS in the GPU catalog)")
        if self.tokens_per_s is not None and lat.tokens_per_s_per_user is None:
            out.append("decode speed unknown (no bandwidth in the GPU catalog)")
        return out


@dataclass(frozen=True)
class Exclusion:
    """An offer that fits in memory but was left out, and why."""

    provider: str
    offer_key: str
    label: str
    step: str
    """"precision" (the card cannot run it) or "speed" (misses a target)."""
    reason: str

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
    """A fitting offer that passed the precision and speed steps."""

    ranked: RankedOffer
    support: Support
    latency: Latency | None
    """None for training runs (decode speed means nothing there)."""
    marks: tuple[str, ...] = ()
    """What could not be checked on this card (kept, not guessed)."""

    @property
    def label(self) -> str:
        return self.ranked.label

    @property
    def per_user(self) -> float | None:
        return None if self.latency is None else self.latency.tokens_per_s_per_user

    def as_row(self) -> dict[str, Any]:
        row = self.ranked.as_row()
        lat = self.latency
        row["precision_support"] = self.support.verdict.value
        row["ttft_ms"] = (
            round(lat.ttft_s * 1000, 1) if lat is not None and lat.ttft_s is not None else None
        )
        per_user = self.per_user
        row["tokens_per_s_per_user"] = round(per_user, 1) if per_user is not None else None
        row["marks"] = list(self.marks)
        return row


def check_offers(
    offers: Sequence[RankedOffer], targets: SpeedTargets
) -> tuple[list[CheckedOffer], list[Exclusion]]:
    """Offers that can run the workload fast enough (ranking kept), and those left out."""
    kept: list[CheckedOffer] = []
    excluded: list[Exclusion] = []
    for offer in offers:
        row = offer.costed.offer
        est = offer.placement.estimate

        def drop(step: str, reason: str, row: Any = row, offer: RankedOffer = offer) -> None:
            excluded.append(Exclusion(row["provider"], row["offer_key"], offer.label, step, reason))

        support = precision_support(offer.sku, est.precision)
        if support.verdict is Verdict.NO:
            drop("precision", support.reason)
            continue
        marks = [] if support.verdict is Verdict.YES else [support.reason]
        lat = None
        if not est.workload.is_training:
            lat = latency(
                est.arch, est.precision, est.workload, offer.sku, offer.placement.tensor_parallel
            )
            missed = targets.misses(lat)
            if missed:
                drop("speed", "; ".join(missed))
                continue
            marks += targets.unknown(lat)
        kept.append(CheckedOffer(offer, support, lat, tuple(marks)))
    return kept, excluded
