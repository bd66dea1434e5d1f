"""Offers with their true cost: ``offers``, ``cheapest`` and ``explain``.

Every answer is computed here, once, over ``warehouse.costed`` (the exact cost engine of
``gpurent_core.costing``); the command line and the dashboard only present it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpurent.api.errors import NoSuchOffer
from gpurent.api.names import display_currency, resolve_gpu, resolve_provider
from gpurent.api.profile import usage as make_usage
from gpurent.api.warehouse import open_warehouse, retried_read

if TYPE_CHECKING:  # the model and the engine load when an answer is asked for
    from gpurent_core.costing import TrueCost, UsageProfile
    from gpurent_core.enums import StockStatus
    from gpurent_core.terms import FeeTerms, PlanTerms


@dataclass(frozen=True)
class Offer:
    """One offer of the latest state with its true cost for a usage profile.

    Money is Decimal: ``price`` in the provider's ``currency`` and ``billing_unit``;
    ``true_hourly``/``true_monthly`` in ``cost_currency`` (the display currency, through
    ``fx_rate`` of ``fx_date``); ``native_true_*`` in the provider's currency.
    """

    provider: str
    offer_key: str
    gpu_model: str
    gpu_vram_gb: int | None
    """None: the provider's name leaves the size open (never counted as fitting)."""
    gpu_count: int
    """Cards the cost is for: the offer's count, or the cards asked for on per-card offers."""
    status: StockStatus
    available_count: int | None
    rentable: bool
    """In stock for ``gpu_count`` cards now (``gpurent_core.costing.rentable``)."""
    price: Decimal
    currency: str
    billing_unit: str
    price_basis: str
    price_kind: str
    true_hourly: Decimal
    true_monthly: Decimal
    cost_currency: str
    native_true_hourly: Decimal
    native_true_monthly: Decimal
    price_per_gpu_hour: Decimal
    monthly_plan: str
    fx_rate: Decimal | None
    fx_date: date | None
    storage_price_unknown: bool
    """The storage asked for is not in the cost: the feed lists no price for it."""
    region: str | None
    url: str | None
    observed_at: datetime
    stale: bool
    """Not confirmed by its provider's latest run (which could not see it, or failed): this is
    its last good state, ``age_s`` old. Ranked only when asked for (rule of truth 11)."""
    age_s: int | None
    run_id: str
    raw_gpu_name: str | None
    fees: tuple[FeeTerms, ...]
    plans: tuple[PlanTerms, ...]
    cost: TrueCost
    """The engine's whole breakdown (``cost.explain()`` prints it line by line)."""

    @classmethod
    def from_costed(cls, costed: Any) -> Offer:
        from gpurent_core.enums import StockStatus
        from gpurent_core.terms import FeeTerms, PlanTerms

        row = costed.as_row()
        terms = costed.terms()
        return cls(
            **{k: row[k] for k in _ROW_FIELDS},
            status=StockStatus(row["status"]),
            raw_gpu_name=costed.offer.get("raw_gpu_name"),
            fees=tuple(FeeTerms(**f) for f in terms["fees"]),
            plans=tuple(PlanTerms(**p) for p in terms["plans"]),
            cost=costed.cost,
        )

    def as_row(self, *, terms: bool = True) -> dict[str, Any]:
        """A flat dict (JSON and CSV rows); with ``terms`` also ``fees`` and ``plans`` as
        dicts, so a reader can recompute the cost."""
        row: dict[str, Any] = {k: getattr(self, k) for k in (*_ROW_FIELDS, "status")}
        row["status"] = self.status.value
        if terms:
            row["fees"] = [_plain(asdict(f)) for f in self.fees]
            row["plans"] = [_plain(asdict(p)) for p in self.plans]
        return row


class OfferList(list[Offer]):
    """The offers of an answer, in its order, and ``stale_left_out``: how many offers the
    answer would hold but left out because their provider's latest run did not confirm them
    (stale rows: rule of truth 11; ``include_stale=True`` adds them, marked ``stale``). Counted
    before ``limit``; 0 when stale rows were asked for."""

    stale_left_out: int

    def __init__(self, offers: Iterable[Offer] = (), *, stale_left_out: int = 0) -> None:
        super().__init__(offers)
        self.stale_left_out = stale_left_out


_NOT_FROM_ROW = {"status", "raw_gpu_name", "fees", "plans", "cost"}
_ROW_FIELDS = tuple(f for f in Offer.__dataclass_fields__ if f not in _NOT_FROM_ROW)


def _plain(fields: dict[str, Any]) -> dict[str, Any]:
    from warehouse.costed import plain

    return {k: plain(v) if isinstance(v, Decimal) else v for k, v in fields.items()}


