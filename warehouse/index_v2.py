"""The daily price index, method gpi-2: an index you can cite (docs/price-index.md says why
each rule is there; method gpi-1, ``warehouse.index``, stays computable beside it).

Per UTC day, canonical GPU (gpu_model + gpu_vram_gb), form factor (SXM, PCIe, NVL... or
none stated: its own group), price kind and market, from the offers the good runs of that
day confirmed (``warehouse.index.SEEN_SQL``, shared with gpi-1: stale rows observe nothing):

1. each in-stock (in_stock or low) offer quotes, per kind, its cheapest price of that kind
   in its last in-stock state of the day (the offer's price and its plans), per GPU-hour
   (``price_kind``: on_demand = pay as you go per second, minute or hour; spot = spot or
   preemptible; monthly = a one-month package, on demand or prepaid, over its 730 hours);
   member prices, day/week/year packages and reserved terms priced per hour are not here;
2. the market is "CN" for a provider whose registry line (gpurent_core.providers) has
   home "CN", else "intl"; each market in its own currency (CNY, USD) unless currencies
   are named, converted at the day's rate: the latest dated on or before the day, else the
   pair's first (so a rate dated after that one never changes a past day);
3. each provider's quote is the median of its offers' quotes: one vote per provider;
4. the index is the median of the provider quotes, p25 and p75 their quartiles (linear
   interpolation between order statistics); no provider weighs more than WEIGHT_CAP;
5. withheld (no prices, with the reason) below MIN_PROVIDERS providers, or when p75 is
   more than MAX_SPREAD times p25;
6. exact arithmetic (fractions), each price rounded once, half-even, to 6 places; the rows
   in a fixed order, so the same history gives the same bytes.

``compute_value`` is steps 3-5 for one row, ``compute_rows`` steps 1-6 over offers of
days (both pure); ``price_index_v2`` reads the warehouse.

Method gpi-3 is this computation with two rules changed (``RULES``): an offer is in stock,
and quotes, only when rentable as listed (``gpurent_core.cost.stock.rentable``: every card of
the unit free, ``WHOLE_UNIT_SQL``), and each *supplier* has one vote, a marketplace's
re-listing voting as the cloud it re-lists (``supplier_of``, ``SUPPLIER_NAMES``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from enum import StrEnum
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from gpurent_core.cost.money import quantize_money
from gpurent_core.enums import BillingUnit, IndexMethod, PriceKind, StockStatus
from gpurent_core.fx import FxRate, FxRateMissing, FxTable
from gpurent_core.providers import BY_NAME, PROVIDERS
from warehouse.costed import fx_table_for
from warehouse.db import query_rows
from warehouse.index import SEEN_SQL, FxConverter, history_days, quote_per_gpu_hour

if TYPE_CHECKING:
    import duckdb

METHOD_VERSION = IndexMethod.GPI_2.value
"""The version of ``compute_rows``'s rows unless another method is named."""
MIN_PROVIDERS = 3
WEIGHT_CAP = Fraction(1, 3)
"""The most one provider may weigh: one vote among at least MIN_PROVIDERS."""
MAX_SPREAD = Decimal(2)
"""Withheld when p75 > MAX_SPREAD x p25: the providers do not agree on one price."""
SHARE_PLACES = 4
RATIO_PLACES = 2

if WEIGHT_CAP * MIN_PROVIDERS > 1:  # pragma: no cover - a guard on the constants above
    raise AssertionError("one vote among MIN_PROVIDERS would weigh more than WEIGHT_CAP")


class QuoteKind(StrEnum):
    """The kinds of price gpi-2 keeps apart (its ``price_kind`` column)."""

    ON_DEMAND = "on_demand"
    """Pay as you go, priced per second, minute or hour."""
    SPOT = "spot"
    """Spot, preemptible or bid: can be taken back."""
    MONTHLY = "monthly"
    """A one-month package (on demand or prepaid), over its hours."""


