"""``size``: the GPU memory a model and workload need, the placements that fit, and the
in-stock offers that can run it, ranked by true cost (``sizing.answer.size_answer``).

Works before any crawl: without a warehouse the answer is the estimate alone, with no
offers and ``offers_reason`` saying why.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpurent.api.errors import (
    ApiError,
    BadFilter,
    NotAWarehouse,
    NoWarehouse,
    UnknownName,
    WarehouseBusy,
    WarehouseDamaged,
    check_limit,
)
from gpurent.api.names import display_currency, offer_id
from gpurent.api.profile import usage as make_usage
from gpurent.api.warehouse import open_warehouse, refuse_directory, resolve_db, retried_read
from gpurent_core.cost.usage import UsageProfile
from sizing.engines import Engine, Mode
from sizing.objective import Objective

if TYPE_CHECKING:
    from sizing.answer import Market, SizeQuery

__all__ = [
    "CannotSize",
    "Engine",
    "ExcludedOffer",
    "LeftOutGroup",
    "Mode",
    "Objective",
    "PlacementFit",
    "SizeAnswer",
    "SizedOffer",
    "size",
]


class CannotSize(ApiError):
    """A workload that cannot be sized: an impossible split, a sequence beyond the model's
    context window (unless allowed), a config that cannot be read, a --precision that
    contradicts the checkpoint's own (an AWQ model id sized as bf16)."""


@dataclass(frozen=True)
class SizedOffer:
    """An offer in a size answer (``offers`` or ``cannot_tell``): the way of renting it that
    was judged, its memory, true cost (``cost_currency``) and speed at the workload."""

    provider: str
    offer_key: str
    gpu_model: str
    gpu_vram_gb: int | None
    gpu_form_factor: str | None
    """What the offer says (None: it leaves it open)."""
    interconnect: str | None
    """How the offer's cards are joined, as it says (nvlink, sxm, pcie; None: unsaid)."""
    figures_of: str | None
    """The catalog card whose speed figures are used."""
    card: str
    """The card as the answer names it ("H100 80GB SXM", "... (form unsaid)")."""
    gpu_count: int
    tensor_parallel: int
    copies: int
    """Copies of the model the rental serves (gpu_count // tensor_parallel)."""
    usable_gib_per_gpu: float
    need_gib_per_gpu: float
    status: str
    available_count: int | None
    price: Decimal
    currency: str
    billing_unit: str
    price_basis: str
    true_hourly: Decimal | None
    true_monthly: Decimal | None
    cost_currency: str
    storage_price_unknown: bool
    """The storage asked for is not in the true cost: the offer lists no price for it."""
    egress_price_unknown: bool
    """The traffic asked for is not in the true cost: no price for it is known."""
    tokens_per_s: float | None
    """Generated tokens a second, every user together, prefill included (the steady-state
    cycle of ``sizing.speed``)."""
    decode_bound: str | None
    cost_per_million_tokens: Decimal | None
    region: str | None
    observed_at: datetime
    stale: bool
    """Not confirmed by its provider's latest run: its last good state, ``age_s`` old."""
    age_s: int | None
    url: str | None
    precision_support: str
    precision_note: str
    ttft_ms: float | None
    """First token of a prompt alone on its copy of the model (ms)."""
    ttft_worst_ms: float | None
    """First token of the last of a copy's prompts sent at once (ms): the figure a
    ``ttft_ms`` target is checked against, and the prefill share of every cycle."""
    tokens_per_s_per_user: float | None
    """Decode speed each user sees once its first token is out."""
    marks: tuple[str, ...]
    """What could not be checked on this card (kept, not guessed)."""
    note: str | None
    """How it meets the targets when that takes more than its cheapest rental, or why it
    cannot be told."""
    offer_id: str
    """The short id `explain` accepts (``gpurent.api.names.offer_id``)."""


@dataclass(frozen=True)
class ExcludedOffer:
    """An offer that fits in memory but cannot run the workload, and why."""

    provider: str
    offer_key: str
    offer: str
    step: str
    """"precision" (the card cannot run it) or "speed" (misses a target)."""
    reason: str
    offer_id: str


@dataclass(frozen=True)
class LeftOutGroup:
    """Excluded offers of one step, card and reason, with how many and whose."""

    step: str
    card: str
    reason: str
    count: int
    providers: tuple[str, ...]


