"""Streamlit entry point: ``streamlit run dashboards/app.py -- --db PATH`` (or ``gpurent dashboard``).

Builds the sidebar (language, display currency), then runs the chosen page. Pages only
read the warehouse, through ``dashboards.data``; any error reading it is shown as a notice
rather than a stack trace.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

# `streamlit run` puts this folder, not the repository root, first on sys.path; the
# package is normally installed (editable), but a bare checkout should run too.
_ROOT = Path(__file__).resolve().parents[1]
if str(_ROOT) not in sys.path:
    sys.path.append(str(_ROOT))

import streamlit as st  # noqa: E402

from dashboards import (  # noqa: E402
    pages_availability,
    pages_index,
    pages_now,
    pages_providers,
    pages_size,
    pages_tco,
)
from dashboards.data import DataUnavailable  # noqa: E402
from dashboards.i18n import DISPLAY_CURRENCIES, LANG_NAMES, Lang, t  # noqa: E402
from dashboards.state import Ctx, db_from_argv  # noqa: E402
from dashboards.text import md_escape  # noqa: E402
from gpurent_core.config import load_settings  # noqa: E402

# (url path, title key, render function); the first is the home page.
PAGES: tuple[tuple[str, str, Callable[[Ctx], None]], ...] = (
    ("now", "page_now", pages_now.render),
    ("size", "page_size", pages_size.render),
    ("tco", "page_tco", pages_tco.render),
    ("index", "page_index", pages_index.render),
    ("availability", "page_availability", pages_availability.render),
    ("providers", "page_providers", pages_providers.render),
)


def _sidebar() -> tuple[Lang, str]:
    settings = load_settings()
    chosen = st.sidebar.selectbox(
        "Language / 语言",
        list(Lang),
        format_func=lambda code: LANG_NAMES[Lang(code)],
        key="lang",
    )
    lang = Lang(chosen or Lang.EN)
    # The CLI's default (GPURENT_CURRENCY) is the page's too: a currency beyond the usual
    # two is offered beside them, never silently replaced by CNY.
    choices = list(DISPLAY_CURRENCIES)
    if settings.currency not in choices:
        choices.append(settings.currency)
    currency = st.sidebar.selectbox(
        t(lang, "currency"),
        choices,
        index=choices.index(settings.currency),
        key="currency",
    )
    return lang, str(currency)


def _guarded(ctx: Ctx, render: Callable[[Ctx], None]) -> Callable[[], None]:
    def run() -> None:
        try:
            render(ctx)
        except DataUnavailable as exc:
            if exc.kind == "locked":
                st.warning(t(ctx.lang, "warehouse_locked"))
            elif exc.kind == "damaged":
                st.error(t(ctx.lang, "warehouse_damaged", path=md_escape(ctx.db)))
            else:
                st.info(t(ctx.lang, "no_warehouse", path=md_escape(ctx.db)))

    return run


def main() -> None:
    st.set_page_config(page_title="gpurent", layout="wide")
    db = db_from_argv(sys.argv[1:], load_settings().db)
    lang, currency = _sidebar()
    ctx = Ctx(db=db, lang=lang, currency=currency)
    pages = [
        st.Page(
            _guarded(ctx, render),
            title=t(lang, title_key),
            url_path=path,
            default=(i == 0),
        )
        for i, (path, title_key, render) in enumerate(PAGES)
    ]
    current = st.navigation(pages)
    st.sidebar.caption(f"{t(lang, 'database')}: {md_escape(db)}")
    current.run()


# Streamlit runs this file as __main__ on every rerun.
if __name__ == "__main__":
    main()
