"""The daily GPU price index (method gpi-1; docs/price-index.md says why each rule is there).

Per calendar day (UTC) and canonical GPU (gpu_model + gpu_vram_gb), from the offers seen
that day by good runs (read from the change history, not stored: the index is recomputed
on demand, so a method change needs no migration and a late-loaded run is counted). Only
confirmed observations count (rule of truth 11): a run that kept an offer stale without
seeing it, and a failed or layout_changed run, observe nothing of it.

1. each in-stock (in_stock or low) on-demand offer quotes its price per GPU-hour
   (gpurent_core.cost.offer.price_per_gpu_hour), the last such quote of the day, converted into the
   index currency at that day's rate (gpurent_core.fx);
2. each provider's quote is the median of its offers' quotes;
3. with 4 or more providers, provider quotes further than 3 scaled MADs
   (3 x 1.4826 x median absolute deviation) from their median are screened out;
4. the index is the weighted mean of the remaining provider quotes, every provider weighted
   equally, no provider above 40% when 3 or more remain;
5. fewer than 2 providers quoting: the row is withheld (index_price null, with the reason),
   never carried forward from an earlier day.

``compute_index`` is steps 2-5 as a pure function; ``price_index`` reads the warehouse.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from fractions import Fraction
from functools import cache
from typing import TYPE_CHECKING, Any

import duckdb

from gpurent_core.cost.money import quantize_money
from gpurent_core.cost.offer import price_per_gpu_hour
from gpurent_core.enums import IndexMethod
from gpurent_core.fx import FxError, FxRate, FxTable
from gpurent_core.model import BillingUnit, PriceBasis, StockStatus
from warehouse.costed import fx_table_for
from warehouse.db import fetch_one, query_frame

if TYPE_CHECKING:  # Polars is imported where a frame is made: method gpi-2 reads without it
    import polars as pl

METHOD_VERSION = IndexMethod.GPI_1.value
MIN_PROVIDERS = 2
SCREEN_MIN_PROVIDERS = 4
MAD_LIMIT = Decimal(3)
MAD_SCALE = Decimal("1.4826")  # makes the MAD estimate a standard deviation for normal data
WEIGHT_CAP = Decimal("0.4")
CAP_MIN_PROVIDERS = 3
SHARE_PLACES = Decimal("0.0001")
INDEX_CURRENCIES = ("CNY", "USD")

INDEX_COLUMNS = (
    "date", "gpu_model", "gpu_vram_gb", "currency", "index_price", "n_offers", "n_providers",
    "in_stock_share", "method_version", "withheld_reason", "n_observed", "screened_out",
)  # fmt: skip
_RENTABLE = [s.value for s in StockStatus if s.rentable]


@dataclass(frozen=True)
class IndexValue:
    """One index figure and how it came about."""

    index_price: Decimal | None
    n_offers: int
    """Offer quotes (in-stock, on-demand) that went into the provider medians."""
    n_providers: int
    """Providers quoting, before screening."""
    used: tuple[str, ...]
    """Providers whose median entered the mean, sorted."""
    screened_out: tuple[str, ...]
    withheld_reason: str | None


def median(values: Sequence[Decimal]) -> Decimal:
    """Exact median (the mean of the middle two for an even count)."""
    if not values:
        raise ValueError("median of nothing")
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return _exact((Fraction(ordered[mid - 1]) + Fraction(ordered[mid])) / 2)


def cap_weights(weights: dict[str, Fraction], cap: Fraction) -> dict[str, Fraction]:
    """Scale ``weights`` to sum 1 with none above ``cap``: the excess of capped ones is
    shared among the others in proportion to their weights (repeated until none exceeds).

    With gpi-1's equal weights this changes nothing for 3+ providers (1/3 < 40%); it is the
    guard that keeps any future weighting from letting one provider dominate.
    """
    total = sum(weights.values())
    scaled = {k: w / total for k, w in weights.items()}
    if cap * len(scaled) < 1:
        raise ValueError(f"a cap of {cap} cannot hold {len(scaled)} weights")
    capped: dict[str, Fraction] = {}
    while True:
        free = {k: w for k, w in scaled.items() if k not in capped}
        over = [k for k, w in free.items() if w > cap]
        if not over:
            return {**free, **capped}
        for k in over:
            capped[k] = cap
        remaining = 1 - cap * len(capped)
        free_total = sum(w for k, w in free.items() if k not in capped)
        scaled = {k: w * remaining / free_total for k, w in free.items() if k not in capped}


def compute_index(quotes: Iterable[tuple[str, Decimal]]) -> IndexValue:
    """Steps 2-5 of the method for (provider, price per GPU-hour) quotes of one GPU and day."""
    by_provider: dict[str, list[Decimal]] = defaultdict(list)
    for provider, price in quotes:
        by_provider[provider].append(price)
    n_offers = sum(len(v) for v in by_provider.values())
    medians = {p: median(v) for p, v in by_provider.items()}
    n_providers = len(medians)
    if n_providers < MIN_PROVIDERS:
        reason = (
            "no in-stock on-demand quote"
            if n_providers == 0
            else f"only 1 provider quotes ({next(iter(medians))}); at least {MIN_PROVIDERS} needed"
        )
        return IndexValue(None, n_offers, n_providers, (), (), reason)
    screened: list[str] = []
    if n_providers >= SCREEN_MIN_PROVIDERS:
        centre = median(list(medians.values()))
        mad = median([abs(x - centre) for x in medians.values()])
        if mad > 0:  # when most quotes agree exactly, nobody is an outlier by this rule
            limit = MAD_LIMIT * MAD_SCALE * mad
            screened = sorted(p for p, x in medians.items() if abs(x - centre) > limit)
    kept = {p: x for p, x in medians.items() if p not in screened}
    weights = {p: Fraction(1) for p in kept}
    if len(kept) >= CAP_MIN_PROVIDERS:
        weights = cap_weights(weights, Fraction(WEIGHT_CAP))
    else:
        weights = {p: Fraction(1, len(kept)) for p in kept}
    value = sum((weights[p] * Fraction(x) for p, x in kept.items()), Fraction(0))
    return IndexValue(
        index_price=quantize_money(value),
        n_offers=n_offers,
        n_providers=n_providers,
        used=tuple(sorted(kept)),
        screened_out=tuple(screened),
        withheld_reason=None,
    )


def _exact(value: Fraction) -> Decimal:
    """A Fraction with a finite decimal expansion (halves of decimals are) as a Decimal."""
    return Decimal(value.numerator) / Decimal(value.denominator)


# ---------------------------------------------------------------- reading the warehouse

# The pieces of each version its runs saw: its validity less the stretches the offer stayed
# stale (kept by partial runs that could not read it, ``stale_spans``: rule of truth 11, only
# what a look confirmed counts). Versions and stale stretches only start and end at runs
# (warehouse.history), so a run inside a piece saw the offer in that state, and a run inside
# a stale stretch saw nothing of it. Shared by every read of "what a poll saw": the daily
# index below, and the per-poll availability (warehouse.trends.poll_availability).
SEEN_VERSIONS_SQL = """
gaps AS (
    -- Per offer that was ever stale, the stretches between its stale ones: when it was seen.
    SELECT
        provider, offer_key,
        coalesce(lag(stale_to) OVER w, '-infinity'::TIMESTAMPTZ) AS seen_from,
        stale_from AS seen_to
    FROM stale_spans
    WINDOW w AS (PARTITION BY provider, offer_key ORDER BY stale_from)
    UNION ALL
    SELECT provider, offer_key, max(stale_to), 'infinity'::TIMESTAMPTZ
    FROM stale_spans
    GROUP BY provider, offer_key
    HAVING count(stale_to) = count(*)  -- its last stale stretch has ended
),
seen_versions AS (
    SELECT v.*
    FROM versions AS v
    ANTI JOIN (SELECT DISTINCT provider, offer_key FROM stale_spans) AS k
        ON k.provider = v.provider AND k.offer_key = v.offer_key
    UNION ALL
    SELECT v.* REPLACE (
        greatest(v.valid_from, g.seen_from) AS valid_from,
        nullif(
            least(coalesce(v.valid_to, 'infinity'::TIMESTAMPTZ), g.seen_to),
            'infinity'::TIMESTAMPTZ
        ) AS valid_to
    )
    FROM versions AS v
    JOIN gaps AS g
        ON g.provider = v.provider AND g.offer_key = v.offer_key
        AND g.seen_from < coalesce(v.valid_to, 'infinity'::TIMESTAMPTZ)
        AND g.seen_to > v.valid_from
)
"""
"""The CTEs ``gaps`` and ``seen_versions`` (the rows of a CTE ``versions``, which holds at
least provider, offer_key, valid_from and valid_to, cut to the pieces its runs saw, same
columns): follow a ``WITH ... versions AS (...),`` with it."""

# Per day, provider and offer: what the good runs of that day saw. A version was seen on
# day d when a piece of it its runs saw (SEEN_VERSIONS_SQL) overlaps [first run of d, last
# run of d]: an overlap means a run of d saw it. Failed and layout_changed runs have no
# place in the history (history_at NULL): they see nothing, and a day of only those
# observes nothing.
SEEN_SQL = (
    """