@dataclass(frozen=True)
class PlacementFit:
    """The model on ``tensor_parallel`` cards: memory per card and the smallest tier."""

    tensor_parallel: int
    per_gpu_gib: float
    need_per_gpu_gib: float
    total_gib: float
    tier_gb: int | None
    """None: no card is large enough at this degree."""
    tier_usable_gib: float | None
    max_concurrency: int | None
    breakdown_gib: dict[str, float]


@dataclass(frozen=True)
class SizeAnswer:
    """The whole answer: the model, the memory of the chosen placement (the smallest tier,
    or the last one tried when none fits), every placement, the offers ranked by
    ``objective`` and the verdict. ``report`` is the same answer as a document (what
    `gpurent size --format json` prints)."""

    model: dict[str, Any]
    """Headline facts (name, params_b, layers, kv_heads...) and where they came from."""
    precision: str
    bits_per_weight: float
    kv_dtype: str
    engine: str
    mode: str
    workload: dict[str, int]
    """prompt_tokens, gen_tokens, batch, context_tokens."""
    fits: bool
    tensor_parallel: int
    gpus: int
    tier_gb: int | None
    tier_usable_gib: float | None
    per_gpu_gib: float
    need_per_gpu_gib: float
    total_gib: float
    headroom_fraction: float
    breakdown_gib: dict[str, float]
    weights_total_gib: float
    kv_cache_total_gib: float
    max_concurrency: int | None
    decode_read_gib_per_step: float
    placements: tuple[PlacementFit, ...]
    objective: str
    currency: str
    offers: tuple[SizedOffer, ...]
    """The offers that fit, run and meet the targets, ranked: the first ``limit``."""
    offers_total: int
    """How many there are in all."""
    stale_left_out: int
    """Offers that would be in ``offers`` but that their provider's latest run did not
    confirm (rule of truth 11): left out unless ``include_stale``."""
    spot_left_out: int
    """Spot (interruptible) offers that would be in ``offers``: left out unless
    ``include_spot``."""
    excluded: tuple[ExcludedOffer, ...]
    left_out: tuple[LeftOutGroup, ...]
    """The excluded offers grouped, largest group first."""
    cannot_tell: tuple[SizedOffer, ...]
    """Offers whose precision support, or a speed figure a target needs, is unknown: set
    apart, never ranked among ``offers``."""
    targets: dict[str, float | None]
    """ttft_ms and tokens_per_s_per_user (None: no target)."""
    speed_verdict: str | None
    dominant_terms: tuple[str, ...]
    offers_reason: str | None
    """Why ``offers`` is empty (no fit, no warehouse, all left out...)."""
    verdict: str
    notes: tuple[str, ...]
    gpu_filter: str | None = None
    """The card ``gpu`` kept ("H100 80GB SXM")."""
    rent_or_api: dict[str, Any] | None = None
    """With ``compare_api``: each offer's cost per request under the load given, the APIs
    serving the model (dated, sourced, in ``currency``) and the break-even use
    (``sizing.api_comparison``)."""

    @classmethod
    def from_report(cls, report: dict[str, Any]) -> SizeAnswer:
        def sized(row: dict[str, Any]) -> SizedOffer:
            marks = tuple(row["marks"])
            return SizedOffer(**row | {"marks": marks}, offer_id=_id(row))

        return cls(
            **report
            | {
                "placements": tuple(PlacementFit(**p) for p in report["placements"]),
                "offers": tuple(sized(r) for r in report["offers"]),
                "excluded": tuple(ExcludedOffer(**r, offer_id=_id(r)) for r in report["excluded"]),
                "left_out": tuple(
                    LeftOutGroup(**g | {"providers": tuple(g["providers"])})
                    for g in report["left_out"]
                ),
                "cannot_tell": tuple(sized(r) for r in report["cannot_tell"]),
                "dominant_terms": tuple(report["dominant_terms"]),
                "notes": tuple(report["notes"]),
            }
        )

    @property
    def report(self) -> dict[str, Any]:
        """The answer as a document of plain data (Decimals stay Decimal); ``gpu_filter``
        only when a card was named."""
        doc: dict[str, Any] = _plain(self)
        for optional in ("gpu_filter", "rent_or_api"):
            if doc[optional] is None:
                del doc[optional]
        return doc


def _id(row: dict[str, Any]) -> str:
    return offer_id(row["provider"], row["offer_key"])


