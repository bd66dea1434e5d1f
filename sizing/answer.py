"""The whole `size` answer, composed once: the CLI and the dashboard both call ``size_answer``.

runs on the engine? (weight format and KV-cache dtype: refused in one line when not) ->
fits? (placements, at the card counts the engine can start) -> runs? (context window,
precision per card) -> fast enough? (speed targets, on the cards each offer rents) -> can I
rent it, at what true cost? (in-stock offers, ranked). Every reason string comes from here,
so both front ends say the same thing for the same inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gpurent_core.cost.usage import UsageProfile
from sizing.arch import ModelArch
from sizing.checks import Checked, SpeedTargets, check_offers
from sizing.placement import Placement, choose, degree_notes, plan
from sizing.quant import Precision
from sizing.recommend import GpuFilter, Objective, RankedOffer
from sizing.report import ModelInfo, build_report
from sizing.support import context_check, engine_check
from sizing.verdict import recommendation
from sizing.workload import Workload

NO_FIT = "no card is large enough at any tensor-parallel degree"
NO_OFFER = (
    "no in-stock offer fits this placement (sold-out and unknown-stock offers are left out); "
    "try another tier, fewer tokens, or crawl again"
)
ALL_EXCLUDED = (
    "every in-stock offer that fits was left out by the precision or speed checks (see excluded)"
)
NONE_TOLD = (
    "gpurent cannot tell whether any in-stock offer that fits runs this precision (see "
    "cannot_tell); the rest were left out (see excluded)"
)
NONE_KNOWN = (
    "no in-stock offer that fits is known to meet the targets: the rest cannot be told "
    "(see cannot_tell) or were left out (see excluded)"
)


def no_warehouse(path: object) -> str:
    return (
        f"warehouse not readable: no warehouse at {path} yet: run `gpurent crawl --replay` "
        "(offline demo) or `gpurent crawl` to rank live offers; this is the estimate alone"
    )


@dataclass(frozen=True)
class SizeQuery:
    """A resolved sizing question: the model, its precision, the workload and the market."""

    arch: ModelArch
    info: ModelInfo
    precision: Precision
    workload: Workload
    weights_bytes: float | None = None
    """Exact checkpoint bytes (--config with a safetensors index), else counted."""
    gpus: int | None = None
    objective: Objective = Objective.MONTHLY
    display_currency: str = "CNY"
    usage: UsageProfile = field(default_factory=UsageProfile)
    """How the offers are rented (hours, storage, egress, sessions); its card count is
    replaced by each placement's."""
    limit: int = 10
    targets: SpeedTargets = field(default_factory=SpeedTargets)
    allow_beyond_context: bool = False
    include_stale: bool = False
    """Also rank offers their provider's latest run did not confirm (rule of truth 11)."""
    include_spot: bool = False
    """Also rank spot (interruptible) offers: a month the provider may take back at any
    time is no month's rent, so they are left out and counted unless asked for."""
    gpu: GpuFilter | None = None
    """Only offers of this card (model, and size and form factor when named)."""
    require_nvlink: bool = False
    """A placement over several cards (tensor parallel) only on offers whose cards are
    joined by NVLink (stated, or SXM modules: ``gpurent_core.host.NVLINKED``); an offer that
    does not say how its cards are joined is left out of those. One-card placements (and
    copies of the model one card each) are unaffected."""
    notes: tuple[str, ...] = ()
    """What the front end read into the question ("llama-3-8b is sized as Llama-3.1-8B")."""


Market = Callable[[list[Placement]], tuple[list[list[RankedOffer]], str | None]]
"""Every offer that fits one of the placements, as its ways of being rented
(``recommend.offer_options``, stale ones too, marked), or none and why the market cannot be
read ("warehouse not readable: ..."). The caller reads the warehouse its one way
(``gpurent.api.warehouse``); sizing never opens it."""


