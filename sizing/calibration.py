"""Scoring the estimator against measured peaks (``measured_memory.csv``), like with like.

Each CSV row names a model (``arch_key``), a precision or training recipe, the workload and
how memory was measured (``measurement_family``). A row is turned into a Workload for the
estimator, and the estimate is compared on the row's own basis:

* ``hf_new`` / ``hf_legacy_logits``: ``torch.cuda.max_memory_allocated`` summed over GPUs,
  so the CUDA context and other non-torch memory are left out of the estimate too;
  the legacy family runs Transformers 4.38, which materialises whole-prompt logits.
* ``hf_glm4``: nvidia-smi-style peak, CUDA context included.
* ``ft_qwen1``: GPU memory of a fine-tuning run (multi-GPU rows are totals over the GPUs).

Nothing here looks a row up: every number comes from the model's architecture and the
workload, with the engine constants in engines.py and training.py.
"""

from __future__ import annotations

import csv
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from sizing.engines import Engine, Mode
from sizing.memory import estimate_memory
from sizing.models import get_model
from sizing.quant import get_precision
from sizing.workload import MemoryEstimate, Workload

TORCH_ALLOCATED_FAMILIES = frozenset({"hf_new", "hf_legacy_logits"})
QWEN_FINETUNE_LORA_RANK = 64
"""Qwen's finetune.py default (--lora_r 64), used for the ft_qwen1 profiles."""

TARGET_MEDIAN_ABS_ERROR_PCT = 5.0
TARGET_COVERAGE_PCT = 95.0


@dataclass(frozen=True)
class ScoredRow:
    """One measurement and the estimate compared with it."""

    family: str
    model: str
    precision: str
    input_tokens: int
    output_tokens: int
    batch: int
    gpus: int
    measured_gib: float
    predicted_gib: float
    """The estimate on the row's basis (torch-allocated or device), summed over GPUs."""
    recommended_gib: float
    """The same with the estimator's headroom: what it would tell a user to provision."""

    @property
    def error_pct(self) -> float:
        return (self.predicted_gib - self.measured_gib) / self.measured_gib * 100

    @property
    def covered(self) -> bool:
        return self.recommended_gib >= self.measured_gib


@dataclass(frozen=True)
class Score:
    rows: tuple[ScoredRow, ...]

    @property
    def median_abs_error_pct(self) -> float:
        return statistics.median(abs(r.error_pct) for r in self.rows)

    @property
    def mean_abs_error_pct(self) -> float:
        return statistics.fmean(abs(r.error_pct) for r in self.rows)

    @property
    def coverage_pct(self) -> float:
        return 100 * sum(r.covered for r in self.rows) / len(self.rows)

    @property
    def median_error_pct(self) -> float:
        """Signed: negative means the estimator runs low."""
        return statistics.median(r.error_pct for r in self.rows)

    def by_family(self) -> dict[str, Score]:
        families: dict[str, list[ScoredRow]] = {}
        for row in self.rows:
            families.setdefault(row.family, []).append(row)
        return {name: Score(tuple(rows)) for name, rows in sorted(families.items())}

    def meets_targets(self) -> bool:
        return (
            self.median_abs_error_pct <= TARGET_MEDIAN_ABS_ERROR_PCT
            and self.coverage_pct >= TARGET_COVERAGE_PCT
        )


def _training_recipe(label: str) -> tuple[Mode, str, bool, bool]:
    """(mode, base precision, train embeddings, replicate across GPUs) for an ft_qwen1
    ``precision`` cell such as "LoRA(emb)", "Q-LoRA(GPTQ-Int4)", "LoRA(multinode 2x2)"."""
    text = label.lower()
    if text.startswith("q-lora"):
        inner = text[text.find("(") + 1 : text.rfind(")")] if "(" in text else "nf4"
        return Mode.QLORA, inner, False, False
    if text.startswith("full"):
        return Mode.FULL, "bf16", False, False
    return Mode.LORA, "bf16", "(emb)" in text, "multinode" in text


def row_estimate(row: dict[str, str]) -> tuple[MemoryEstimate, bool]:
    """The estimate for a CSV row, and whether the row is torch-allocated."""
    family = row["measurement_family"]
    arch = get_model(row["arch_key"])
    gpus = int(row["n_gpu"])
    prompt, gen, batch = int(row["input_tokens"]), int(row["output_tokens"]), int(row["batch"])
    if row["kind"] == "finetune":
        mode, precision, embeddings, replicate = _training_recipe(row["precision"])
        workload = Workload(
            prompt_tokens=prompt,
            gen_tokens=gen,
            batch=batch,
            engine=Engine.HF,
            mode=mode,
            lora_rank=QWEN_FINETUNE_LORA_RANK,
            train_embeddings=embeddings,
            replicate_across_gpus=replicate,
            full_prompt_logits=True,  # Qwen's finetune.py ran Transformers 4.32 (< 4.45)
        )
        return estimate_memory(arch, get_precision(precision), workload, gpus), False
    workload = Workload(
        prompt_tokens=prompt,
        gen_tokens=gen,
        batch=batch,
        engine=Engine.HF,
        full_prompt_logits=family == "hf_legacy_logits",
    )
    estimate = estimate_memory(arch, get_precision(row["precision"]), workload, gpus)
    return estimate, family in TORCH_ALLOCATED_FAMILIES