def _plain(value: Any) -> Any:
    """Dataclasses as dicts and tuples as lists, all the way down."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


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
    include_spot: bool = False,
    gpu: str | None = None,
    interconnect: str | None = None,
    compare_api: bool = False,
    utilisation: float | Decimal | None = None,
    requests_per_day: int | None = None,
) -> SizeAnswer:
    """Size one of ``model`` (a catalog name or Hugging Face id, see `gpurent models`),
    ``config`` (a Hugging Face config.json or its folder) or ``params_b`` (billions of
    parameters, last resort).

    ``precision`` defaults to the checkpoint's: the quantisation a model id names (AWQ,
    GPTQ-Int4, FP8, Q4_K_M...) or a config's ``quantization_config``, else its dtype, else
    bf16; a ``precision`` that contradicts a quantised checkpoint raises CannotSize.
    ``ttft_ms`` is the first token every one of ``batch`` users needs, the last of their
    prompts sent at once (``SizedOffer.ttft_worst_ms``; ``ttft_ms`` there is one prompt alone).
    ``tokens_per_s`` is the decode speed each of ``batch`` users needs; offers that miss a
    target are excluded with the reason, and those whose figures are unknown are set apart
    (``cannot_tell``). ``gpu`` keeps one card's offers ("H100 SXM": the form factor counts).
    Only offers their provider's latest run confirmed are ranked; ``include_stale`` adds the
    stale ones (their last good state, marked ``stale``); spot (interruptible) offers are
    left out and counted unless ``include_spot``. ``interconnect="nvlink"``: a
    placement that splits the model over several cards is offered only on machines whose
    cards are joined by NVLink (stated, or SXM modules); offers that do not say how their
    cards are joined are left out of those placements (one-card ones are unaffected).
    ``compare_api`` adds ``rent_or_api``: the cost of a request on each offer at
    ``utilisation`` (a share of its capacity, 0 < u <= 1) or ``requests_per_day`` (default:
    full load), beside the serverless APIs serving the same model or one of its
    architecture, with the break-even use.
    """
    from sizing.answer import SizeQuery, size_answer
    from sizing.checks import SpeedTargets
    from sizing.workload import Workload

    check_limit(limit, optional=False)
    arch, info, chosen, weights, notes = _resolve_model(model, config, params_b, precision)
    gpu_filter = _gpu_filter(gpu)
    require_nvlink = _require_nvlink(interconnect)
    if require_nvlink:
        notes = [*notes, NVLINK_NOTE]
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
            include_spot=include_spot,
            gpu=gpu_filter,
            require_nvlink=require_nvlink,
            notes=tuple(notes),
        )
        path = resolve_db(db)
        refuse_directory(path)  # absent is fine (the estimate alone); a folder is a mistake
        report = size_answer(query, _market(query, path))
    except ApiError:
        raise
    except ValueError as exc:  # the sizing modules' refusals (UnknownPrecision among them)
        raise CannotSize(str(exc)) from exc
    if compare_api or utilisation is not None or requests_per_day is not None:
        report["rent_or_api"] = _rent_or_api(
            report, arch, workload, utilisation, requests_per_day, path, query.usage
        )
    return SizeAnswer.from_report(report)


def _load(utilisation: float | Decimal | None, requests_per_day: int | None) -> Any:
    """The load the comparison is costed at: the one given, else full load."""
    from fractions import Fraction

    from sizing.rent_or_api import FULL_LOAD, Load

    if utilisation is not None and requests_per_day is not None:
        raise CannotSize("give utilisation or requests_per_day, not both", argument="utilisation")
    try:
        if utilisation is not None:
            return Load(utilisation=Fraction(Decimal(str(utilisation))))
        if requests_per_day is not None:
            return Load(requests_per_day=int(requests_per_day))
    except (ValueError, ArithmeticError) as exc:
        argument = "utilisation" if utilisation is not None else "requests_per_day"
        raise CannotSize(f"{argument}: {exc}", argument=argument) from exc
    return FULL_LOAD


def _rent_or_api(
    report: dict[str, Any],
    arch: Any,
    workload: Any,
    utilisation: float | Decimal | None,
    requests_per_day: int | None,
    path: Path,
    usage: UsageProfile,
) -> dict[str, Any]:
    """The rent-or-API document for ``report``'s offers (``sizing.api_comparison``): a
    rental's hour costs its true monthly over the usage's hours (packages in)."""
    from datetime import UTC
    from datetime import datetime as clock

    from sizing import rent_or_api
    from sizing.api_comparison import comparison
    from sizing.api_prices import (
        ApiPriceError,
        matching_prices,
        read_refreshed,
        refreshed_path,
        shipped_prices,
    )

    if workload.is_training:
        raise CannotSize("compare_api compares inference: not a fine-tuning run", argument="mode")
    load = _load(utilisation, requests_per_day)
    try:
        prices = (*shipped_prices(), *read_refreshed(refreshed_path(path)))
    except ApiPriceError as exc:
        raise CannotSize(f"API prices not readable: {exc}", argument="compare_api") from exc
    shape = rent_or_api.Workload(workload.prompt_tokens, workload.gen_tokens, workload.batch)
    return comparison(
        report["offers"],
        matching_prices(arch, prices),
        report["precision"],
        shape,
        load,
        report["currency"],
        _fx_table(path),
        clock.now(UTC).date(),
        # Per token, the first offers are the cheapest a request; by another objective they
        # are only the first of that ranking.
        every_offer=report["objective"] == "per-token"
        or report["offers_total"] <= len(report["offers"]),
        hours_paid=usage.hours_per_month,
    )


def _fx_table(path: Path) -> Any:
    """The rates the rentals beside the API prices were converted at: the warehouse's
    table (stored rates too), so the two sides of a break-even share one rate."""
    from gpurent_core.fx import load_fx_table
    from warehouse.costed import fx_table_for
    from warehouse.errors import WarehouseError

    @retried_read
    def read() -> Any:
        with open_warehouse(path) as con:
            return fx_table_for(con)

    try:
        return read()
    except (NoWarehouse, WarehouseBusy, WarehouseDamaged, WarehouseError):
        return load_fx_table()  # no warehouse, no rentals: the API prices alone


def _market(query: SizeQuery, path: Path) -> Market:
    """The offers that fit, read the API's one way (``open_warehouse``, retried under a
    lake's maintenance); a warehouse that cannot be read is the estimate alone, with why."""
    from sizing.answer import no_warehouse
    from sizing.recommend import offer_options
    from warehouse.errors import WarehouseError

    @retried_read
    def read(placements: Any) -> Any:
        with open_warehouse(path) as con:
            return offer_options(
                con,
                placements,
                display_currency=query.display_currency,
                usage=query.usage,
                include_stale=True,  # size_answer leaves them out unless asked, and counts them
                gpu=query.gpu,
                require_nvlink=query.require_nvlink,
            )

    def market(placements: Any) -> Any:
        try:
            return read(placements), None
        except NotAWarehouse:
            raise  # a file that is no warehouse is a mistake to say, not an empty market
        except NoWarehouse:
            return [], no_warehouse(path)
        except (WarehouseBusy, WarehouseDamaged, WarehouseError) as exc:
            return [], f"warehouse not readable: {exc}"

    return market


