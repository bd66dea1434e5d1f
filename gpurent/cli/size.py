"""`gpurent size`: GPU memory for a model and workload, the tier and card count, and the
in-stock offers that fit, ranked by true cost. `gpurent models`: the model catalog.

`size` works before any crawl: without a warehouse it prints the estimate alone, with
``offers`` empty and ``offers_reason`` saying why.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from decimal import Decimal
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from gpurent import api
from gpurent.cli.api_errors import as_usage_errors
from gpurent.cli.common import DbOption, DisplayCurrencyOption, FormatOption
from gpurent.cli.output import OutputFormat, render, to_jsonable
from gpurent.cli.queries import EGRESS_MARK, EGRESS_NOTE, STORAGE_MARK, STORAGE_NOTE
from gpurent.cli.usage_options import (
    IncludeSpotOption,
    IncludeStaleOption,
    spot_note,
    stale_note,
    usage_options,
)

if TYPE_CHECKING:
    from gpurent_core.cost.usage import UsageProfile
from sizing.arch import describe
from sizing.engines import Engine, Mode
from sizing.models import catalog
from sizing.objective import Objective

OFFER_COLUMNS = [
    "offer_id",
    "provider",
    "gpu_model",
    "gpu_vram_gb",
    "gpu_form_factor",
    "interconnect",
    "gpu_count",
    "tensor_parallel",
    "copies",
    "status",
    "available_count",
    "true_hourly",
    "true_monthly",
    "tokens_per_s",
    "tokens_per_s_per_user",
    "ttft_ms",
    "ttft_worst_ms",
    "cost_per_million_tokens",
    "cost_currency",
    "region",
    "offer_key",
    "stale",
    "note",
]

# For people: short headers, money rounded (JSON and CSV keep every digit).
TABLE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("offer_id", "id"),
    ("provider", "provider"),
    ("card", "card"),
    ("cards", "cards"),
    ("tp", "TP"),
    ("status", "status"),
    ("true_hourly", "true/h"),
    ("true_monthly", "true/month"),
    ("tokens_per_s", "tok/s"),
    ("tokens_per_s_per_user", "tok/s/user"),
    ("ttft_ms", "TTFT ms"),
    ("ttft_worst_ms", "TTFT all ms"),
    ("cost_per_million_tokens", "per M tok"),
    ("region", "region"),
)


def _table_offer(row: api.SizedOffer) -> dict[str, Any]:
    def money(value: Decimal | None, places: str) -> Decimal | None:
        return None if value is None else value.quantize(Decimal(places))

    free = row.available_count
    status = row.status + (f" ({free} free)" if free is not None else "")
    if row.stale:
        status += f", {_stale_age(row.age_s)}"
    return {
        "id": row.offer_id,
        "provider": row.provider,
        # The form factor where the model comes in several (H100 PCIe and SXM differ in speed).
        "card": row.card,
        "cards": row.gpu_count,
        "TP": row.tensor_parallel,
        "status": status,
        "true/h": _marked(money(row.true_hourly, "0.01"), row),
        "true/month": _marked(money(row.true_monthly, "0.01"), row),
        "tok/s": row.tokens_per_s,
        "tok/s/user": row.tokens_per_s_per_user,
        "TTFT ms": row.ttft_ms,
        "TTFT all ms": row.ttft_worst_ms,
        "per M tok": money(row.cost_per_million_tokens, "0.01"),
        "region": row.region,
    }


def _marked(value: Decimal | None, row: api.SizedOffer) -> Decimal | str | None:
    """A cost with `cheapest`'s marks for what it leaves out (storage `*`, traffic `†`)."""
    mark = (f" {STORAGE_MARK}" if row.storage_price_unknown else "") + (
        f" {EGRESS_MARK}" if row.egress_price_unknown else ""
    )
    return value if value is None or not mark else f"{value}{mark}"


def _cost_notes(rows: Sequence[api.SizedOffer]) -> list[str]:
    """The notes on the marks the table's rows carry."""
    return [
        note
        for note, marked in (
            (STORAGE_NOTE, any(r.storage_price_unknown for r in rows)),
            (EGRESS_NOTE, any(r.egress_price_unknown for r in rows)),
        )
        if marked
    ]


def _stale_age(age_s: int | None) -> str:
    """A row its provider's latest run did not confirm, and how old it is: "stale 2h"."""
    if age_s is None:
        return "stale"
    seconds = max(0, int(age_s))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"stale {seconds // size}{unit}"
    return f"stale {seconds}s"


