"""Data access for the dashboard: the library API's answers (``gpurent.api``) and bulk
views (``gpurent.api.views``) as Polars frames, nothing else.

The dashboard only reads. Every call opens a short read-only connection (waiting briefly
while a crawl holds the file) and closes it before returning, so a page render never keeps
the writer out. Numbers stay Decimal here; ``tables`` formats them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import polars as pl

from gpurent import api
from gpurent.api import views
from gpurent_core.catalog import get_catalog
from gpurent_core.cost.usage import UsageProfile
from gpurent_core.host import version_tuple

P = ParamSpec("P")
R = TypeVar("R")


class DataUnavailable(Exception):
    """The warehouse cannot be read now: ``missing`` (no file yet), ``locked`` (busy) or
    ``damaged`` (DuckDB cannot read it back)."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind


@contextmanager
def _readable() -> Iterator[None]:
    """The API's "no warehouse" and "busy" as the pages' ``DataUnavailable``."""
    try:
        yield
    except api.WarehouseDamaged as exc:  # a kind of NoWarehouse: said as what it is
        raise DataUnavailable("damaged", str(exc)) from exc
    except api.NoWarehouse as exc:
        raise DataUnavailable("missing", str(exc)) from exc
    except api.WarehouseBusy as exc:
        raise DataUnavailable("locked", str(exc)) from exc


def _page_read(read: Callable[P, R]) -> Callable[P, R]:
    @functools.wraps(read)
    def guarded(*args: P.args, **kwargs: P.kwargs) -> R:
        with _readable():
            return read(*args, **kwargs)

    return guarded


# --- Now -----------------------------------------------------------------------------


@dataclass(frozen=True)
class NowFilters:
    """What the Now page asks for; ``None`` means "any"."""

    display_currency: str = "CNY"
    min_vram_gb: int | None = None
    gpu_model: str | None = None
    form_factor: str | None = None
    """PCIe, SXM, NVL...: offers that do not say theirs never match one."""
    provider: str | None = None
    hours_per_month: Decimal = api.usage().hours_per_month
    storage_gb: Decimal = api.usage().storage_gb
    gpus: int = 1
    include_sold_out: bool = False
    session_hours: Decimal | None = None
    include_stale: bool = False
    """Also show offers their provider's latest run did not confirm (rule of truth 11)."""
    min_cuda: str | None = None
    """The host's CUDA version at least this ("12.4"); offers that do not publish it never
    match."""
    interconnect: str | None = None
    """nvlink (stated NVLink or SXM), sxm or pcie; offers that do not say never match."""
    include_spot: bool = False
    """Also rank spot (interruptible) prices, as `cheapest --include-spot`: left out and
    counted by default, since the provider may take the machine back at any time."""

    def profile(self) -> UsageProfile:
        return api.usage(
            hours_per_month=self.hours_per_month,
            storage_gb=self.storage_gb,
            gpus=self.gpus,
            session_hours=self.session_hours,
        )


@dataclass(frozen=True)
class FilterOptions:
    """Choices for the Now page's filters, from the latest state."""

    providers: list[str]
    gpu_models: list[str]
    vram_sizes: list[int]
    form_factors: list[str] = field(default_factory=list)
    """Form factors the offers of the latest state name (PCIe, SXM...), in catalog order."""
    cuda_versions: list[str] = field(default_factory=list)
    """CUDA versions hosts of the latest state publish, lowest first (a minimum to pick)."""
    interconnects: list[str] = field(default_factory=lambda: ["nvlink", "sxm", "pcie"])


@_page_read
def filter_options(db: Path) -> FilterOptions:
    """Providers and GPU models present in the latest state (catalog order), VRAM sizes,
    and the form factors offers state."""
    offers = views.latest(db)
    present = set(offers["gpu_model"].to_list()) if offers.height else set()
    catalog = get_catalog()
    ordered = [m for m in catalog.models() if m in present]
    ordered += sorted(present - set(ordered))  # models the catalog lacks still filter
    sizes = sorted({sku.vram_gb for sku in catalog.all()})
    stated = set(offers["gpu_form_factor"].drop_nulls().to_list()) if offers.height else set()
    known = dict.fromkeys(sku.form_factor for sku in catalog.all() if sku.form_factor)
    forms = [f for f in known if f in stated]
    forms += sorted(stated - set(forms))
    cudas: set[str] = set()
    if offers.height and "cuda_version" in offers.columns:
        cudas = set(offers["cuda_version"].drop_nulls().to_list())
    return FilterOptions(
        providers=sorted(set(offers["provider"].to_list())) if offers.height else [],
        gpu_models=ordered,
        vram_sizes=sizes,
        form_factors=forms,
        cuda_versions=sorted(cudas, key=version_tuple),
    )


# The Now page shows the cheapest this many: a market of a million offers would cost them
# all before the first is drawn, and no one reads past the first screens.
NOW_ROWS = 500


