"""In-stock offers that fit, every way each can be rented, with speed and cost per token.

Reads the warehouse only through ``warehouse.costed.costed_latest_offers`` (the house plan:
sizing imports warehouse queries, never flows or spiders). An offer is kept when the
provider says it can be rented now (in_stock or low), it supplies the cards a placement
needs, and the per-GPU recommendation fits the card's usable memory. Only offers their
provider's latest run confirmed count, unless ``include_stale`` (rule of truth 11: stale
rows are ranked only on request).

Speed is worked out on what the offer rents, not on the fewest cards that would hold the
model: an 8-card machine serves the workload at tensor-parallel degree 1, 2, 4 or 8 (with
8, 4, 2 or 1 copies of the model sharing the users), and a per-card offer with cards free
can be rented 1, 2, 4 or 8 at a time. ``offer_options`` lists every such (rental, degree)
of each offer; ``sizing.checks`` picks the one that serves the targets best.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from gpurent_core.catalog import GpuSku, get_catalog
from gpurent_core.cost.usage import UsageProfile
from gpurent_core.host import NVLINKED
from sizing.objective import Objective
from sizing.placement import Placement, fits_card, sku_usable_gib, usable_gib
from sizing.speed import (
    DecodeSpeed,
    Latency,
    Serving,
    cost_per_million_tokens,
    serving_latency,
)

if TYPE_CHECKING:  # the warehouse (DuckDB, Polars) loads only when offers are ranked
    import duckdb

    from warehouse.costed import CostedOffer


@dataclass(frozen=True)
class GpuFilter:
    """Only offers of one card: its model, and the size and form factor when named. An
    offer whose form factor is unknown never matches a named one (it may be the other)."""

    model: str
    vram_gb: int | None = None
    form_factor: str | None = None

    def keeps(self, offer: Mapping[str, Any]) -> bool:
        if str(offer["gpu_model"]).casefold() != self.model.casefold():
            return False
        if self.vram_gb is not None and offer["gpu_vram_gb"] != self.vram_gb:
            return False
        if self.form_factor is None:
            return True
        form = offer.get("gpu_form_factor")
        return form is not None and str(form).casefold() == self.form_factor.casefold()

    def describe(self) -> str:
        parts = [self.model, f"{self.vram_gb}GB" if self.vram_gb else "", self.form_factor or ""]
        return " ".join(p for p in parts if p)


def several_form_factors(model: str) -> bool:
    """The catalog sells ``model`` in more than one form factor (H100: PCIe, SXM, NVL)."""
    return len({s.form_factor for s in get_catalog().variants(model)}) > 1


def card_label(offer: Mapping[str, Any]) -> str:
    """A card as the sizing answer names it: "H100 80GB SXM", "RTX 4090 24GB"; a model
    sold in several form factors whose offer does not say which gets "form unsaid"."""
    vram = "?" if offer["gpu_vram_gb"] is None else offer["gpu_vram_gb"]
    text = f"{offer['gpu_model']} {vram}GB"
    if several_form_factors(str(offer["gpu_model"])):
        form = offer.get("gpu_form_factor")
        text += f" {form}" if form else " (form unsaid)"
    return text


@dataclass(frozen=True)
class RankedOffer:
    """One way to rent a costed offer that fits: the cards it rents (``costed``), the
    tensor-parallel degree each copy of the model runs at, and the speed of that rental."""

    costed: CostedOffer
    placement: Placement
    sku: GpuSku | None
    usable_gib: float
    latency: Latency | None
    """None for training runs (decode speed means nothing there)."""
    cost_per_million_tokens: Decimal | None

    @property
    def cards(self) -> int:
        return self.costed.gpus_rented

    @property
    def serving(self) -> Serving:
        return Serving(self.cards, self.placement.tensor_parallel)

    @property
    def copies(self) -> int:
        return self.serving.copies(self.placement.estimate.workload.batch)

    @property
    def speed(self) -> DecodeSpeed | None:
        """Decode of one copy of the model (what bounds it: bandwidth or compute)."""
        return None if self.latency is None else self.latency.decode

    @property
    def tokens_per_s(self) -> float | None:
        """Generated tokens a second, every user together over every copy the rental holds,
        prefill included (``sizing.speed``: the cycle)."""
        return None if self.latency is None else self.latency.tokens_per_s

    @property
    def per_user(self) -> float | None:
        return None if self.latency is None else self.latency.tokens_per_s_per_user

    @property
    def ttft_s(self) -> float | None:
        return None if self.latency is None else self.latency.ttft_s

    @property
    def ttft_worst_s(self) -> float | None:
        """First token of the last of a copy's prompts sent at once."""
        return None if self.latency is None else self.latency.ttft_worst_s

    @property
    def card(self) -> str:
        """The card and how many are rented, without the provider: "H100 80GB SXM x8"."""
        return f"{card_label(self.costed.offer)} x{self.cards}"

    @property
    def label(self) -> str:
        return f"{self.costed.offer['provider']} {self.card}"

    def as_row(self) -> dict[str, Any]:
        o, c = self.costed.offer, self.costed.cost
        return {
            "provider": o["provider"],
            "offer_key": o["offer_key"],
            "gpu_model": o["gpu_model"],
            "gpu_vram_gb": o["gpu_vram_gb"],
            # What the offer says; "figures_of" is the catalog card whose speed is used
            # (the slowest of the model's form factors when the offer does not say).
            "gpu_form_factor": o.get("gpu_form_factor"),
            "interconnect": o.get("interconnect"),
            "figures_of": self.sku.label if self.sku else None,
            "card": card_label(o),
            "gpu_count": self.cards,
            "tensor_parallel": self.placement.tensor_parallel,
            "copies": self.copies,
            "usable_gib_per_gpu": self.usable_gib,
            "need_gib_per_gpu": round(self.placement.estimate.per_gpu_gib, 2),
            "status": o["status"],
            "available_count": o["available_count"],
            "price": o["price"],
            "currency": o["currency"],
            "billing_unit": o["billing_unit"],
            "price_basis": o["price_basis"],
            "true_hourly": c.hourly_display,
            "true_monthly": c.monthly_display,
            "cost_currency": c.display_currency,
            # Parts of the cost not counted because their price is unknown: marked wherever
            # the figure is shown, as `cheapest` marks them (`*` storage, `†` traffic).
            "storage_price_unknown": c.storage_price_unknown,
            "egress_price_unknown": c.egress_price_unknown,
            "tokens_per_s": round(self.tokens_per_s, 1) if self.tokens_per_s else None,
            "decode_bound": self.speed.bound.value if self.speed else None,
            "cost_per_million_tokens": self.cost_per_million_tokens,
            "region": o["region"],
            "observed_at": o["observed_at"],
            # Not confirmed by its provider's latest run: its last good state, age_s old.
            "stale": self.stale,
            "age_s": o.get("age_s"),
            "url": o["url"],
        }

    @property
    def stale(self) -> bool:
        """Its provider's latest run did not confirm it (``latest_offers.stale``)."""
        return bool(self.costed.offer.get("stale") or False)

    @property
    def spot(self) -> bool:
        """Its headline price is a spot (interruptible) one."""
        return self.costed.offer.get("price_kind") == "spot"

    @property
    def key(self) -> tuple[str, str]:
        return (self.costed.offer["provider"], self.costed.offer["offer_key"])


