"""Buy or rent: owning a card over years against renting it at the tracked price, and the
hours a day at which the two cost the same (``gpurent.api.tco``, as `gpurent tco`)."""

from __future__ import annotations

from decimal import Decimal

import pandas as pd
import streamlit as st

from dashboards import data
from dashboards.i18n import Lang, money, t
from dashboards.state import Ctx
from dashboards.text import md_escape
from gpurent import api
from gpurent_core.defaults import DEFAULT_HOST_WATTS_PER_GPU, DEFAULT_TCO_YEARS

DEFAULT_GPU = "RTX 4090"
# A working day, as the form's first value (the command line asks for it).
START_HOURS = 8.0
HOURS_A_DAY = 24.0
MOST_YEARS = 10

# Every field has a key of its own: Streamlit names a widget without one by its label, so
# switching the language would make it a new widget back at its default.


def _decimal(value: float | int) -> Decimal:
    """A widget's number as the Decimal it shows (never the float's binary expansion)."""
    return Decimal(str(value))


def _form(lang: Lang, currency: str) -> dict[str, object] | None:
    """The request (``api.tco``'s keywords) the form last submitted, kept across reruns,
    with the currency its amounts were typed in (the sidebar's then)."""
    with st.form("tco_form"):
        first = st.columns(4)
        gpu = first[0].text_input(t(lang, "tco_gpu"), value=DEFAULT_GPU, key="tco_gpu")
        price = first[1].number_input(
            f"{t(lang, 'tco_price')} ({currency})",
            min_value=0.0,
            value=None,
            step=100.0,
            key="tco_price",
        )
        hours = first[2].number_input(
            t(lang, "tco_hours"),
            min_value=0.5,
            max_value=HOURS_A_DAY,
            value=START_HOURS,
            step=0.5,
            key="tco_hours",
        )
        power = first[3].number_input(
            f"{t(lang, 'tco_power_price')} ({currency})",
            min_value=0.0,
            value=None,
            step=0.05,
            format="%.4f",
            key="tco_power",
        )
        second = st.columns(5)
        years = second[0].number_input(
            t(lang, "tco_years"),
            min_value=1,
            max_value=MOST_YEARS,
            value=DEFAULT_TCO_YEARS,
            step=1,
            key="tco_years",
        )
        resale = second[1].number_input(
            t(lang, "tco_resale"), min_value=0, max_value=100, value=0, step=5, key="tco_resale"
        )
        watts = second[2].number_input(
            t(lang, "tco_watts"), min_value=0, max_value=5000, value=0, step=10, key="tco_watts"
        )
        host = second[3].number_input(
            t(lang, "tco_host_watts"),
            min_value=0,
            max_value=5000,
            value=int(DEFAULT_HOST_WATTS_PER_GPU),
            step=10,
            key="tco_host",
        )
        rent = second[4].number_input(
            f"{t(lang, 'tco_rent_price')} ({currency})",
            min_value=0.0,
            value=0.0,
            step=0.1,
            key="tco_rent",
        )
        submitted = st.form_submit_button(t(lang, "tco_submit"), type="primary")
    if submitted:
        if price is None or power is None:
            st.session_state.pop("tco_request", None)
            st.info(t(lang, "tco_missing"))
            return None
        st.session_state["tco_request"] = {
            "gpu": str(gpu),
            "price": _decimal(price),
            "hours_per_day": _decimal(hours),
            "power_price": _decimal(power),
            "years": int(years),
            "resale": f"{int(resale)}%" if resale else None,
            "watts": Decimal(int(watts)) if watts else None,
            "host_watts": Decimal(int(host)),
            "rent_price": _decimal(rent) if rent else None,
            "currency": currency,
        }
    request = st.session_state.get("tco_request")
    return dict(request) if request is not None else None


def _hours(value: Decimal) -> str:
    return f"{value:.1f}"


def _parts(answer: api.TcoAnswer, lang: Lang) -> pd.DataFrame:
    """The answer's parts as rows, money in the answer's currency."""
    cur = answer.currency
    rows = [
        ("tco_row_purchase", answer.purchase_price),
        ("tco_row_resale", -answer.resale),
        ("tco_row_power", answer.power_cost),
        ("tco_row_owning", answer.own_cost),
        ("tco_row_renting", answer.rent_cost),
    ]
    return pd.DataFrame(
        {
            t(lang, "col_part"): [t(lang, key) for key, _ in rows],
            t(lang, "col_amount"): [
                money(value, cur) if value is not None else "—" for _, value in rows
            ],
        }
    )