@dataclass(frozen=True)
class NowAnswer:
    """The Now page's rows and what its answer left out."""

    frame: pl.DataFrame
    """``now_offers``' frame."""
    stale_left_out: int
    """Offers the filters match but their provider's latest run did not confirm (left out
    unless ``NowFilters.include_stale``): the page's caption says so."""
    cards_left_out: int = 0
    """Per-card offers left out because no free count shows ``NowFilters.gpus`` cards on
    one machine (``OfferList.cards_left_out``): the page's caption says so."""
    host_left_out: int = 0
    """Offers left out because they do not publish the CUDA version or interconnect the
    filters ask for (``OfferList.unpublished_left_out``): the page's caption says so."""
    spot_left_out: int = 0
    """Spot prices left out (unless ``NowFilters.include_spot``): the caption says so."""


@_page_read
def now_answer(db: Path, filters: NowFilters, *, limit: int | None = NOW_ROWS) -> NowAnswer:
    """Latest offers with true cost for the filters, cheapest first (``gpurent.api.offers``),
    the first ``limit`` (None: all), and how many stale offers it left out.

    Columns: those of ``Offer.as_row(terms=False)`` (``offer_id``, ``url``,
    ``gpu_form_factor``, ``storage_price_unknown`` among them) plus ``raw_gpu_name``;
    ``rentable`` says all cards of the unit are free. Without ``include_sold_out`` only rentable offers;
    without ``include_stale`` only offers their provider's latest run confirmed (rule of
    truth 11), sold-out ones included: the page ranks what the latest look saw.
    """
    found = api.offers(
        limit=limit,
        gpu_model=filters.gpu_model,
        form_factor=filters.form_factor,
        min_vram=filters.min_vram_gb,
        provider=filters.provider,
        in_stock=not filters.include_sold_out,
        usage=filters.profile(),
        currency=filters.display_currency,
        db=db,
        include_stale=filters.include_stale,
        min_cuda=filters.min_cuda,
        interconnect=filters.interconnect,
        include_spot=filters.include_spot,  # ranked as `cheapest` ranks: spot only if asked
    )
    rows = [o.as_row(terms=False) | {"raw_gpu_name": o.raw_gpu_name} for o in found]
    frame = (
        pl.DataFrame(rows, schema_overrides=_NOW_TEXT, infer_schema_length=None)
        if rows
        else empty_now_frame()
    )
    return NowAnswer(
        frame=frame,
        stale_left_out=found.stale_left_out,
        cards_left_out=found.cards_left_out,
        host_left_out=found.unpublished_left_out,
        spot_left_out=found.spot_left_out,
    )


def now_offers(db: Path, filters: NowFilters, *, limit: int | None = NOW_ROWS) -> pl.DataFrame:
    """``now_answer``'s frame."""
    return now_answer(db, filters, limit=limit).frame


# Pinned so columns that are null in every row keep a type.
_NOW_TEXT: dict[str, Any] = {
    "provider": pl.String,
    "offer_key": pl.String,
    "offer_id": pl.String,
    "gpu_model": pl.String,
    "gpu_form_factor": pl.String,
    "status": pl.String,
    "available_count": pl.Int64,
    "currency": pl.String,
    "billing_unit": pl.String,
    "price_basis": pl.String,
    "price_kind": pl.String,
    "region": pl.String,
    "cost_currency": pl.String,
    "monthly_plan": pl.String,
    "run_id": pl.String,
    "url": pl.String,
    "raw_gpu_name": pl.String,
    "gpu_vram_gb": pl.Int64,  # null: unknown VRAM
    "stale": pl.Boolean,  # not confirmed by its provider's latest run: its last good state
    "age_s": pl.Int64,
    # What the host publishes (null where it does not).
    "cuda_version": pl.String,
    "driver_version": pl.String,
    "interconnect": pl.String,
    "nvlink_gbps": pl.Decimal(38, 4),
    "host_reliability": pl.Decimal(38, 4),
    "hosting": pl.String,
    "max_rental_hours": pl.Int64,
    "vcpus_per_gpu": pl.Decimal(38, 4),
    "ram_gb_per_gpu": pl.Decimal(38, 4),
    "disk_gb_per_gpu": pl.Decimal(38, 4),
}
_MONEY = pl.Decimal(38, 6)


def empty_now_frame() -> pl.DataFrame:
    """No offers, with every column ``now_offers`` gives (so pages need no special case)."""
    return pl.DataFrame(
        schema={
            **_NOW_TEXT,
            "gpu_vram_gb": pl.Int64,
            "gpu_count": pl.Int64,
            "price": _MONEY,
            "true_hourly": _MONEY,
            "true_monthly": _MONEY,
            "native_true_hourly": _MONEY,
            "native_true_monthly": _MONEY,
            "price_per_gpu_hour": _MONEY,
            "fx_rate": _MONEY,
            "fx_date": pl.Date,
            "observed_at": pl.Datetime("us", "UTC"),
            "rentable": pl.Boolean,
            "storage_price_unknown": pl.Boolean,
            "egress_price_unknown": pl.Boolean,
        }
    )


# --- Providers -------------------------------------------------------------------------


@_page_read
def providers_overview(db: Path) -> pl.DataFrame:
    """Each provider's last run and last good run, plus ``quarantined_total`` (all runs)."""
    return views.provider_runs(db)