@retried_read
def _costed(
    db: Path | str | None,
    profile: UsageProfile,
    currency: str | None,
    *,
    gpu: str | None = None,
    gpu_model: str | None = None,
    min_vram: int | None = None,
    provider: str | None = None,
    in_stock: bool = False,
    limit: int | None = None,
    include_stale: bool = False,
) -> OfferList:
    from warehouse.costed import costed_latest_offers, stale_left_out

    shown_in = display_currency(currency)
    model, vram = resolve_gpu(gpu) if gpu is not None else (gpu_model, None)
    with open_warehouse(db) as con:
        name = resolve_provider(con, provider) if provider is not None else None
        filters: dict[str, Any] = {
            "gpu_model": model,
            "gpu_vram_gb": vram,
            "min_vram_gb": min_vram,
            "provider": name,
            "in_stock_only": in_stock,
        }
        costed = costed_latest_offers(
            con,
            profile,
            display_currency=shown_in,
            limit=limit,  # only the first `limit` are costed exactly (warehouse.ranking)
            include_stale=include_stale,
            **filters,
        )
        left_out = 0 if include_stale else stale_left_out(con, profile, **filters)
    return OfferList((Offer.from_costed(c) for c in costed), stale_left_out=left_out)


def offers(
    *,
    gpu: str | None = None,
    gpu_model: str | None = None,
    min_vram: int | None = None,
    provider: str | None = None,
    in_stock: bool = False,
    limit: int | None = None,
    usage: UsageProfile | None = None,
    currency: str | None = None,
    db: Path | str | None = None,
    include_stale: bool | None = None,
) -> OfferList:
    """The latest offers (sold-out and unknown ones too unless ``in_stock``), cheapest first
    by true monthly cost, then true hourly.

    ``gpu`` is read as a provider's name is ('4090', 'A100 80G': a size picks that size);
    ``gpu_model`` is a catalog model name taken as it is (every size); ``provider`` by its
    gpurent name; ``currency`` is the display currency (default: the settings').

    Stale offers (not confirmed by their provider's latest run: their last good state,
    marked ``stale``) are listed unless ``in_stock``: an unconfirmed row is never offered as
    in stock (rule of truth 11). ``include_stale`` overrides that either way (None: this
    default); the answer's ``stale_left_out`` counts the ones left out.
    """
    return _costed(
        db,
        usage or make_usage(),
        currency,
        gpu=gpu,
        gpu_model=gpu_model,
        min_vram=min_vram,
        provider=provider,
        in_stock=in_stock,
        limit=limit,
        include_stale=not in_stock if include_stale is None else include_stale,
    )


def cheapest(
    min_vram: int,
    *,
    gpus: int = 1,
    limit: int | None = 10,
    usage: UsageProfile | None = None,
    currency: str | None = None,
    db: Path | str | None = None,
    include_stale: bool = False,
) -> OfferList:
    """The cheapest offers that can be rented now for ``gpus`` cards of at least
    ``min_vram`` GB each, by true monthly cost (ties: true hourly).

    Sold-out offers, offers of unknown stock and machines with fewer free cards than they
    rent are left out; the storage asked for is counted on every provider. Only offers
    their provider's latest run confirmed are ranked (rule of truth 11): ``include_stale``
    ranks the stale ones too (their last good state, marked ``stale``); the answer's
    ``stale_left_out`` counts the ones left out.
    """
    from dataclasses import replace

    profile = replace(usage, gpus=gpus) if usage is not None else make_usage(gpus=gpus)
    return _costed(
        db,
        profile,
        currency,
        min_vram=min_vram,
        in_stock=True,
        limit=limit,
        include_stale=include_stale,
    )


@dataclass(frozen=True)
class Explanation:
    """How one offer's true cost is made; every line can be recomputed by hand."""

    offer: Offer | None
    """None: the offer cannot supply the cards asked for."""
    provider: str
    offer_key: str
    gpus: int

    @property
    def lines(self) -> tuple[str, ...]:
        return self.offer.cost.lines if self.offer else ()

    def text(self) -> str:
        return self.offer.cost.explain() if self.offer else ""


@retried_read
def explain(
    provider: str,
    offer_key: str,
    *,
    gpus: int = 1,
    usage: UsageProfile | None = None,
    currency: str | None = None,
    db: Path | str | None = None,
) -> Explanation:
    """The true cost of one latest offer, line by line (``NoSuchOffer`` if it is not listed)."""
    from dataclasses import replace

    from warehouse.costed import cost_offer, fx_table_for
    from warehouse.queries import latest_offers

    profile = replace(usage, gpus=gpus) if usage is not None else make_usage(gpus=gpus)
    shown_in = display_currency(currency)
    with open_warehouse(db) as con:
        name = resolve_provider(con, provider)
        frame = latest_offers(con, provider=name)
        rows = [r for r in frame.iter_rows(named=True) if r["offer_key"] == offer_key]
        if not rows:
            raise NoSuchOffer(
                f"no latest offer {offer_key!r} of {name!r}; "
                f"list them with `gpurent offers --provider {name} -f json`",
                argument="offer_key",
            )
        costed = cost_offer(rows[0], profile, display_currency=shown_in, fx=fx_table_for(con))
    return Explanation(
        offer=Offer.from_costed(costed) if costed is not None else None,
        provider=name,
        offer_key=offer_key,
        gpus=gpus,
    )