def score_row(row: dict[str, str]) -> ScoredRow:
    estimate, torch_only = row_estimate(row)
    b = estimate.breakdown
    per_gpu = b.torch_allocated if torch_only else b.need
    predicted = per_gpu * estimate.gpus
    recommended = (per_gpu + estimate.workload.headroom_gib(per_gpu)) * estimate.gpus
    return ScoredRow(
        family=row["measurement_family"],
        model=row["model"],
        precision=row["precision"],
        input_tokens=int(row["input_tokens"]),
        output_tokens=int(row["output_tokens"]),
        batch=int(row["batch"]),
        gpus=estimate.gpus,
        measured_gib=float(row["measured_gib"]),
        predicted_gib=predicted,
        recommended_gib=recommended,
    )


def read_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def score(rows: Iterable[dict[str, str]]) -> Score:
    return Score(tuple(score_row(r) for r in rows))


def score_file(path: Path) -> Score:
    return score(read_rows(path))


def format_report(result: Score, *, worst: int = 10) -> str:
    """A plain-text report: overall and per-family figures, then the worst rows."""
    lines = [
        f"rows: {len(result.rows)}",
        f"median |error|: {result.median_abs_error_pct:.2f} %   "
        f"(target <= {TARGET_MEDIAN_ABS_ERROR_PCT:g} %)",
        f"mean |error|:   {result.mean_abs_error_pct:.2f} %",
        f"coverage:       {result.coverage_pct:.1f} % of rows where the recommended total "
        f"(with headroom) >= measured   (target >= {TARGET_COVERAGE_PCT:g} %)",
        "",
        f"{'family':18s} {'rows':>5s} {'median|err|%':>13s} {'median err%':>12s} "
        f"{'coverage%':>10s}",
    ]
    for name, fam in result.by_family().items():
        lines.append(
            f"{name:18s} {len(fam.rows):5d} {fam.median_abs_error_pct:13.2f} "
            f"{fam.median_error_pct:12.2f} {fam.coverage_pct:10.1f}"
        )
    lines += ["", f"worst {worst} rows by |error|:"]
    lines += [_row_line(r) for r in _worst(result.rows, worst)]
    missed = [r for r in result.rows if not r.covered]
    lines += ["", f"rows not covered by the recommendation: {len(missed)}"]
    lines += [_row_line(r) for r in missed]
    return "\n".join(lines)


def _worst(rows: Sequence[ScoredRow], n: int) -> list[ScoredRow]:
    return sorted(rows, key=lambda r: abs(r.error_pct), reverse=True)[:n]


def _row_line(r: ScoredRow) -> str:
    return (
        f"  {r.family:16s} {r.model:24s} {r.precision:22s} in={r.input_tokens:<6d} "
        f"out={r.output_tokens:<5d} gpus={r.gpus} measured={r.measured_gib:8.2f} "
        f"predicted={r.predicted_gib:8.2f} ({r.error_pct:+6.1f} %) "
        f"recommended={r.recommended_gib:8.2f}"
    )


# --- fine-tuning measurements from other sources (sizing/data/training_measurements.csv) ---

TRAINING_MEASUREMENTS = Path(__file__).resolve().parent / "data" / "training_measurements.csv"
"""Published fine-tuning peaks (ms-swift's benchmark, Unsloth's Hugging Face baseline,
torchtune), one run a row with its settings and source. Rows marked ``scored=no`` use a
layout the estimator does not model (pure-bf16 AdamW, fused or chunked losses, activation
offloading) and are kept as facts, not scored."""

_TRAINING_MODES = {"full": Mode.FULL, "lora": Mode.LORA, "qlora": Mode.QLORA}


def training_row_estimate(row: dict[str, str]) -> MemoryEstimate:
    """The estimate for a training_measurements.csv row. ``device_map`` rows split the
    layers over the GPUs (naive model parallelism): their total is one model's need."""
    gpus = 1 if row["parallel"] == "device_map" else int(row["n_gpu"])
    mode = _TRAINING_MODES[row["method"]]
    workload = Workload(
        prompt_tokens=int(row["seq_len"]),
        gen_tokens=0,
        batch=int(row["batch"]),
        engine=Engine.HF,
        mode=mode,
        lora_rank=max(1, int(row["lora_rank"])),
        gradient_checkpointing=row["gradient_checkpointing"] == "yes",
    )
    arch = get_model(row["arch_key"])
    return estimate_memory(arch, get_precision(row["base_precision"]), workload, gpus)


def score_training_row(row: dict[str, str]) -> ScoredRow:
    """Compared on the row's basis: ``device`` and ``vram_cap`` (the longest context that
    fits the card) with the whole need, torch-counted peaks without the CUDA context."""
    estimate = training_row_estimate(row)
    b = estimate.breakdown
    per_gpu = b.need if row["basis"] == "device" else b.torch_allocated
    recommended = (per_gpu + estimate.workload.headroom_gib(per_gpu)) * estimate.gpus
    return ScoredRow(
        family=f"{row['method']}:{row['value_kind']}",
        model=row["model"],
        precision=row["base_precision"],
        input_tokens=int(row["seq_len"]),
        output_tokens=0,
        batch=int(row["batch"]),
        gpus=estimate.gpus,
        measured_gib=float(row["measured_gib"]),
        predicted_gib=per_gpu * estimate.gpus,
        recommended_gib=recommended,
    )


def score_training_file(path: Path = TRAINING_MEASUREMENTS) -> Score:
    """The scored rows of a training-measurements file."""
    return Score(tuple(score_training_row(r) for r in read_rows(path) if r["scored"] == "yes"))


def training_rows_of(result: Score) -> Score:
    """The fine-tuning rows of a measured_memory.csv score (family ft_qwen1)."""
    return Score(tuple(r for r in result.rows if r.family == "ft_qwen1"))