def _print_table(answer: api.SizeAnswer, console: Console) -> None:
    model = answer.model
    console.print(
        Text(
            f"{model['name']} ({model['params_b']}B params, {model['active_params_b']}B active) "
            f"· {answer.precision} ({answer.bits_per_weight} bits/weight) · "
            f"KV {answer.kv_dtype} · {answer.engine} · {answer.mode}",
            style="bold",
        )
    )
    breakdown = Table(title="memory per GPU (GiB)", header_style="bold")
    breakdown.add_column("part")
    breakdown.add_column("GiB", justify="right")
    for part, value in answer.breakdown_gib.items():
        if part == "optimizer" and not value:
            continue
        breakdown.add_row(part, f"{value:.2f}")
    breakdown.add_row(
        Text("per GPU", style="bold"), Text(f"{answer.per_gpu_gib:.2f}", style="bold")
    )
    breakdown.add_row("total", f"{answer.total_gib:.2f}")
    console.print(breakdown)
    placements = Table(title="placements", header_style="bold")
    for column in ("cards", "GiB per GPU", "smallest tier", "max concurrency"):
        placements.add_column(column, justify="right")
    for p in answer.placements:
        placements.add_row(
            str(p.tensor_parallel),
            f"{p.per_gpu_gib:.2f}",
            f"{p.tier_gb} GB" if p.tier_gb else "none",
            "" if p.max_concurrency is None else str(p.max_concurrency),
        )
    console.print(placements)
    console.print(Text(answer.verdict))
    if answer.mode != "inference":
        console.print(Text("dominant terms: " + ", ".join(answer.dominant_terms)))
    for note in answer.notes:
        console.print(Text(f"· {note}", style="dim"))
    if answer.offers:
        render(
            [_table_offer(o) for o in answer.offers],
            OutputFormat.TABLE,
            columns=[header for _, header in TABLE_COLUMNS],
            title=f"in-stock offers that fit{_meeting(answer)}, by {answer.objective} "
            f"({answer.currency})",
            console=console,
        )
        for n, row in enumerate(answer.offers, start=1):
            if row.note:
                line = f"· row {n}, {row.provider} {row.card}: {row.note}"
                console.print(Text(line, style="dim"))
        for note in _cost_notes(answer.offers):
            console.print(Text(note, style="dim"))
    if answer.cannot_tell:
        # Unknown is never a yes: these are not ranked with the offers above.
        render(
            [_table_untold(o) for o in answer.cannot_tell],
            OutputFormat.TABLE,
            columns=list(UNTOLD_COLUMNS),
            title=f"cannot tell ({len(answer.cannot_tell)}): not ranked, a figure is unknown",
            console=console,
        )
    for left_out in (stale_note(answer.stale_left_out), spot_note(answer.spot_left_out)):
        if left_out:
            console.print(Text(left_out, style="dim"))
    groups = answer.left_out
    for group in groups[:LEFT_OUT_SHOWN]:
        offers = f"{group.count} offers" if group.count > 1 else "1 offer"
        console.print(
            Text(
                f"left out ({group.step}), {offers}: {group.card}: {group.reason} "
                f"[{', '.join(group.providers)}]",
                style="dim",
            )
        )
    if len(groups) > LEFT_OUT_SHOWN:
        rest = groups[LEFT_OUT_SHOWN:]
        console.print(
            Text(
                f"left out, {sum(g.count for g in rest)} more offers in {len(rest)} groups "
                "(--format json lists every offer under excluded)",
                style="dim",
            )
        )


LEFT_OUT_SHOWN = 12
"""Groups of left-out offers the table prints, largest first (JSON lists every offer)."""


def _meeting(answer: api.SizeAnswer) -> str:
    targets = answer.targets.values()
    return " and meet the targets" if any(v is not None for v in targets) else ""


UNTOLD_COLUMNS = ("provider", "card", "cards", "status", "true/h", "true/month", "why")


def _table_untold(row: api.SizedOffer) -> dict[str, Any]:
    shown = _table_offer(row)
    shown["why"] = row.note or "; ".join(row.marks)
    return {column: shown[column] for column in UNTOLD_COLUMNS}


class SizeInterconnect(StrEnum):
    """What ``size --interconnect`` can require of placements over several cards."""

    NVLINK = "nvlink"


