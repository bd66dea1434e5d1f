"""Rent a card or call an API: what a request costs each way, and the use at which they meet.

A rental is paid by the hour whether it works or not; an API is paid by the token. For a
sized inference workload (``batch`` requests in flight, each ``prompt`` tokens in and ``gen``
out) an offer that fits serves, at full load,

    capacity (requests an hour) = batch x 3600 / cycle
    cycle = prefill of a copy's whole batch + gen / tokens/s per user

(``sizing.speed.cycle_seconds``, where the formula and why it holds live): each copy of the
model prefills the prompts of all its users, which share its compute, then decodes them
together. The figures are the answer's own: its ``ttft_worst_ms`` (the prefill of a copy's
whole batch, which is also the first token of the last of its prompts sent at once) and its
decode speed per user, the estimates `gpurent size` prints. A request's own first-token time
alone (``ttft_ms``) would count each prompt as if it had the machine to itself and overstate
the capacity whenever prompts are long.

At a utilisation ``u`` (the share of that capacity used on average over the hours paid) a
request costs ``hourly / (u x capacity)``; an API request costs
``prompt x input price + gen x output price``. They are equal at

    break-even utilisation u* = hourly / (capacity x API cost per request)

above ``u*`` renting is cheaper, below it the API. ``u*`` above 1 means the API is cheaper
even with the card busy every hour paid for. A requests-a-day load is turned into a
utilisation on as many rentals as it takes (a load beyond one rental's capacity rents more).

A rental's cost per request is split into input and output by the time each phase holds the
card in a cycle (prefill of the batch; decode: gen / tokens/s per user), so the two can be
set beside an API's input and output prices. These are estimates for choosing, not quotes: the
speeds are bandwidth/FLOPS estimates, and real engines batch prefill and decode together.

Exact ``Fraction`` arithmetic; money out as ``Decimal`` rounded once, at the end.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal
from fractions import Fraction

from gpurent_core.units import to_fraction
from sizing.speed import cycle_seconds, per_hour

SECONDS_AN_HOUR = 3600
HOURS_A_DAY = 24
MONEY_PLACES = Decimal("0.000001")
"""Money to 6 places: a request can cost a thousandth of a cent."""
SHARE_PLACES = Decimal("0.0001")
"""Utilisations to 4 places (a hundredth of a percent)."""


@dataclass(frozen=True)
class Workload:
    """The request shape and concurrency the offers were sized for."""

    prompt_tokens: int
    gen_tokens: int
    batch: int
    """Requests in flight at once at full load (`size --batch`)."""

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.gen_tokens


@dataclass(frozen=True)
class RentalSpeed:
    """What one rental does, as the size answer states it."""

    hourly: Decimal
    """True cost of an hour of the rental (the answer's ``true_hourly``)."""
    ttft_ms: Decimal
    """Time to first token of one request alone (shown; the capacity does not read it)."""
    tokens_per_s_per_user: Decimal
    """Decode speed each of the ``batch`` requests sees."""
    ttft_worst_ms: Decimal
    """Prefill of all the prompts one copy of the model holds at once (the answer's
    ``ttft_worst_ms``): the prefill share of every cycle."""


@dataclass(frozen=True)
class Load:
    """How busy the rental is: a share of its capacity, or requests a day. Exactly one."""

    utilisation: Fraction | None = None
    requests_per_day: int | None = None

    def __post_init__(self) -> None:
        if (self.utilisation is None) == (self.requests_per_day is None):
            raise ValueError("give a utilisation or requests a day, not both or neither")
        if self.utilisation is not None and not 0 < self.utilisation <= 1:
            raise ValueError("a utilisation is a share of the capacity: above 0, at most 1")
        if self.requests_per_day is not None and self.requests_per_day < 1:
            raise ValueError("requests a day must be at least 1")

    def describe(self) -> str:
        if self.utilisation is not None:
            return f"{_percent(self.utilisation)} of capacity"
        return f"{self.requests_per_day:,} requests a day"


FULL_LOAD = Load(utilisation=Fraction(1))


@dataclass(frozen=True)
class RentalCost:
    """A rental's figures under a load."""

    capacity_per_hour: Decimal
    """Requests an hour the rental serves at full load (1 place)."""
    rentals: int
    """Rentals the load needs (more than one only for a requests-a-day load beyond one)."""
    utilisation: Decimal
    """Share of the rentals' capacity the load uses."""
    per_request: Decimal
    per_million_input: Decimal | None
    """The input share of a request's cost per million prompt tokens (None: no prompt)."""
    per_million_output: Decimal | None
    per_million_tokens: Decimal
    """A request's cost per million of its tokens, in and out together."""


def _phases(workload: Workload, speed: RentalSpeed) -> tuple[Fraction, Fraction] | None:
    """Seconds of a cycle spent prefilling and decoding; None when nothing decodes."""
    per_user = to_fraction(speed.tokens_per_s_per_user)
    if per_user <= 0:
        return None
    prefill = to_fraction(speed.ttft_worst_ms) / 1000
    cycle = cycle_seconds(prefill, workload.gen_tokens, per_user)
    if cycle <= 0:
        return None
    return prefill, cycle - prefill


def capacity_per_hour(workload: Workload, speed: RentalSpeed) -> Fraction | None:
    """Requests an hour at full load; None when a speed is zero (nothing is served)."""
    phases = _phases(workload, speed)
    if phases is None:
        return None
    return per_hour(workload.batch, sum(phases, Fraction(0)))


def rental_cost(workload: Workload, speed: RentalSpeed, load: Load) -> RentalCost | None:
    """What a request costs on the rental under ``load``; None when nothing is served."""
    capacity = capacity_per_hour(workload, speed)
    if capacity is None:
        return None
    hourly = to_fraction(speed.hourly)
    if load.utilisation is not None:
        rentals, share = 1, load.utilisation
        per_request = hourly / (share * capacity)
    else:
        assert load.requests_per_day is not None
        wanted = Fraction(load.requests_per_day)
        rentals = max(1, math.ceil(wanted / (capacity * HOURS_A_DAY)))
        share = wanted / (capacity * HOURS_A_DAY * rentals)
        per_request = rentals * hourly * HOURS_A_DAY / wanted
    phases = _phases(workload, speed)
    assert phases is not None  # the capacity was told
    prefill_s, decode_s = phases
    busy = prefill_s + decode_s
    return RentalCost(
        capacity_per_hour=_round(capacity, Decimal("0.1")),
        rentals=rentals,
        utilisation=_round(share, SHARE_PLACES),
        per_request=_round(per_request, MONEY_PLACES),
        per_million_input=_per_million(per_request * prefill_s / busy, workload.prompt_tokens),
        per_million_output=_per_million(per_request * decode_s / busy, workload.gen_tokens),
        per_million_tokens=_round(per_request * 1_000_000 / workload.tokens, MONEY_PLACES),
    )


@dataclass(frozen=True)
class BreakEven:
    """Where a rental and an API cost the same."""

    utilisation: Decimal
    """Share of capacity at which they meet (above 1: the API is cheaper at any use)."""
    requests_per_day: Decimal
    """The same, as requests a day on one rental."""

    @property
    def rent_can_win(self) -> bool:
        return self.utilisation <= 1


def break_even(
    workload: Workload, speed: RentalSpeed, api_per_request: Decimal
) -> BreakEven | None:
    """Where renting meets an API charging ``api_per_request`` (same currency as the
    rental); None when nothing is served or the API is free (renting never catches up)."""
    capacity = capacity_per_hour(workload, speed)
    api = to_fraction(api_per_request)
    if capacity is None or api <= 0:
        return None
    share = to_fraction(speed.hourly) / (capacity * api)
    return BreakEven(
        utilisation=_round(share, SHARE_PLACES),
        requests_per_day=_round(share * capacity * HOURS_A_DAY, Decimal("1")),
    )


def _per_million(money: Fraction, tokens: int) -> Decimal | None:
    return None if tokens <= 0 else _round(money * 1_000_000 / tokens, MONEY_PLACES)


def _round(value: Fraction, places: Decimal) -> Decimal:
    exact = Decimal(value.numerator) / Decimal(value.denominator)
    return exact.quantize(places, rounding=ROUND_HALF_EVEN)


def _percent(share: Fraction) -> str:
    return f"{float(share) * 100:g} %"
