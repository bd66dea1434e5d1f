"""``size``: the GPU memory a model and workload need, the placements that fit, and the
in-stock offers that can run it, ranked by true cost (``sizing.answer.size_answer``).

Works before any crawl: without a warehouse the answer is the estimate alone, with no
offers and ``offers_reason`` saying why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpurent.api.errors import ApiError, UnknownName
from gpurent.api.names import display_currency, offer_id
from gpurent.api.profile import usage as make_usage
from gpurent.api.warehouse import refuse_directory, resolve_db
from gpurent_core.costing import UsageProfile
from sizing.checks import CheckedOffer, Exclusion, SpeedTargets
from sizing.engines import Engine, Mode
from sizing.objective import Objective

__all__ = ["CannotSize", "Engine", "Mode", "Objective", "SizeAnswer", "size"]


class CannotSize(ApiError):
    """A workload that cannot be sized: an impossible split, a sequence beyond the model's
    context window (unless allowed), a config that cannot be read, a --precision that
    contradicts the checkpoint's own (an AWQ model id sized as bf16)."""


@dataclass(frozen=True)
class SizeAnswer:
    report: dict[str, Any]
    """The whole answer as a document (what `gpurent size --format json` prints): model,
    memory per placement, the chosen tier, offers, excluded offers and why, speed verdict."""
    offers: list[CheckedOffer]
    """Every offer that fits, runs and meets the speed targets, ranked (``report`` keeps the
    first ``limit``)."""
    excluded: list[Exclusion]
    """Offers that fit in memory but cannot run the workload (precision, speed), with reasons."""
    stale_left_out: int = 0
    """Offers that would be in ``offers`` but that their provider's latest run did not
    confirm (rule of truth 11): left out unless ``include_stale`` (``report`` has it too)."""
    cannot_tell: list[CheckedOffer] = field(default_factory=list)
    """Offers whose precision support, or a speed figure a target needs, is unknown: set
    apart, never ranked among ``offers`` (``report["cannot_tell"]``)."""


def size(
    model: str | None = None,
    *,
    config: Path | str | None = None,
    params_b: float | None = None,
    precision: str | None = None,
    prompt_tokens: int = 2048,
    gen_tokens: int = 512,
    batch: int = 1,
    gpus: int | None = None,
    engine: Engine | str = Engine.VLLM,
    mode: Mode | str = Mode.INFERENCE,
    kv_dtype: str = "auto",
    lora_rank: int = 16,
    objective: Objective | str = Objective.MONTHLY,
    ttft_ms: float | None = None,
    tokens_per_s: float | None = None,
    allow_beyond_context: bool = False,
    usage: UsageProfile | None = None,
    currency: str | None = None,
    limit: int = 10,
    db: Path | str | None = None,
    include_stale: bool = False,
    gpu: str | None = None,
) -> SizeAnswer:
    """Size one of ``model`` (a catalog name or Hugging Face id, see `gpurent models`),
    ``config`` (a Hugging Face config.json or its folder) or ``params_b`` (billions of
    parameters, last resort).

    ``precision`` defaults to the checkpoint's: the quantisation a model id names (AWQ,
    GPTQ-Int4, FP8, Q4_K_M...) or a config's ``quantization_config``, else its dtype, else
    bf16; a ``precision`` that contradicts a quantised checkpoint raises CannotSize.
    ``tokens_per_s`` is the decode speed each of ``batch`` users needs; offers that miss a
    target are excluded with the reason, and those whose figures are unknown are set apart
    (``cannot_tell``). ``gpu`` keeps one card's offers ("H100 SXM": the form factor counts).
    Only offers their provider's latest run confirmed are ranked; ``include_stale`` adds the
    stale ones (their last good state, marked ``stale``).
    """
    from sizing.answer import SizeQuery, size_answer
    from sizing.workload import Workload

    arch, info, chosen, weights, notes = _resolve_model(model, config, params_b, precision)
    gpu_filter = _gpu_filter(gpu)
    if prompt_tokens + gen_tokens < 1:
        raise CannotSize("prompt_tokens + gen_tokens must be at least 1", argument="tokens")
    try:
        from sizing.quant import kv_bytes_per_element

        kv_bytes_per_element(kv_dtype)
        workload = Workload(
            prompt_tokens=prompt_tokens,
            gen_tokens=gen_tokens,
            batch=batch,
            engine=Engine(engine),
            mode=Mode(mode),
            kv_dtype=kv_dtype,
            lora_rank=lora_rank,
        )
        query = SizeQuery(
            arch=arch,
            info=info,
            precision=chosen,
            workload=workload,
            weights_bytes=weights,
            gpus=gpus,
            objective=Objective(objective),
            display_currency=display_currency(currency),
            usage=usage or make_usage(),
            limit=limit,
            targets=SpeedTargets(ttft_ms=ttft_ms, tokens_per_s=tokens_per_s),
            allow_beyond_context=allow_beyond_context,
            include_stale=include_stale,
            gpu=gpu_filter,
            notes=tuple(notes),
        )
        path = resolve_db(db)
        refuse_directory(path)  # absent is fine (the estimate alone); a folder is a mistake
        answer = size_answer(query, path)
    except ApiError:
        raise
    except ValueError as exc:  # the sizing modules' refusals (UnknownPrecision among them)
        raise CannotSize(str(exc)) from exc
    # Every offer row carries the short id `explain` accepts (gpurent.api.names.offer_id).
    for key in ("offers", "excluded", "cannot_tell"):
        for row in answer.report.get(key) or ():
            if isinstance(row, dict) and "provider" in row and "offer_key" in row:
                row["offer_id"] = offer_id(row["provider"], row["offer_key"])
    return SizeAnswer(
        report=answer.report,
        offers=answer.offers,
        excluded=answer.excluded,
        stale_left_out=answer.stale_left_out,
        cannot_tell=answer.cannot_tell,
    )