@usage_options
def size(
    prompt_tokens: Annotated[
        int,
        typer.Option(
            "--prompt-tokens", min=0, help="Prompt tokens per sequence (size for the p95)."
        ),
    ],
    gen_tokens: Annotated[
        int, typer.Option("--gen-tokens", min=0, help="Generated tokens per sequence.")
    ],
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            "-m",
            help="Catalog model name or Hugging Face id (see `gpurent models`); a "
            "quantisation in the id (AWQ, GPTQ-Int4, FP8, Q4_K_M) is its precision.",
        ),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option("--config", help="A Hugging Face config.json (or its folder).", exists=True),
    ] = None,
    params_b: Annotated[
        float | None,
        typer.Option("--params-b", help="Only a parameter count, in billions (last resort)."),
    ] = None,
    precision: Annotated[
        str | None,
        typer.Option(
            "--precision",
            "-p",
            help="bf16, fp16, fp8, int8, gptq-int8, gptq-int4, awq, nf4, q8_0, q6_k, q5_k_m, "
            "q4_k_m, q4_0 ... Default: the checkpoint's (--config) or bf16.",
            show_default=False,
        ),
    ] = None,
    batch: Annotated[
        int, typer.Option("--batch", min=1, help="Concurrent sequences (training: micro-batch).")
    ] = 1,
    gpus: Annotated[
        int | None,
        typer.Option(
            "--gpus", min=1, help="Fix the card count (1, 2, 4 or 8).", show_default=False
        ),
    ] = None,
    engine: Annotated[Engine, typer.Option("--engine", help="Inference engine.")] = Engine.VLLM,
    mode: Annotated[
        Mode, typer.Option("--mode", help="Inference or fine-tuning.")
    ] = Mode.INFERENCE,
    kv_dtype: Annotated[
        str,
        typer.Option(
            "--kv-dtype",
            help="KV cache dtype: auto, fp16, bf16, fp32; fp8 (vLLM, SGLang); q8_0, q4_0 "
            "(llama.cpp). One the engine has no cache for is refused.",
        ),
    ] = "auto",
    lora_rank: Annotated[int, typer.Option("--lora-rank", min=1, help="LoRA rank.")] = 16,
    objective: Annotated[
        Objective, typer.Option("--objective", help="Rank fitting offers by this.")
    ] = Objective.MONTHLY,
    ttft_ms: Annotated[
        float | None,
        typer.Option(
            "--ttft-ms",
            min=0.001,
            help=(
                "Target time to first token (ms) for every one of --batch users, the last of "
                "their prompts sent at once; slower cards are left out."
            ),
        ),
    ] = None,
    tokens_per_s: Annotated[
        float | None,
        typer.Option(
            "--tokens-per-s",
            min=0.001,
            help="Target decode speed per user at --batch users; slower cards are left out.",
        ),
    ] = None,
    allow_beyond_context: Annotated[
        bool,
        typer.Option(
            "--allow-beyond-context",
            help="Size a prompt + generation longer than the model's context window (warned).",
        ),
    ] = False,
    gpu: Annotated[
        str | None,
        typer.Option(
            "--gpu",
            help="Only offers of this card, read as a provider's name is ('H100', 'H100 SXM', "
            "'A100 80G'); a form factor named keeps only offers that say it.",
            show_default=False,
        ),
    ] = None,
    interconnect: Annotated[
        SizeInterconnect | None,
        typer.Option(
            "--interconnect",
            case_sensitive=False,
            help="nvlink: a placement that splits the model over several cards only on offers "
            "whose cards are joined by NVLink (stated, or SXM modules); offers that do not say "
            "how their cards are joined are left out of it. One-card placements are unaffected.",
            show_default=False,
        ),
    ] = None,
    compare_api: Annotated[
        bool,
        typer.Option(
            "--compare-api",
            help="Set each offer's cost per request beside serverless APIs serving the same "
            "model (or one of its architecture), dated and sourced, with the break-even use. "
            "Default load: full (--batch requests in flight every hour paid).",
        ),
    ] = False,
    utilisation: Annotated[
        float | None,
        typer.Option(
            "--utilisation",
            min=0.0001,
            max=1.0,
            help="With --compare-api: the share of a rental's capacity used on average, 0-1 "
            "(implies --compare-api).",
            show_default=False,
        ),
    ] = None,
    requests_per_day: Annotated[
        int | None,
        typer.Option(
            "--requests-per-day",
            min=1,
            help="With --compare-api: the load as requests a day instead (more rentals when "
            "one is not enough; implies --compare-api).",
            show_default=False,
        ),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="Offers to show.")] = 10,
    currency: DisplayCurrencyOption = None,
    db: DbOption = None,
    fmt: FormatOption = OutputFormat.TABLE,
    include_stale: IncludeStaleOption = False,
    include_spot: IncludeSpotOption = False,
    *,
    usage: UsageProfile,
) -> None:
    """How much GPU memory a model and workload need, on which cards, and what fits in stock.

    Per GPU: weights + KV cache + activations + overhead + headroom, on 1, 2, 4 or 8 cards.

    Each VRAM tier is judged by its usable memory, not its label.

    In-stock offers that fit are ranked by true monthly or hourly cost, or per token; only
    offers their provider's latest run confirmed, unless --include-stale; spot (interruptible)
    offers are left out and counted, unless --include-spot.

    Before any crawl (no warehouse yet) it prints the estimate alone.
    """
    with as_usage_errors():
        answer = api.size(
            model,
            config=config,
            params_b=params_b,
            precision=precision,
            prompt_tokens=prompt_tokens,
            gen_tokens=gen_tokens,
            batch=batch,
            gpus=gpus,
            engine=engine,
            mode=mode,
            kv_dtype=kv_dtype,
            lora_rank=lora_rank,
            objective=objective,
            ttft_ms=ttft_ms,
            tokens_per_s=tokens_per_s,
            allow_beyond_context=allow_beyond_context,
            usage=usage,
            currency=currency,
            limit=limit,
            db=db,
            include_stale=include_stale,
            include_spot=include_spot,
            gpu=gpu,
            interconnect=interconnect.value if interconnect else None,
            compare_api=compare_api,
            utilisation=utilisation,
            requests_per_day=requests_per_day,
        )
    if fmt is OutputFormat.JSON:
        sys.stdout.write(
            json.dumps(to_jsonable(answer.report), ensure_ascii=False, indent=2) + "\n"
        )
    elif fmt is OutputFormat.CSV:
        render(answer.report["offers"], fmt, columns=OFFER_COLUMNS)
        for left_out in (stale_note(answer.stale_left_out), spot_note(answer.spot_left_out)):
            if left_out:
                typer.echo(left_out, err=True)  # stdout stays CSV
        untold = len(answer.cannot_tell)
        if untold:  # never among the rows: a figure they need is unknown
            typer.echo(
                f"{untold} offer{'s' if untold > 1 else ''} set apart, not ranked: gpurent "
                "cannot tell (--format json lists them under cannot_tell)",
                err=True,
            )
    else:
        console = Console()
        _print_table(answer, console)
        if answer.rent_or_api is not None:
            # Loaded only when asked: the comparison's modules cost ~25 ms of every start-up.
            from gpurent.cli.rent_or_api_view import print_rent_or_api

            print_rent_or_api(answer.rent_or_api, console)