def offer_sku(offer: Mapping[str, Any]) -> GpuSku | None:
    """The catalog SKU of a stored offer. When the form factor is unknown and the model has
    several at that VRAM (A800 80GB PCIe/SXM), the slowest one: speed is then not overstated."""
    catalog = get_catalog()
    form = offer.get("gpu_form_factor")
    if form:
        exact = catalog.find(offer["gpu_model"], offer["gpu_vram_gb"], form)
        if exact is not None:
            return exact
    same_size = [
        s for s in catalog.variants(offer["gpu_model"]) if s.vram_gb == offer["gpu_vram_gb"]
    ]
    if not same_size:
        return None
    return min(
        same_size,
        key=lambda s: (
            s.mem_bandwidth_gbps is None,
            s.mem_bandwidth_gbps or 0,
            s.compute_tflops or 0,
        ),
    )


def rank_key(objective: Objective, offer: RankedOffer) -> tuple[Any, ...]:
    c = offer.costed.cost
    ident = (offer.costed.offer["provider"], offer.costed.offer["offer_key"])
    if objective is Objective.HOURLY:
        return (c.hourly_display, c.monthly_display, *ident)
    if objective is Objective.PER_TOKEN:
        per_token = offer.cost_per_million_tokens
        missing = per_token is None
        return (missing, per_token or Decimal(0), c.hourly_display, *ident)
    return (c.monthly_display, c.hourly_display, *ident)


