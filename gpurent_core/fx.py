"""Dated foreign-exchange rates: a small table the cost engine converts money through.

Conventions:

* ``FxRate(base="USD", quote="CNY", rate=Decimal("7.10"))`` means 1 USD = 7.10 CNY, so
  converting an amount from ``base`` to ``quote`` multiplies by ``rate``.
* ``FxTable.rate(base, quote, on)`` answers the latest rate dated on or before ``on`` (the
  latest overall when ``on`` is None). Both stored directions count: when only the other
  direction is stored (or is more recent), the inverse is derived as ``1 / rate`` with 12
  significant digits (ROUND_HALF_EVEN) and marked ``derived=True``. Same date in both
  directions: the stored direction wins. Same pair and same date twice: the later one given
  wins, so overrides can be appended to a table.
* No cross rates through a third currency: a pair nobody stored raises ``FxRateMissing``,
  so every number shown can be traced to one stored rate.
* Nothing here touches the network. Rates come from the built-in defaults below, from the
  ``GPURENT_FX`` environment variable, or from whoever builds the table (the warehouse).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import ROUND_HALF_EVEN, Context, Decimal

FX_ENV_VAR = "GPURENT_FX"

# 12 significant digits for derived inverses: far below a thousandth of a cent on any
# GPU price, and short enough to print and recompute by hand.
_INVERSE_CONTEXT = Context(prec=12, rounding=ROUND_HALF_EVEN)
# Products of two Decimals are exact when the context is wide enough; 60 digits is plenty.
_EXACT_CONTEXT = Context(prec=60, rounding=ROUND_HALF_EVEN)

_CURRENCY = re.compile(r"^[A-Z]{3}$")
_OVERRIDE_ITEM = re.compile(r"^([A-Z]{3})/([A-Z]{3})=([0-9]+(?:\.[0-9]+)?)$")


class FxError(ValueError):
    """Base class for FX problems."""


class FxParseError(FxError):
    """A ``GPURENT_FX`` value (or another override string) could not be parsed."""


class FxRateMissing(FxError, LookupError):
    """The table has no rate for the pair on or before the requested date."""


@dataclass(frozen=True)
class FxRate:
    """One rate: 1 ``base`` = ``rate`` ``quote``, valid from ``rate_date``."""

    base: str
    quote: str
    rate: Decimal
    rate_date: date
    source: str
    derived: bool = False
    """True when computed from the other direction (or the identity), not stored."""

    def __post_init__(self) -> None:
        for code in (self.base, self.quote):
            if not _CURRENCY.match(code):
                raise FxError(f"currency code must be three capital letters, got {code!r}")
        if not isinstance(self.rate, Decimal):
            raise FxError(f"rate must be a Decimal, got {type(self.rate).__name__}")
        if not self.rate.is_finite() or self.rate <= 0:
            raise FxError(f"rate must be a positive finite number, got {self.rate}")
        if self.base == self.quote and self.rate != 1:
            raise FxError(f"{self.base}/{self.quote} must be 1, got {self.rate}")

    @property
    def pair(self) -> str:
        return f"{self.base}/{self.quote}"

    def describe(self) -> str:
        """One line for explanations: ``USD/CNY 7.10 (2026-11-27, source)``."""
        return f"{self.pair} {format(self.rate, 'f')} ({self.rate_date.isoformat()}, {self.source})"


# Built-in defaults. They are ROUND figures near the PBOC central-parity / market level of
# late 2026, written down by hand, not fetched quotes: good enough to compare a CNY offer
# with a USD one at a glance, not for accounting. Users override them with GPURENT_FX (or
# the warehouse feeds its own dated rates); every converted figure records which rate it used.
DEFAULT_RATE_DATE = date(2026, 11, 27)
_DEFAULT_SOURCE = (
    "gpurent built-in default: approximate PBOC central-parity level, not a fetched quote; "
    f"override with {FX_ENV_VAR}"
)
DEFAULT_RATES: tuple[FxRate, ...] = (
    FxRate("USD", "CNY", Decimal("7.10"), DEFAULT_RATE_DATE, _DEFAULT_SOURCE),
    FxRate("EUR", "USD", Decimal("1.16"), DEFAULT_RATE_DATE, _DEFAULT_SOURCE),
    FxRate("EUR", "CNY", Decimal("8.24"), DEFAULT_RATE_DATE, _DEFAULT_SOURCE),
)


def _today() -> date:
    return datetime.now(UTC).date()


class FxTable:
    """An immutable set of dated rates with the lookup rules of the module docstring."""

    def __init__(self, rates: Iterable[FxRate] = ()) -> None:
        self._rates: tuple[FxRate, ...] = tuple(rates)
        by_pair: dict[tuple[str, str], list[FxRate]] = {}
        for item in self._rates:
            if item.base == item.quote:
                continue  # identities are answered without storage
            by_pair.setdefault((item.base, item.quote), []).append(item)
        # Stable sort: among equal dates the later-given rate stays last, i.e. wins.
        self._by_pair = {
            pair: sorted(items, key=lambda r: r.rate_date) for pair, items in by_pair.items()
        }

    @classmethod
    def default(cls) -> FxTable:
        """The built-in defaults only (no environment)."""
        return cls(DEFAULT_RATES)

    @property
    def rates(self) -> tuple[FxRate, ...]:
        """The stored rates, as given (for the warehouse to persist)."""
        return self._rates

    @property
    def currencies(self) -> frozenset[str]:
        """Every currency some rate connects (a display currency must be one of them)."""
        return frozenset(code for item in self._rates for code in (item.base, item.quote))

    def with_rates(self, rates: Iterable[FxRate]) -> FxTable:
        """A new table with ``rates`` added after the current ones (they win date ties)."""
        return FxTable((*self._rates, *rates))

    def _latest(self, base: str, quote: str, on: date | None) -> FxRate | None:
        found: FxRate | None = None
        for item in self._by_pair.get((base, quote), ()):
            if on is not None and item.rate_date > on:
                break
            found = item
        return found

    def rate(self, base: str, quote: str, on: date | None = None) -> FxRate:
        """The rate to convert ``base`` into ``quote`` as of ``on`` (latest when None)."""
        if base == quote:
            return FxRate(base, quote, Decimal(1), on or _today(), "identity", derived=True)
        direct = self._latest(base, quote, on)
        inverse = self._latest(quote, base, on)
        if direct is not None and (inverse is None or direct.rate_date >= inverse.rate_date):
            return direct
        if inverse is not None:
            return FxRate(
                base,
                quote,
                _INVERSE_CONTEXT.divide(Decimal(1), inverse.rate),
                inverse.rate_date,
                f"inverse of {inverse.pair} {format(inverse.rate, 'f')} ({inverse.source})",
                derived=True,
            )
        when = f"on or before {on.isoformat()}" if on is not None else "at any date"
        raise FxRateMissing(
            f"no {base}/{quote} (or {quote}/{base}) rate {when}; "
            f'set {FX_ENV_VAR}="{base}/{quote}=<rate>" or add it to the table'
        )

    def convert(
        self, amount: Decimal, from_ccy: str, to_ccy: str, on: date | None = None
    ) -> tuple[Decimal, FxRate]:
        """``amount`` in ``from_ccy`` expressed in ``to_ccy``, with the rate used.

        The product is exact (not rounded): callers quantize when they present it.
        """
        used = self.rate(from_ccy, to_ccy, on)
        return _EXACT_CONTEXT.multiply(amount, used.rate), used


def parse_fx_overrides(
    spec: str, *, rate_date: date | None = None, source: str = FX_ENV_VAR
) -> list[FxRate]:
    """Parse ``"USD/CNY=7.20,EUR/USD=1.08"`` into rates dated ``rate_date`` (default: today).

    Strict: each item is ``AAA/BBB=<digits>[.<digits>]`` with capital ISO codes, a positive
    rate, two different currencies, and no pair given twice in either direction. Spaces
    around items are allowed; an empty or blank string means no overrides.
    """
    when = rate_date or _today()
    if not spec.strip():
        return []
    out: list[FxRate] = []
    seen: dict[frozenset[str], str] = {}
    for position, raw in enumerate(spec.split(","), start=1):
        item = raw.strip()
        match = _OVERRIDE_ITEM.match(item)
        if match is None:
            raise FxParseError(
                f"{source}: item {position} {item!r} is not like 'USD/CNY=7.20' "
                "(capital ISO codes, '/', '=', a plain decimal number)"
            )
        base, quote, number = match.groups()
        rate = Decimal(number)
        if base == quote:
            raise FxParseError(f"{source}: item {position} {item!r} converts {base} to itself")
        if rate <= 0:
            raise FxParseError(f"{source}: item {position} {item!r} has a rate that is not > 0")
        key = frozenset((base, quote))
        if key in seen:
            raise FxParseError(
                f"{source}: item {position} {item!r} repeats the pair of {seen[key]!r}"
            )
        seen[key] = item
        out.append(FxRate(base, quote, rate, when, source))
    return out


def load_fx_table(
    environ: Mapping[str, str] | None = None, *, today: date | None = None
) -> FxTable:
    """Built-in defaults plus the ``GPURENT_FX`` overrides (dated ``today``), which win."""
    env = os.environ if environ is None else environ
    overrides = parse_fx_overrides(env.get(FX_ENV_VAR, ""), rate_date=today)
    return FxTable.default().with_rates(overrides)