MODEL_TABLE_HEADERS: dict[str, str] = {
    "name": "model",
    "params_b": "B params",
    "active_params_b": "B active",
    "layers": "layers",
    "kv_heads": "KV heads",
    "kv_kib_per_token": "KV KiB/tok",
    "context": "context",
    "attention": "attention",
}


def models(fmt: FormatOption = OutputFormat.TABLE) -> None:
    """List the model catalog: architecture facts `gpurent size --model` uses, with sources."""
    rows = []
    for entry in catalog().values():
        facts = describe(entry.arch)
        attention = facts.get("attention") or (
            "GQA" if entry.arch.num_kv_heads < entry.arch.num_heads else "MHA"
        )
        if entry.arch.is_moe:
            attention = f"{attention}, MoE {facts['experts']}"
        row: dict[str, Any] = {
            "name": entry.name,
            "params_b": entry.params_b,
            "active_params_b": entry.active_params_b or facts["active_params_b"],
            "layers": facts["layers"],
            "hidden_size": facts["hidden_size"],
            "heads": facts["heads"],
            "kv_heads": facts["kv_heads"] if facts["kv_heads"] is not None else "MLA",
            "head_dim": facts["head_dim"],
            "kv_kib_per_token": facts["kv_kib_per_token_bf16"],
            "context": entry.arch.max_position_embeddings,
            "attention": attention,
            "vocab_size": facts["vocab_size"],
        }
        if fmt is OutputFormat.TABLE:
            row = {header: row[key] for key, header in MODEL_TABLE_HEADERS.items()}
        else:
            row["aliases"] = (
                "|".join(entry.aliases) if fmt is OutputFormat.CSV else list(entry.aliases)
            )
            row["source"] = entry.source
        rows.append(row)
    render(rows, fmt, title="model catalog (KV per token at 16 bits, all layers)")


# The commands of this module; the console script (gpurent.cli.app) adds them to its app.
app = typer.Typer()

app.command("size")(size)
app.command("models")(models)