class Market(StrEnum):
    """Where a provider's platform is based (its ``market`` column)."""

    CN = "CN"
    """A Chinese platform: registry home "CN"."""
    INTL = "intl"
    """Any other platform."""


NATURAL_CURRENCY: dict[Market, str] = {Market.CN: "CNY", Market.INTL: "USD"}
KIND_ORDER = {kind: n for n, kind in enumerate(QuoteKind)}
MARKET_ORDER = {market: n for n, market in enumerate(Market)}
HOURLY_UNITS = frozenset({BillingUnit.SECOND, BillingUnit.MINUTE, BillingUnit.HOUR})

COLUMNS = (
    "date", "gpu_model", "gpu_vram_gb", "gpu_form_factor", "price_kind", "market", "currency",
    "index_price", "p25", "p75", "n_offers", "n_providers", "in_stock_share", "n_observed",
    "method_version", "withheld_reason",
)  # fmt: skip
_RENTABLE = [s.value for s in StockStatus if s.rentable]


def quote_kind(price_kind: str, billing_unit: str) -> QuoteKind | None:
    """The gpi-2 kind of a price, or None for one gpi-2 leaves out (member prices, day,
    week and year packages, reserved terms priced per hour: their term is not stated)."""
    kind, unit = PriceKind(price_kind), BillingUnit(billing_unit)
    if kind is PriceKind.SPOT:
        return QuoteKind.SPOT
    if kind is PriceKind.ON_DEMAND and unit in HOURLY_UNITS:
        return QuoteKind.ON_DEMAND
    if kind in (PriceKind.ON_DEMAND, PriceKind.COMMITMENT) and unit is BillingUnit.MONTH:
        return QuoteKind.MONTHLY
    return None


def market_of(provider: str) -> Market:
    """CN for a provider whose registry line has home "CN"; any other, known or not, intl."""
    info = BY_NAME.get(provider)
    return Market.CN if info is not None and info.home == "CN" else Market.INTL


# ---------------------------------------------------------------- what a method changes


@dataclass(frozen=True)
class Rules:
    """What a method built on this computation decides (gpi-2, gpi-3)."""

    whole_unit: bool
    """In stock (and a quote) only when rentable as listed (``WHOLE_UNIT_SQL``); else the
    status word (in_stock or low), as gpi-2 publishes it."""
    by_supplier: bool
    """One vote per supplier (``supplier_of``); else one per provider, as in gpi-2."""


RULES: dict[IndexMethod, Rules] = {
    IndexMethod.GPI_2: Rules(whole_unit=False, by_supplier=False),
    IndexMethod.GPI_3: Rules(whole_unit=True, by_supplier=True),
}

WHOLE_UNIT_SQL = "(available_count IS NULL OR available_count >= gpu_count)"
"""``gpurent_core.cost.stock.rentable(offer, 1)`` less its status test, over a version's
columns: an offer is rented as listed (``cards_to_rent`` of one card is the listed count,
per machine or pooled free count alike), so the free count, when given, must cover every
card of it. tests/tracking/test_index_gpi3.py checks it against ``rentable``."""

RELISTING_MARKETPLACES = frozenset({"shadeform", "primeintellect"})
"""Marketplaces whose offer key starts with the cloud that supplies the machine: shadeform
``<cloud>/<shade_instance_type>/<region>``, primeintellect ``<provider>/<dataCenter>/
<cloudId>/<gpuCount>/<security>`` (their parser docstrings)."""

SUPPLIER_NAMES: dict[str, str] = {
    # The underlying clouds of those keys (shadeform's `cloud`, Prime Intellect's `provider`
    # enum: spiders/providers/{shadeform,primeintellect}/recordings/PROVENANCE) that gpurent
    # also tracks directly, by gpurent's provider name (docs/price-index.md, method gpi-3).
    "datacrunch": "verda",  # both; DataCrunch, now Verda (gpurent's verda: api.datacrunch.io)
    "lambdalabs": "lambda",  # both; Lambda (gpurent's lambda, folder lambdalabs)
    "runpod": "runpod",  # both
    "hyperstack": "hyperstack",  # both
    "tensordock": "tensordock",  # Prime Intellect's recording (its A6000 offer)
}
"""Underlying cloud (lower case) -> gpurent provider. A cloud not here votes under its own
name (lower case): a supplier gpurent does not track directly still has one vote."""

