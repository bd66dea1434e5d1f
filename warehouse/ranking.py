"""The N cheapest latest offers without costing every offer.

The exact cost engine (``gpurent_core.cost``) works in Python fractions: right, but far too
slow to run over a million offers when the user wants ten. So DuckDB first works out, per
offer, a cheap *lower bound* of its true monthly cost in the display currency, and lists
the offers in bound order; Python fetches and costs them exactly, a chunk at a time, and
stops once the N-th cheapest exact cost is below the bound of the next offer it has not
costed. Every offer left uncosted then costs at least that bound, so it ranks after the N
already found: the answer is exactly the first N of the full ranking.

Offers with the same cost inputs (provider, price, currency, billing unit, basis, kind,
cards rented, fee set, plan set: the same machine listed many times) cost exactly the same
and tie on cost, so they rank by provider and key: only the first N of such a group can
be among the N cheapest, and the others are skipped without being fetched.

Why the bound is never above the true monthly cost (rules: ``gpurent_core.cost``):

* The month's base is the cheapest candidate (headline and on_demand/commitment plans), so
  the bound takes the minimum of a lower bound of each: a metered price x the hours used (the
  hours billed are never fewer: boot, rounding and minimum rental only add), a metered
  commitment x 730 h, whole day/week/month packages x ceil(hours / package), a year / 12.
* Add-ons: the mandatory fees the engine always prices (not traffic, not per vCPU or GiB of
  RAM without a quantity), with their exact quantity, free allowance and hours charged. The
  fees left out (traffic, the optional disk that takes the storage) only add to the cost.
* A negative price, plan, fee amount or fee quantity (the model allows them) could lower the
  cost below any such bound: those offers get a bound of minus infinity and are always costed.
* FX: the same rates the engine would use (``FxTable.rate``), as doubles. An offer that needs
  a rate the table lacks gets a NULL bound, and the caller falls back to costing everything,
  so it fails exactly as before.
* Rounding: doubles carry ~1e-16 relative error per operation on non-negative terms, and the
  engine rounds the monthly figure half-even to 6 places; the bound is lowered by a relative
  1e-9 and an absolute 1e-6, far more than both.

The latest-state filters are ``warehouse.queries.latest_offer_conditions``; the stock and
fit rules (``gpurent_core.cost.stock.cards_to_rent`` and ``rentable``) are repeated in SQL to
skip offers that would be dropped anyway, and the caller applies the Python rules again.
Stale rows (``stale`` of ``current_offer_rows``, the same column ``latest_offers`` shows: not
confirmed by the provider's latest look, rule of truth 11) are ranked only when asked for;
``stale_to_rank`` counts the ones a ranking leaves out, by the same filters.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_FLOOR, Decimal
from fractions import Fraction
from typing import Any, TypeVar

import duckdb

from gpurent_core import providers as registry
from gpurent_core.cost.usage import UsageProfile
from gpurent_core.enums import BillingUnit
from gpurent_core.fx import FxError, FxTable
from gpurent_core.units import HOURS_PER_MONTH, HOURS_PER_UNIT
from warehouse.db import query_rows
from warehouse.queries import latest_offer_conditions

__all__ = [
    "BoundQuery",
    "Bounds",
    "Unbounded",
    "cheapest_first",
    "fx_rates",
    "latest_rows",
    "stale_to_rank",
    "unpublished_to_rank",
]

_RELATIVE_SLACK = 1e-9
_ABSOLUTE_SLACK = 1e-6
_QUANTUM = Decimal("1e-10")  # the SQL side's DECIMAL(38,10) quantities
_DEC = "DECIMAL(38,10)"
_MAX_CHUNK = 200  # keys per fetch: DuckDB still reads an IN list this long as a scan filter

Key = tuple[str, str]
"""provider, offer_key."""


class Unbounded(Exception):
    """Some offer has no bound (an FX rate is missing): only costing everything is exact."""


def fx_rates(fx: FxTable, currencies: Sequence[str]) -> dict[str, float]:
    """``'BASE/QUOTE' -> rate`` for every ordered pair of ``currencies`` the table answers
    (identities are handled in SQL); a pair it cannot answer is left out."""
    rates: dict[str, float] = {}
    for base in currencies:
        for quote in currencies:
            if base == quote:
                continue
            try:
                rates[f"{base}/{quote}"] = float(fx.rate(base, quote).rate)
            except FxError:
                continue
    return rates


# ---------------------------------------------------------------- SQL pieces
# Parameters are named ($hours, ...): see BoundQuery for their values.


def _rate(base: str, quote: str) -> str:
    """SQL: the rate from currency ``base`` to ``quote``, NULL when the table has none."""
    table = "MAP($fx_pairs::VARCHAR[], $fx_rates::DOUBLE[])"
    return f"(CASE WHEN {base} = {quote} THEN 1.0 ELSE {table}[{base} || '/' || {quote}] END)"


def _per_unit(unit: str) -> str:
    """SQL: how many ``unit`` one hour is (hours x this = units)."""
    cases = " ".join(f"WHEN '{u.value}' THEN {float(1 / HOURS_PER_UNIT[u])!r}" for u in BillingUnit)
    return f"(CASE {unit} {cases} END)"


def _candidate(price: str, currency: str, unit: str, basis: str, kind: str, k: str) -> str:
    """SQL: a lower bound of one way of renting the month, in the offer's currency (the
    offer's ``currency`` and ``cards`` are columns of ``k``)."""
    metered = ", ".join(
        f"'{u.value}'" for u in (BillingUnit.SECOND, BillingUnit.MINUTE, BillingUnit.HOUR)
    )
    units = (
        f"(CASE WHEN {unit} IN ({metered})"
        f" THEN (CASE WHEN {kind} = 'commitment' THEN 730.0 ELSE $hours END) * {_per_unit(unit)}"
        f" WHEN {unit} = 'day' THEN $days WHEN {unit} = 'week' THEN $weeks"
        f" WHEN {unit} = 'month' THEN $months WHEN {unit} = 'year' THEN $years END)"
    )
    cards = f"(CASE WHEN {basis} = 'gpu' THEN {k}.cards ELSE 1 END)"
    return f"({price}::DOUBLE * {_rate(currency, f'{k}.currency')} * {cards} * {units})"


