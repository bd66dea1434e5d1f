"""Now: the cheapest offers in stock, by true cost, with filters; sold-out only on request, and
offers their provider's latest crawl did not confirm (stale) only on request too."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

import streamlit as st

from dashboards import data, tables
from dashboards.export import csv_bytes
from dashboards.i18n import human_age, run_status_label, t
from dashboards.page import link_columns
from dashboards.state import Ctx
from dashboards.text import md_escape
from gpurent import api

# A month of hours, the most a card can run (and the default use), as a widget number.
MONTH_HOURS = int(api.usage().hours_per_month)
DEFAULT_STORAGE_GB = int(api.usage().storage_gb)


def _filters(ctx: Ctx, options: data.FilterOptions) -> data.NowFilters:
    lang = ctx.lang
    # No choice (the placeholder) means "any"; the box's clear button returns to it.
    any_label = t(lang, "any")
    top = st.columns(4)
    min_vram = top[0].selectbox(
        t(lang, "filter_min_vram"),
        options.vram_sizes,
        index=None,
        placeholder=any_label,
        format_func=lambda v: f"{v} GB",
        key="now_min_vram",
    )
    gpu = top[1].selectbox(
        t(lang, "filter_gpu"), options.gpu_models, index=None, placeholder=any_label, key="now_gpu"
    )
    # "H100 80GB" is a PCIe or an SXM card: the form factor tells them apart (an offer that
    # does not say its own never matches one).
    form = top[2].selectbox(
        t(lang, "filter_form"),
        options.form_factors,
        index=None,
        placeholder=any_label,
        key="now_form",
    )
    provider = top[3].selectbox(
        t(lang, "filter_provider"),
        options.providers,
        index=None,
        placeholder=any_label,
        key="now_provider",
    )
    # (label, lowest, highest, default, step, widget key), one widget a column.
    # Sessions are billed by each provider's granularity and minimum rental.
    numbers = (
        ("filter_hours", 1, MONTH_HOURS, MONTH_HOURS, 10, "now_hours"),
        ("filter_session", 0, 43_800, 0, 15, "now_session"),
        ("filter_storage", 0, 100_000, DEFAULT_STORAGE_GB, 10, "now_gb"),
        ("filter_gpus", 1, 64, 1, 1, "now_gpus"),
    )
    hours, session, storage, gpus = (
        column.number_input(t(lang, label), min_value=lo, max_value=hi, value=v, step=step, key=k)
        for column, (label, lo, hi, v, step, k) in zip(st.columns(4), numbers, strict=True)
    )
    # What the host publishes: offers that do not say it never match a choice here.
    host = st.columns(4)
    min_cuda = host[0].selectbox(
        t(lang, "filter_min_cuda"),
        options.cuda_versions,
        index=None,
        placeholder=any_label,
        key="now_min_cuda",
    )
    interconnect = host[1].selectbox(
        t(lang, "filter_interconnect"),
        options.interconnects,
        index=None,
        placeholder=any_label,
        key="now_interconnect",
    )
    switches = st.columns(3)
    sold_out = switches[0].toggle(t(lang, "show_sold_out"), value=False, key="now_sold_out")
    # Rule of truth 11: only what the provider's latest crawl confirmed, unless asked.
    stale = switches[1].checkbox(t(lang, "include_stale"), value=False, key="now_stale")
    # Spot is no month's rent: left out and counted, as `cheapest` does, unless asked.
    spot = switches[2].checkbox(t(lang, "include_spot"), value=False, key="now_spot")
    return data.NowFilters(
        display_currency=ctx.currency,
        min_vram_gb=min_vram,
        gpu_model=gpu,
        form_factor=form,
        provider=provider,
        # Widgets hand back ints here (int value and step); Decimal(int) is exact.
        hours_per_month=Decimal(int(hours)),
        # A session longer than the month's hours is one stretch of them.
        session_hours=min(Decimal(int(session)) / 60, Decimal(int(hours))) if session else None,
        storage_gb=Decimal(int(storage)),
        gpus=int(gpus),
        include_sold_out=bool(sold_out),
        include_stale=bool(stale),
        include_spot=bool(spot),
        min_cuda=min_cuda,
        interconnect=interconnect,
    )


def _run_notes(ctx: Ctx, shown: set[str], now: datetime) -> None:
    """How the last crawl of each provider in the table went, loud only where it matters.

    A failed (or layout-changed) last crawl leaves its offers on their last good data: a
    warning each, with the age (rule of truth 2). A partial or auth-required crawl whose own
    data is what the table shows is one caption, grouped by status: its offers are fresh,
    and what it could not read is on the Providers page."""
    lang = ctx.lang
    fresh: dict[str, list[str]] = {}
    for r in data.providers_overview(ctx.db).iter_rows(named=True):
        if r["provider"] not in shown or r["last_status"] == "ok":
            continue
        status = md_escape(run_status_label(lang, r["last_status"]))
        if tables.data_is_fresh(r):
            fresh.setdefault(status, []).append(md_escape(r["provider"]))
            continue
        st.warning(
            t(
                lang,
                "stale_provider",
                provider=md_escape(r["provider"]),
                status=status,
                age=md_escape(human_age(lang, r["last_good_at"], now)),
            )
        )
    for status, providers in fresh.items():
        st.caption(t(lang, "partial_fresh", status=status, providers=", ".join(providers)))


def render(ctx: Ctx) -> None:
    lang = ctx.lang
    st.title(t(lang, "page_now"))
    st.caption(t(lang, "now_intro"))
    options = data.filter_options(ctx.db)
    filters = _filters(ctx, options)
    # One more than shown: whether the cap cut anything off, without costing the rest.
    answer = data.now_answer(ctx.db, filters, limit=data.NOW_ROWS + 1)
    frame = answer.frame
    capped = frame.height > data.NOW_ROWS
    frame = frame.head(data.NOW_ROWS)
    now = data.utc_now()

    ages = tables.provider_ages(frame, lang, now)
    if ages:
        st.caption(
            f"{t(lang, 'data_age')}: "
            + " · ".join(f"{md_escape(p)} {md_escape(age)}" for p, age in ages)
        )
    _run_notes(ctx, {p for p, _ in ages}, now)
    counted = "offers_capped" if capped else "offers_count"
    st.markdown(f"**{t(lang, counted, n=frame.height)}**")
    if answer.stale_left_out:
        st.caption(t(lang, "stale_left_out", n=answer.stale_left_out))
    if answer.cards_left_out:
        st.caption(t(lang, "cards_left_out", n=answer.cards_left_out, gpus=filters.gpus))
    if answer.host_left_out:
        st.caption(t(lang, "host_left_out", n=answer.host_left_out))
    if answer.spot_left_out:
        st.caption(t(lang, "spot_left_out", n=answer.spot_left_out))
    if frame.height == 0:
        st.info(t(lang, "no_rows"))
        return
    table = tables.now_table(frame, lang, now)
    rentable = frame["rentable"].to_list()
    shown = tables.grey_unrentable(table, rentable) if not all(rentable) else table
    st.dataframe(
        shown,
        hide_index=True,
        width="stretch",
        key="now_table",
        column_config=link_columns(lang),
    )
    if tables.storage_unknown(frame):
        st.caption(t(lang, "storage_unknown_note"))
    rates = tables.fx_rates(frame)
    if rates:  # a ranking across currencies is only as good as its rate, as the CLI says
        st.caption(t(lang, "fx_note", rates="; ".join(rates)))
    st.download_button(
        t(lang, "index_download"),
        csv_bytes(frame.drop("rentable")),
        file_name="gpurent-offers.csv",
        mime="text/csv",
        key="now_csv",
        on_click="ignore",
    )