if not set(SUPPLIER_NAMES.values()) <= {p.name for p in PROVIDERS}:  # pragma: no cover
    raise AssertionError("SUPPLIER_NAMES maps to a provider gpurent does not know")


def supplier_of(provider: str, offer_key: str) -> str:
    """Who supplies an offer's machine: for a re-listing marketplace, the cloud its key
    names (gpurent's name for it where gpurent tracks it, else its own), else the provider."""
    if provider not in RELISTING_MARKETPLACES:
        return provider
    cloud = offer_key.split("/", 1)[0].strip().lower()
    return SUPPLIER_NAMES.get(cloud, cloud) if cloud else provider


# ---------------------------------------------------------------- one row: steps 3-5


@dataclass(frozen=True)
class RowValue:
    """One gpi-2 figure and how it came about."""

    index_price: Decimal | None
    p25: Decimal | None
    p75: Decimal | None
    n_offers: int
    """Offer quotes that went into the provider medians."""
    n_providers: int
    """Providers quoting."""
    weights: tuple[tuple[str, Fraction], ...]
    """Each provider's weight in the published figure, by provider (empty when withheld)."""
    withheld_reason: str | None


def quantile(ordered: Sequence[Fraction], q: Fraction) -> Fraction:
    """The q-quantile of sorted values, interpolating linearly between order statistics
    (position q x (n - 1), counted from 0; the median for q = 1/2). Exact."""
    if not ordered:
        raise ValueError("quantile of nothing")
    position = q * (len(ordered) - 1)
    low = position.numerator // position.denominator
    if low + 1 >= len(ordered):
        return ordered[low]
    return ordered[low] + (position - low) * (ordered[low + 1] - ordered[low])


def fraction_median(values: Iterable[Fraction]) -> Fraction:
    return quantile(sorted(values), Fraction(1, 2))


def compute_value(
    quotes: Iterable[tuple[str, Fraction | Decimal]], *, voter: str = "provider"
) -> RowValue:
    """Steps 3-5 for the (provider, price per GPU-hour) quotes of one row; ``voter`` is
    what has a vote ("provider", gpi-3: "supplier"), as the reasons name it."""
    by_provider: dict[str, list[Fraction]] = defaultdict(list)
    for provider, price in quotes:
        by_provider[provider].append(Fraction(price))
    n_offers = sum(len(v) for v in by_provider.values())
    medians = {p: fraction_median(v) for p, v in by_provider.items()}
    n_providers = len(medians)
    if n_providers < MIN_PROVIDERS:
        names = ", ".join(sorted(medians))
        reason = (
            "no in-stock quote"
            if n_providers == 0
            else f"only {n_providers} {voter}{'s quote' if n_providers > 1 else ' quotes'} "
            f"({names}); at least {MIN_PROVIDERS} needed"
        )
        return RowValue(None, None, None, n_offers, n_providers, (), reason)
    ordered = sorted(medians.values())
    low, centre, high = (quantile(ordered, Fraction(k, 4)) for k in (1, 2, 3))
    if high > Fraction(MAX_SPREAD) * low:
        ratio = "infinite" if low == 0 else format(_places(high / low, RATIO_PLACES), "f")
        reason = f"too dispersed: p75/p25 = {ratio}, above {MAX_SPREAD}"
        return RowValue(None, None, None, n_offers, n_providers, (), reason)
    vote = Fraction(1, n_providers)  # the median: one vote each, whatever the offer count
    return RowValue(
        index_price=quantize_money(centre),
        p25=quantize_money(low),
        p75=quantize_money(high),
        n_offers=n_offers,
        n_providers=n_providers,
        weights=tuple((p, vote) for p in sorted(medians)),
        withheld_reason=None,
    )