def _fee_bound() -> str:
    """SQL (fee row ``f`` of a set; the offer's currency and cards in ``k``): the fee's
    monthly cost in the offer's currency where the engine always counts it as computed
    here, else 0 (a fee left out can only add)."""
    quantity = (
        f"coalesce(f.quantity::{_DEC}, CASE f.basis WHEN 'instance' THEN 1::{_DEC}"
        f" WHEN 'gpu' THEN k.cards::{_DEC} WHEN 'gb' THEN $storage_gb::{_DEC}"
        f" WHEN 'tb' THEN $storage_tb::{_DEC} END)"
    )
    billable = (
        f"(CASE WHEN f.included_quantity IS NULL THEN {quantity}"
        f" ELSE greatest({quantity} - f.included_quantity::{_DEC}, 0::{_DEC}) END)"
    )
    per = _per_unit("f.unit")
    charged = (
        "(CASE WHEN f.unit IS NULL THEN 1.0"
        f" WHEN f.fee_type = 'storage_stopped' THEN $stopped_hours * {per}"
        # Unknown (NULL) is counted as charged while stopped, and a fee per month or year
        # not known to stop with the instance is paid for the month, as the engine does.
        " WHEN coalesce(f.charged_while_stopped, true)"
        f" AND ($keep_disks OR f.unit IN ('month', 'year')) THEN 730.0 * {per}"
        f" ELSE $hours * {per} END)"
    )
    counted = f"f.mandatory AND f.fee_type NOT IN ('egress', 'ingress') AND {quantity} IS NOT NULL"
    value = (
        f"f.amount::DOUBLE * {_rate('f.currency', 'k.currency')} * {billable}::DOUBLE * {charged}"
    )
    return f"(CASE WHEN {counted} THEN {value} ELSE 0.0 END)"


