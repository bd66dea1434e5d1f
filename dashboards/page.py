"""The top of every page: its title and caption, and whether the part it draws is built."""

from __future__ import annotations

import importlib.util

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