def _places(value: Fraction, places: int) -> Decimal:
    """``value`` rounded half-even to ``places`` decimals, exactly (no decimal context)."""
    scaled, remainder = divmod(value.numerator * 10**places, value.denominator)
    twice = 2 * remainder
    if twice > value.denominator or (twice == value.denominator and scaled % 2 == 1):
        scaled += 1
    return Decimal(scaled).scaleb(-places)


# ---------------------------------------------------------------- the rows: steps 1-6


@dataclass(frozen=True)
class Price:
    """One price of an offer, per GPU-hour in its own currency."""

    kind: QuoteKind
    per_gpu_hour: Decimal
    currency: str


@dataclass(frozen=True)
class OfferDay:
    """What the good runs of one day saw of one offer."""

    day: date
    provider: str
    offer_key: str
    gpu_model: str
    gpu_vram_gb: int | None
    gpu_form_factor: str | None
    in_stock: bool
    """In stock (or low) at one good run of the day at least."""
    listed: frozenset[QuoteKind]
    """The kinds of price it listed (last state of the day, or last in-stock state)."""
    prices: tuple[Price, ...]
    """Its prices in its last in-stock state of the day (none when never in stock)."""


Rate = Callable[[str, str, date], Fraction | None]
"""(from currency, to currency, day) -> the rate, or None when the pair has none."""

_GroupKey = tuple[date, str, int | None, str | None, Market, QuoteKind]


def _group_order(key: _GroupKey) -> tuple[Any, ...]:
    day, model, vram, form, market, kind = key
    # Unknown VRAM and unstated form factor are their own groups, after the stated ones.
    return (
        day, model, vram is None, vram or 0, form is None, form or "",
        MARKET_ORDER[market], KIND_ORDER[kind],
    )  # fmt: skip


def compute_rows(
    offers: Iterable[OfferDay],
    *,
    rate: Rate,
    currencies: Sequence[str] | None = None,
    market: Callable[[str], Market] = market_of,
    method: IndexMethod = IndexMethod.GPI_2,
) -> list[dict[str, Any]]:
    """The rows of ``method`` (gpi-2 or gpi-3; COLUMNS, in that order) of offers seen on
    days, ordered by date, GPU, form factor, market, price kind and currency (as
    ``currencies`` lists them; None: each market in its NATURAL_CURRENCY). The input's order
    does not matter. Under gpi-3 a supplier votes, in its own market (``supplier_of``)."""
    by_supplier = RULES[method].by_supplier

    def voter(offer: OfferDay) -> str:
        return supplier_of(offer.provider, offer.offer_key) if by_supplier else offer.provider

    groups: dict[_GroupKey, list[OfferDay]] = defaultdict(list)
    for offer in offers:
        where = market(voter(offer))
        for kind in offer.listed:
            key = (offer.day, offer.gpu_model, offer.gpu_vram_gb, offer.gpu_form_factor, where,
                   kind)  # fmt: skip
            groups[key].append(offer)
    rows: list[dict[str, Any]] = []
    for key in sorted(groups, key=_group_order):
        day, model, vram, form, where, kind = key
        members = groups[key]
        observed = len(members)
        in_stock = sum(1 for m in members if m.in_stock)
        share = _places(Fraction(in_stock, observed), SHARE_PLACES)
        for currency in currencies if currencies is not None else (NATURAL_CURRENCY[where],):
            quotes = []
            for m in members:
                best = _cheapest(m.prices, kind, currency, day, rate)
                if best is not None:
                    quotes.append((voter(m), best))
            value = compute_value(quotes, voter="supplier" if by_supplier else "provider")
            rows.append(
                {
                    "date": day,
                    "gpu_model": model,
                    "gpu_vram_gb": vram,
                    "gpu_form_factor": form,
                    "price_kind": kind.value,
                    "market": where.value,
                    "currency": currency,
                    "index_price": value.index_price,
                    "p25": value.p25,
                    "p75": value.p75,
                    "n_offers": value.n_offers,
                    "n_providers": value.n_providers,
                    "in_stock_share": share,
                    "n_observed": observed,
                    "method_version": method.value,
                    "withheld_reason": value.withheld_reason,
                }
            )
    return rows


