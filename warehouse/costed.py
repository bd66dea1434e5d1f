"""Latest offers with their true cost: the one join that `offers`, `cheapest`, sizing and the
dashboard all read, so every surface shows the same numbers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from decimal import Decimal
from functools import partial
from typing import Any

import duckdb

from gpurent_core import providers as registry
from gpurent_core.billing_facts import terms_for
from gpurent_core.cost.engine import TrueCost, rank_key, true_cost
from gpurent_core.cost.offer import CostInput, DoesNotFit
from gpurent_core.cost.stock import cards_to_rent, rentable
from gpurent_core.cost.usage import UsageProfile
from gpurent_core.enums import (
    BillingUnit,
    FeeBasis,
    FeeType,
    PriceBasis,
    PriceKind,
    StockStatus,
)
from gpurent_core.fx import FxError, FxRate, FxRateMissing, FxTable, load_fx_table
from gpurent_core.host import HOST_FIELDS, HostFilter
from gpurent_core.terms import FeeTerms, PlanTerms
from warehouse.queries import latest_offer_conditions, latest_offers
from warehouse.ranking import (
    BoundQuery,
    Unbounded,
    cheapest_first,
    latest_rows,
    spot_to_rank,
    stale_to_rank,
    unconvertible_to_rank,
    unpublished_to_rank,
)


@dataclass(frozen=True)
class CostedOffer:
    """One offer of the latest state, as stored, with its true cost for a usage profile."""

    offer: Mapping[str, Any]
    cost: TrueCost
    gpus_rented: int
    """Cards the cost is for: the offer's count, or the profile's for per-card offers."""

    @property
    def status(self) -> StockStatus:
        return StockStatus(self.offer["status"])

    @property
    def rentable(self) -> bool:
        """In stock for the cards the cost is for (``gpurent_core.cost.stock.rentable``)."""
        return rentable(self.offer, self.gpus_rented)

    def as_row(self) -> dict[str, Any]:
        o, c = self.offer, self.cost
        return {
            "provider": o["provider"],
            "offer_key": o["offer_key"],
            "gpu_model": o["gpu_model"],
            "gpu_vram_gb": o["gpu_vram_gb"],
            # PCIe, SXM, NVL...; None when the provider's name leaves it open.
            "gpu_form_factor": o.get("gpu_form_factor"),
            "gpu_count": self.gpus_rented,
            "status": o["status"],
            "available_count": o["available_count"],
            "price": plain(o["price"]),
            "currency": o["currency"],
            "billing_unit": o["billing_unit"],
            "price_basis": o["price_basis"],
            "price_kind": o["price_kind"],
            "region": o["region"],
            "true_hourly": c.hourly_display,
            "true_monthly": c.monthly_display,
            "cost_currency": c.display_currency,
            "native_true_hourly": c.hourly,
            "native_true_monthly": c.monthly,
            "price_per_gpu_hour": c.price_per_gpu_hour_display,
            "monthly_plan": (
                f"{plain(c.plan.units)} x {c.plan.billing_unit.value} ({c.plan.price_kind.value})"
            ),
            "fx_rate": c.fx_rate.rate if c.fx_rate else None,
            "fx_date": c.fx_rate.rate_date if c.fx_rate else None,
            "observed_at": o["observed_at"],
            # A stale row (rule 10): a partial run could not see it; this is its last good
            # state, age_s seconds old. Frames without the column (past runs) are fresh.
            "stale": bool(o.get("stale") or False),
            "age_s": o.get("age_s"),
            "run_id": o["run_id"],
            "url": o["url"],
            # Can it be rented now for these cards (gpurent_core.cost.stock.rentable), and is the
            # storage asked for left out because the feed has no price for it?
            "rentable": self.rentable,
            "storage_price_unknown": c.storage_price_unknown,
            # ... and the traffic asked for, because nothing says what traffic costs there?
            "egress_price_unknown": c.egress_price_unknown,
            # What the host publishes about itself (None: not published; frames of past
            # runs stored before migration 20 have none).
            **{k: _host_value(o.get(k)) for k in HOST_FIELDS},
        }

    def terms(self) -> dict[str, list[dict[str, Any]]]:
        """``fees`` and ``plans``: every field of each, as the feed has them (Decimals without
        the storage scale), so a reader can recompute the cost. Kept out of ``as_row`` so that
        flat consumers (the dashboard's frames and CSV) keep flat columns."""
        o = self.offer
        return {
            "fees": [_plain_fields(asdict(_fee(f))) for f in o["fees"] or []],
            "plans": [_plain_fields(asdict(_plan(p))) for p in o["plans"] or []],
        }


def _host_value(value: Any) -> Any:
    return plain(value) if isinstance(value, Decimal) else value


def plain(value: Decimal) -> Decimal:
    """Drop the storage scale's trailing zeros (1.98000000 -> 1.98) without going exponential."""
    normalised = value.normalize()
    return normalised.quantize(Decimal(1)) if normalised == normalised.to_integral() else normalised


def _plain_fields(fields: Mapping[str, Any]) -> dict[str, Any]:
    return {k: plain(v) if isinstance(v, Decimal) else v for k, v in fields.items()}


def _fee(d: Mapping[str, Any]) -> FeeTerms:
    return FeeTerms(
        fee_type=FeeType(d["fee_type"]),
        amount=plain(Decimal(d["amount"])),
        currency=d["currency"],
        unit=BillingUnit(d["unit"]) if d.get("unit") else None,
        basis=FeeBasis(d["basis"]),
        quantity=d.get("quantity"),
        included_quantity=d.get("included_quantity"),
        mandatory=bool(d["mandatory"]),
        charged_while_stopped=d["charged_while_stopped"],  # None: unknown
        note=d.get("note"),
    )


def _plan(d: Mapping[str, Any]) -> PlanTerms:
    return PlanTerms(
        price=plain(Decimal(d["price"])),
        currency=d["currency"],
        billing_unit=BillingUnit(d["billing_unit"]),
        price_basis=PriceBasis(d["price_basis"]),
        price_kind=PriceKind(d["price_kind"]),
    )


def fx_table_for(con: duckdb.DuckDBPyConnection) -> FxTable:
    """Built-in default rates, then rates stored in the warehouse, then GPURENT_FX overrides."""
    stored = [
        FxRate(base=b, quote=q, rate=Decimal(r), rate_date=d, source=src)
        for d, b, q, r, src in con.execute(
            "SELECT rate_date, base, quote, rate, source FROM fx_rates ORDER BY rate_date"
        ).fetchall()
    ]
    return FxTable.default().with_rates(stored).with_rates(load_fx_table().rates)


def cost_offer(
    offer: Mapping[str, Any],
    profile: UsageProfile,
    *,
    display_currency: str | None,
    fx: FxTable | None,
    cache: dict[tuple[Any, ...], TrueCost | None] | None = None,
) -> CostedOffer | None:
    """True cost of one stored offer, or None when it cannot supply the profile's cards.

    ``cache``: costs already worked out in this call (same profile, display currency and FX
    table), by everything the engine reads of an offer; offers that differ only in their
    identity, stock or region (the same machine listed many times) are costed once."""
    gpus = cards_to_rent(offer, profile.gpus)
    if gpus is None:
        return None
    key = _cost_key(offer, gpus) if cache is not None else ()
    if cache is not None and key in cache:
        known = cache[key]
        return None if known is None else CostedOffer(offer=offer, cost=known, gpus_rented=gpus)
    inp = CostInput(
        price=plain(Decimal(offer["price"])),
        currency=offer["currency"],
        billing_unit=BillingUnit(offer["billing_unit"]),
        price_basis=PriceBasis(offer["price_basis"]),
        price_kind=PriceKind(offer["price_kind"]),
        gpu_count=gpus,
        fees=[_fee(f) for f in offer["fees"] or []],
        plans=[_plan(p) for p in offer["plans"] or []],
        # Metering terms are the provider's current billing facts (granularity, minimum
        # rental, billed boot), not stored per offer: they are platform rules, not prices.
        terms=terms_for(offer["provider"]),
    )
    cost: TrueCost | None
    try:
        cost = true_cost(inp, profile, display_currency=display_currency, fx=fx)
    except (DoesNotFit, FxRateMissing):
        # Too few cards, or a price no rate converts (left out and counted: LeftOut).
        cost = None
    if cache is not None:
        cache[key] = cost
    return None if cost is None else CostedOffer(offer=offer, cost=cost, gpus_rented=gpus)


def _cost_key(offer: Mapping[str, Any], gpus: int) -> tuple[Any, ...]:
    """Every field ``cost_offer`` hands the engine (the provider stands for its terms)."""
    return (
        offer["provider"],
        offer["price"],
        offer["currency"],
        offer["billing_unit"],
        offer["price_basis"],
        offer["price_kind"],
        gpus,
        tuple(tuple(f.items()) for f in offer["fees"] or ()),
        tuple(tuple(p.items()) for p in offer["plans"] or ()),
    )


def _filters(
    gpu_model: str | None,
    min_vram_gb: int | None,
    provider: str | None,
    gpu_vram_gb: int | None,
    gpu_form_factor: str | None,
    host: HostFilter | None,
    spot: bool | None = None,
) -> dict[str, Any]:
    """The filters of a ranking, as ``warehouse.queries.latest_offer_conditions`` takes them:
    one place for the answer and each of its left-out counts."""
    return {
        "gpu_model": gpu_model,
        "min_vram_gb": min_vram_gb,
        "provider": provider,
        "gpu_vram_gb": gpu_vram_gb,
        "gpu_form_factor": gpu_form_factor,
        "host": host,
        "spot": spot,
    }


def costed_latest_offers(
    con: duckdb.DuckDBPyConnection,
    profile: UsageProfile,
    *,
    display_currency: str,
    fx: FxTable | None = None,
    gpu_model: str | None = None,
    min_vram_gb: int | None = None,
    provider: str | None = None,
    in_stock_only: bool = False,
    gpu_vram_gb: int | None = None,
    limit: int | None = None,
    include_stale: bool = False,
    gpu_form_factor: str | None = None,
    host: HostFilter | None = None,
    spot: bool | None = None,
) -> list[CostedOffer]:
    """Latest offers that can supply the profile, each with its true cost, cheapest first.

    ``in_stock_only`` keeps the offers ``gpurent_core.cost.stock.rentable`` for the profile's cards.
    Only offers their provider's latest look confirmed are ranked (rule of truth 11): stale
    rows (``latest_offers.stale``) come too, marked, with ``include_stale`` only
    (``left_out`` counts the ones left out, by reason).

    Ranking needs one currency, so ``display_currency`` is required; every row keeps its
    native price and currency beside it, and the FX rate used.

    ``limit=N`` returns exactly ``costed_latest_offers(...)[:N]`` (same values, same order),
    costing only the offers that could be among the N (``warehouse.ranking``).
    ``host`` keeps the offers whose host attributes meet it; ``spot=False`` leaves spot
    (interruptible) headline prices out, True keeps only them (``left_out`` counts what
    each leaves out).
    """
    fx = fx or fx_table_for(con)
    filters = _filters(gpu_model, min_vram_gb, provider, gpu_vram_gb, gpu_form_factor, host, spot)

    cache: dict[tuple[Any, ...], TrueCost | None] = {}

    def costed(row: Mapping[str, Any]) -> CostedOffer | None:
        # In stock means rentable for the profile's cards: a 2-card machine with 1 free is not.
        if in_stock_only and not rentable(row, profile.gpus):
            return None
        return cost_offer(row, profile, display_currency=display_currency, fx=fx, cache=cache)

    if limit is not None and limit > 0:
        query = BoundQuery(
            con,
            profile,
            display_currency=display_currency,
            fx=fx,
            filters=filters,
            in_stock_only=in_stock_only,
            include_stale=include_stale,
        )
        try:
            return cheapest_first(
                query,
                limit,
                rows=partial(latest_rows, con),
                cost=costed,
                rank_key=_rank_key,
                monthly=lambda c: c.cost.monthly_display,
            )
        except Unbounded:
            pass  # an offer needs a missing FX rate: fail (or not) exactly as costing all does
    frame = latest_offers(
        con, in_stock_only=in_stock_only, confirmed_only=not include_stale, **filters
    )
    ranked = rank(c for row in frame.iter_rows(named=True) if (c := costed(row)) is not None)
    return ranked if limit is None else ranked[:limit]


@dataclass(frozen=True)
class LeftOut:
    """What a ranking leaves out of its answer, by reason, so that the answer can say why
    (never a silent drop): each count is of offers the same filters keep otherwise."""

    stale: int = 0
    """Not confirmed by their provider's latest look (rule of truth 11): what
    ``include_stale`` would add, before any ``limit``. 0 when stale ones are included."""
    cards: int = 0
    """Per-card offers no free count shows the profile's cards on one machine for
    (``cards_to_rent`` is None: no count, fewer free, or a region's or a platform's count),
    in a rentable status. 0 for one card, and unless ``in_stock_only``."""
    unpublished: int = 0
    """Left out only for not publishing a host attribute ``host`` filters on (each one they
    publish meets it). 0 without a host filter."""
    spot: int = 0
    """Spot (interruptible) headline prices ``spot=False`` leaves out: what ``spot=None``
    would add. 0 unless ``spot`` is False."""
    unconvertible: int = 0
    """Priced in a currency the FX table cannot convert to the display one (one rule for a
    missing rate: left out and counted, never the whole answer refused, never a silent
    drop, never shown in the wrong currency)."""
    unconvertible_currencies: tuple[str, ...] = ()


def unconvertible_currencies(
    con: duckdb.DuckDBPyConnection, display_currency: str, fx: FxTable | None = None
) -> list[str]:
    """The currencies offers are priced in that the FX table cannot convert to
    ``display_currency`` (GBP with no GBP rate): their offers are left out of a ranking."""
    table = fx or fx_table_for(con)
    listed = [c for (c,) in con.execute("SELECT DISTINCT currency FROM current_offers").fetchall()]
    missing = []
    for code in sorted(str(c) for c in listed if c):
        try:
            table.rate(code, display_currency)
        except FxRateMissing:
            missing.append(code)
    return missing


def left_out(
    con: duckdb.DuckDBPyConnection,
    profile: UsageProfile,
    *,
    gpu_model: str | None = None,
    min_vram_gb: int | None = None,
    provider: str | None = None,
    in_stock_only: bool = False,
    gpu_vram_gb: int | None = None,
    gpu_form_factor: str | None = None,
    include_stale: bool = False,
    host: HostFilter | None = None,
    spot: bool | None = None,
    unconvertible: Sequence[str] = (),
) -> LeftOut:
    """What ``costed_latest_offers`` with the same arguments leaves out, by reason
    (``unconvertible``: the currencies ``unconvertible_currencies`` found)."""
    filters = _filters(gpu_model, min_vram_gb, provider, gpu_vram_gb, gpu_form_factor, host, spot)
    scope: dict[str, Any] = {"filters": filters, "in_stock_only": in_stock_only}
    return LeftOut(
        unconvertible=unconvertible_to_rank(
            con, profile, **scope, currencies=unconvertible, include_stale=include_stale
        ),
        unconvertible_currencies=tuple(unconvertible),
        stale=0 if include_stale else stale_to_rank(con, profile, **scope),
        cards=_short_of_cards(con, profile, filters, include_stale) if in_stock_only else 0,
        unpublished=unpublished_to_rank(con, profile, **scope, include_stale=include_stale),
        spot=spot_to_rank(con, profile, **scope, include_stale=include_stale)
        if spot is False
        else 0,
    )


def _short_of_cards(
    con: duckdb.DuckDBPyConnection,
    profile: UsageProfile,
    filters: Mapping[str, Any],
    include_stale: bool,
) -> int:
    """``LeftOut.cards``: the per-card branch of ``cards_to_rent``, negated."""
    if profile.gpus <= 1:
        return 0  # every offer lists at least one card
    condition, params = latest_offer_conditions(
        in_stock_only=True, confirmed_only=not include_stale, **filters
    )
    # Fewer listed than wanted and no free count of one machine that covers them (a NULL
    # free count shows nothing, nor does a count of a region's or a platform's cards).
    short = (
        "o.price_basis = ? AND o.gpu_count < ? AND (o.available_count IS NULL"
        " OR o.available_count < ? OR NOT list_contains(?, o.provider))"
    )
    where = f"{condition} AND {short}" if condition else f"WHERE {short}"
    wanted = profile.gpus
    row = con.execute(
        f"SELECT count(*) FROM current_offer_rows AS o {where}",
        [*params, PriceBasis.GPU.value, wanted, wanted, sorted(registry.PER_MACHINE_FREE_COUNTS)],
    ).fetchone()
    return int(row[0]) if row else 0


def rank(offers: Iterable[CostedOffer]) -> list[CostedOffer]:
    """Cheapest true monthly first, ties by true hourly, then by provider and key (stable)."""
    return sorted(offers, key=_rank_key)


def _rank_key(c: CostedOffer) -> tuple[Any, ...]:
    return (*rank_key(c.cost), c.offer["provider"], c.offer["offer_key"])


__all__ = [
    "CostedOffer",
    "FxError",
    "LeftOut",
    "cards_to_rent",
    "cost_offer",
    "costed_latest_offers",
    "left_out",
    "rank",
    "rentable",
]
