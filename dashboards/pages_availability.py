"""Availability: in-stock share by hour of week per GPU and provider; one offer's timeline."""

from __future__ import annotations

import polars as pl
import streamlit as st

from dashboards import charts, data, tables
from dashboards.i18n import Lang, t
from dashboards.page import opening
from dashboards.state import Ctx
from dashboards.text import md_escape

TRENDS_MODULE = "warehouse.trends"
# Where most renters are (the recordings' providers are mostly Chinese); UTC beside it.
ZONES = ("Asia/Shanghai", "UTC")
SPARSE_WEEK = 0.25
"""Below this share of hour-of-week cells known, the page opens on the hour-of-day view."""
NOT_CONFIRMED = "not_confirmed"
"""``warehouse.trends.NOT_CONFIRMED``: the status of a stretch no poll confirmed (repeated
so that the page loads without the warehouse)."""
NOT_CONFIRMED_LABEL = {Lang.EN: "not confirmed (stale)", Lang.ZH: "未确认（未读到）"}
NOT_CONFIRMED_NOTE = {
    Lang.EN: "Gaps in the bands: stretches no poll confirmed (the provider's runs could not "
    "read the offer; its last state was kept, stale). Only what a poll saw is drawn.",
    Lang.ZH: "色带中的空白：没有任何一次抓取确认的时段（平台的抓取未能读到该报价，仅保留其最后状态）。"
    "图中只画出抓取实际看到的状态。",
}


def render(ctx: Ctx) -> None:
    lang = ctx.lang
    if not opening(
        lang, "page_availability", "avail_intro", needs=(TRENDS_MODULE, "what_availability")
    ):
        return
    from gpurent.api.views import min_polls_per_hour

    min_polls = min_polls_per_hour()

    gpus = data.gpu_choices(ctx.db)
    if not gpus:
        st.info(t(lang, "thin_history", what=t(lang, "thin_none")))
        return
    left, right = st.columns([3, 1])
    gpu = left.selectbox(
        t(lang, "avail_gpu"), gpus, format_func=lambda g: f"{g[0]} {g[1]}GB", key="avail_gpu"
    )
    zone = right.selectbox(t(lang, "avail_zone"), ZONES, key="avail_zone")
    if gpu is None or zone is None:
        return
    model, vram = gpu
    label = f"{model} {vram}GB"
    found = data.availability(ctx.db, model, vram, zone)
    if found.patterns and not found.any_known():
        # A crawl or two (the quick start's): one line on what to run, not one per provider.
        st.info(t(lang, "thin_history", what=t(lang, "thin_polls")))
    for pattern in found.patterns if found.any_known() else ():
        # Provider names come from the warehouse: escaped before they meet Markdown.
        st.markdown("- " + md_escape(tables.pattern_sentence(pattern, label, lang)))
    if found.week.height and found.any_known():
        # Hour of week needs two polls per weekday and hour (two weeks of hourly polls);
        # with fewer, the weekdays pooled (hour of day) is where the pattern shows.
        views = ["week", "day"]
        view = st.segmented_control(
            t(lang, "avail_view"),
            views,
            default="week" if found.week_coverage() >= SPARSE_WEEK else "day",
            format_func=lambda v: t(lang, f"avail_view_{v}"),
            key=f"avail_view_{model}_{vram}",
        )
        if view == "day":
            st.altair_chart(charts.heat_day_chart(found.day, lang), width="content")
        else:
            st.altair_chart(charts.heat_week_chart(found.week, lang), width="content")
        st.caption(t(lang, "avail_legend", n=min_polls))

    restock = data.restock(ctx.db, model, vram)
    st.subheader(t(lang, "avail_restock"))
    if restock.enough_history:
        for forecast in (restock, *restock.providers):
            # Provider names come from the warehouse: escaped before they meet Markdown.
            st.markdown("- " + md_escape(tables.restock_sentence(forecast, lang)))
    else:
        st.caption(tables.restock_sentence(restock, lang))
    st.caption(t(lang, "avail_restock_legend", min=restock.min_spells))

    st.subheader(t(lang, "avail_timeline"))
    changes = data.offer_timeline(ctx.db, model, vram)
    if changes.height == 0:
        st.info(t(lang, "thin_history", what=t(lang, "thin_none")))
        return
    keys = list(dict.fromkeys(changes.select("provider", "offer_key").iter_rows()))
    chosen = st.selectbox(
        t(lang, "avail_offer"), keys, format_func=lambda k: f"{k[0]} · {k[1]}", key="avail_offer"
    )
    if chosen is None:
        return
    one = changes.filter((changes["provider"] == chosen[0]) & (changes["offer_key"] == chosen[1]))
    # Only what a poll confirmed is drawn (rule of truth 11): a stretch the offer was kept
    # stale is a gap in the bands, and a row of its own in the table, "not confirmed".
    seen = one.filter(pl.col("confirmed"))
    if seen.height:
        st.altair_chart(charts.timeline_chart(seen, lang, data.utc_now()), width="stretch")
    if seen.height < one.height:
        st.caption(NOT_CONFIRMED_NOTE[lang])
    table = tables.timeline_table(one, lang)
    status = t(lang, "col_status")
    table[status] = table[status].replace(NOT_CONFIRMED, NOT_CONFIRMED_LABEL[lang])
    st.dataframe(table, hide_index=True, width="stretch", key="avail_table")
