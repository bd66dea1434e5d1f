"""Frames shaped for people: localised column names, money as ``¥1,234.56``, ages in words.

Pure functions over the frames ``data`` returns, so they are tested without a browser.
Money is formatted from Decimal to text here (never through float); the rows arrive
already ranked, so the text columns need no numeric sort.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import pandas as pd
import polars as pl
from pandas.io.formats.style import Styler

from dashboards.i18n import (
    Lang,
    enum_label,
    fact_label,
    human_age,
    money,
    run_status_label,
    status_label,
    t,
    used_in_cost,
)
from gpurent import api
from gpurent.api import names
from gpurent_core.forecast import wait_figure

GREY = "color: #9aa0a6"
STORAGE_MARK = "*"
"""After a cost that leaves the storage asked for out (no storage fee in the feed), as the
command line marks it."""


def safe_url(url: str | None) -> str | None:
    """A provider's page as a link target: http(s) with a host only. The URL came from a
    scraped page; a ``javascript:`` or ``data:`` one would run in the reader's browser."""
    if not url:
        return None
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    return url.strip() if parts.scheme in ("http", "https") and parts.netloc else None


def offer_id(row: dict[str, Any]) -> str:
    """The offer's short id, as `gpurent explain` takes it (the row's, or made the one way)."""
    return row.get("offer_id") or names.offer_id(row["provider"], row["offer_key"])


def gpu_cell(row: dict[str, Any]) -> str:
    """The card without its size (a column of its own): "H100 SXM" where the model comes in
    several form factors and the offer says which (``gpurent.api.names.gpu_label``)."""
    return names.card_name(row["gpu_model"], row.get("gpu_form_factor"))


def _cost(value: Any, currency: str, row: dict[str, Any]) -> str:
    mark = f" {STORAGE_MARK}" if row.get("storage_price_unknown") else ""
    return money(value, currency) + mark


def _price(row: dict[str, Any], lang: Lang) -> str:
    unit = enum_label(lang, "unit", row["billing_unit"])
    basis = enum_label(lang, "basis", row["price_basis"])
    cell = f"{money(row['price'], row['currency'])} / {unit} / {basis}"
    kind = row.get("price_kind")
    # As `cheapest`'s price cell: a headline that is not pay-as-you-go says which it is.
    if kind and kind != "on_demand":
        cell += f" ({enum_label(lang, 'kind', kind)})"
    return cell


_PLAN = re.compile(r"^(?P<units>\S+) x (?P<unit>\w+) \((?P<kind>\w+)\)$")


def plan_label(plan: str | None, lang: Lang) -> str:
    """``CostedOffer.as_row()``'s "730 x hour (on_demand)" in the page's language."""
    found = _PLAN.match(plan or "")
    if found is None:
        return plan or ""
    unit = enum_label(lang, "unit", found["unit"])
    kind = enum_label(lang, "kind", found["kind"])
    return f"{found['units']} x {unit} ({kind})"


# A stale row (rules of truth 10 and 11): its provider's latest run did not confirm it (a
# partial run could not see it, or the run failed): its last good state.
_STALE_AGE = {Lang.EN: "stale, {age}", Lang.ZH: "未更新，{age}"}


def vram_cell(vram_gb: int | None) -> str:
    """VRAM as shown: "?" when the name leaves it open and the offer does not state it."""
    return "?" if vram_gb is None else str(vram_gb)


def age_cell(lang: Lang, row: dict[str, Any], now: datetime) -> str:
    """How old the row is, marked when it is a stale row's last good state."""
    age = human_age(lang, row["observed_at"], now)
    return _STALE_AGE[lang].format(age=age) if row.get("stale") else age