def offer_options(
    con: duckdb.DuckDBPyConnection,
    placements: Sequence[Placement],
    *,
    display_currency: str,
    usage: UsageProfile | None = None,
    include_stale: bool = False,
    gpu: GpuFilter | None = None,
    require_nvlink: bool = False,
) -> list[list[RankedOffer]]:
    """Every in-stock offer that fits, as the list of ways it can be rented (one list per
    offer, in the order the warehouse first gives them).

    Each rental is costed with ``usage`` (default: ``UsageProfile()``) for its own card
    count: storage, egress, short sessions and boot time count as on every other surface.
    A rental of N cards runs the model at every fitting degree d <= N that divides N, as
    N // d copies. Offers their provider's latest run did not confirm come only with
    ``include_stale`` (marked: ``RankedOffer.stale``). ``require_nvlink``: a degree above 1
    (one copy over several cards) only on offers whose cards are joined by NVLink (stated,
    or SXM: ``gpurent_core.host.NVLINKED``); never assumed of an offer that does not say.
    """
    from warehouse.costed import costed_latest_offers

    fitting = {p.tensor_parallel: p for p in placements if p.fits}
    options: dict[tuple[str, str], dict[tuple[int, int], RankedOffer]] = {}
    for wanted in sorted(fitting):
        profile = replace(usage or UsageProfile(), gpus=wanted)
        costed = costed_latest_offers(
            con,
            profile,
            display_currency=display_currency,
            in_stock_only=True,
            gpu_model=gpu.model if gpu else None,
            gpu_vram_gb=gpu.vram_gb if gpu else None,
            # The most cards per copy this rental can use need the least memory per card.
            min_vram_gb=smallest_nominal_vram(fitting[wanted]),
            include_stale=include_stale,
        )
        for offer in costed:
            if gpu is not None and not gpu.keeps(offer.offer):
                continue
            key = (offer.offer["provider"], offer.offer["offer_key"])
            ways = options.setdefault(key, {})
            for degree, placement in fitting.items():
                if (offer.gpus_rented, degree) in ways:
                    continue
                if require_nvlink and degree > 1 and not _nvlinked(offer.offer):
                    continue
                ranked = _fit(offer, placement)
                if ranked is not None:
                    ways[(offer.gpus_rented, degree)] = ranked
    return [list(ways.values()) for ways in options.values() if ways]


def choice_key(objective: Objective, offer: RankedOffer) -> tuple[Any, ...]:
    """Among the rentals of one offer: the cheapest by ``objective``, then the fastest
    (cheapest per token, then quickest first token for the last of a batch sent at once). A machine whose every degree costs the
    same is thereby served at the degree that gives the most tokens."""
    c = offer.costed.cost
    per_token = offer.cost_per_million_tokens
    speed = (per_token is None, per_token or Decimal(0), offer.ttft_worst_s or math.inf)
    if objective is Objective.HOURLY:
        return (c.hourly_display, c.monthly_display, *speed)
    if objective is Objective.PER_TOKEN:
        return (*speed[:2], c.hourly_display, speed[2])
    return (c.monthly_display, c.hourly_display, *speed)


def smallest_nominal_vram(placement: Placement) -> int:
    """The least nominal VRAM (GB) a card can have and still fit ``placement``.

    A card's usable memory never exceeds its nominal size (measured, or 0.97 x nominal;
    ``sizing.placement.usable_gib``, a test keeps it so), so cards below this cannot fit:
    the warehouse leaves them out before anything is costed. ``_fit`` still decides."""
    return max(0, math.ceil(placement.estimate.per_gpu_gib))


def _nvlinked(offer: Mapping[str, Any]) -> bool:
    """The offer states NVLink between its cards (or SXM modules, joined by it)."""
    return offer.get("interconnect") in NVLINKED


def _fit(offer: CostedOffer, placement: Placement) -> RankedOffer | None:
    row = offer.offer
    free = row["available_count"]
    if free is not None and int(free) == 0:
        return None  # listed, but the provider says no card is free
    cards, degree = offer.gpus_rented, placement.tensor_parallel
    if cards < degree or cards % degree:
        return None  # every copy of the model needs its own `degree` cards
    if row["gpu_vram_gb"] is None:
        return None  # unknown VRAM never counts as fitting: it may be the small variant
    sku = offer_sku(row)
    usable = sku_usable_gib(sku) if sku else usable_gib(row["gpu_model"], int(row["gpu_vram_gb"]))
    if not fits_card(placement.estimate, usable):
        return None
    est = placement.estimate
    # Decode speed means nothing for a training run: rank it by time cost only.
    lat = (
        None
        if est.workload.is_training
        else serving_latency(est.arch, est.precision, est.workload, sku, Serving(cards, degree))
    )
    total = None if lat is None else lat.tokens_per_s
    # An hour as the usage rents it (packages, minimums in), as rent-or-API counts it too.
    hourly = offer.cost.per_hour_used_display
    per_token = cost_per_million_tokens(hourly, total) if total else None
    return RankedOffer(offer, placement, sku, usable, lat, per_token)


__all__ = [
    "GpuFilter",
    "Objective",
    "RankedOffer",
    "card_label",
    "choice_key",
    "offer_options",
    "rank_key",
]
