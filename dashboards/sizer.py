"""The sizing form's answer, through the library API (``gpurent.api.size``), the same call
`gpurent size` makes: the dashboard and the CLI give the same estimate, checks, reasons,
ranking and verdict for the same inputs; and the parts of the answer the page shows beside
the ranked table, in the page's language, as `gpurent size` prints them: the offers that
cannot be told (their own table, with why), the left-out offers grouped by reason with
counts, and how a ranked offer meets the targets.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import pandas as pd

from dashboards.i18n import Lang, enum_label, money, status_label, t
from dashboards.tables import safe_url
from dashboards.verdicts import reason_text
from gpurent import api
from gpurent.api import Engine, LeftOutGroup, Mode, Objective, SizeAnswer, SizedOffer

__all__ = [
    "LEFT_OUT_SHOWN",
    "SizeAnswer",
    "SizeRequest",
    "SizingError",
    "left_out_lines",
    "row_notes",
    "size_workload",
    "untold_table",
]


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
    require_nvlink: bool = False
    """Placements over several cards only where the cards are joined by NVLink."""
    compare_api: bool = False
    """Set the offers beside serverless APIs serving the model (`size --compare-api`)."""
    utilisation: Decimal | None = None
    """With ``compare_api``: the share of a rental's capacity used (None: full load)."""


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
            interconnect="nvlink" if req.require_nvlink else None,
            compare_api=req.compare_api,
            utilisation=req.utilisation if req.compare_api else None,
        )
    except api.ApiError as exc:
        raise SizingError(str(exc)) from exc


# --- what the page shows beside the ranked offers --------------------------------------------

LEFT_OUT_SHOWN = 12
"""Groups of left-out offers the page lists, largest first (as `gpurent size` prints them);
the rest are counted on one line."""


def untold_table(rows: Sequence[SizedOffer], lang: Lang) -> pd.DataFrame:
    """The offers the answer cannot tell (``SizeAnswer.cannot_tell``): never ranked, so
    without rank or speed columns, each with why it cannot be told."""
    out = []
    for r in rows:
        cur = r.cost_currency
        why = r.note or "; ".join(r.marks)
        out.append(
            {
                t(lang, "col_provider"): r.provider,
                t(lang, "col_gpu"): reason_text(r.card, lang),  # "(form unsaid)"
                t(lang, "col_count"): r.gpu_count,
                t(lang, "col_status"): status_label(lang, r.status),
                t(lang, "col_free"): "" if r.available_count is None else str(r.available_count),
                t(lang, "col_true_hourly"): money(r.true_hourly, cur),
                t(lang, "col_true_monthly"): money(r.true_monthly, cur),
                t(lang, "col_why"): reason_text(why, lang),
                t(lang, "col_offer_id"): r.offer_id,
                t(lang, "col_link"): safe_url(r.url),
            }
        )
    keys = (
        "col_provider", "col_gpu", "col_count", "col_status", "col_free", "col_true_hourly",
        "col_true_monthly", "col_why", "col_offer_id", "col_link",
    )  # fmt: skip
    return pd.DataFrame(out, columns=[t(lang, k) for k in keys])


def left_out_lines(
    groups: Sequence[LeftOutGroup], lang: Lang, *, shown: int = LEFT_OUT_SHOWN
) -> list[str]:
    """``SizeAnswer.left_out`` as lines: one per group of offers left out for the same
    reason on the same card (its count and providers), the largest ``shown``, then one
    line counting the rest. Every offer stays in ``SizeAnswer.excluded``."""
    lines = [
        t(
            lang,
            "size_left_out_group",
            offers=t(lang, "size_n_offers" if g.count > 1 else "size_one_offer", n=g.count),
            # Which check left it out, in words ("size_step_speed"); an unknown one as is.
            step=enum_label(lang, "size_step", g.step),
            card=reason_text(g.card, lang),
            reason=reason_text(g.reason, lang),
            providers=", ".join(g.providers),
        )
        for g in groups[:shown]
    ]
    rest = groups[shown:]
    if rest:
        lines.append(t(lang, "size_left_out_more", n=sum(g.count for g in rest), groups=len(rest)))
    return lines


def row_notes(rows: Sequence[SizedOffer], lang: Lang) -> list[str]:
    """How a ranked offer meets the targets when that takes more cards than its cheapest
    rental ("meets 1000 ms with 4 cards (2358 ms on 1)"), one line per row that has one."""
    return [
        t(
            lang,
            "size_row_note",
            n=n,
            offer=f"{r.provider} {r.card}",
            note=reason_text(r.note, lang),
        )
        for n, r in enumerate(rows, start=1)
        if r.note
    ]
