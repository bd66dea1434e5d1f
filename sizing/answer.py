"""The whole `size` answer, composed once: the CLI and the dashboard both call ``size_answer``.

fits? (placements) -> runs? (context window, precision per card) -> fast enough? (speed
targets per placement) -> can I rent it, at what true cost? (in-stock offers, ranked). Every
reason string comes from here, so both front ends say the same thing for the same inputs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpurent_core.costing import UsageProfile
from sizing.arch import ModelArch
from sizing.checks import CheckedOffer, Exclusion, SpeedTargets, check_offers
from sizing.placement import Placement, choose, plan
from sizing.quant import Precision
from sizing.recommend import Objective, RankedOffer, fitting_offers
from sizing.report import ModelInfo, build_report
from sizing.support import context_check
from sizing.verdict import speed_verdict
from sizing.workload import Workload

NO_FIT = "no card is large enough at any tensor-parallel degree"
NO_OFFER = (
    "no in-stock offer fits this placement (sold-out and unknown-stock offers are left out); "
    "try another tier, fewer tokens, or crawl again"
)
ALL_EXCLUDED = (
    "every in-stock offer that fits was left out by the precision or speed checks (see excluded)"
)


def no_warehouse(path: Path) -> str:
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


@dataclass(frozen=True)
class SizeAnswer:
    report: dict[str, Any]
    """What `gpurent size --format json` prints."""
    offers: list[CheckedOffer]
    """Every offer that fits, runs and meets the targets, ranked."""
    excluded: list[Exclusion]
    stale_left_out: int = 0
    """Offers that would be in ``offers`` but their provider's latest run did not confirm
    them (left out unless ``SizeQuery.include_stale``)."""


def size_answer(query: SizeQuery, db: Path) -> SizeAnswer:
    """The answer for ``query`` against the warehouse at ``db`` (absent: the estimate alone).

    Raises ValueError (``support.BeyondContext`` among them) for inputs that cannot be sized.
    """
    warning = context_check(query.arch, query.workload, allow=query.allow_beyond_context)
    placements = plan(
        query.arch,
        query.precision,
        query.workload,
        gpus=query.gpus,
        weights_bytes=query.weights_bytes,
    )
    ranked, reason = _ranked(query, placements, db)
    kept, excluded = check_offers(ranked, query.targets)
    left_out = 0
    if not query.include_stale:
        # Rule of truth 11: stale offers went through the same steps, so the answer can say
        # how many it leaves out; they are neither ranked nor listed as excluded.
        stale = {_key(r) for r in ranked if r.stale}
        left_out = sum(1 for k in kept if _key(k.ranked) in stale)
        ranked = [r for r in ranked if _key(r) not in stale]
        kept = [k for k in kept if _key(k.ranked) not in stale]
        excluded = [e for e in excluded if (e.provider, e.offer_key) not in stale]
        if reason is None and not ranked:
            reason = NO_OFFER
    if ranked and not kept:
        reason = ALL_EXCLUDED
    report = build_report(
        query.arch,
        query.precision,
        query.workload,
        placements,
        query.info,
        objective=query.objective,
        offers=kept,
        offers_reason=reason,
        display_currency=query.display_currency,
        limit=query.limit,
        excluded=excluded,
        speed_text=speed_verdict(kept, excluded, query.targets, query.workload),
        targets=query.targets,
        warnings=[warning] if warning else [],
        stale_left_out=left_out,
    )
    return SizeAnswer(report=report, offers=kept, excluded=excluded, stale_left_out=left_out)


def _key(offer: RankedOffer) -> tuple[str, str]:
    return (offer.costed.offer["provider"], offer.costed.offer["offer_key"])


def _ranked(
    query: SizeQuery, placements: list[Placement], db: Path
) -> tuple[list[RankedOffer], str | None]:
    """Offers that fit in memory, ranked (stale ones too, marked), or none and the reason."""
    if choose(placements) is None:
        return [], NO_FIT
    from warehouse.db import configured_lake, reading

    if not db.exists() and configured_lake() is None:
        return [], no_warehouse(db)
    from warehouse.errors import WarehouseError, WarehouseMissing

    try:
        with reading(db) as con:
            offers = fitting_offers(
                con,
                placements,
                objective=query.objective,
                display_currency=query.display_currency,
                usage=query.usage,
                include_stale=True,  # size_answer leaves them out unless asked, and counts them
            )
    except WarehouseMissing:
        return [], no_warehouse(db)
    except WarehouseError as exc:
        return [], f"warehouse not readable: {exc}"
    return offers, None if offers else NO_OFFER