def _cheapest(
    prices: Iterable[Price], kind: QuoteKind, currency: str, day: date, rate: Rate
) -> Fraction | None:
    """The offer's cheapest price of ``kind`` in ``currency`` (None: none, or no rate)."""
    found: Fraction | None = None
    for price in prices:
        if price.kind is not kind:
            continue
        factor = Fraction(1) if price.currency == currency else rate(price.currency, currency, day)
        if factor is None:
            continue
        value = Fraction(price.per_gpu_hour) * factor
        found = value if found is None else min(found, value)
    return found


# ---------------------------------------------------------------- reading the warehouse

# Per day, provider and offer (the versions every good run of the day saw, SEEN_SQL): its
# last state of the day and its last in-stock state, each with its plans. A struct, not
# arg_max of each field: arg_max skips NULL values (an unstated form factor). In stock is
# the status word, and with $whole_unit (gpi-3) also every card of the unit free.
_DAILY_SQL = (
    SEEN_SQL
    + f""",
stocked AS (
    SELECT *, list_contains($rentable, status) AND (NOT $whole_unit OR {WHOLE_UNIT_SQL})
        AS in_stock
    FROM seen
),
offer_days AS (
    SELECT
        day, provider, offer_key,
        bool_or(in_stock) AS in_stock,
        arg_max(
            {{'gpu_model': gpu_model, 'gpu_vram_gb': gpu_vram_gb,
             'gpu_form_factor': gpu_form_factor, 'gpu_count': gpu_count, 'price': price,
             'currency': currency, 'billing_unit': billing_unit, 'price_basis': price_basis,
             'price_kind': price_kind, 'plan_set_id': plan_set_id}},
            valid_from
        ) AS last_state,
        arg_max(
            {{'gpu_count': gpu_count, 'price': price, 'currency': currency,
             'billing_unit': billing_unit, 'price_basis': price_basis,
             'price_kind': price_kind, 'plan_set_id': plan_set_id}},
            valid_from
        ) FILTER (WHERE in_stock) AS quote
    FROM stocked
    GROUP BY day, provider, offer_key
),
plan_lists AS (
    SELECT
        plan_set_id,
        list({{'price': price, 'currency': currency, 'billing_unit': billing_unit,
              'price_basis': price_basis, 'price_kind': price_kind}} ORDER BY seq) AS plans
    FROM price_plan_sets
    WHERE plan_set_id IN (
        SELECT last_state.plan_set_id FROM offer_days
        UNION SELECT quote.plan_set_id FROM offer_days
    )
    GROUP BY plan_set_id
)
SELECT
    o.day, o.provider, o.offer_key, o.in_stock, o.last_state, o.quote,
    coalesce(lp.plans, []) AS last_plans, coalesce(qp.plans, []) AS quote_plans
FROM offer_days AS o
LEFT JOIN plan_lists AS lp ON lp.plan_set_id = o.last_state.plan_set_id
LEFT JOIN plan_lists AS qp ON qp.plan_set_id = o.quote.plan_set_id
ORDER BY o.day, o.provider, o.offer_key
"""
)


def offer_prices(state: Mapping[str, Any], plans: Iterable[Mapping[str, Any]]) -> list[Price]:
    """The gpi-2 prices of a state: its own price and its plans', per GPU-hour."""
    count = state["gpu_count"]
    found = []
    for item in (state, *plans):
        kind = quote_kind(item["price_kind"], item["billing_unit"])
        if kind is not None:
            per_hour, currency = quote_per_gpu_hour({**item, "gpu_count": count})
            found.append(Price(kind, per_hour, currency))
    return found


