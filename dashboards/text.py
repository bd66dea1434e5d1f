"""Scraped text is shown as text, never as markup.

Streamlit renders ``st.markdown``/``st.caption``/widget labels as Markdown (with its own
extensions: ``:red[...]`` colours, ``:emoji:`` codes, ``$...$`` LaTeX). Anything that came
from a provider (names, regions, messages, raw input) goes through ``md_escape`` before it
is put in such a string, so ``<script>`` or ``**x**`` from a page shows as typed.
Tables (``st.dataframe``) and charts draw values as text already and need no escaping.
"""

from __future__ import annotations

import string

# Every ASCII punctuation character may be backslash-escaped in CommonMark, and each one
# escaped stands for itself; escaping all of them also covers Streamlit's extensions.
_ESCAPES = {ord(ch): "\\" + ch for ch in string.punctuation}


def md_escape(value: object) -> str:
    """``value`` as Markdown source that renders exactly as its text (newlines kept apart)."""
    text = "" if value is None else str(value)
    return text.translate(_ESCAPES).replace("\n", " ")