NVLINK_NOTE = (
    "placements over several cards only on offers whose cards are joined by NVLink (stated, "
    "or SXM modules); offers that do not say how their cards are joined are left out of them"
)


def _require_nvlink(interconnect: str | None) -> bool:
    """``interconnect`` read: "nvlink" requires it of multi-card placements; None does not."""
    if interconnect is None:
        return False
    if str(interconnect).strip().casefold() == "nvlink":
        return True
    raise BadFilter(
        f"interconnect={interconnect!r}: size can require only nvlink (of placements over "
        "several cards)",
        argument="interconnect",
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
        with_fp8_blocks,
        with_group_size,
    )

    if precision is not None and not precision.strip():
        # "" read as "no precision given" sized bf16 without a word (an unset variable).
        raise CannotSize(
            "precision is empty: give one (bf16, fp8, int4, ...)", argument="precision"
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
            if declared is not None:  # the groups or blocks it declares set the TP rule
                quant = raw.get("quantization_config") or {}
                group = quant.get("group_size")
                chosen = with_group_size(chosen, group if isinstance(group, int) else None)
                chosen = with_fp8_blocks(chosen, quant.get("weight_block_size"))
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
            limit = found.arch.max_position_embeddings
            window = "unknown" if limit is None else f"{limit} tokens"
            notes.insert(
                0,
                f"{model!r} is sized as {found.name}, the catalog's entry for that name (not "
                f"the same model: its architecture and context window ({window}) are taken "
                f"as {found.name}'s; if they differ, pass its --config)",
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
