"""Dated FX rates: 1 ``base`` = ``rate`` ``quote`` from ``rate_date`` until the next dated row."""

from __future__ import annotations

import re
from datetime import date
from decimal import ROUND_HALF_EVEN, Decimal

import duckdb

from warehouse.db import fetch_one

_CURRENCY = re.compile(r"[A-Z]{3}")
_RATE_QUANTUM = Decimal("1e-8")  # fx_rates.rate is DECIMAL(18,8)


def upsert_fx_rate(
    con: duckdb.DuckDBPyConnection,
    rate_date: date,
    base: str,
    quote: str,
    rate: Decimal,
    source: str,
) -> None:
    """Insert or replace the rate of ``base``→``quote`` on ``rate_date`` (rounded half-even
    to 8 places; must stay positive)."""
    for code in (base, quote):
        if not _CURRENCY.fullmatch(code):
            raise ValueError(f"not an ISO 4217 code: {code!r}")
    if not isinstance(rate, Decimal) or not rate.is_finite():
        raise ValueError(f"rate must be a finite Decimal, got {rate!r}")
    stored = rate.quantize(_RATE_QUANTUM, rounding=ROUND_HALF_EVEN)
    if stored <= 0:
        raise ValueError(f"rate must be positive at 8 places, got {rate}")
    # MERGE, not INSERT ... ON CONFLICT: a DuckLake table has no primary key to conflict on,
    # and the embedded file runs the same statement.
    con.execute(
        """
        MERGE INTO fx_rates AS t
        USING (
            SELECT ?::DATE AS rate_date, ?::VARCHAR AS base, ?::VARCHAR AS quote,
                   ?::DECIMAL(18,8) AS rate, ?::VARCHAR AS source
        ) AS s
        ON t.rate_date = s.rate_date AND t.base = s.base AND t.quote = s.quote
        WHEN MATCHED THEN UPDATE SET rate = s.rate, source = s.source, updated_at = now()
        WHEN NOT MATCHED THEN INSERT (rate_date, base, quote, rate, source)
            VALUES (s.rate_date, s.base, s.quote, s.rate, s.source)
        """,
        [rate_date, base, quote, stored, source],
    )


def fx_rate_on(
    con: duckdb.DuckDBPyConnection, day: date, base: str, quote: str
) -> tuple[Decimal, date] | None:
    """The latest rate dated on or before ``day``, with its date; None if there is none.

    ``base == quote`` gives ``(Decimal(1), day)`` without a lookup. No inverse or cross
    rates are derived: store the direction you need.
    """
    if base == quote:
        return Decimal(1), day
    row = fetch_one(
        con,
        """
        SELECT rate, rate_date FROM fx_rates
        WHERE base = ? AND quote = ? AND rate_date <= ?
        ORDER BY rate_date DESC
        LIMIT 1
        """,
        [base, quote, day],
    )
    if row is None:
        return None
    rate, rate_date = row
    return Decimal(rate), rate_date