def _gpu_filter(text: str | None) -> Any:
    """``--gpu`` read as a provider's name is (``names.read_gpu``), as sizing's filter."""
    if text is None:
        return None
    from gpurent.api.names import read_gpu
    from sizing.recommend import GpuFilter

    name = read_gpu(text)
    return GpuFilter(name.model, name.vram_gb, name.form_factor)


def _resolve_model(
    model: str | None, config: Path | str | None, params_b: float | None, precision: str | None
) -> tuple[Any, Any, Any, float | None, list[str]]:
    """The architecture, where it came from, the precision, exact checkpoint bytes, and
    notes on what was read into the question (a precision from the name, another model)."""
    from sizing.hfconfig import (
        ConfigError,
        checkpoint_bytes,
        config_precision,
        config_quantisation,
        read_config,
    )
    from sizing.models import UnknownModel, another_model, generic_arch, get_entry, name_precision
    from sizing.quant import (
        PrecisionConflict,
        UnknownPrecision,
        checkpoint_precision,
        get_precision,
    )
    from sizing.report import ModelInfo

    given = [x for x in (model, config, params_b) if x is not None]
    if len(given) != 1:
        raise CannotSize("give exactly one of model, config or params_b", argument="model")
    try:
        if config is not None:
            arch, raw = read_config(Path(config))
            declared, word = config_quantisation(raw)
            if word is not None and declared is None:  # a method gpurent does not know
                chosen = get_precision(precision or "bf16")
                notes = [f"{config}: {word} is not a format gpurent knows: sized as {chosen.name}"]
            else:
                chosen, note = checkpoint_precision(precision, declared, word, str(config))
                if declared is None:  # unquantised: its dtype, unless asked otherwise
                    chosen = get_precision(precision or config_precision(raw) or "bf16")
                notes = [note] if note else []
            own = config_precision(raw)
            exact = checkpoint_bytes(Path(config))
            # The index holds the checkpoint's own format: exact only when that is what runs.
            same = precision is None or (own is not None and get_precision(own) == chosen)
            weights = float(exact) if exact and same else None
            return arch, ModelInfo("config", str(config)), chosen, weights, notes
        if params_b is not None:
            chosen = get_precision(precision or "bf16")
            return generic_arch(params_b), ModelInfo("params", "--params-b"), chosen, None, []
        found = get_entry(str(model))
        declared, word = name_precision(str(model))
        chosen, note = checkpoint_precision(precision, declared, word, str(model))
        notes = [note] if note else []
        if another_model(str(model), found):
            notes.insert(
                0,
                f"{model!r} is sized as {found.name}, the catalog's entry for that name (not "
                "the same model: if its architecture differs, pass its --config)",
            )
        info = ModelInfo("catalog", found.source, found.params_b)
        return found.arch, info, chosen, None, notes
    except (UnknownModel, UnknownPrecision) as exc:
        raise UnknownName(str(exc), argument="model") from exc
    except PrecisionConflict as exc:
        raise CannotSize(str(exc), argument="precision") from exc
    except (ConfigError, ValueError) as exc:
        raise CannotSize(str(exc), argument="config") from exc


def model_names() -> list[str]:
    """The catalog models ``size`` knows by name (see `gpurent models`)."""
    from sizing.models import catalog

    return list(catalog())


def precision_names() -> list[str]:
    """The precisions ``size`` reads (bf16, fp8, awq, q4_k_m...)."""
    from sizing.quant import precision_names as names

    return list(names())