def offer_day(row: Mapping[str, Any]) -> OfferDay:
    """An OfferDay from a row of the daily read."""
    last, quote = row["last_state"], row["quote"]
    prices = offer_prices(quote, row["quote_plans"]) if quote is not None else []
    listed = {p.kind for p in offer_prices(last, row["last_plans"])} | {p.kind for p in prices}
    return OfferDay(
        day=row["day"],
        provider=row["provider"],
        offer_key=row["offer_key"],
        gpu_model=last["gpu_model"],
        gpu_vram_gb=last["gpu_vram_gb"],
        gpu_form_factor=last["gpu_form_factor"],
        in_stock=bool(row["in_stock"]),
        listed=frozenset(listed),
        prices=tuple(prices),
    )


def daily_offer_days(
    con: duckdb.DuckDBPyConnection,
    start: date,
    end: date,
    *,
    gpu_model: str | None = None,
    provider: str | None = None,
    whole_unit: bool = False,
) -> list[OfferDay]:
    """What the good runs of each UTC day from ``start`` to ``end`` saw of each offer; in
    stock by the status word, or with ``whole_unit`` only when rentable as listed."""
    params: dict[str, Any] = {
        "start": datetime.combine(start, time(), UTC),
        "stop": datetime.combine(end + timedelta(days=1), time(), UTC),
        "gpu": gpu_model,
        "provider": provider,
        "rentable": _RENTABLE,
        "whole_unit": whole_unit,
    }
    return [offer_day(row) for row in query_rows(con, _DAILY_SQL, params)]


class PinnedFx(FxConverter):
    """FxConverter whose rate for a day before the pair's first dated rate is that first
    rate, not the latest: a rate dated after it, stored later, never changes a day already
    published."""

    def before_first(self, base: str, quote: str) -> FxRate:
        first = self.fx.first_date(base, quote)
        if first is None:
            raise FxRateMissing(f"no {base}/{quote} rate")
        return self.fx.rate(base, quote, first)

    def fraction(self, base: str, quote: str, day: date) -> Fraction | None:
        found = self.rate(base, quote, day)
        return None if found is None else Fraction(found.rate)


def price_index_v2(
    con: duckdb.DuckDBPyConnection,
    *,
    start: date | None = None,
    end: date | None = None,
    currencies: Sequence[str] | None = None,
    gpu_model: str | None = None,
    fx: FxTable | None = None,
    method: IndexMethod = IndexMethod.GPI_2,
) -> list[dict[str, Any]]:
    """The rows (COLUMNS) of ``method`` (gpi-2 or gpi-3) for every day seen from ``start``
    to ``end`` (inclusive UTC days; default: the whole history), in ``currencies`` (None:
    each market in its own).

    A group seen on a day gets its row even when nobody quotes it in stock: then the prices
    are null and withheld_reason says why. ``fx`` defaults to the warehouse's table.
    """
    span = history_days(con)
    if span is None:
        return []
    start = start or span[0]
    end = end or span[1]
    if end < start:
        return []
    converter = PinnedFx(fx or fx_table_for(con))
    whole_unit = RULES[method].whole_unit
    offers = daily_offer_days(con, start, end, gpu_model=gpu_model, whole_unit=whole_unit)
    return compute_rows(offers, rate=converter.fraction, currencies=currencies, method=method)


__all__ = [
    "COLUMNS",
    "MAX_SPREAD",
    "METHOD_VERSION",
    "MIN_PROVIDERS",
    "NATURAL_CURRENCY",
    "RELISTING_MARKETPLACES",
    "RULES",
    "SUPPLIER_NAMES",
    "WEIGHT_CAP",
    "WHOLE_UNIT_SQL",
    "Market",
    "OfferDay",
    "PinnedFx",
    "Price",
    "QuoteKind",
    "RowValue",
    "Rules",
    "compute_rows",
    "compute_value",
    "daily_offer_days",
    "market_of",
    "offer_day",
    "price_index_v2",
    "quantile",
    "quote_kind",
    "supplier_of",
]