WITH spans AS (
    SELECT provider, CAST(timezone('UTC', history_at) AS DATE) AS day,
           min(history_at) AS first_at, max(history_at) AS last_at, count(*) AS polls
    FROM crawl_runs
    WHERE history_at IS NOT NULL AND history_at >= $start AND history_at < $stop
    GROUP BY ALL
),
versions AS (
    SELECT
        provider, offer_key, valid_from, valid_to, gpu_model, gpu_vram_gb, gpu_form_factor,
        gpu_count, status, available_count, price, currency, billing_unit, price_basis,
        price_kind, plan_set_id
    FROM version_rows
    WHERE valid_from < $stop AND coalesce(valid_to, 'infinity'::TIMESTAMPTZ) > $start
      AND ($gpu IS NULL OR lower(gpu_model) = lower($gpu))
      AND ($provider IS NULL OR provider = $provider)
),"""
    + SEEN_VERSIONS_SQL
    + """,
days AS (
    SELECT v.*, CAST(unnest(range(
        date_trunc('day', timezone('UTC', greatest(v.valid_from, $start))),
        timezone('UTC', least(coalesce(v.valid_to, $stop), $stop)),
        INTERVAL 1 DAY
    )) AS DATE) AS day
    FROM seen_versions AS v
    WHERE v.valid_from < $stop AND coalesce(v.valid_to, 'infinity'::TIMESTAMPTZ) > $start
),
seen AS (
    SELECT d.*, s.polls
    FROM days AS d
    JOIN spans AS s ON s.provider = d.provider AND s.day = d.day
    WHERE d.valid_from <= s.last_at AND coalesce(d.valid_to, 'infinity'::TIMESTAMPTZ) > s.first_at
)
"""
)
"""The offer versions each good run of a day saw (``seen``: one row per version and day,
with the provider's ``polls`` that day), the part of the daily read every method shares.
Parameters: $start, $stop (UTC timestamps), $gpu, $provider (None: all)."""

_DAILY_SQL = (
    SEEN_SQL
    + """
SELECT
    day, provider, offer_key,
    arg_max(gpu_model, valid_from) AS gpu_model,
    arg_max(gpu_vram_gb, valid_from) AS gpu_vram_gb,
    any_value(polls) AS polls,
    bool_or(list_contains($rentable, status)) AS in_stock,
    arg_max(
        {'price': price, 'currency': currency, 'billing_unit': billing_unit,
         'price_basis': price_basis, 'gpu_count': gpu_count},
        valid_from
    ) FILTER (WHERE list_contains($rentable, status) AND price_kind = 'on_demand') AS quote
FROM seen
GROUP BY day, provider, offer_key
ORDER BY day, provider, offer_key
"""
)


def history_days(con: duckdb.DuckDBPyConnection) -> tuple[date, date] | None:
    """The first and last UTC day with a good run, or None for an empty warehouse."""
    row = fetch_one(
        con,
        "SELECT CAST(timezone('UTC', min(history_at)) AS DATE),"
        " CAST(timezone('UTC', max(history_at)) AS DATE) FROM crawl_runs",
    )
    if row is None or row[0] is None:
        return None
    return row[0], row[1]


def daily_offers(
    con: duckdb.DuckDBPyConnection,
    start: date,
    end: date,
    *,
    gpu_model: str | None = None,
    provider: str | None = None,
) -> pl.DataFrame:
    """One row per (day, provider, offer) seen by a good run on that UTC day, start..end
    (a run that kept the offer stale without seeing it does not count: rule of truth 11).

    Columns: day, provider, offer_key, gpu_model, gpu_vram_gb, polls (the provider's good
    runs that day), in_stock (in stock or low at one of them at least), quote (struct of
    price, currency, billing_unit, price_basis, gpu_count: the offer's last in-stock
    on-demand state of the day; null if it had none).
    """
    stop = datetime.combine(end + timedelta(days=1), time(), UTC)
    params: dict[str, Any] = {
        "start": datetime.combine(start, time(), UTC),
        "stop": stop,
        "gpu": gpu_model,
        "provider": provider,
        "rentable": _RENTABLE,
    }
    return query_frame(con, _DAILY_SQL, params)


@cache
def _per_gpu_hour(price: Decimal, unit: str, basis: str, count: int) -> Decimal:
    return price_per_gpu_hour(price, BillingUnit(unit), PriceBasis(basis), count)


class FxConverter:
    """Converts at the day's rate; before the table's first dated rate, its latest one
    (rates looked up once per pair and day)."""

    def __init__(self, fx: FxTable) -> None:
        self.fx = fx
        self._rates: dict[tuple[str, str, date], FxRate | None] = {}

    def rate(self, base: str, quote: str, day: date) -> FxRate | None:
        key = (base, quote, day)
        if key not in self._rates:
            try:
                found: FxRate | None = self.fx.rate(base, quote, day)
            except FxError:
                try:
                    found = self.before_first(base, quote)
                except FxError:
                    found = None  # the pair is unknown: the quote cannot enter this index
            self._rates[key] = found
        return self._rates[key]

    def before_first(self, base: str, quote: str) -> FxRate:
        """The rate for a day before the pair's first dated rate: the table's latest."""
        return self.fx.rate(base, quote, None)


def price_index(
    con: duckdb.DuckDBPyConnection,
    *,
    start: date | None = None,
    end: date | None = None,
    currencies: Sequence[str] = INDEX_CURRENCIES,
    gpu_model: str | None = None,
    fx: FxTable | None = None,
) -> pl.DataFrame:
    """The index rows (INDEX_COLUMNS) for every day and GPU seen from ``start`` to ``end``
    (inclusive UTC days; default: the whole history), one row per currency.

    A GPU seen on a day gets a row for that day even when no provider quotes it in stock:
    then index_price is null and withheld_reason says why. ``fx`` defaults to the
    warehouse's table (warehouse.costed.fx_table_for). Ordered by date, GPU, currency.
    """
    import polars as pl

    span = history_days(con)
    schema = _index_schema()
    if span is None:
        return pl.DataFrame(schema=schema)
    start = start or span[0]
    end = end or span[1]
    if end < start:
        return pl.DataFrame(schema=schema)
    converter = FxConverter(fx or fx_table_for(con))
    offers = daily_offers(con, start, end, gpu_model=gpu_model)
    groups: dict[tuple[date, str, int | None], list[dict[str, Any]]] = defaultdict(list)
    for row in offers.iter_rows(named=True):
        groups[(row["day"], row["gpu_model"], row["gpu_vram_gb"])].append(row)
    rows = []
    # Unknown VRAM (None) is its own group, after the known sizes of the model.
    ordered = sorted(
        groups.items(), key=lambda g: (g[0][0], g[0][1], g[0][2] is None, g[0][2] or 0)
    )
    for (day, model, vram), members in ordered:
        observed = len(members)
        in_stock = sum(1 for m in members if m["in_stock"])
        share = (Decimal(in_stock) / Decimal(observed)).quantize(SHARE_PLACES)
        native = [
            (m["provider"], quote_per_gpu_hour(m["quote"]))
            for m in members
            if m["quote"] is not None
        ]
        for currency in currencies:
            quotes = []
            for provider, (amount, ccy) in native:
                rate = converter.rate(ccy, currency, day)
                if rate is not None:
                    quotes.append((provider, amount * rate.rate))
            value = compute_index(quotes)
            rows.append(
                {
                    "date": day,
                    "gpu_model": model,
                    "gpu_vram_gb": vram,
                    "currency": currency,
                    "index_price": value.index_price,
                    "n_offers": value.n_offers,
                    "n_providers": value.n_providers,
                    "in_stock_share": share,
                    "method_version": METHOD_VERSION,
                    "withheld_reason": value.withheld_reason,
                    "n_observed": observed,
                    "screened_out": ",".join(value.screened_out) or None,
                }
            )
    return pl.DataFrame(rows, schema=schema, orient="row")


def quote_per_gpu_hour(quote: dict[str, Any]) -> tuple[Decimal, str]:
    """(price per GPU-hour, currency) of a row with price, currency, billing_unit,
    price_basis and gpu_count."""
    per_hour = _per_gpu_hour(
        Decimal(quote["price"]), quote["billing_unit"], quote["price_basis"], quote["gpu_count"]
    )
    return per_hour, quote["currency"]


def _index_schema() -> pl.Schema:
    import polars as pl

    return pl.Schema(
        {
            "date": pl.Date(),
            "gpu_model": pl.String(),
            "gpu_vram_gb": pl.Int32(),
            "currency": pl.String(),
            "index_price": pl.Decimal(18, 6),
            "n_offers": pl.Int32(),
            "n_providers": pl.Int32(),
            "in_stock_share": pl.Decimal(6, 4),
            "method_version": pl.String(),
            "withheld_reason": pl.String(),
            "n_observed": pl.Int32(),
            "screened_out": pl.String(),
        }
    )


__all__ = [
    "INDEX_COLUMNS",
    "METHOD_VERSION",
    "SEEN_SQL",
    "SEEN_VERSIONS_SQL",
    "FxConverter",
    "IndexValue",
    "cap_weights",
    "compute_index",
    "daily_offers",
    "history_days",
    "median",
    "price_index",
    "quote_per_gpu_hour",
]