# gpurent_core.cost.stock.cards_to_rent of offer ``o`` for $wanted cards.
_CARDS = (
    "(CASE WHEN o.price_basis = 'instance'"
    " THEN (CASE WHEN o.gpu_count >= $wanted THEN o.gpu_count END)"
    " WHEN $wanted <= o.gpu_count THEN o.gpu_count"
    # More cards than listed only where a free count of one machine shows them (NULL: no
    # more; a pool's count: no more either).
    " WHEN list_contains($per_machine, o.provider) AND o.available_count >= $wanted"
    " THEN $wanted END)"
)

GROUP_COLUMNS = (
    "provider",
    "price",
    "currency",
    "billing_unit",
    "price_basis",
    "price_kind",
    "cards",
    "fee_set_id",
    "plan_set_id",
)
"""What ``warehouse.costed.cost_offer`` hands the engine (fee and plan lists by set id)."""


def _offers_ctes(condition: str, in_stock_only: bool) -> str:
    """``c``: the latest offers the filters keep, with the cards they would rent; ``r``: those
    that supply the cards (and, in stock only, are rentable for them), with ``stale``.

    They read ``current_offer_rows`` (``current_offers`` with its run and ``stale``: the rows
    of the ``latest_offers`` view, sql/0017_confirmed_offers.sql) rather than the view, for
    the fee and plan set ids: each set's bound is worked out once per cards and currency (most
    offers share a few sets), not once per offer."""
    # The status is in the conditions; a rentable offer's free count covers its cards.
    rentable = (
        " AND (o.available_count IS NULL OR o.available_count >= o.cards)" if in_stock_only else ""
    )
    return f"""
        c AS (
            SELECT
                o.provider, o.offer_key, o.available_count, o.price, o.currency,
                o.billing_unit, o.price_basis, o.price_kind, o.fee_set_id, o.plan_set_id,
                o.stale, {_CARDS} AS cards
            FROM current_offer_rows AS o
            {condition}
        ),
        r AS (SELECT o.* FROM c AS o WHERE o.cards IS NOT NULL{rentable})"""


def _bound_sql(condition: str, in_stock_only: bool, include_stale: bool) -> str:
    """The offers to rank with their bound and cost group, cheapest bound first (stale rows
    only with ``include_stale``: rule of truth 11)."""
    ranked = _ranked(include_stale)
    plan = _candidate(
        "q.price", "q.currency", "q.billing_unit", "q.price_basis", "q.price_kind", "k"
    )
    headline = _candidate(
        "o.price", "o.currency", "o.billing_unit", "o.price_basis", "o.price_kind", "o"
    )
    display = _rate("o.currency", "$display")
    missing = f"{display} IS NULL OR coalesce(fb.missing, false) OR coalesce(pb.missing, false)"
    negative = "o.price < 0 OR coalesce(fb.negative, false) OR coalesce(pb.negative, false)"
    # A spot headline may be rented through its spot plans too (gpurent_core.cost.plans).
    spot_plan = "CASE WHEN o.price_kind = 'spot' THEN pb.spot_bound END"
    base = f"least({headline}, coalesce(pb.bound, {headline}), coalesce({spot_plan}, {headline}))"
    group = ", ".join(f"o.{c}" for c in GROUP_COLUMNS)
    return f"""
        WITH {_offers_ctes(condition, in_stock_only)},
        s AS (SELECT o.* FROM r AS o {ranked}),
        fb AS (
            SELECT
                k.fee_set_id, k.cards, k.currency,
                sum({_fee_bound()}) AS bound,
                bool_or({_rate("f.currency", "k.currency")} IS NULL) AS missing,
                bool_or(f.amount < 0 OR coalesce(f.quantity < 0, false)) AS negative
            FROM (SELECT DISTINCT fee_set_id, cards, currency FROM s) AS k
            JOIN addon_fee_sets AS f ON f.fee_set_id = k.fee_set_id
            GROUP BY k.fee_set_id, k.cards, k.currency
        ),
        pb AS (
            SELECT
                k.plan_set_id, k.cards, k.currency,
                min(CASE WHEN q.price_kind IN ('on_demand', 'commitment') THEN {plan} END)
                    AS bound,
                min(CASE WHEN q.price_kind = 'spot' THEN {plan} END) AS spot_bound,
                bool_or({_rate("q.currency", "k.currency")} IS NULL) AS missing,
                bool_or(q.price < 0) AS negative
            FROM (SELECT DISTINCT plan_set_id, cards, currency FROM s) AS k
            JOIN price_plan_sets AS q ON q.plan_set_id = k.plan_set_id
            GROUP BY k.plan_set_id, k.cards, k.currency
        )
        SELECT
            o.provider, o.offer_key,
            CASE WHEN {missing} THEN NULL
                WHEN {negative} THEN '-infinity'::DOUBLE
                ELSE ({base} + coalesce(fb.bound, 0.0)) * {display}
                    * {1 - _RELATIVE_SLACK!r} - {_ABSOLUTE_SLACK!r}
            END AS bound,
            {group}
        FROM s AS o
        LEFT JOIN fb
            ON fb.fee_set_id = o.fee_set_id AND fb.cards = o.cards AND fb.currency = o.currency
        LEFT JOIN pb
            ON pb.plan_set_id = o.plan_set_id AND pb.cards = o.cards
            AND pb.currency = o.currency
        ORDER BY bound NULLS FIRST, o.provider, o.offer_key
        LIMIT $count
    """


