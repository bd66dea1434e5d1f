"""The sizing form's answer, through the library API (``gpurent.api.size``), the same call
`gpurent size` makes: the dashboard and the CLI give the same estimate, checks, reasons,
ranking and verdict for the same inputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from gpurent import api
from gpurent.api import Engine, Mode, Objective, SizeAnswer

__all__ = ["SizeAnswer", "SizeRequest", "SizingError", "size_workload"]


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
    hours_per_month: Decimal = api.usage().hours_per_month
    display_currency: str = "CNY"
    limit: int = 20
    ttft_ms: float | None = None
    tokens_per_s: float | None = None
    """Per user, at ``batch`` users."""
    allow_beyond_context: bool = False
    include_stale: bool = False
    """Also rank offers their provider's latest run did not confirm (rule of truth 11)."""


def size_workload(db: Path, req: SizeRequest) -> SizeAnswer:
    """The estimate and, when the warehouse can be read, the ranked offers that fit."""
    try:
        return api.size(
            req.model,
            precision=req.precision,
            prompt_tokens=req.prompt_tokens,
            gen_tokens=req.gen_tokens,
            batch=req.batch,
            engine=req.engine,
            mode=req.mode,
            kv_dtype=req.kv_dtype,
            objective=req.objective,
            ttft_ms=req.ttft_ms,
            tokens_per_s=req.tokens_per_s,
            allow_beyond_context=req.allow_beyond_context,
            usage=api.usage(hours_per_month=req.hours_per_month),
            currency=req.display_currency,
            limit=req.limit,
            db=db,
            include_stale=req.include_stale,
        )
    except api.ApiError as exc:
        raise SizingError(str(exc)) from exc
