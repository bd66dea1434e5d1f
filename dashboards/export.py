"""CSV downloads: the frame's own values (Decimal money as written, UTC times), UTF-8.

Text that came from a provider could start with ``=``, ``+``, ``-`` or ``@`` and run as
a formula when the file is opened in a spreadsheet (CSV injection); such text cells get
a leading apostrophe, by the one rule every CSV of gpurent follows (``gpurent_core.csvsafe``).
Numeric columns are left alone.
"""

from __future__ import annotations

import polars as pl

from gpurent_core.csvsafe import neutralise_text


def neutralise(frame: pl.DataFrame) -> pl.DataFrame:
    """Text cells that a spreadsheet would read as a formula, prefixed with ``'``."""
    text_columns = [name for name, dtype in frame.schema.items() if dtype == pl.String]
    if not text_columns:
        return frame
    return frame.with_columns(
        pl.col(c).map_elements(neutralise_text, return_dtype=pl.String).alias(c)
        for c in text_columns
    )


def csv_bytes(frame: pl.DataFrame) -> bytes:
    """The frame as CSV (header row, comma separated, UTF-8 with BOM for spreadsheets)."""
    return "\ufeff".encode() + neutralise(frame).write_csv().encode("utf-8")
