"""The sizing form's answer, through the same functions `gpurent size` calls.

get_entry -> Workload -> plan -> fitting_offers (read-only warehouse) -> build_report, so
the dashboard and the CLI give the same estimate, tier and ranking for the same inputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from dashboards.data import DataUnavailable, reader
from sizing.engines import Engine, Mode
from sizing.models import UnknownModel, get_entry
from sizing.placement import Placement, choose, plan
from sizing.quant import UnknownPrecision, get_precision, kv_bytes_per_element
from sizing.recommend import Objective, RankedOffer, fitting_offers
from sizing.report import ModelInfo, build_report
from sizing.workload import Workload


class SizingError(ValueError):
    """The form's inputs cannot be sized (unknown model, bad precision, impossible split)."""


@dataclass(frozen=True)
class SizeRequest:
    """The sizing form."""

    model: str
    precision: str = "bf16"
    prompt_tokens: int = 2048
    gen_tokens: int = 512
    batch: int = 1
    engine: Engine = Engine.VLLM
    mode: Mode = Mode.INFERENCE
    kv_dtype: str = "auto"
    objective: Objective = Objective.MONTHLY
    hours_per_month: Decimal = Decimal(730)
    display_currency: str = "CNY"
    limit: int = 20


@dataclass(frozen=True)
class SizeAnswer:
    report: dict[str, Any]
    """``sizing.report.build_report``'s document (what `gpurent size --format json` prints)."""
    offers: list[RankedOffer]
    """Every fitting offer, ranked (the report keeps the first ``limit`` as rows)."""


def size_workload(db: Path, req: SizeRequest) -> SizeAnswer:
    """The estimate and, when the warehouse can be read, the ranked offers that fit."""
    try:
        entry = get_entry(req.model)
        precision = get_precision(req.precision)
        kv_bytes_per_element(req.kv_dtype)
        workload = Workload(
            prompt_tokens=req.prompt_tokens,
            gen_tokens=req.gen_tokens,
            batch=req.batch,
            engine=req.engine,
            mode=req.mode,
            kv_dtype=req.kv_dtype,
        )
        placements = plan(entry.arch, precision, workload)
    except (UnknownModel, UnknownPrecision, ValueError) as exc:
        raise SizingError(str(exc)) from exc
    offers, reason = _offers(db, placements, req)
    report = build_report(
        entry.arch,
        precision,
        workload,
        placements,
        ModelInfo("catalog", entry.source, entry.params_b),
        objective=req.objective,
        offers=offers,
        offers_reason=reason,
        display_currency=req.display_currency,
        limit=req.limit,
    )
    return SizeAnswer(report=report, offers=offers)


def _offers(
    db: Path, placements: list[Placement], req: SizeRequest
) -> tuple[list[RankedOffer], str | None]:
    if choose(placements) is None:
        return [], "no card is large enough at any tensor-parallel degree"
    try:
        with reader(db) as con:
            offers = fitting_offers(
                con,
                placements,
                objective=req.objective,
                display_currency=req.display_currency,
                hours_per_month=req.hours_per_month,
            )
    except DataUnavailable as exc:
        return [], f"warehouse not readable: {exc}"
    if not offers:
        return [], "no in-stock offer fits this placement"
    return offers, None
