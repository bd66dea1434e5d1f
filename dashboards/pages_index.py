"""Price index: one line per GPU over time, the provider count beneath, CSV download."""

from __future__ import annotations

import altair as alt
import polars as pl
import streamlit as st

from dashboards import charts, data
from dashboards.export import csv_bytes
from dashboards.i18n import t
from dashboards.page import opening
from dashboards.state import Ctx

INDEX_MODULE = "warehouse.index"
DEFAULT_LINES = 6


def render(ctx: Ctx) -> None:
    lang = ctx.lang
    if not opening(lang, "page_index", "index_intro", needs=(INDEX_MODULE, "what_index")):
        return
    frame = data.price_index(ctx.db, ctx.currency)
    days = frame["date"].n_unique() if frame.height else 0
    if days < 2:
        # The quick start's one crawl is one day: say what gives lines to draw.
        what = t(lang, "thin_days", n=days) if days else t(lang, "thin_none")
        st.info(t(lang, "thin_history", what=what))
    if frame.height == 0:
        return
    labelled = charts.with_gpu_label(frame)
    quoted = labelled.filter(pl.col("index_price").is_not_null())
    # GPUs with at least one published figure, most quoted first (the lines worth drawing).
    ranked = (
        quoted.group_by("gpu")
        .agg(pl.col("n_providers").sum().alias("weight"))
        .sort(["weight", "gpu"], descending=[True, False])["gpu"]
        .to_list()
    )
    if not ranked:
        st.info(t(lang, "index_none"))
    else:
        chosen = st.multiselect(
            t(lang, "index_gpus"), ranked, default=ranked[:DEFAULT_LINES], key="index_gpus"
        )
        shown = labelled.filter(pl.col("gpu").is_in(chosen))
        if shown.height:
            chart: alt.VConcatChart = charts.index_chart(shown, lang, ctx.currency)
            st.altair_chart(chart, width="stretch")
    withheld = labelled.filter(pl.col("index_price").is_null()).height
    method = ", ".join(sorted(set(frame["method_version"].drop_nulls().to_list())))
    st.caption(t(lang, "index_withheld", n=withheld, method=method))
    st.download_button(
        t(lang, "index_download"),
        csv_bytes(frame),
        file_name=f"gpurent-index-{ctx.currency}.csv",
        mime="text/csv",
        key="index_csv",
        on_click="ignore",
    )
