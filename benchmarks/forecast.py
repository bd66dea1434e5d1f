"""The restock forecast's calibration on synthetic histories (``python -m benchmarks --only
forecast``; ``tests/tracking/test_forecast.py`` holds the same two cases to account).

A history is a card polled every POLL_MIN minutes at three providers for WEEKS weeks. When
it is rentable, it sells out with a fixed chance per poll; when sold out, it restocks with
a chance per poll that, in the *patterned* history, depends on the provider (alpha fast,
gamma slow) and on the hour of the week (nights quick, working hours slow, weekends slower),
and in the *flat* one is the same everywhere (the patterned one's average). One poll in a
hundred cannot tell (unknown), which censors the spell it falls in.

``calibrate`` splits each history in time, fits on the first two thirds and scores the rest:
the forecast must beat the base rate (pooled, no hour of week or provider) on the patterned
history, and must not be worse on the flat one.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from gpurent_core.forecast import Calibration, Poll, PollState, calibrate, spells_from_polls

START = datetime(2026, 9, 7, tzinfo=UTC)  # a Monday
WEEKS = 12
POLL_MIN = 15
PROVIDERS = {"alpha": 3.0, "beta": 1.0, "gamma": 0.35}
"""Each provider's restock speed (a factor on the chance per poll)."""
RESTOCK = 0.05
SELL_OUT = 0.12
UNKNOWN = 0.01
SEED = 20261107


def _hour_factor(at: datetime) -> float:
    night = 3.0 if at.hour < 7 else 0.3 if at.hour < 19 else 1.0
    return night * (0.4 if at.weekday() >= 5 else 1.0)


def _mean_restock() -> float:
    """The patterned chance per poll averaged over providers and hours of week."""
    week = [START + timedelta(hours=h) for h in range(168)]
    factors = [f * _hour_factor(at) for f in PROVIDERS.values() for at in week]
    return RESTOCK * sum(factors) / len(factors)


def synthetic_polls(*, patterned: bool, seed: int = SEED, weeks: int = WEEKS) -> list[Poll]:
    rng = random.Random(seed)
    flat = _mean_restock()
    polls = []
    steps = weeks * 7 * 24 * 60 // POLL_MIN
    for provider, speed in PROVIDERS.items():
        rentable = True
        for k in range(steps):
            at = START + timedelta(minutes=POLL_MIN * k)
            if rentable:
                rentable = rng.random() >= SELL_OUT
            else:
                chance = RESTOCK * speed * _hour_factor(at) if patterned else flat
                rentable = rng.random() < min(chance, 0.95)
            state = PollState.RENTABLE if rentable else PollState.SOLD_OUT
            if rng.random() < UNKNOWN:
                state = PollState.UNKNOWN
            polls.append(Poll(provider, at, state))
    return polls


def calibration(*, patterned: bool, seed: int = SEED, weeks: int = WEEKS) -> Calibration:
    return calibrate(
        spells_from_polls(synthetic_polls(patterned=patterned, seed=seed, weeks=weeks))
    )


if __name__ == "__main__":  # pragma: no cover - a quick look by hand
    for shaped in (True, False):
        print("patterned" if shaped else "flat", calibration(patterned=shaped))
