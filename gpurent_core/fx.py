"""Dated foreign-exchange rates: a small table the cost engine converts money through.

Conventions:

* ``FxRate(base="USD", quote="CNY", rate=Decimal("7.10"))`` means 1 USD = 7.10 CNY, so
  converting an amount from ``base`` to ``quote`` multiplies by ``rate``.
* **One value per currency: every pair goes through USD.** A currency's rate against USD
  is what the table holds for that pair (either direction); a pair of two other currencies
  is the product of their USD rates (EUR/CNY = EUR/USD x USD/CNY), never a rate of its own.
  So the rates shown always agree with each other, and an order of prices (the cheapest
  first) is the same in every display currency: with a separate EUR/CNY a CNY offer and a
  USD one could swap places between the CNY and the EUR view. A currency the table quotes
  only against another one (HKD/CNY, say) reaches USD through it.
* A dated rate counts from its date: ``FxTable.rate(base, quote, on)`` uses, for each leg,
  the latest rate dated on or before ``on`` (the latest overall when ``on`` is None). Both
  stored directions count: when only the other direction is stored (or is more recent),
  the inverse is derived as ``1 / rate``. Same date in both directions: the stored
  direction wins. Same pair and same date twice: the later one given wins.
* An **override** (``GPURENT_FX``, ``pinned``) has no date: it is the pair's rate on every
  day, past days too, and beats any dated rate of the pair. An override read "today" and
  dated today would make yesterday's index differ from today's by the override alone, and
  change when exported again tomorrow. An override may also be given between two other
  currencies (EUR/CNY=8.00): its base currency (EUR) then reaches USD through the other
  one. Overrides that contradict each other (USD/CNY, EUR/USD and EUR/CNY that do not
  multiply out) are refused.
* Derived rates (inverses, products) are rounded once to 12 significant digits
  (ROUND_HALF_EVEN) and marked ``derived=True``, with the rates they come from in ``source``.
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
from fractions import Fraction

FX_ENV_VAR = "GPURENT_FX"
PIVOT = "USD"
"""The currency every other one is valued in (module docstring)."""

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
    pinned: bool = False
    """An override (``GPURENT_FX``): the pair's rate on every date, over any dated one."""

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
)
"""Each against USD (EUR/CNY is their product: 8.236)."""


def _today() -> date:
    return datetime.now(UTC).date()


class FxTable:
    """An immutable set of dated rates with the lookup rules of the module docstring."""

    def __init__(self, rates: Iterable[FxRate] = ()) -> None:
        self._rates: tuple[FxRate, ...] = tuple(rates)
        by_pair: dict[tuple[str, str], list[FxRate]] = {}
        self._pinned: dict[tuple[str, str], FxRate] = {}
        for item in self._rates:
            if item.base == item.quote:
                continue  # identities are answered without storage
            if item.pinned:
                # The later given wins, whichever direction either was given in.
                self._pinned.pop((item.quote, item.base), None)
                self._pinned[(item.base, item.quote)] = item
                continue
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

    def first_date(self, base: str, quote: str) -> date | None:
        """The first date the table can convert ``base`` to ``quote`` on (None: never, or
        on every date when only overrides are involved)."""
        for day in sorted({item.rate_date for item in self._rates if not item.pinned}):
            try:
                self.rate(base, quote, day)
            except FxRateMissing:
                continue
            return day
        return None

    def _latest(self, base: str, quote: str, on: date | None) -> FxRate | None:
        found: FxRate | None = None
        for item in self._by_pair.get((base, quote), ()):
            if on is not None and item.rate_date > on:
                break
            found = item
        return found

    def _held(
        self, base: str, quote: str, on: date | None, *, pinned_only: bool = False
    ) -> FxRate | None:
        """The rate the table holds for this pair itself (an override first, then the
        dated rates of either direction), or None."""
        if (base, quote) in self._pinned:
            return self._pinned[(base, quote)]
        if (quote, base) in self._pinned:
            return _inverse(self._pinned[(quote, base)])
        if pinned_only:
            return None
        direct = self._latest(base, quote, on)
        inverse = self._latest(quote, base, on)
        if direct is not None and (inverse is None or direct.rate_date >= inverse.rate_date):
            return direct
        return _inverse(inverse) if inverse is not None else None

    def _leg(self, base: str, quote: str, on: date | None) -> FxRate | None:
        """A rate between USD and another currency (one of ``base``, ``quote`` is USD): an
        override of the pair; else through an override naming the currency and another
        one; else the dated rate of the pair; else through a currency it is quoted against."""
        code = quote if base == PIVOT else base
        pinned = self._held(base, quote, on, pinned_only=True)
        if pinned is not None:
            return pinned
        others = sorted(self.currencies - {code, PIVOT})
        for pinned_only in (True, False):
            if not pinned_only:
                held = self._held(base, quote, on)
                if held is not None:
                    return held
            for via in others:
                if pinned_only and (code, via) not in self._pinned:
                    continue  # an override "EUR/CNY=8" values EUR (its base), not CNY
                if base == PIVOT:  # USD/via x via/code
                    step, onward = self._held(via, code, on, pinned_only=pinned_only), None
                    if step is not None:
                        onward = self._held(PIVOT, via, on)
                        if onward is not None:
                            return _product(onward, step)
                else:  # code/via x via/USD
                    step = self._held(code, via, on, pinned_only=pinned_only)
                    if step is not None:
                        onward = self._held(via, PIVOT, on)
                        if onward is not None:
                            return _product(step, onward)
        return None

    def rate(self, base: str, quote: str, on: date | None = None) -> FxRate:
        """The rate to convert ``base`` into ``quote`` as of ``on`` (latest when None)."""
        if base == quote:
            return FxRate(base, quote, Decimal(1), on or _today(), "identity", derived=True)
        found: FxRate | None
        if PIVOT in (base, quote):
            found = self._leg(base, quote, on)
        else:
            there, onward = self._leg(base, PIVOT, on), self._leg(PIVOT, quote, on)
            found = None if there is None or onward is None else _product(there, onward)
        if found is None:
            when = f"on or before {on.isoformat()}" if on is not None else "at any date"
            raise FxRateMissing(
                f"no {base}/{quote} rate {when} (each currency needs a rate against {PIVOT}); "
                f'set {FX_ENV_VAR}="{base}/{quote}=<rate>" or add it to the table'
            )
        return found

    def convert(
        self, amount: Decimal, from_ccy: str, to_ccy: str, on: date | None = None
    ) -> tuple[Decimal, FxRate]:
        """``amount`` in ``from_ccy`` expressed in ``to_ccy``, with the rate used.

        The product is exact (not rounded): callers quantize when they present it.
        """
        used = self.rate(from_ccy, to_ccy, on)
        return _EXACT_CONTEXT.multiply(amount, used.rate), used