def now_table(frame: pl.DataFrame, lang: Lang, now: datetime) -> pd.DataFrame:
    """The Now page's table: one row per offer, in the frame's (ranked) order."""
    rows = []
    for r in frame.iter_rows(named=True):
        cur = r["cost_currency"]
        rows.append(
            {
                t(lang, "col_provider"): r["provider"],
                t(lang, "col_gpu"): gpu_cell(r),
                t(lang, "col_vram"): vram_cell(r["gpu_vram_gb"]),
                t(lang, "col_count"): r["gpu_count"],
                t(lang, "col_status"): status_label(lang, r["status"]),
                t(lang, "col_free"): "" if r["available_count"] is None else r["available_count"],
                t(lang, "col_true_hourly"): _cost(r["true_hourly"], cur, r),
                t(lang, "col_true_monthly"): _cost(r["true_monthly"], cur, r),
                t(lang, "col_price"): _price(r, lang),
                t(lang, "col_plan"): plan_label(r["monthly_plan"], lang),
                t(lang, "col_region"): r["region"] or "",
                t(lang, "col_age"): age_cell(lang, r, now),
                # What `gpurent explain ID` takes, and the provider's page to rent it on.
                t(lang, "col_offer_id"): offer_id(r),
                t(lang, "col_link"): safe_url(r.get("url")),
                # Host facts after the ones every row has: the grid shows the first columns
                # on a narrow screen, and the age of a row matters more than its CUDA.
                t(lang, "col_cuda"): r.get("cuda_version") or "",
                t(lang, "col_interconnect"): r.get("interconnect") or "",
                t(lang, "col_raw_gpu"): r["raw_gpu_name"],
            }
        )
    columns = [
        t(lang, k)
        for k in (
            "col_provider", "col_gpu", "col_vram", "col_count", "col_status", "col_free",
            "col_true_hourly", "col_true_monthly", "col_price", "col_plan", "col_region",
            "col_age", "col_offer_id", "col_link", "col_cuda", "col_interconnect", "col_raw_gpu",
        )
    ]  # fmt: skip
    # Mixed int/"" cells would make Arrow guess a type per column: show free counts as text.
    out = pd.DataFrame(rows, columns=columns)
    out[t(lang, "col_free")] = out[t(lang, "col_free")].astype(str)
    return out


def fx_rates(frame: pl.DataFrame) -> list[str]:
    """The exchange rates the rows' costs were converted at ("USD/CNY 7.10 of 2026-11-27"),
    as `cheapest` names them under its table; empty when no row was converted."""
    if "fx_rate" not in frame.columns:
        return []
    found = frame.filter(pl.col("fx_rate").is_not_null())
    pairs = found.select("currency", "cost_currency", "fx_rate", "fx_date").unique()
    return sorted(
        f"{r['currency']}/{r['cost_currency']} {r['fx_rate']} of {r['fx_date']}"
        for r in pairs.iter_rows(named=True)
    )


def storage_unknown(frame: pl.DataFrame) -> bool:
    """Whether any row's storage is left out of its cost (the table's note is then shown)."""
    return "storage_price_unknown" in frame.columns and bool(frame["storage_price_unknown"].any())


def grey_unrentable(table: pd.DataFrame, rentable: list[bool]) -> Styler:
    """Sold-out and unknown offers greyed out (shown only when asked for)."""

    def style(row: pd.Series) -> list[str]:
        return ["" if rentable[int(row.name)] else GREY] * len(row)

    return table.style.apply(style, axis=1)


def provider_ages(frame: pl.DataFrame, lang: Lang, now: datetime) -> list[tuple[str, str]]:
    """(provider, age of the data shown) for every provider in the Now table."""
    newest: dict[str, datetime] = {}
    for r in frame.select("provider", "observed_at").iter_rows(named=True):
        seen = r["observed_at"]
        if r["provider"] not in newest or seen > newest[r["provider"]]:
            newest[r["provider"]] = seen
    return [(p, human_age(lang, newest[p], now)) for p in sorted(newest)]