def _named(condition: str, params: Sequence[Any]) -> tuple[str, dict[str, Any]]:
    """``latest_offer_conditions``' ``?`` placeholders as named ones ($filter_0, ...)."""
    parts = condition.split("?")
    if len(parts) != len(params) + 1:
        raise ValueError(f"{len(parts) - 1} placeholders for {len(params)} parameters")
    text = parts[0] + "".join(f"$filter_{i}{part}" for i, part in enumerate(parts[1:]))
    return text, {f"filter_{i}": value for i, value in enumerate(params)}


def _floor(value: Fraction) -> Decimal:
    """Rounded down to the SQL quantities' 10 places: a smaller quantity keeps a lower bound."""
    exact = Decimal(value.numerator) / Decimal(value.denominator)
    return exact.quantize(_QUANTUM, rounding=ROUND_FLOOR)


def _cards_params(profile: UsageProfile) -> dict[str, Any]:
    """What ``_CARDS`` reads: the cards wanted, the providers whose free count is per machine."""
    return {"wanted": profile.gpus, "per_machine": sorted(registry.PER_MACHINE_FREE_COUNTS)}


def _profile_params(
    profile: UsageProfile, display_currency: str, rates: Mapping[str, float]
) -> dict[str, Any]:
    hours = Fraction(profile.hours_per_month)

    def packages(unit: BillingUnit) -> float:
        return float(math.ceil(hours / HOURS_PER_UNIT[unit]))

    storage = Fraction(profile.storage_gb)
    keep = profile.keep_disks_while_stopped
    return {
        **_cards_params(profile),
        "hours": float(hours),
        "days": packages(BillingUnit.DAY),
        "weeks": packages(BillingUnit.WEEK),
        "months": packages(BillingUnit.MONTH),
        "years": float(HOURS_PER_MONTH / HOURS_PER_UNIT[BillingUnit.YEAR]),
        "stopped_hours": float(HOURS_PER_MONTH - hours) if keep else 0.0,
        "storage_gb": _floor(storage),
        "storage_tb": _floor(storage / 1000),
        "keep_disks": keep,
        "display": display_currency,
        "fx_pairs": list(rates),
        "fx_rates": list(rates.values()),
    }


# ---------------------------------------------------------------- the driver


@dataclass(frozen=True)
class Bounds:
    """The offers to rank, cheapest bound first: ``keys[i]`` costs at least ``bounds[i]``
    in the display currency, and every offer not listed at least ``bounds[-1]``;
    ``groups[i]`` is its cost group (``GROUP_COLUMNS``)."""

    keys: list[Key]
    bounds: list[float]
    groups: list[tuple[Any, ...]]
    complete: bool
    """True when every offer to rank is listed."""