@_page_read
def quarantine(db: Path, *, provider: str | None = None, limit: int = 200) -> pl.DataFrame:
    """Newest quarantine rows (``gpurent.api.views.quarantine``)."""
    return views.quarantine(db, provider=provider, limit=limit)


def billing_facts(provider: str) -> list[dict[str, Any]]:
    """The provider's billing facts, then the checklist questions without one (value None).

    ``typed`` keeps each fact itself (None for an unknown one), so the page says how the
    cost uses it in its own language (``i18n.used_in_cost``)."""
    from gpurent_core.billing_facts import facts_for, unknown_facts

    known = [f.as_row() | {"typed": f} for f in facts_for(provider)]
    unknown = [
        {
            "fact": k.value,
            "value": None,
            "used_in_cost": "",
            "source": "",
            "as_of": None,
            "typed": None,
        }
        for k in unknown_facts(provider)
    ]
    return known + unknown


def utc_now() -> datetime:
    return datetime.now(UTC)


# --- Price index (warehouse.index, when this build has it) -----------------------------


@_page_read
def price_index(db: Path, currency: str, method: str | None = None) -> pl.DataFrame:
    """The price index by ``method`` (default: the default method) in ``currency`` over the
    whole history (``gpurent.api.views``)."""
    return views.index_frame(db, currency, method)


# --- Availability (warehouse.trends, when this build has it) ---------------------------


@_page_read
def gpu_choices(db: Path) -> list[tuple[str, int]]:
    """(model, VRAM GB) of every GPU in the latest state: the most widely listed first
    (providers listing it), then in catalog order. Offers of unknown VRAM are left out:
    the availability pages pick a GPU by its size."""
    offers = views.latest(db).filter(pl.col("gpu_vram_gb").is_not_null())
    counts = offers.group_by("gpu_model", "gpu_vram_gb").agg(pl.col("provider").n_unique())
    order = {model: i for i, model in enumerate(get_catalog().models())}
    ranked = sorted(
        counts.iter_rows(),
        key=lambda r: (-int(r[2]), order.get(str(r[0]), len(order)), str(r[0]), int(r[1])),
    )
    return [(str(model), int(vram)) for model, vram, _ in ranked]


@dataclass(frozen=True)
class Availability:
    """One GPU's availability: per-provider patterns and the heat map rows."""

    patterns: list[Any]
    """``warehouse.trends.Pattern`` per provider, in the chosen zone."""
    week: pl.DataFrame
    """provider, weekday (0 = Monday), hour, share (None: too few polls to tell)."""
    day: pl.DataFrame
    """provider, hour, share: the same with the weekdays pooled."""

    def any_known(self) -> bool:
        """Whether any provider has enough polls in any hour to say anything."""
        return any(share is not None for p in self.patterns for share in p.by_hour)

    def week_coverage(self) -> float:
        """Share of hour-of-week cells with enough polls to tell (0 without any)."""
        if self.week.height == 0:
            return 0.0
        return int(self.week["share"].is_not_null().sum()) / self.week.height


@_page_read
def availability(db: Path, model: str, vram_gb: int, zone: str) -> Availability:
    polls = views.availability_polls(db, gpu_model=model, vram_gb=vram_gb)
    patterns = views.availability_patterns(polls, zones=(zone,))
    week = [
        {"provider": p.provider, "weekday": slot // 24, "hour": slot % 24, "share": share}
        for p in patterns
        for slot, share in enumerate(p.by_hour_of_week)
    ]
    day = [
        {"provider": p.provider, "hour": hour, "share": share}
        for p in patterns
        for hour, share in enumerate(p.by_hour)
    ]
    return Availability(
        patterns=patterns,
        week=pl.DataFrame(week, schema=_HEAT_WEEK),
        day=pl.DataFrame(day, schema=_HEAT_DAY),
    )


_HEAT_DAY = {"provider": pl.String, "hour": pl.Int64, "share": pl.Float64}
_HEAT_WEEK = {"provider": pl.String, "weekday": pl.Int64, "hour": pl.Int64, "share": pl.Float64}


@_page_read
def restock(db: Path, model: str, vram_gb: int) -> Any:
    """The restock forecast of the GPU (``gpurent.api.RestockForecast``: every provider's
    spells pooled, and each provider's own in ``providers``)."""
    return api.restock_forecast(model, vram_gb=vram_gb, db=db)


@_page_read
def offer_timeline(db: Path, model: str, vram_gb: int) -> pl.DataFrame:
    """Every state of every offer of the GPU over the history (valid from / to)."""
    return views.offer_changes(db, gpu_model=model, vram_gb=vram_gb)


# --- Buy or rent (gpurent tco) ----------------------------------------------------------


@_page_read
def buy_or_rent(db: Path, request: dict[str, Any], currency: str) -> api.TcoAnswer:
    """Owning against renting (``gpurent.api.tco``), as `gpurent tco` answers it; the
    request holds ``api.tco``'s keywords, the card first as ``gpu``. The API's refusals
    (an unknown card, a board power to give, a bad number) come back as ``api.ApiError``."""
    return api.tco(**request, currency=currency, db=db)
