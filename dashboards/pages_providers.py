"""Providers: each provider's last crawl, the age of the data shown, and what was set aside."""

from __future__ import annotations

import streamlit as st

from dashboards import data, tables
from dashboards.i18n import run_status_label, t
from dashboards.state import Ctx
from dashboards.text import md_escape

FAILED_STYLE = "background-color: rgba(255, 75, 75, 0.12)"


def render(ctx: Ctx) -> None:
    lang = ctx.lang
    st.title(t(lang, "page_providers"))
    st.caption(t(lang, "providers_intro"))
    frame = data.providers_overview(ctx.db)
    if frame.height == 0:
        st.info(t(lang, "no_providers"))
        return
    now = data.utc_now()
    # Failures first and loudly: a stale page must never look fresh.
    for r in frame.iter_rows(named=True):
        if r["last_status"] != "ok":
            reason = f" — {md_escape(r['last_message'])}" if r["last_message"] else ""
            st.warning(
                f"**{md_escape(r['provider'])}**: "
                f"{md_escape(run_status_label(lang, r['last_status']))}{reason}"
            )
    table = tables.providers_table(frame, lang, now)
    failed = tables.failed_providers(frame)
    styled = table.style.apply(
        lambda row: [FAILED_STYLE if failed[int(row.name)] else ""] * len(row),
        axis=1,
    )
    st.dataframe(styled, hide_index=True, width="stretch", key="providers_table")

    st.subheader(t(lang, "billing_title"))
    st.caption(t(lang, "billing_intro"))
    chosen = st.selectbox(
        t(lang, "billing_provider"), frame["provider"].to_list(), key="billing_provider"
    )
    if chosen is not None:
        st.dataframe(
            tables.billing_facts_table(data.billing_facts(chosen), lang),
            hide_index=True,
            width="stretch",
            key="billing_table",
        )

    st.subheader(t(lang, "quarantine_title"))
    st.caption(t(lang, "quarantine_intro"))
    rows = data.quarantine(ctx.db)
    if rows.height == 0:
        st.info(t(lang, "nothing_quarantined"))
    else:
        st.dataframe(
            tables.quarantine_table(rows, lang),
            hide_index=True,
            width="stretch",
            key="quarantine_table",
        )