def size_answer(query: SizeQuery, market: Market) -> dict[str, Any]:
    """The answer for ``query`` against ``market`` (unreadable: the estimate alone), as the
    document `gpurent size --format json` prints (``sizing.report.build_report``).

    Raises ValueError (``support.BeyondContext`` and ``support.EngineCannotRun`` among them)
    for inputs that cannot be sized.
    """
    engine_note = engine_check(query.workload, query.precision)
    warning = context_check(query.arch, query.workload, allow=query.allow_beyond_context)
    placements = plan(
        query.arch,
        query.precision,
        query.workload,
        gpus=query.gpus,
        weights_bytes=query.weights_bytes,
    )
    options, reason = _options(query, placements, market)
    checked = check_offers(options, query.targets, query.objective, placements)
    left_out = spot_left_out = 0
    if not query.include_stale:
        # Rule of truth 11: stale offers went through the same steps, so the answer can say
        # how many it leaves out; they are neither ranked nor listed apart nor excluded.
        stale = {ways[0].key for ways in options if ways and ways[0].stale}
        options, checked, left_out = _leave_out(stale, options, checked)
    if not query.include_spot:
        spot = {ways[0].key for ways in options if ways and ways[0].spot}
        options, checked, spot_left_out = _leave_out(spot, options, checked)
    filtered = not (query.include_stale and query.include_spot)
    if filtered and reason is None and not options:
        reason = NO_OFFER
    if options and not checked.kept:
        reason = ALL_EXCLUDED
        if checked.cannot_tell:
            reason = NONE_KNOWN if query.targets.any else NONE_TOLD
    speed_text = recommendation(
        checked.kept,
        checked.cannot_tell,
        checked.excluded,
        query.targets,
        query.workload,
        query.objective,
        query.limit,
    )
    report = build_report(
        query.arch,
        query.precision,
        query.workload,
        placements,
        query.info,
        objective=query.objective,
        offers=checked.kept,
        offers_reason=reason,
        display_currency=query.display_currency,
        limit=query.limit,
        excluded=checked.excluded,
        speed_text=speed_text,
        targets=query.targets,
        warnings=[warning] if warning else [],
        stale_left_out=left_out,
        spot_left_out=spot_left_out,
        cannot_tell=checked.cannot_tell,
        notes=(
            *query.notes,
            *([engine_note] if engine_note else []),
            *degree_notes(query.arch, query.precision, query.workload),
        ),
    )
    if query.gpu is not None:
        report["gpu_filter"] = query.gpu.describe()
    return report


def _leave_out(
    keys: set[tuple[str, str]], options: list[list[RankedOffer]], checked: Checked
) -> tuple[list[list[RankedOffer]], Checked, int]:
    """``options`` and ``checked`` without the offers of ``keys``, and how many of those
    the answer would have ranked (what it says it left out)."""
    if not keys:
        return options, checked, 0
    ranked = sum(1 for k in checked.kept if k.ranked.key in keys)
    return (
        [ways for ways in options if ways[0].key not in keys],
        Checked(
            kept=[k for k in checked.kept if k.ranked.key not in keys],
            cannot_tell=[k for k in checked.cannot_tell if k.ranked.key not in keys],
            excluded=[e for e in checked.excluded if (e.provider, e.offer_key) not in keys],
        ),
        ranked,
    )


def _options(
    query: SizeQuery, placements: list[Placement], market: Market
) -> tuple[list[list[RankedOffer]], str | None]:
    """Every offer that fits in memory, as its ways of being rented (stale ones too,
    marked), or none and the reason."""
    if choose(placements) is None:
        return [], NO_FIT
    options, reason = market(placements)
    if reason is not None:
        return [], reason
    if options:
        return options, None
    if query.gpu is not None:
        return [], f"{NO_OFFER} (only {query.gpu.describe()} offers were looked at: --gpu)"
    if query.require_nvlink:
        return (
            [],
            f"{NO_OFFER} (placements over several cards only on NVLink offers: --interconnect)",
        )
    return [], NO_OFFER