def _rounded(value: Fraction) -> Decimal:
    return _trimmed(_INVERSE_CONTEXT.divide(Decimal(value.numerator), Decimal(value.denominator)))


def _trimmed(value: Decimal) -> Decimal:
    """8.00000000000 as 8 (a product that comes out round reads as given)."""
    text = format(value, "f")
    return Decimal(text.rstrip("0").rstrip(".")) if "." in text else value


def _inverse(held: FxRate) -> FxRate:
    return FxRate(
        held.quote,
        held.base,
        _trimmed(_INVERSE_CONTEXT.divide(Decimal(1), held.rate)),
        held.rate_date,
        f"inverse of {held.pair} {format(held.rate, 'f')} ({held.source})",
        derived=True,
        pinned=held.pinned,
    )


def _product(first: FxRate, second: FxRate) -> FxRate:
    """``first`` (A/B) then ``second`` (B/C): A/C, dated by the older of the two."""
    return FxRate(
        first.base,
        second.quote,
        _rounded(Fraction(first.rate) * Fraction(second.rate)),
        min(first.rate_date, second.rate_date),
        f"{first.pair} {format(first.rate, 'f')} x {second.pair} {format(second.rate, 'f')}"
        f" ({first.source}; {second.source})",
        derived=True,
        pinned=first.pinned and second.pinned,
    )


def parse_fx_overrides(
    spec: str, *, rate_date: date | None = None, source: str = FX_ENV_VAR
) -> list[FxRate]:
    """Parse ``"USD/CNY=7.20,EUR/USD=1.08"`` into overrides (``pinned``: the rate on every
    date; ``rate_date``, default today, is only the day they were read, for display).

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
        out.append(FxRate(base, quote, rate, when, source, pinned=True))
    _refuse_contradictions(out, source)
    return out


CONTRADICTION = Fraction(1, 10**6)
"""How far apart (relative) a given override and the one its siblings imply may be."""


def _refuse_contradictions(overrides: list[FxRate], source: str) -> None:
    """Overrides that over-determine a pair (USD/CNY, EUR/USD and EUR/CNY given, not
    multiplying out) are refused: one of them would be silently ignored."""
    for given in overrides:
        others = FxTable([r for r in overrides if r is not given])
        try:
            implied = others.rate(given.base, given.quote)
        except FxRateMissing:
            continue
        gap = abs(Fraction(implied.rate) / Fraction(given.rate) - 1)
        if gap > CONTRADICTION:
            raise FxParseError(
                f"{source}: {given.pair}={format(given.rate, 'f')} contradicts the other "
                f"overrides, which give {format(implied.rate, 'f')}: give each currency once"
            )


def load_fx_table(
    environ: Mapping[str, str] | None = None, *, today: date | None = None
) -> FxTable:
    """Built-in defaults plus the ``GPURENT_FX`` overrides, which win on every date."""
    env = os.environ if environ is None else environ
    overrides = parse_fx_overrides(env.get(FX_ENV_VAR, ""), rate_date=today)
    return FxTable.default().with_rates(overrides)
