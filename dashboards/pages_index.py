"""Price index: one line per series over time, the provider count beneath, CSV download.

Methods gpi-3 (the default) and gpi-2: a series per GPU, form factor, price kind and
market, chosen by kind and market, and a table of the latest day's rows (quartiles, share
in stock, why a row is withheld). Method gpi-1: a line per GPU. The method is picked on the
page."""

from __future__ import annotations

import altair as alt
import polars as pl
import streamlit as st

from dashboards import charts, data
from dashboards.export import csv_bytes
from dashboards.i18n import Lang, enum_label, money, t
from dashboards.page import opening
from dashboards.state import Ctx
from gpurent.api.market import IndexRules, index_rules
from gpurent_core.defaults import DEFAULT_INDEX_METHOD
from gpurent_core.enums import IndexMethod

INDEX_MODULE = "warehouse.index"
DEFAULT_LINES = 6
METHODS = [m.value for m in IndexMethod]
PRICE_KINDS = ("on_demand", "spot", "monthly")
MARKETS = ("CN", "intl")


def render(ctx: Ctx) -> None:
    lang = ctx.lang
    if not opening(lang, "page_index", "index_intro", needs=(INDEX_MODULE, "what_index")):
        return
    method = st.radio(
        t(lang, "index_method"),
        METHODS,
        index=METHODS.index(DEFAULT_INDEX_METHOD),
        horizontal=True,
        key="index_method",
        help=t(lang, "index_method_help"),
    )
    frame = data.price_index(ctx.db, ctx.currency, method)
    days = frame["date"].n_unique() if frame.height else 0
    if days < 2:
        # The quick start's one crawl is one day: say what gives lines to draw.
        what = t(lang, "thin_days", n=days) if days else t(lang, "thin_none")
        st.info(t(lang, "thin_history", what=what))
    if frame.height == 0:
        return
    rules = index_rules(method)
    v2 = method != IndexMethod.GPI_1  # gpi-2 and gpi-3 rows have the same columns
    shown_rows = chosen_v2(frame, lang) if v2 else frame
    labelled = series_labels(shown_rows, lang) if v2 else charts.with_gpu_label(frame)
    quoted = labelled.filter(pl.col("index_price").is_not_null())
    # Series with at least one published figure, most quoted first (the lines worth drawing).
    ranked = (
        quoted.group_by("gpu")
        .agg(pl.col("n_providers").sum().alias("weight"))
        .sort(["weight", "gpu"], descending=[True, False])["gpu"]
        .to_list()
    )
    if not ranked:
        st.info(none_text(lang, rules))
    else:
        chosen = st.multiselect(
            t(lang, "index_gpus"), ranked, default=ranked[:DEFAULT_LINES], key="index_gpus"
        )
        shown = labelled.filter(pl.col("gpu").is_in(chosen))
        if shown.height:
            chart: alt.VConcatChart = charts.index_chart(shown, lang, ctx.currency)
            st.altair_chart(chart, width="stretch")
    withheld = labelled.filter(pl.col("index_price").is_null()).height
    st.caption(withheld_text(lang, rules, withheld, frame))
    if v2:
        latest_table(shown_rows, lang, ctx.currency)
    st.download_button(
        t(lang, "index_download"),
        csv_bytes(frame),
        file_name=f"gpurent-index-{method}-{ctx.currency}.csv",
        mime="text/csv",
        key="index_csv",
        on_click="ignore",
    )


def chosen_v2(frame: pl.DataFrame, lang: Lang) -> pl.DataFrame:
    """The gpi-2 or gpi-3 rows of the price kinds and markets chosen (on demand, both markets, by
    default)."""
    left, right = st.columns(2)
    kinds = left.multiselect(
        t(lang, "index_kinds"), PRICE_KINDS, default=["on_demand"], key="index_kinds",
        format_func=lambda k: kind_label(lang, k),
    )  # fmt: skip
    markets = right.multiselect(
        t(lang, "index_markets"), MARKETS, default=list(MARKETS), key="index_markets",
        format_func=lambda m: t(lang, f"market_{m}"),
    )  # fmt: skip
    return frame.filter(pl.col("price_kind").is_in(kinds) & pl.col("market").is_in(markets))


def kind_label(lang: Lang, kind: str) -> str:
    return enum_label(lang, "kind", kind)


def form_label(lang: Lang, form: str | None) -> str:
    return form if form else t(lang, "form_unstated")


def series_labels(frame: pl.DataFrame, lang: Lang) -> pl.DataFrame:
    """Adds ``gpu``, a gpi-2 or gpi-3 series as people name it: "H100 80GB SXM · on demand · China"
    (the form factor, when not stated, says so: such offers are a series of their own)."""
    labels = [
        " · ".join(
            (
                f"{r['gpu_model']} {'?' if r['gpu_vram_gb'] is None else r['gpu_vram_gb']}GB "
                f"{form_label(lang, r['gpu_form_factor'])}",
                kind_label(lang, r["price_kind"]),
                t(lang, f"market_{r['market']}"),
            )
        )
        for r in frame.iter_rows(named=True)
    ]
    return frame.with_columns(gpu=pl.Series("gpu", labels, dtype=pl.String))


def latest_table(frame: pl.DataFrame, lang: Lang, currency: str) -> None:
    """Every row of the latest day shown, with the columns gpi-2 (and gpi-3) add."""
    if frame.height == 0:
        return
    day = frame["date"].max()
    rows = [
        {
            t(lang, "col_gpu"): f"{r['gpu_model']} "
            f"{'?' if r['gpu_vram_gb'] is None else r['gpu_vram_gb']}GB",
            t(lang, "col_form_factor"): form_label(lang, r["gpu_form_factor"]),
            t(lang, "col_price_kind"): kind_label(lang, r["price_kind"]),
            t(lang, "col_market"): t(lang, f"market_{r['market']}"),
            t(lang, "col_index"): money(r["index_price"], currency) or "—",
            t(lang, "col_p25"): money(r["p25"], currency),
            t(lang, "col_p75"): money(r["p75"], currency),
            t(lang, "col_providers_n"): r["n_providers"],
            t(lang, "col_n_offers"): r["n_offers"],
            t(lang, "col_in_stock_share"): f"{r['in_stock_share']:.0%}",
            t(lang, "col_reason"): r["withheld_reason"] or "",
        }
        for r in frame.filter(pl.col("date") == day).iter_rows(named=True)
    ]
    st.caption(t(lang, "index_latest", day=day))
    st.dataframe(rows, hide_index=True, width="stretch", key="index_latest_table")


def withheld_text(lang: Lang, rules: IndexRules, withheld: int, frame: pl.DataFrame) -> str:
    method = ", ".join(sorted(set(frame["method_version"].drop_nulls().to_list())))
    if rules.max_spread is None:
        return t(lang, "index_withheld", n=withheld, method=method)
    return t(
        lang, "index_withheld_v2", n=withheld, method=method,
        min_providers=rules.min_providers, spread=rules.max_spread,
        who=t(lang, f"index_voters_{rules.voter}"),
    )  # fmt: skip


def none_text(lang: Lang, rules: IndexRules) -> str:
    if rules.max_spread is None:
        return t(lang, "index_none")
    return t(
        lang, "index_none_v2", min_providers=rules.min_providers, spread=rules.max_spread,
        who=t(lang, f"index_voters_{rules.voter}"),
    )  # fmt: skip
