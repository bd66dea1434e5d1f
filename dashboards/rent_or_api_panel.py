"""The Size page's rent-or-API panel: the answer's ``rent_or_api`` document (the same one
`gpurent size --compare-api` prints) as three figures and two tables, in the page's language."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import pandas as pd
import streamlit as st

from dashboards.i18n import Lang, t
from dashboards.text import md_escape


def plain_money(value: Decimal | None) -> str:
    """Money as exact as the answer gives it, without trailing zeros (a request can cost a
    thousandth of a cent: two decimals would show 0.00)."""
    if value is None:
        return ""
    return format(value.normalize(), "f") if value else "0"


def _percent(share: Decimal) -> str:
    return f"{share * 100:.1f} %"


def figures(doc: Mapping[str, Any], lang: Lang) -> tuple[str, str, str]:
    """The cheapest rental's and the cheapest API's cost of a request, and the use above
    which the rental pays, as the panel shows them."""
    currency = doc["currency"]
    priced = [o for o in doc["offers"] if "per_request" in o]
    best = min(
        priced, key=lambda o: (o["per_request"], o["provider"], o["offer_key"]), default=None
    )
    api = doc["apis"][0] if doc["apis"] else None
    rental = "—" if best is None else f"{plain_money(best['per_request'])} {currency}"
    cheapest = "—" if api is None else f"{plain_money(api['per_request'])} {currency}"
    share = None if best is None else best.get("break_even_utilisation")
    if api is None or best is None:
        meet = "—"
    elif share is None:
        meet = t(lang, "api_free")
    elif share > 1:
        meet = t(lang, "api_break_even_never")
    else:
        meet = _percent(share)
    return rental, cheapest, meet


def api_table(doc: Mapping[str, Any], lang: Lang) -> pd.DataFrame:
    rows = [
        {
            t(lang, "api_col_api"): f"{r['provider']} {r['api_model']}",
            t(lang, "api_col_model"): r["model"] + ("" if r["relation"] == "same" else " (≈)"),
            t(lang, "api_col_serves"): r["served_as"] or "—",
            t(lang, "api_col_in"): f"{plain_money(r['input_per_million'])} {r['price_currency']}",
            t(lang, "api_col_out"): f"{plain_money(r['output_per_million'])} {r['price_currency']}",
            t(lang, "api_col_request"): f"{plain_money(r['per_request'])} {r['currency']}",
            t(lang, "api_col_as_of"): r["as_of"] + (" ⚠" if r["old"] else ""),
            t(lang, "api_col_source"): r["source"],
        }
        for r in doc["apis"]
    ]
    return pd.DataFrame(rows)


def rental_table(doc: Mapping[str, Any], lang: Lang) -> pd.DataFrame:
    rows = []
    for r in doc["offers"]:
        if "per_request" not in r:
            continue
        share = r.get("break_even_utilisation")
        rows.append(
            {
                t(lang, "col_provider"): r["provider"],
                t(lang, "col_gpu"): f"{r['card']} x{r['gpu_count']}",
                t(lang, "api_col_capacity"): f"{r['capacity_per_hour']:,.0f}",
                t(lang, "api_col_use"): _percent(r["utilisation"]),
                t(lang, "api_col_request"): f"{plain_money(r['per_request'])} {r['currency']}",
                t(lang, "api_col_in"): plain_money(r["per_million_input"]),
                t(lang, "api_col_out"): plain_money(r["per_million_output"]),
                t(lang, "api_col_break_even"): "" if share is None else _percent(share),
            }
        )
    return pd.DataFrame(rows)


def show(doc: Mapping[str, Any], lang: Lang) -> None:
    st.subheader(t(lang, "api_title", load=doc["load"]))
    if not doc["apis"]:
        st.info(t(lang, "api_none"))
        return
    rental, cheapest, meet = figures(doc, lang)
    cols = st.columns(3)
    cols[0].metric(t(lang, "api_best_rental"), rental)
    cols[1].metric(t(lang, "api_best_api"), cheapest)
    cols[2].metric(t(lang, "api_break_even"), meet)
    st.markdown(f"**{t(lang, 'api_apis')}**")
    st.dataframe(api_table(doc, lang), hide_index=True, width="stretch", key="size_api_table")
    if doc["old_prices"]:
        st.warning(t(lang, "api_old", n=doc["old_prices"]))
    rentals = rental_table(doc, lang)
    if not rentals.empty:
        st.markdown(f"**{t(lang, 'api_rentals')}**")
        st.dataframe(rentals, hide_index=True, width="stretch", key="size_api_rentals")
    st.caption(md_escape(t(lang, "api_estimate", full=doc["full_load"])))