def providers_table(frame: pl.DataFrame, lang: Lang, now: datetime) -> pd.DataFrame:
    """The Providers page's table, one row per provider ever crawled."""
    rows = [
        {
            t(lang, "col_provider"): r["provider"],
            t(lang, "col_last_status"): run_status_label(lang, r["last_status"]),
            t(lang, "col_last_run_age"): human_age(lang, r["last_run_at"], now),
            t(lang, "col_offers"): r["last_offers"],
            t(lang, "col_quarantined"): r["last_quarantined"],
            t(lang, "col_quarantined_total"): r["quarantined_total"],
            t(lang, "col_good_offers"): r["last_good_offers"],
            t(lang, "col_good_age"): human_age(lang, r["last_good_at"], now),
            # Rows still shown that the latest look did not confirm, and the oldest's age:
            # after a partial run they are older than the run (as `gpurent providers`).
            t(lang, "col_stale_kept"): (
                f"{r['stale_offers']} ({human_age(lang, r['oldest_shown_at'], now)})"
                if r.get("stale_offers")
                else ""
            ),
            t(lang, "col_message"): r["last_message"] or "",
        }
        for r in frame.iter_rows(named=True)
    ]
    columns = [
        t(lang, k)
        for k in (
            "col_provider", "col_last_status", "col_last_run_age", "col_offers",
            "col_quarantined", "col_quarantined_total", "col_good_offers", "col_good_age",
            "col_stale_kept", "col_message",
        )
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def data_is_fresh(run: dict[str, Any]) -> bool:
    """Whether a provider's shown data comes from its last crawl (``views.provider_runs``
    row): a partial or auth-required crawl feeds the state; a failed one leaves the last good
    crawl's data on display, older than the last look."""
    return run["last_good_run_id"] is not None and run["last_good_run_id"] == run["last_run_id"]


def failed_providers(frame: pl.DataFrame) -> list[bool]:
    """Per row of ``providers_table``: whether the last run was not ok (to highlight it)."""
    return [status != "ok" for status in frame["last_status"].to_list()]


def quarantine_table(frame: pl.DataFrame, lang: Lang) -> pd.DataFrame:
    rows = [
        {
            t(lang, "col_provider"): r["provider"],
            t(lang, "col_run"): r["run_id"],
            t(lang, "col_reason"): r["reason"],
            t(lang, "col_field"): r.get("field") or "",
            t(lang, "col_raw"): "" if r.get("raw") is None else str(r["raw"]),
        }
        for r in frame.iter_rows(named=True)
    ]
    columns = [
        t(lang, k) for k in ("col_provider", "col_run", "col_reason", "col_field", "col_raw")
    ]
    return pd.DataFrame(rows, columns=columns)


def billing_facts_table(rows: list[dict[str, Any]], lang: Lang) -> pd.DataFrame:
    """``data.billing_facts`` rows; a question without a source reads "unknown"."""
    keys = ("col_fact", "col_value", "col_used", "col_source", "col_as_of")
    out = [
        {
            # The question and how the cost uses the fact follow the page's language; the
            # answer is the source's own words.
            t(lang, "col_fact"): fact_label(lang, r["fact"]),
            t(lang, "col_value"): r["value"]
            if r["value"] is not None
            else t(lang, "billing_unknown"),
            t(lang, "col_used"): used_in_cost(lang, r["typed"])
            if r.get("typed") is not None
            else r["used_in_cost"],
            t(lang, "col_source"): r["source"],
            t(lang, "col_as_of"): r["as_of"].isoformat() if r["as_of"] else "",
        }
        for r in rows
    ]
    return pd.DataFrame(out, columns=[t(lang, k) for k in keys])


def size_offers_table(rows: Sequence[api.SizedOffer], lang: Lang) -> pd.DataFrame:
    """Ranked fitting offers (``api.SizeAnswer.offers``), as the sizing page shows them."""
    out = []
    now = datetime.now(UTC)
    for r in rows:
        cur = r.cost_currency
        per_m = r.cost_per_million_tokens
        stale = f", {_STALE_AGE[lang].format(age=human_age(lang, r.observed_at, now))}"
        out.append(
            {
                t(lang, "col_provider"): r.provider,
                t(lang, "col_gpu"): r.gpu_model,
                t(lang, "col_vram"): vram_cell(r.gpu_vram_gb),
                t(lang, "col_count"): r.gpu_count,
                t(lang, "col_tp"): r.tensor_parallel,
                t(lang, "col_need"): f"{r.need_gib_per_gpu:.2f}",
                t(lang, "col_usable"): f"{r.usable_gib_per_gpu:.2f}",
                t(lang, "col_status"): status_label(lang, r.status) + (stale if r.stale else ""),
                t(lang, "col_free"): "" if r.available_count is None else str(r.available_count),
                # Marked as the Now page marks them: the storage asked for is not counted.
                t(lang, "col_true_hourly"): _cost(r.true_hourly, cur, asdict(r)),
                t(lang, "col_true_monthly"): _cost(r.true_monthly, cur, asdict(r)),
                t(lang, "col_tokens"): "" if r.tokens_per_s is None else f"{r.tokens_per_s:.1f}",
                t(lang, "col_per_mtok"): "" if per_m is None else money(per_m, cur),
                t(lang, "col_region"): r.region or "",
                t(lang, "col_offer_id"): r.offer_id,
                t(lang, "col_link"): safe_url(r.url),
            }
        )
    return pd.DataFrame(out)


def breakdown_frame(placements: Sequence[api.PlacementFit], lang: Lang) -> pd.DataFrame:
    """Long frame for the memory chart: one row per (placement, part) with GiB per GPU."""
    rows = []
    for p in placements:
        cards = f"{p.tensor_parallel} x"
        for part, gib in p.breakdown_gib.items():
            if gib:
                rows.append(
                    {
                        t(lang, "size_cards"): cards,
                        # The legend follows the language: "KV cache" / "KV 缓存".
                        t(lang, "size_part"): enum_label(lang, "part", part),
                        t(lang, "size_gib"): gib,
                    }
                )
    return pd.DataFrame(rows)


def pattern_sentence(pattern: Any, gpu: str, lang: Lang) -> str:
    """``warehouse.trends.Pattern.sentence`` in the page's language (same cases, same data)."""
    values = {"gpu": gpu, "provider": pattern.provider, "zone": pattern.timezone}
    if not pattern.polls:
        return t(lang, "avail_no_polls", **values)
    known = [s for s in pattern.by_hour if s is not None]
    if not known:
        return t(lang, "avail_too_few", **values)
    if pattern.free_hours == "00:00-24:00":
        return t(lang, "avail_any_hour", **values)
    if not pattern.free_hours:
        return t(lang, "avail_rarely", best=f"{max(known):.0%}", **values)
    return t(lang, "avail_usually", hours=pattern.free_hours, **values)


def restock_sentence(forecast: Any, lang: Lang) -> str:
    """One provider's (or all providers') restock forecast in the page's language."""
    who = forecast.provider or t(lang, "avail_restock_all")
    if not forecast.enough_history:
        return t(lang, "avail_restock_thin", who=who, n=forecast.spells, min=forecast.min_spells)

    def pct(value: float | None) -> str:
        return "-" if value is None else f"{value:.0%}"

    # Rounded as `gpurent history` rounds it: minutes below an hour, never "about 0 h".
    over = forecast.median_wait_h is None
    number, unit = wait_figure(forecast.longest_h if over else forecast.median_wait_h)
    span = f"{number} {t(lang, 'unit_min' if unit == 'min' else 'unit_h')}"
    wait = t(lang, "avail_restock_over" if over else "avail_restock_about", span=span)
    return t(
        lang, "avail_restock_line", who=who, p1=pct(forecast.within_1h),
        p6=pct(forecast.within_6h), p24=pct(forecast.within_24h), wait=wait, n=forecast.spells,
    )  # fmt: skip


def timeline_table(frame: pl.DataFrame, lang: Lang) -> pd.DataFrame:
    """One offer's states, newest first."""
    rows = [
        {
            t(lang, "avail_from"): r["valid_from"].strftime("%Y-%m-%d %H:%M"),
            t(lang, "avail_to"): (
                r["valid_to"].strftime("%Y-%m-%d %H:%M")
                if r["valid_to"] is not None
                else t(lang, "avail_current")
            ),
            t(lang, "col_status"): status_label(lang, r["status"]),
            t(lang, "col_free"): "" if r["available_count"] is None else str(r["available_count"]),
            t(lang, "avail_price_gpu_hour"): money(r["price_per_gpu_hour"], r["currency"]),
        }
        for r in frame.sort("valid_from", descending=True).iter_rows(named=True)
    ]
    return pd.DataFrame(rows)
