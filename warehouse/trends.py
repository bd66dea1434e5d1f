"""Prices and availability over time, read from the change history: per offer, per day, per
poll, and the hour-of-week availability pattern ("usually free 02:00-07:00").

Everything here is computed from offer_versions and the good runs (crawl_runs.history_at);
nothing is stored. A poll is a good run of a provider: failed runs are not polls of the
market (rule of truth 2), so they neither count as free nor as sold out. Only what a look
confirmed counts (rules of truth 1 and 11): a poll tells of a GPU only through the offers
it saw with a known stock (not stale, not ``unknown``), and the rental heat reads only the
rows their provider's latest run confirmed, counting the stale ones it left out.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

import duckdb
import polars as pl

from gpurent_core import providers as registry
from gpurent_core.cost.card_hour import card_hour_rate, card_hour_use, quotes_card_hour
from gpurent_core.cost.usage import UsageProfile
from gpurent_core.fx import FxTable
from gpurent_core.model import StockStatus
from warehouse.costed import cost_offer, fx_table_for
from warehouse.db import query_frame
from warehouse.index import (
    SEEN_VERSIONS_SQL,
    FxConverter,
    daily_offers,
    history_days,
    median,
    quote_per_gpu_hour,
)
from warehouse.queries import latest_offers
from warehouse.snapshots import offers_at
from warehouse.watch.runs import BLIND_SQL

USUALLY = 0.5
"""An hour is "usually free" when at least half of the polls in it and the hour either side
found a card in stock (pooling three hours steadies the verdict when polls are sparse)."""
MIN_POLLS_PER_HOUR = 2
"""A bucket (an hour of day, pooled or not, or an hour of week) with fewer polls than this
says nothing either way (its share is None)."""
MIN_DAYS_PER_HOUR = 2
"""... nor one whose polls all fall on fewer distinct days than this: two polls a minute
apart are one observation of one day, not a habit."""
MIN_HISTORY_POLLS = 24
MIN_HISTORY_DAYS = 7
"""A provider's pattern needs at least MIN_HISTORY_POLLS polls over MIN_HISTORY_DAYS distinct
days (a week: every weekday seen once) in the zone's local calendar; below that it says
"not enough history (N polls over D days)" and claims no hour at all."""
PATTERN_ZONES = ("Asia/Shanghai", "UTC")
TREND_DAYS = 7
_RENTABLE = [s.value for s in StockStatus if s.rentable]


def _window(
    con: duckdb.DuckDBPyConnection, start: date | None, end: date | None
) -> tuple[date, date] | None:
    """start..end, defaulting to the first and last day of history (None: no history)."""
    span = history_days(con)
    if span is None:
        return None
    return start or span[0], end or span[1]


def _bounds(start: date, end: date) -> tuple[datetime, datetime]:
    return datetime.combine(start, time(), UTC), datetime.combine(
        end + timedelta(days=1), time(), UTC
    )


NOT_CONFIRMED = "not_confirmed"
"""The ``status`` of a stretch of ``offer_changes`` no poll confirmed (the offer was kept
stale: its provider's runs could not read it)."""


def offer_changes(
    con: duckdb.DuckDBPyConnection,
    *,
    gpu_model: str,
    vram_gb: int | None = None,
    provider: str | None = None,
    start: date | None = None,
    end: date | None = None,
) -> pl.DataFrame:
    """Every state of every matching offer overlapping start..end (UTC days), oldest first,
    as the polls saw it.

    A stored version is cut by the stretches its offer was kept stale (``stale_spans``:
    runs that could not read it kept its last state), as ``history --by day`` reads them
    (rule of truth 11: only what a look confirmed counts): the pieces polls saw have
    ``confirmed`` true and their state; a stale stretch is a row of its own with
    ``confirmed`` false, ``status`` NOT_CONFIRMED and no free count (its price is the one
    it was kept with, not seen again). An offer seen once and kept stale since is in stock
    only from that poll to the next one, then not confirmed up to now.

    Columns: provider, offer_key, gpu_model, gpu_vram_gb, gpu_count, valid_from, valid_to
    (null while current), status, available_count, price, currency, billing_unit,
    price_basis, price_kind, confirmed, price_per_gpu_hour (native currency).
    """
    window = _window(con, start, end)
    columns = [
        "provider", "offer_key", "gpu_model", "gpu_vram_gb", "gpu_count", "valid_from",
        "valid_to", "status", "available_count", "price", "currency", "billing_unit",
        "price_basis", "price_kind",
    ]  # fmt: skip
    if window is None:
        return pl.DataFrame(
            schema={c: pl.String() for c in [*columns, "confirmed", "price_per_gpu_hour"]}
        )
    low, high = _bounds(*window)
    frame = query_frame(
        con,
        f"""
        WITH versions AS (
            SELECT {", ".join(columns)} FROM version_rows
            WHERE lower(gpu_model) = lower($gpu) AND ($vram IS NULL OR gpu_vram_gb = $vram)
              AND ($provider IS NULL OR provider = $provider)
              AND valid_from < $high AND coalesce(valid_to, 'infinity'::TIMESTAMPTZ) > $low
        ),"""
        + SEEN_VERSIONS_SQL
        + f""",
        unseen AS (
            SELECT v.* REPLACE (
                greatest(v.valid_from, sp.stale_from) AS valid_from,
                nullif(
                    least(coalesce(v.valid_to, 'infinity'::TIMESTAMPTZ),
                          coalesce(sp.stale_to, 'infinity'::TIMESTAMPTZ)),
                    'infinity'::TIMESTAMPTZ
                ) AS valid_to,
                '{NOT_CONFIRMED}' AS status,
                CAST(NULL AS INTEGER) AS available_count
            )
            FROM versions AS v
            JOIN stale_spans AS sp
                ON sp.provider = v.provider AND sp.offer_key = v.offer_key
                AND sp.stale_from < coalesce(v.valid_to, 'infinity'::TIMESTAMPTZ)
                AND coalesce(sp.stale_to, 'infinity'::TIMESTAMPTZ) > v.valid_from
        ),
        pieces AS (
            SELECT *, TRUE AS confirmed FROM seen_versions
            UNION ALL
            SELECT *, FALSE AS confirmed FROM unseen
        )
        SELECT * FROM pieces
        WHERE valid_from < $high AND coalesce(valid_to, 'infinity'::TIMESTAMPTZ) > $low
        ORDER BY provider, offer_key, valid_from
        """,
        {"gpu": gpu_model, "vram": vram_gb, "provider": provider, "low": low, "high": high},
    )
    per_hour = [
        quote_per_gpu_hour(row)[0]
        for row in frame.select(
            "price", "currency", "billing_unit", "price_basis", "gpu_count"
        ).iter_rows(named=True)
    ]
    return frame.with_columns(price_per_gpu_hour=pl.Series(per_hour, dtype=pl.Decimal(18, 6)))


def poll_availability(
    con: duckdb.DuckDBPyConnection,
    *,
    gpu_model: str,
    vram_gb: int | None = None,
    provider: str | None = None,
    start: date | None = None,
    end: date | None = None,
) -> pl.DataFrame:
    """One row per good poll of each provider that could tell whether the GPU was free.

    Only what the poll saw counts (rules of truth 1 and 11), as the restock forecast reads
    it (warehouse.forecast): an offer counts at a poll when that run saw it (not within a
    stale stretch of it: SEEN_VERSIONS_SQL) and its stock was known (not ``unknown``). A
    poll is free when an offer it counts is in stock or low; it is left out, as no evidence
    either way, when none is and an offer it held was stale or of unknown stock, or when it
    quarantined an item without a key (that item may have been the card: no absence it
    shows is confirmed). A poll whose listing, read whole, held none of the GPU is a poll
    that found it not free (rule of truth 10: a marketplace drops a rented card from its
    listing).

    Columns: provider, polled_at (the run's history_at), listed (offers of the GPU the poll
    counts), free_offers (of them in stock or low), free_cards (their free counts summed;
    offers without a count add 0). Computed by a sweep over version and stale boundaries
    and an as-of join, so its cost follows changes, not polls x offers.
    """
    window = _window(con, start, end)
    if window is None:
        return pl.DataFrame(
            schema={"provider": pl.String(), "polled_at": pl.Datetime("us", "UTC"),
                    "listed": pl.Int64(), "free_offers": pl.Int64(), "free_cards": pl.Int64()}
        )  # fmt: skip
    low, high = _bounds(*window)
    return query_frame(con, _POLLS_SQL, {
        "gpu": gpu_model, "vram": vram_gb, "provider": provider, "low": low, "high": high,
        "rentable": _RENTABLE, "unknown": StockStatus.UNKNOWN.value,
    })  # fmt: skip


# Per poll, two counts step at version and stale boundaries: ``held``, every offer of the
# GPU listed (stale or not, any stock), and ``listed``, those the poll saw with a known
# stock (with their free offers and cards). A poll where they differ held an offer it could
# not read: unless a read one was free, it cannot tell, and is dropped. A poll that holds
# none of the GPU read a listing without it (what a read listing no longer names is gone,
# rule of truth 10): not free there, as a marketplace shows a card that was rented. Only a
# confirmed absence is absence: a poll that quarantined an item without a key (``blind``)
# may have held the card in that item, so unless an offer it read was free it cannot tell
# either, and is dropped.
_POLLS_SQL = (
    """
WITH versions AS (
    SELECT provider, offer_key, valid_from, valid_to, status, available_count
    FROM version_rows
    WHERE lower(gpu_model) = lower($gpu) AND ($vram IS NULL OR gpu_vram_gb = $vram)
      AND ($provider IS NULL OR provider = $provider)
      AND valid_from < $high AND coalesce(valid_to, 'infinity'::TIMESTAMPTZ) > $low
),"""
    + SEEN_VERSIONS_SQL
    + """,
v AS (
    SELECT provider, valid_from, valid_to, 1 AS held, 0 AS told, 0 AS free, 0 AS cards
    FROM versions
    UNION ALL
    SELECT provider, valid_from, valid_to, 0, 1,
           CAST(list_contains($rentable, status) AS INTEGER),
           CASE WHEN list_contains($rentable, status) THEN coalesce(available_count, 0) ELSE 0 END
    FROM seen_versions
    WHERE status <> $unknown
),
events AS (
    SELECT provider, valid_from AS t, held AS d_held, told AS d_listed, free AS d_free,
           cards AS d_cards
    FROM v
    UNION ALL
    SELECT provider, valid_to, -held, -told, -free, -cards FROM v WHERE valid_to IS NOT NULL
),
steps AS (
    SELECT provider, t,
           sum(sum(d_held)) OVER w AS held,
           sum(sum(d_listed)) OVER w AS listed,
           sum(sum(d_free)) OVER w AS free_offers,
           sum(sum(d_cards)) OVER w AS free_cards
    FROM events
    GROUP BY provider, t
    WINDOW w AS (PARTITION BY provider ORDER BY t)
),
polls AS (
    SELECT r.provider, r.history_at, """
    + BLIND_SQL
    + """ AS blind
    FROM crawl_runs AS r
    WHERE r.history_at IS NOT NULL AND r.history_at >= $low AND r.history_at < $high
      AND r.provider IN (SELECT DISTINCT provider FROM versions)
),
told AS (
    SELECT p.provider, p.history_at AS polled_at, p.blind,
           CAST(coalesce(s.held, 0) AS BIGINT) AS held,
           CAST(coalesce(s.listed, 0) AS BIGINT) AS listed,
           CAST(coalesce(s.free_offers, 0) AS BIGINT) AS free_offers,
           CAST(coalesce(s.free_cards, 0) AS BIGINT) AS free_cards
    FROM polls AS p
    ASOF LEFT JOIN steps AS s ON p.provider = s.provider AND p.history_at >= s.t
)
SELECT provider, polled_at, listed, free_offers, free_cards
FROM told
WHERE free_offers > 0 OR (listed = held AND NOT blind)
ORDER BY provider, polled_at
"""
)


def daily_history(
    con: duckdb.DuckDBPyConnection,
    *,
    gpu_model: str,
    vram_gb: int | None = None,
    provider: str | None = None,
    start: date | None = None,
    end: date | None = None,
    currency: str | None = None,
    fx: FxTable | None = None,
) -> list[dict[str, Any]]:
    """Per UTC day and provider: polls, offers seen, offers in stock, the share of polls
    that found one in stock, and the min / median price per GPU-hour of the day's last
    in-stock on-demand quotes (in ``currency``, else the provider's own when it uses one)."""
    window = _window(con, start, end)
    if window is None:
        return []
    offers = daily_offers(con, window[0], window[1], gpu_model=gpu_model, provider=provider)
    if vram_gb is not None:
        offers = offers.filter(pl.col("gpu_vram_gb") == vram_gb)
    polls = poll_availability(
        con, gpu_model=gpu_model, vram_gb=vram_gb, provider=provider, start=window[0], end=window[1]
    ).with_columns(day=pl.col("polled_at").dt.date())
    free = {
        (r["day"], r["provider"]): (r["polls"], r["free_polls"])
        for r in polls.group_by("day", "provider")
        .agg(polls=pl.len(), free_polls=(pl.col("free_offers") > 0).sum())
        .iter_rows(named=True)
    }
    converter = FxConverter(fx or fx_table_for(con)) if currency else None
    grouped: dict[tuple[date, str], list[dict[str, Any]]] = defaultdict(list)
    for row in offers.iter_rows(named=True):
        grouped[(row["day"], row["provider"])].append(row)
    out = []
    for (day, prov), members in sorted(grouped.items()):
        prices: list[Decimal] = []
        shown: set[str] = set()
        for m in members:
            if m["quote"] is None:
                continue
            amount, ccy = quote_per_gpu_hour(m["quote"])
            if converter is not None and currency is not None:
                rate = converter.rate(ccy, currency, day)
                if rate is None:
                    continue
                amount, ccy = amount * rate.rate, currency
            prices.append(amount)
            shown.add(ccy)
        n_polls, free_polls = free.get((day, prov), (0, 0))
        out.append(
            {
                "date": day,
                "provider": prov,
                "polls": n_polls,
                "offers_seen": len(members),
                "offers_in_stock": sum(1 for m in members if m["in_stock"]),
                "free_share": round(free_polls / n_polls, 4) if n_polls else None,
                "min_per_gpu_hour": _money(min(prices)) if prices and len(shown) == 1 else None,
                "median_per_gpu_hour": _money(median(prices))
                if prices and len(shown) == 1
                else None,
                "currency": next(iter(shown)) if len(shown) == 1 else None,
            }
        )
    return out


def _money(value: Decimal) -> Decimal:
    return value.quantize(Decimal("0.000001"))


@dataclass(frozen=True)
class Pattern:
    """When one provider's cards of one GPU are free, by hour, in one time zone.

    Every share is backed by its counts (``polls_by_*``, ``days_by_*``); a share whose bucket
    has fewer than MIN_POLLS_PER_HOUR polls or MIN_DAYS_PER_HOUR days is None, and with less
    than MIN_HISTORY_POLLS polls over MIN_HISTORY_DAYS days every share is None.
    """

    provider: str
    timezone: str
    polls: int
    by_hour: tuple[float | None, ...]
    """Share of polls with a card free, per hour of day 0-23 (None: too few polls)."""
    by_hour_of_week: tuple[float | None, ...]
    """The same per hour of week: Monday 00:00 is 0, Sunday 23:00 is 167."""
    free_hours: str
    """Hours usually free as ranges, e.g. "02:00-07:00, 22:00-23:00" ("" when none)."""
    days: int = 0
    """Distinct local days with a poll."""
    polls_by_hour: tuple[int, ...] = ()
    days_by_hour: tuple[int, ...] = ()
    polls_by_hour_of_week: tuple[int, ...] = ()
    days_by_hour_of_week: tuple[int, ...] = ()

    @property
    def enough_history(self) -> bool:
        return self.polls >= MIN_HISTORY_POLLS and self.days >= MIN_HISTORY_DAYS

    def evidence(self) -> str:
        """How many observations back the pattern, e.g. "168 polls over 7 days"."""
        return f"{self.polls} poll{'s' * (self.polls != 1)} over {self.days} day" + (
            "s" * (self.days != 1)
        )

    def summary(self, gpu_label: str) -> str:
        """The sentence with the observations that back it."""
        text = self.sentence(gpu_label)
        if not self.polls or not self.enough_history:
            return text
        return f"{text}, from {self.evidence()}"

    def sentence(self, gpu_label: str) -> str:
        if not self.polls:
            return f"{gpu_label} on {self.provider}: no polls yet"
        known = [s for s in self.by_hour if s is not None]
        where = f"({self.timezone})"
        if not self.enough_history:
            return (
                f"{gpu_label} on {self.provider}: not enough history ({self.evidence()}; a "
                f"pattern needs {MIN_HISTORY_POLLS} polls over {MIN_HISTORY_DAYS} days) {where}"
            )
        if not known:
            return f"{gpu_label} on {self.provider}: too few polls per hour to tell {where}"
        if self.free_hours == "00:00-24:00":
            return f"{gpu_label} on {self.provider} is usually free at any hour {where}"
        if not self.free_hours:
            best = max(known)
            return (
                f"{gpu_label} on {self.provider} is rarely free: at most {best:.0%} of polls "
                f"in any hour {where}"
            )
        return f"{gpu_label} on {self.provider} is usually free {self.free_hours} {where}"


def availability_patterns(
    polls: pl.DataFrame, zones: Sequence[str] = PATTERN_ZONES
) -> list[Pattern]:
    """Patterns per provider and zone from ``poll_availability`` rows."""
    out = []
    for zone in zones:
        local = polls.with_columns(
            local=pl.col("polled_at").dt.convert_time_zone(zone),
            free=(pl.col("free_offers") > 0).cast(pl.Int32()),
        ).with_columns(
            day=pl.col("local").dt.date(),
            hour=pl.col("local").dt.hour().cast(pl.Int32()),
            # weekday() and hour() are Int8: widen before multiplying (6 x 24 > 127).
            how=(pl.col("local").dt.weekday().cast(pl.Int32()) - 1) * 24
            + pl.col("local").dt.hour().cast(pl.Int32()),
        )
        for provider in sorted(local["provider"].unique().to_list()):
            mine = local.filter(pl.col("provider") == provider)
            days = mine["day"].n_unique()
            enough = mine.height >= MIN_HISTORY_POLLS and days >= MIN_HISTORY_DAYS
            hourly = _buckets(mine, "hour", 24)
            weekly = _buckets(mine, "how", 168)
            smooth = _buckets(mine, "hour", 24, spread=1)
            out.append(
                Pattern(
                    provider=provider,
                    timezone=zone,
                    polls=mine.height,
                    by_hour=_shares(hourly, enough),
                    by_hour_of_week=_shares(weekly, enough),
                    free_hours=_ranges(
                        [s is not None and s >= USUALLY for s in _shares(smooth, enough)]
                    ),
                    days=days,
                    polls_by_hour=tuple(b.polls for b in hourly),
                    days_by_hour=tuple(b.days for b in hourly),
                    polls_by_hour_of_week=tuple(b.polls for b in weekly),
                    days_by_hour_of_week=tuple(b.days for b in weekly),
                )
            )
    return out


@dataclass(frozen=True)
class _Bucket:
    polls: int
    free: int
    days: int

    @property
    def share(self) -> float | None:
        """Share of polls with a card free; None below the minimum sample."""
        if self.polls < MIN_POLLS_PER_HOUR or self.days < MIN_DAYS_PER_HOUR:
            return None
        return round(self.free / self.polls, 4)


def _buckets(frame: pl.DataFrame, column: str, size: int, spread: int = 0) -> list[_Bucket]:
    """Polls, free polls and distinct days per slot; with ``spread``, pooled with that many
    neighbouring slots each side (cyclically), which steadies sparse hours."""
    per_slot: dict[int, tuple[int, int, set[date]]] = {}
    for r in (
        frame.group_by(column)
        .agg(n=pl.len(), free=pl.col("free").sum(), days=pl.col("day").unique())
        .iter_rows(named=True)
    ):
        per_slot[r[column]] = (int(r["n"]), int(r["free"]), set(r["days"]))
    out = []
    for slot in range(size):
        pooled = [per_slot.get((slot + d) % size) for d in range(-spread, spread + 1)]
        found = [p for p in pooled if p is not None]
        days: set[date] = set().union(*(p[2] for p in found)) if found else set()
        out.append(
            _Bucket(polls=sum(p[0] for p in found), free=sum(p[1] for p in found), days=len(days))
        )
    return out


def _shares(buckets: Sequence[_Bucket], enough: bool) -> tuple[float | None, ...]:
    return tuple(b.share if enough else None for b in buckets)


def _ranges(flags: list[bool]) -> str:
    """Hours flagged true as "HH:00-HH:00" ranges (end exclusive), wrapping past midnight."""
    if all(flags):
        return "00:00-24:00"
    if not any(flags):
        return ""
    # Start at an hour that is not flagged, so a range over midnight stays in one piece.
    first = flags.index(False)
    runs: list[tuple[int, int]] = []
    start: int | None = None
    for step in range(1, 25):
        hour = (first + step) % 24
        if flags[hour] and start is None:
            start = hour
        if not flags[hour] and start is not None:
            runs.append((start, hour))
            start = None
    if start is not None:
        runs.append((start, first))
    return ", ".join(f"{a:02d}:00-{b:02d}:00" for a, b in sorted(runs))


@dataclass(frozen=True)
class RentalHeat:
    """The rental heat rows (one per GPU) and how many stale offers they left out."""

    rows: list[dict[str, Any]]
    stale_left_out: int
    """Offers of the latest state not confirmed by their provider's latest look, of every
    GPU (those of a GPU with no confirmed offer too: it has no row)."""


def rental_heat(
    con: duckdb.DuckDBPyConnection,
    *,
    display_currency: str,
    fx: FxTable | None = None,
    profile: UsageProfile | None = None,
    now: datetime | None = None,
    by_form_factor: bool = False,
) -> RentalHeat:
    """Per GPU (model + VRAM) with an offer confirmed by its provider's latest look: how
    rentable it is right now. Stale rows (rule of truth 11: the provider's latest run could
    not see them, or failed) are left out of every figure and counted.

    form_factor (the most common one listed, if any), offers, in_stock_share (in stock or
    low / offers whose stock is known; None when no offer's stock is known: unknown is not
    sold out), unknown_stock (offers whose stock the provider does not say), free_cards (cards surely free: machines' counts summed, a pooled count
    once per provider and region, ``_free_cards``; None when no in-stock offer gives one),
    providers (listing it),
    providers_in_stock, median_true_hourly (the median price of a card-hour,
    ``_median_true_hourly``; ``profile`` default: always on) and its change over TREND_DAYS days (trend_7d, a fraction; None without a past;
    the past read from what was confirmed then), stale_left_out (the GPU's stale offers).

    ``by_form_factor``: one row per model, VRAM and form factor as listed (H100 PCIe and
    SXM differ in speed; offers that do not say are a row of their own, form_factor None).
    """
    fx = fx or fx_table_for(con)
    profile = profile or UsageProfile()
    now = now or datetime.now(UTC)
    keys = ["gpu_model", "gpu_vram_gb"] + (["gpu_form_factor"] if by_form_factor else [])
    latest = latest_offers(con)
    current = latest.filter(~pl.col("stale"))
    stale = _stale_counts(latest, keys)
    past = offers_at(con, now - timedelta(days=TREND_DAYS)).filter(~pl.col("stale"))
    medians_now = _median_true_hourly(current, profile, display_currency, fx, keys)
    medians_then = _median_true_hourly(past, profile, display_currency, fx, keys)
    rows = []
    groups = sorted(
        current.group_by(keys),
        key=lambda kg: (
            str(kg[0][0]),
            kg[0][1] is None,
            int(kg[0][1] or 0),
            *((kg[0][2] is None, str(kg[0][2] or "")) if by_form_factor else ()),
        ),
    )
    for key, group in groups:
        model, vram = key[0], key[1]
        in_stock = group.filter(pl.col("status").is_in(_RENTABLE))
        known = group.filter(pl.col("status") != StockStatus.UNKNOWN.value).height
        now_median = medians_now.get(tuple(key))
        then_median = medians_then.get(tuple(key))
        trend = None
        if now_median is not None and then_median:
            trend = ((now_median - then_median) / then_median).quantize(Decimal("0.0001"))
        form = key[2] if by_form_factor else _commonest(group["gpu_form_factor"])
        rows.append(
            {
                "gpu_model": model,
                "gpu_vram_gb": vram,
                "form_factor": form,
                "offers": group.height,
                "in_stock_share": round(in_stock.height / known, 4) if known else None,
                "unknown_stock": group.height - known,
                "free_cards": _free_cards(in_stock),
                "providers": group["provider"].n_unique(),
                "providers_in_stock": in_stock["provider"].n_unique(),
                "median_true_hourly": now_median,
                "trend_7d": trend,
                "cost_currency": display_currency,
                "stale_left_out": stale.get(tuple(key), 0),
            }
        )
    return RentalHeat(rows=rows, stale_left_out=sum(stale.values()))


def _free_cards(in_stock: pl.DataFrame) -> int | None:
    """Cards surely free among ``in_stock`` offers; None when none gives a count.

    A count of one machine's free cards (``PER_MACHINE_FREE_COUNTS``) adds up over machines.
    Any other count may be a pool that several offers repeat (Cudo's data centre, JarvisLabs'
    region, a platform's whole stock, shared by container and VM offers alike): summed, one
    pool would count once per offer. It is taken once per provider and region, the largest
    count given there: the least that is surely free."""
    known = in_stock.filter(pl.col("available_count").is_not_null())
    if known.is_empty():
        return None
    machines = pl.col("provider").is_in(sorted(registry.PER_MACHINE_FREE_COUNTS))
    own = known.filter(machines)["available_count"].sum()
    pools = (
        known.filter(~machines)
        .group_by("provider", "region")
        .agg(pl.col("available_count").max())["available_count"]
        .sum()
    )
    return int(own) + int(pools)


def _stale_counts(latest: pl.DataFrame, keys: list[str]) -> dict[tuple[Any, ...], int]:
    """Stale offers per GPU key: what the heat leaves out, so that it can say so."""
    found = latest.filter(pl.col("stale")).group_by(keys).len()
    return {tuple(r[k] for k in keys): int(r["len"]) for r in found.iter_rows(named=True)}


def _commonest(forms: pl.Series) -> str | None:
    """The most common form factor listed (ties: the first alphabetically), or None."""
    listed = forms.drop_nulls()
    return listed.mode().sort()[0] if listed.len() else None


def _median_true_hourly(
    offers: pl.DataFrame,
    profile: UsageProfile,
    currency: str,
    fx: FxTable,
    keys: list[str],
) -> dict[tuple[Any, ...], Decimal]:
    """Per card, the median price of a card-hour (``gpurent_core.cost.card_hour``, as `tco`
    prices renting): rentable offers priced on demand, no storage or traffic, the
    profile's hours as rented (packages in)."""
    use = card_hour_use(profile)
    per_card: dict[tuple[Any, ...], list[Decimal]] = defaultdict(list)
    for row in offers.filter(pl.col("status").is_in(_RENTABLE)).iter_rows(named=True):
        if not quotes_card_hour(row["price_kind"]):
            continue
        costed = cost_offer(row, use, display_currency=currency, fx=fx)
        if costed is None or not costed.rentable:
            continue
        rate = card_hour_rate(costed.cost.monthly_display, use, costed.gpus_rented)
        per_card[tuple(row[k] for k in keys)].append(
            _money(Decimal(rate.numerator) / Decimal(rate.denominator))
        )
    return {k: _money(median(v)) for k, v in per_card.items()}


__all__ = [
    "MIN_DAYS_PER_HOUR",
    "MIN_HISTORY_DAYS",
    "MIN_HISTORY_POLLS",
    "MIN_POLLS_PER_HOUR",
    "NOT_CONFIRMED",
    "Pattern",
    "RentalHeat",
    "availability_patterns",
    "daily_history",
    "offer_changes",
    "poll_availability",
    "rental_heat",
]
