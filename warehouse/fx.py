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
    con.execute(
        """
        INSERT INTO fx_rates (rate_date, base, quote, rate, source) VALUES (?, ?, ?, ?, ?)
        ON CONFLICT (rate_date, base, quote) DO UPDATE
        SET rate = excluded.rate, source = excluded.source, updated_at = now()
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