class BoundQuery:
    """The bound query of one ranking (profile, display currency, FX table, filters)."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        profile: UsageProfile,
        *,
        display_currency: str,
        fx: FxTable,
        filters: Mapping[str, Any],
        in_stock_only: bool,
        include_stale: bool = False,
    ) -> None:
        condition, filter_params = latest_offer_conditions(in_stock_only=in_stock_only, **filters)
        named, named_params = _named(condition, filter_params)
        rates = fx_rates(fx, sorted(fx.currencies | {display_currency}))
        self._con = con
        self._sql = _bound_sql(named, in_stock_only, include_stale)
        self._params = {**_profile_params(profile, display_currency, rates), **named_params}

    def first(self, count: int) -> Bounds:
        """The ``count`` cheapest bounds; raises ``Unbounded`` when an offer has none."""
        rows = self._con.execute(self._sql, {**self._params, "count": count + 1}).fetchall()
        if rows and rows[0][2] is None:
            raise Unbounded("an offer needs an FX rate the table does not have")
        listed = rows[:count]
        return Bounds(
            keys=[(str(r[0]), str(r[1])) for r in listed],
            bounds=[float(r[2]) for r in listed],
            groups=[tuple(r[3:]) for r in listed],
            complete=len(rows) <= count,
        )


def stale_to_rank(
    con: duckdb.DuckDBPyConnection,
    profile: UsageProfile,
    *,
    filters: Mapping[str, Any],
    in_stock_only: bool,
) -> int:
    """How many stale offers (rule of truth 11: not confirmed by their provider's latest
    look) a ranking for ``profile`` and ``filters`` leaves out: the offers the bound query
    would list with ``include_stale`` and lists without it."""
    return _count_to_rank(con, profile, filters, in_stock_only, "WHERE o.stale")


def spot_to_rank(
    con: duckdb.DuckDBPyConnection,
    profile: UsageProfile,
    *,
    filters: Mapping[str, Any],
    in_stock_only: bool,
    include_stale: bool = False,
) -> int:
    """How many spot (interruptible) offers a ranking for ``profile`` and ``filters`` that
    leaves them out (``spot=False``) would list with them."""
    spot_only = {**filters, "spot": True}
    return _count_to_rank(con, profile, spot_only, in_stock_only, _ranked(include_stale))


def unconvertible_to_rank(
    con: duckdb.DuckDBPyConnection,
    profile: UsageProfile,
    *,
    filters: Mapping[str, Any],
    in_stock_only: bool,
    currencies: Sequence[str],
    include_stale: bool = False,
) -> int:
    """How many offers a ranking for ``profile`` and ``filters`` leaves out because they are
    priced in one of ``currencies``, which the FX table cannot convert to the display one."""
    codes = [c for c in currencies if re.fullmatch(r"[A-Z]{3}", c)]  # inlined: codes only
    if not codes:
        return 0
    listed = ", ".join(f"'{c}'" for c in codes)
    where = f"{_ranked(include_stale) or 'WHERE TRUE'} AND o.currency IN ({listed})"
    return _count_to_rank(con, profile, filters, in_stock_only, where)


def unpublished_to_rank(
    con: duckdb.DuckDBPyConnection,
    profile: UsageProfile,
    *,
    filters: Mapping[str, Any],
    in_stock_only: bool,
    include_stale: bool = False,
) -> int:
    """How many offers a ranking for ``profile`` and ``filters`` leaves out only because they
    do not publish a host attribute its ``host`` filter reads (every published one meets
    it): the offers the bound query would list were the unpublished ones taken as met."""
    host = filters.get("host")
    if host is None or not host.active:
        return 0
    turned = {**filters, "host_unpublished": True}
    return _count_to_rank(con, profile, turned, in_stock_only, _ranked(include_stale))


def _ranked(include_stale: bool) -> str:
    """The rows a ranking lists: stale ones only when asked for (rule of truth 11)."""
    return "" if include_stale else "WHERE NOT o.stale"


def _count_to_rank(
    con: duckdb.DuckDBPyConnection,
    profile: UsageProfile,
    conditions: Mapping[str, Any],
    in_stock_only: bool,
    where: str,
) -> int:
    """How many offers the bound query's rows (``r``) hold for ``conditions`` (the keywords
    of ``latest_offer_conditions``), narrowed by ``where``."""
    condition, filter_params = latest_offer_conditions(in_stock_only=in_stock_only, **conditions)
    named, named_params = _named(condition, filter_params)
    sql = f"WITH {_offers_ctes(named, in_stock_only)} SELECT count(*) FROM r AS o {where}"
    row = con.execute(sql, {**_cards_params(profile), **named_params}).fetchone()
    return int(row[0]) if row else 0


def latest_rows(con: duckdb.DuckDBPyConnection, keys: Sequence[Key]) -> list[dict[str, Any]]:
    """The ``latest_offers`` rows of ``keys`` (as ``warehouse.queries.latest_offers`` gives
    them), in the order of ``keys``; a key no longer there is left out."""
    if not keys:
        return []
    providers = sorted({p for p, _ in keys})
    offer_keys = sorted({k for _, k in keys})
    # Constant IN lists become scan filters: tens of ms at a million offers, where a join
    # on a list of keys reads every row. A key listed by another provider too comes back
    # and is dropped below.
    sql = (
        "SELECT * FROM latest_offers AS o"
        f" WHERE o.provider IN ({', '.join('?' for _ in providers)})"
        f" AND o.offer_key IN ({', '.join('?' for _ in offer_keys)})"
    )
    rows = query_rows(con, sql, [*providers, *offer_keys])
    found = {(r["provider"], r["offer_key"]): r for r in rows}
    return [found[key] for key in keys if key in found]


T = TypeVar("T")


def cheapest_first(
    query: BoundQuery,
    limit: int,
    *,
    rows: Callable[[Sequence[Key]], list[dict[str, Any]]],
    cost: Callable[[dict[str, Any]], T | None],
    rank_key: Callable[[T], tuple[Any, ...]],
    monthly: Callable[[T], Decimal],
) -> list[T]:
    """The ``limit`` first of ``sorted(costed offers, key=rank_key)`` (module docstring).

    Offers are fetched (``rows``) and costed (``cost``; None drops one) in bound order, in
    chunks that start at twice ``limit`` (bounds are close to the exact cost, so the first
    chunk usually settles it, and exact costs are the slow part of a small warehouse's
    answer) and grow fourfold up to ``_MAX_CHUNK`` keys, until the ``limit``-th ``monthly``
    figure (the first element of ``rank_key``) is below the bound of every offer not yet
    costed. ``cost`` must drop no offer the bound query lists (it lists only those that
    supply the cards, and, in stock only, are rentable for them), or the skipped members of
    a cost group could be missed."""
    found: list[T] = []
    done: set[Key] = set()
    taken: dict[tuple[Any, ...], int] = {}
    window = max(64 * limit, 2_000)
    chunk = min(2 * limit, _MAX_CHUNK)
    while True:
        ranked = query.first(window)
        # Each query's order is exact on its own: take its offers not handled yet.
        todo = [
            (key, bound, group)
            for key, bound, group in zip(ranked.keys, ranked.bounds, ranked.groups, strict=True)
            if key not in done
        ]
        start = 0
        while start < len(todo):
            part: list[Key] = []
            while start < len(todo) and len(part) < chunk:
                key, _, group = todo[start]
                start += 1
                done.add(key)
                # Same inputs, same cost, ties by key: the group's first `limit` rank first.
                if taken.get(group, 0) < limit:
                    taken[group] = taken.get(group, 0) + 1
                    part.append(key)
            found.extend(c for row in rows(part) if (c := cost(row)) is not None)
            found.sort(key=rank_key)
            del found[limit:]
            chunk = min(4 * chunk, _MAX_CHUNK)
            if start < len(todo):
                floor = todo[start][1]
            elif not ranked.complete:
                floor = ranked.bounds[-1]  # the offers past the window cost at least this
            else:
                return found
            if len(found) == limit and monthly(found[-1]) < floor:
                return found
        if ranked.complete:
            return found
        window *= 8