def _verdict(answer: api.TcoAnswer, lang: Lang) -> list[str]:
    """Which is cheaper at the use given, and where the two meet, in ``lang``."""
    h = _hours(answer.hours_per_day)
    lines = []
    if answer.cheaper == "equal":
        lines.append(t(lang, "tco_cheaper_equal", h=h))
    elif answer.cheaper is not None and answer.saving is not None:
        amount = money(abs(answer.saving), answer.currency)
        lines.append(t(lang, f"tco_cheaper_{answer.cheaper}", h=h, amount=amount))
    point = answer.break_even_hours_per_day
    if point is None:
        lines.append(t(lang, "tco_never_note"))
    elif point > Decimal(int(HOURS_A_DAY)):
        lines.append(t(lang, "tco_beyond_day", h=_hours(point)))
    else:
        lines.append(t(lang, "tco_above", h=_hours(point)))
    return lines


def _notes(answer: api.TcoAnswer, lang: Lang) -> list[str]:
    cur = answer.currency
    lines = []
    if answer.rent_from == "median":
        lines.append(
            t(
                lang,
                "tco_rent_median",
                rate=money(answer.rent_per_card_hour, cur),
                n=answer.rent_offers,
                providers=answer.rent_providers,
                low=money(answer.rent_lowest, cur),
                high=money(answer.rent_highest, cur),
            )
        )
    elif answer.rent_from == "given":
        lines.append(t(lang, "tco_rent_given", rate=money(answer.rent_per_card_hour, cur)))
    lines.append(
        t(
            lang,
            "tco_power_note",
            card=f"{answer.card_watts:f}",
            host=f"{answer.host_watts:f}",
            hours=f"{answer.hours:,.0f}",
            kwh=f"{answer.energy_kwh:,.0f}",
        )
    )
    if answer.host_watts_assumed:
        lines.append(t(lang, "tco_host_assumed", w=f"{answer.host_watts:f}"))
    if answer.stale_left_out:
        lines.append(t(lang, "tco_stale_left_out", n=answer.stale_left_out))
    if answer.other_kinds_left_out:
        lines.append(t(lang, "tco_kinds_left_out", n=answer.other_kinds_left_out))
    return lines


def render(ctx: Ctx) -> None:
    lang = ctx.lang
    st.title(t(lang, "page_tco"))
    st.caption(t(lang, "tco_intro"))
    request = _form(lang, ctx.currency)
    if request is None:
        return
    # The amounts were typed in the currency of their submission: a later change of the
    # sidebar must not read 15000 CNY as 15000 USD (the verdict would flip). The answer
    # stays in that currency until the form is sent again.
    typed_in = str(request.pop("currency", ctx.currency))
    if typed_in != ctx.currency:
        st.caption(t(lang, "tco_typed_in", typed=typed_in, shown=ctx.currency))
    try:
        answer = data.buy_or_rent(ctx.db, request, typed_in)
    except api.ApiError as exc:
        st.error(t(lang, "tco_error", error=md_escape(exc)))
        return
    cur = answer.currency
    cols = st.columns(3)
    cols[0].metric(t(lang, "tco_own", years=answer.years), money(answer.own_cost, cur))
    rent = money(answer.rent_cost, cur) if answer.rent_cost is not None else "—"
    cols[1].metric(t(lang, "tco_rent", years=answer.years), rent)
    point = answer.break_even_hours_per_day
    if point is not None:
        shown = t(lang, "tco_hours_a_day", h=_hours(point))
    else:
        shown = t(lang, "tco_never") if answer.rent_per_card_hour is not None else "—"
    cols[2].metric(t(lang, "tco_break_even"), shown)
    if answer.rent_per_card_hour is None:
        # No offer can be rented now: no rental price, and no guess at one.
        st.warning(t(lang, "tco_no_offer", gpu=md_escape(answer.gpu)))
    else:
        # Plain text: "$2.17 ... $5.30" would read as Markdown's LaTeX.
        for line in _verdict(answer, lang):
            st.info(md_escape(line))
    st.dataframe(_parts(answer, lang), hide_index=True, width="stretch", key="tco_table")
    for line in _notes(answer, lang):
        st.caption(md_escape(line))
