"""CSV cells that a spreadsheet will not run as formulas (CSV injection), for every CSV gpurent
writes: the CLI's ``--format csv`` and the dashboard's downloads.

The rule: a *text* cell whose first character is ``=``, ``+``, ``-``, ``@``, a tab or a
carriage return gets a leading apostrophe, the usual neutraliser (spreadsheets show the
text as typed). Only text is touched: numbers (``Decimal``, ``int``, ``float``) are written
as they are, so a price of ``-1.5`` stays a number a spreadsheet can sum. The type decides,
not the look of the text: text that came from a provider stays text even when it looks like
a number.
"""

from __future__ import annotations

FORMULA_LEADS = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a cell as a formula."""


def neutralise_text(text: str) -> str:
    """``text`` with a leading ``'`` when a spreadsheet would read it as a formula."""
    return "'" + text if text.startswith(FORMULA_LEADS) else text


def neutralise_cell(value: object) -> object:
    """A CSV cell value made safe: text through ``neutralise_text``, anything else as is."""
    return neutralise_text(value) if isinstance(value, str) else value
