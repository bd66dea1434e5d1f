"""The top of every page: its title and caption, and whether the part it draws is built;
what several pages draw alike (a link column)."""

from __future__ import annotations

import importlib.util
from typing import Any

import streamlit as st

from dashboards.i18n import Lang, t


def module_available(name: str) -> bool:
    """Whether an optional part (price index, history) is installed in this build."""
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def opening(lang: Lang, page: str, intro: str, *, needs: tuple[str, str] | None = None) -> bool:
    """Title and caption; False (after saying so) when the page's part, ``needs`` =
    (module, the i18n key naming it), is not in this build."""
    st.title(t(lang, page))
    st.caption(t(lang, intro))
    if needs is not None and not module_available(needs[0]):
        st.info(t(lang, "not_available", what=t(lang, needs[1])))
        return False
    return True


def link_columns(lang: Lang) -> dict[str, Any]:
    """A table's provider-page column as links (only http(s) targets reach it:
    ``tables.safe_url``)."""
    return {
        t(lang, "col_link"): st.column_config.LinkColumn(
            t(lang, "col_link"), display_text=t(lang, "link_open")
        )
    }
