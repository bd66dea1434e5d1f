"""Size my workload: the sizing form, the memory breakdown, the tier and the ranked offers."""

from __future__ import annotations

from decimal import Decimal

import streamlit as st

from dashboards import charts, rent_or_api_panel, sizer, tables
from dashboards.i18n import t
from dashboards.page import link_columns
from dashboards.state import Ctx
from dashboards.text import md_escape
from dashboards.verdicts import offers_reason_text, verdict_text
from gpurent import api
from gpurent.api import Engine, Mode, Objective, model_names, precision_names

DEFAULT_MODEL = "Qwen2.5-7B"

# A month of hours, the most a card can run (and the default use), as a widget number.
MONTH_HOURS = int(api.usage().hours_per_month)

# Every field has a key of its own: Streamlit names a widget without one by its label, so
# switching the language would make it a new widget back at its default.


def _form(ctx: Ctx) -> sizer.SizeRequest | None:
    lang = ctx.lang
    models = model_names()
    precisions = precision_names()
    with st.form("size_form"):
        first = st.columns(3)
        model = first[0].selectbox(
            t(lang, "size_model"),
            models,
            index=models.index(DEFAULT_MODEL) if DEFAULT_MODEL in models else 0,
            key="size_model",
        )
        precision = first[1].selectbox(
            t(lang, "size_precision"), precisions, index=precisions.index("bf16"), key="size_prec"
        )
        engine = first[2].selectbox(
            t(lang, "size_engine"), [e.value for e in Engine], key="size_engine"
        )
        second = st.columns(4)
        prompt = second[0].number_input(
            t(lang, "size_prompt"),
            min_value=0,
            max_value=2_000_000,
            value=2048,
            step=256,
            key="size_prompt",
        )
        gen = second[1].number_input(
            t(lang, "size_gen"),
            min_value=0,
            max_value=2_000_000,
            value=512,
            step=128,
            key="size_gen",
        )
        batch = second[2].number_input(
            t(lang, "size_batch"), min_value=1, max_value=4096, value=1, step=1, key="size_batch"
        )
        mode = second[3].selectbox(t(lang, "size_mode"), [m.value for m in Mode], key="size_mode")
        third = st.columns(4)
        ttft = third[2].number_input(
            t(lang, "size_ttft"), min_value=0, value=0, step=100, key="size_ttft"
        )
        tps = third[3].number_input(
            t(lang, "size_tps"), min_value=0, value=0, step=5, key="size_tps"
        )
        objective = third[0].selectbox(
            t(lang, "size_objective"), [o.value for o in Objective], key="size_objective"
        )
        hours = third[1].number_input(
            t(lang, "filter_hours"),
            min_value=1,
            max_value=MONTH_HOURS,
            value=MONTH_HOURS,
            step=10,
            key="size_hours",
        )
        # Rule of truth 11: only what the provider's latest crawl confirmed, unless asked.
        stale = st.checkbox(t(lang, "include_stale"), value=False, key="size_stale")
        # A model split over several cards wants them joined by NVLink (`size --interconnect`).
        nvlink = st.checkbox(t(lang, "size_nvlink"), value=False, key="size_nvlink")
        # Rent or call an API (`size --compare-api --utilisation`): the use is in percent.
        fourth = st.columns(2)
        compare = fourth[0].checkbox(t(lang, "size_compare_api"), value=False, key="size_api")
        use = fourth[1].number_input(
            t(lang, "size_utilisation"),
            min_value=1,
            max_value=100,
            value=30,
            step=5,
            key="size_use",
        )
        submitted = st.form_submit_button(t(lang, "size_submit"), type="primary")
    if submitted:
        st.session_state["size_request"] = {
            "model": str(model),
            "precision": str(precision),
            "prompt_tokens": int(prompt),
            "gen_tokens": int(gen),
            "batch": int(batch),
            "engine": Engine(engine),
            "mode": Mode(mode),
            "objective": Objective(objective),
            "hours_per_month": Decimal(int(hours)),
            "ttft_ms": float(ttft) or None,
            "tokens_per_s": float(tps) or None,
            "include_stale": bool(stale),
            "require_nvlink": bool(nvlink),
            "compare_api": bool(compare),
            "utilisation": Decimal(int(use)) / 100,
        }
    fields = st.session_state.get("size_request")
    if fields is None:
        return None
    # The currency follows the sidebar, also for an answer given before it changed.
    return sizer.SizeRequest(**fields, display_currency=ctx.currency)


def render(ctx: Ctx) -> None:
    lang = ctx.lang
    st.title(t(lang, "page_size"))
    st.caption(t(lang, "size_intro"))
    request = _form(ctx)
    if request is None:
        return
    try:
        answer = sizer.size_workload(ctx.db, request)
    except sizer.SizingError as exc:
        st.error(t(lang, "size_error", error=md_escape(exc)))
        return
    cols = st.columns(3)
    tier = f"{answer.gpus} x {answer.tier_gb} GB" if answer.tier_gb else "—"
    cols[0].metric(t(lang, "size_tier"), tier)
    cols[1].metric(t(lang, "size_per_gpu"), f"{answer.per_gpu_gib:.1f} GiB")
    cols[2].metric(t(lang, "size_cards"), str(answer.gpus))
    if not answer.fits:
        st.warning(t(lang, "size_no_fit"))
    breakdown = tables.breakdown_frame(answer.placements, lang)
    st.altair_chart(charts.breakdown_chart(breakdown, lang), width="stretch")
    # The verdict names offers, and offer labels come from providers: escaped. It follows
    # the language (dashboards.verdicts), figures and labels kept as the engine gave them.
    st.info(md_escape(verdict_text(answer.verdict, lang)))
    st.subheader(t(lang, "size_offers"))
    if answer.offers:
        st.markdown(f"**{t(lang, 'offers_count', n=answer.offers_total)}**")
        st.dataframe(
            tables.size_offers_table(answer.offers, lang),
            hide_index=True,
            width="stretch",
            key="size_table",
            column_config=link_columns(lang),
        )
        # How a row meets the targets when that takes more cards than its cheapest rental.
        for line in sizer.row_notes(answer.offers, lang):
            st.caption(md_escape(line))
        if any(o.storage_price_unknown for o in answer.offers):
            st.caption(t(lang, "storage_unknown_note"))
    else:
        reason = offers_reason_text(answer.offers_reason, lang)
        st.info(md_escape(reason or t(lang, "no_rows")))
    if request.require_nvlink:
        st.caption(t(lang, "size_nvlink_note"))
    if answer.stale_left_out:
        st.caption(t(lang, "stale_left_out", n=answer.stale_left_out))
    if answer.spot_left_out:
        st.caption(t(lang, "spot_left_out", n=answer.spot_left_out))
    if answer.cannot_tell:
        # Unknown is never a yes: these offers are not ranked with the ones above.
        st.subheader(t(lang, "size_cannot_tell", n=len(answer.cannot_tell)))
        st.dataframe(
            sizer.untold_table(answer.cannot_tell, lang),
            hide_index=True,
            width="stretch",
            key="size_untold",
            column_config=link_columns(lang),
        )
    if answer.rent_or_api is not None:
        rent_or_api_panel.show(answer.rent_or_api, lang)
    if answer.left_out:
        # One line per card and reason with its count, not one per offer (the same card
        # listed by many providers would be a wall of identical lines).
        st.subheader(t(lang, "size_excluded"))
        for line in sizer.left_out_lines(answer.left_out, lang):
            st.markdown(md_escape(line))
