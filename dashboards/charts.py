"""Altair charts for the pages. Pure functions of frames, so they are built in tests too.

Charts plot positions, so a Decimal price becomes a float *for the y position only*; the
tooltip carries the exact figure, formatted from the Decimal. Labels shown in charts (GPU
names, providers) are drawn as SVG/canvas text and tooltips are escaped by vega-tooltip,
so scraped text stays text here too.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import altair as alt
import pandas as pd
import polars as pl

from dashboards.i18n import WEEKDAYS, Lang, money, status_label, t

CHART_WIDTH = "container"


def with_gpu_label(frame: pl.DataFrame) -> pl.DataFrame:
    """Adds ``gpu``: "RTX 4090 24GB", the canonical GPU as people name it."""
    return frame.with_columns(
        gpu=pl.col("gpu_model") + pl.lit(" ") + pl.col("gpu_vram_gb").cast(pl.String) + pl.lit("GB")
    )


def index_frame(frame: pl.DataFrame, lang: Lang, currency: str) -> pd.DataFrame:
    """The index rows as the chart reads them (localised field names, a y position, the
    exact price as text)."""
    rows = [
        {
            t(lang, "index_date"): r["date"],
            t(lang, "col_gpu"): r["gpu"],
            "y": None if r["index_price"] is None else float(r["index_price"]),
            t(lang, "index_price"): money(r["index_price"], currency) or "—",
            t(lang, "index_providers"): r["n_providers"],
        }
        for r in frame.sort("date", "gpu").iter_rows(named=True)
    ]
    out = pd.DataFrame(rows)
    out[t(lang, "index_date")] = pd.to_datetime(out[t(lang, "index_date")])
    return out


def index_chart(frame: pl.DataFrame, lang: Lang, currency: str) -> alt.VConcatChart:
    """Index lines per GPU over time, with the count of providers quoting beneath."""
    rows = index_frame(frame, lang, currency)
    day, gpu = t(lang, "index_date"), t(lang, "col_gpu")
    price, providers = t(lang, "index_price"), t(lang, "index_providers")
    base = alt.Chart(rows).encode(
        x=alt.X(f"{day}:T", title=day, axis=alt.Axis(format="%m-%d", tickCount="day")),
        color=alt.Color(f"{gpu}:N", title=gpu),
    )
    lines = (
        # Withheld days (too few providers) break the line instead of being bridged.
        base.mark_line(point=True, invalid="break-paths-show-domains")
        .encode(
            y=alt.Y("y:Q", title=f"{price} ({currency})", scale=alt.Scale(zero=False)),
            tooltip=[f"{day}:T", f"{gpu}:N", f"{price}:N", f"{providers}:Q"],
        )
        .properties(height=320, width=CHART_WIDTH)
    )
    counts = (
        base.mark_line(point=True, interpolate="step-after")
        .encode(
            y=alt.Y(f"{providers}:Q", title=providers, axis=alt.Axis(tickMinStep=1)),
            tooltip=[f"{day}:T", f"{gpu}:N", f"{providers}:Q"],
        )
        .properties(height=120, width=CHART_WIDTH)
    )
    return alt.vconcat(lines, counts).resolve_scale(x="shared", color="shared")


def breakdown_chart(frame: pd.DataFrame, lang: Lang) -> alt.Chart:
    """Memory per GPU by part, one stacked bar per tensor-parallel degree."""
    cards, part, gib = t(lang, "size_cards"), t(lang, "size_part"), t(lang, "size_gib")
    return (
        alt.Chart(frame, title=t(lang, "size_breakdown"))
        .mark_bar()
        .encode(
            x=alt.X(f"sum({gib}):Q", title=gib),
            y=alt.Y(f"{cards}:N", title=t(lang, "col_tp")),
            color=alt.Color(f"{part}:N", title=part),
            tooltip=[cards, part, gib],
        )
    )


NO_DATA = "#eceff1"


def _heat_cells(
    rows: pd.DataFrame, x: alt.X, y: alt.Y, share: str, tooltip: list[Any]
) -> alt.LayerChart:
    """Every cell drawn (grey: too few polls to tell), coloured where a share is known."""
    background = alt.Chart().mark_rect(color=NO_DATA, stroke="white", strokeWidth=1)
    known = (
        alt.Chart()
        .mark_rect(stroke="white", strokeWidth=1)
        .encode(
            color=alt.Color(
                f"{share}:Q", title=share, scale=alt.Scale(domain=[0, 1], scheme="redyellowgreen")
            )
        )
        .transform_filter(f"isValid(datum['{share}'])")
    )
    return alt.layer(background, known, data=rows).encode(x=x, y=y, tooltip=tooltip)


def _shown(shares: list[float | None]) -> list[str]:
    return ["—" if s is None else f"{s:.0%}" for s in shares]


def heat_week_chart(heat: pl.DataFrame, lang: Lang) -> alt.FacetChart:
    """In-stock share by hour of week: weekdays down, hours across, one panel per provider."""
    day, hour, share = t(lang, "avail_day"), t(lang, "avail_hour"), t(lang, "avail_share")
    provider = t(lang, "col_provider")
    names = list(WEEKDAYS[lang])
    rows = pd.DataFrame(
        {
            provider: heat["provider"].to_list(),
            day: [names[d] for d in heat["weekday"].to_list()],
            hour: heat["hour"].to_list(),
            share: heat["share"].to_list(),
            "shown": _shown(heat["share"].to_list()),
        }
    )
    cells = _heat_cells(
        rows,
        x=alt.X(f"{hour}:O", title=hour, scale=alt.Scale(domain=list(range(24)))),
        y=alt.Y(
            f"{day}:O",
            title=None,
            scale=alt.Scale(domain=names),
            axis=alt.Axis(labelOverlap=False),
        ),
        share=share,
        tooltip=[f"{provider}:N", f"{day}:O", f"{hour}:O", alt.Tooltip("shown:N", title=share)],
    )
    # Facets cannot stretch to the container: size each cell instead.
    return cells.properties(width=alt.Step(30), height=alt.Step(20)).facet(
        row=alt.Row(f"{provider}:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left"))
    )


def heat_day_chart(heat: pl.DataFrame, lang: Lang) -> alt.LayerChart:
    """In-stock share by hour of day, all weekdays pooled: one row per provider."""
    hour, share = t(lang, "avail_hour"), t(lang, "avail_share")
    provider = t(lang, "col_provider")
    rows = pd.DataFrame(
        {
            provider: heat["provider"].to_list(),
            hour: heat["hour"].to_list(),
            share: heat["share"].to_list(),
            "shown": _shown(heat["share"].to_list()),
        }
    )
    return _heat_cells(
        rows,
        x=alt.X(f"{hour}:O", title=hour, scale=alt.Scale(domain=list(range(24)))),
        y=alt.Y(f"{provider}:N", title=None),
        share=share,
        tooltip=[f"{provider}:N", f"{hour}:O", alt.Tooltip("shown:N", title=share)],
    ).properties(width=alt.Step(30), height=alt.Step(22))


def timeline_chart(frame: pl.DataFrame, lang: Lang, now: datetime) -> alt.VConcatChart:
    """One offer's stock states as bands over time, and its price per GPU-hour beneath."""
    start, end = t(lang, "avail_from"), t(lang, "avail_to")
    status, free = t(lang, "col_status"), t(lang, "col_free")
    price = t(lang, "avail_price_gpu_hour")
    rows = pd.DataFrame(
        [
            {
                start: r["valid_from"],
                end: r["valid_to"] or now,
                status: status_label(lang, r["status"]),
                free: "" if r["available_count"] is None else str(r["available_count"]),
                "y": float(r["price_per_gpu_hour"]),
                price: money(r["price_per_gpu_hour"], r["currency"]),
            }
            for r in frame.sort("valid_from").iter_rows(named=True)
        ]
    )
    for column in (start, end):
        rows[column] = pd.to_datetime(rows[column], utc=True)
    order = [status_label(lang, s) for s in ("in_stock", "low", "sold_out", "unknown")]
    palette = ["#2e7d32", "#f9a825", "#c62828", "#9e9e9e"]
    x = alt.X(f"{start}:T", title=None)
    bands = (
        alt.Chart(rows)
        .mark_bar(height=28)
        .encode(
            x=x,
            x2=f"{end}:T",
            color=alt.Color(f"{status}:N", scale=alt.Scale(domain=order, range=palette)),
            tooltip=[f"{start}:T", f"{end}:T", f"{status}:N", f"{free}:N", f"{price}:N"],
        )
        .properties(height=40, width=CHART_WIDTH)
    )
    prices = (
        alt.Chart(rows)
        .mark_line(interpolate="step-after", point=True)
        .encode(
            x=x,
            y=alt.Y("y:Q", title=price, scale=alt.Scale(zero=False)),
            tooltip=[f"{start}:T", f"{price}:N"],
        )
        .properties(height=160, width=CHART_WIDTH)
    )
    return alt.vconcat(bands, prices).resolve_scale(x="shared")
