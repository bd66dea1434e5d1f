"""The sizing form's answer, through the one function `gpurent size` calls too.

SizeRequest -> catalog model + Workload -> ``sizing.answer.size_answer``: the dashboard and
the CLI give the same estimate, checks, reasons, ranking and verdict for the same inputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from sizing.answer import SizeQuery, size_answer
from sizing.checks import CheckedOffer, Exclusion, SpeedTargets
from sizing.engines import Engine, Mode
from sizing.models import UnknownModel, get_entry
from sizing.quant import UnknownPrecision, get_precision, kv_bytes_per_element
from sizing.recommend import Objective
from sizing.report import ModelInfo
from sizing.workload import Workload


class SizingError(ValueError):
    """The form's inputs cannot be sized (unknown model, bad precision, impossible split,
    a sequence longer than the model's context window)."""


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
    ttft_ms: float | None = None
    tokens_per_s: float | None = None
    """Per user, at ``batch`` users."""
    allow_beyond_context: bool = False


@dataclass(frozen=True)
class SizeAnswer:
    report: dict[str, Any]
    """``sizing.answer.size_answer``'s document (what `gpurent size --format json` prints)."""
    offers: list[CheckedOffer]
    """Every offer that fits, runs and meets the targets, ranked (the report keeps the
    first ``limit`` as rows)."""
    excluded: list[Exclusion]


def size_workload(db: Path, req: SizeRequest) -> SizeAnswer:
    """The estimate and, when the warehouse can be read, the ranked offers that fit."""
    try:
        entry = get_entry(req.model)
        kv_bytes_per_element(req.kv_dtype)
        query = SizeQuery(
            arch=entry.arch,
            info=ModelInfo("catalog", entry.source, entry.params_b),
            precision=get_precision(req.precision),
            workload=Workload(
                prompt_tokens=req.prompt_tokens,
                gen_tokens=req.gen_tokens,
                batch=req.batch,
                engine=req.engine,
                mode=req.mode,
                kv_dtype=req.kv_dtype,
            ),
            objective=req.objective,
            display_currency=req.display_currency,
            hours_per_month=req.hours_per_month,
            limit=req.limit,
            targets=SpeedTargets(ttft_ms=req.ttft_ms, tokens_per_s=req.tokens_per_s),
            allow_beyond_context=req.allow_beyond_context,
        )
        answer = size_answer(query, db)
    except (UnknownModel, UnknownPrecision, ValueError) as exc:
        raise SizingError(str(exc)) from exc
    return SizeAnswer(report=answer.report, offers=answer.offers, excluded=answer.excluded)
