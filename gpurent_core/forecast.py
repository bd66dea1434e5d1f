"""Restock forecast: from a card's sold-out spells, the chance it is rentable again within
1, 6 and 24 hours, and the median wait, each with the spells behind it.

Pure arithmetic on polls already read (``warehouse.forecast`` reads them from the history).

The method, and why this one. A *sold-out spell* runs from the first poll that found the
card sold out (after one that found it rentable) to the first poll that found it rentable
again. Spells still running, or cut short by a poll that could not tell (unknown stock, a
stale offer: unknown is not sold out), are *censored*: they lasted at least that long. The
chance of a restock within t hours is one minus the Kaplan-Meier survival curve at t: the
textbook estimate that uses censored spells for what they say (at least this long) instead
of dropping them (which would make waits look short) or counting them as ended.

Restocks follow habits: a provider that restocks at night, a weekend that is slower. So the
curve is conditioned on the provider and on the hour of the week the spell began, where
there are spells enough, and leans on the pooled curve where there are not: each level
(all spells; the provider's; theirs that began at this hour of the day, +-1 h; at this hour
of the week, +-1 h) is blended with the level above it, weighted n / (n + k) by its own n
spells. A level with no spells is its parent; one with many speaks for itself. k itself is
chosen on the history (``choose_prior``: split it in time, keep the k that forecast the later
part best), so a history without habits leans on the pooled curve instead of chasing noise.
That is all: one number chosen beyond counts, so every figure can be explained and is
backed by a number of observations (``Chance.spells``: spells whose outcome at that horizon
is known). Fewer than MIN_SPELLS spells behind a figure: "not enough history".

``calibrate`` holds the method to account: it splits a history in time, fits on the first
part, scores the rest (Brier score) and sets the score beside a base rate that ignores hour
of week and provider (the pooled curve alone).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum

HORIZONS_H = (1, 6, 24)
"""The hours the chances are given for."""
MIN_SPELLS = 5
"""Below this many spells behind a figure it says "not enough history"."""
PRIOR_SPELLS = 8
"""How many spells the level above is worth when a level is blended with it, where the
history is too short for ``choose_prior`` to choose."""
WINDOW_H = 1
"""An hour of day (of week) pools the spells that began within this many hours of it."""
SPLIT = 2 / 3
"""``calibrate`` fits on the first two thirds of the history's time and scores the rest."""


class PollState(StrEnum):
    """What one good poll of one provider said of the card."""

    RENTABLE = "rentable"
    """A confirmed offer could be rented for the cards asked."""
    SOLD_OUT = "sold_out"
    """Every offer of the card the poll saw was confirmed not rentable."""
    UNKNOWN = "unknown"
    """It could not tell: unknown stock, a stale offer, or none listed."""


@dataclass(frozen=True)
class Poll:
    provider: str
    at: datetime
    state: PollState


@dataclass(frozen=True)
class Spell:
    """One sold-out spell of a card at one provider."""

    provider: str
    start: datetime
    hours: float
    """Until the restock (``ended``), else how long it was seen sold out at least."""
    ended: bool
    open: bool = False
    """Still running at the provider's last poll (censored by the end of the history)."""

    @property
    def hour_of_week(self) -> int:
        return hour_of_week(self.start)


def hour_of_week(at: datetime) -> int:
    """Monday 00:00 is 0, Sunday 23:00 is 167 (of ``at``'s own zone; UTC in the warehouse)."""
    return at.weekday() * 24 + at.hour


def spells_from_polls(polls: Iterable[Poll]) -> list[Spell]:
    """Every sold-out spell the polls show, per provider, oldest first.

    A spell needs a rentable poll before it (else when it began is unknown); it ends at the
    first rentable poll. An unknown poll censors it at the last sold-out poll before, and
    the next spell again waits for a rentable poll. A censored spell of no length says
    nothing and is left out.
    """
    by_provider: dict[str, list[Poll]] = {}
    for p in polls:
        by_provider.setdefault(p.provider, []).append(p)
    spells: list[Spell] = []
    for provider, mine in sorted(by_provider.items()):
        mine.sort(key=lambda p: p.at)
        seen_rentable = False
        start: datetime | None = None
        last_sold: datetime | None = None
        for p in mine:
            if p.state is PollState.RENTABLE:
                if start is not None:
                    spells.append(Spell(provider, start, _hours(p.at - start), ended=True))
                start, last_sold, seen_rentable = None, None, True
            elif p.state is PollState.SOLD_OUT:
                if start is None and seen_rentable:
                    start = p.at
                last_sold = p.at
            else:
                if start is not None and last_sold is not None and last_sold > start:
                    spells.append(Spell(provider, start, _hours(last_sold - start), ended=False))
                start, last_sold, seen_rentable = None, None, False
        if start is not None and last_sold is not None and last_sold > start:
            spells.append(Spell(provider, start, _hours(last_sold - start), ended=False, open=True))
        elif start is not None:  # sold out at the last poll only: running, of no length yet
            spells.append(Spell(provider, start, 0.0, ended=False, open=True))
    return spells


def _hours(delta: timedelta) -> float:
    return delta.total_seconds() / 3600


@dataclass(frozen=True)
class Survival:
    """A Kaplan-Meier curve: S(t), the share of spells still sold out t hours in."""

    times: tuple[float, ...]
    """Restock times, ascending (distinct)."""
    values: tuple[float, ...]
    """S just after each of them."""
    spells: int

    def at(self, hours: float) -> float:
        i = bisect.bisect_right(self.times, hours)
        return 1.0 if i == 0 else self.values[i - 1]


def kaplan_meier(spells: Sequence[Spell]) -> Survival:
    ordered = sorted(spells, key=lambda s: (s.hours, not s.ended))
    at_risk = len(ordered)
    times: list[float] = []
    values: list[float] = []
    s = 1.0
    i = 0
    while i < len(ordered):
        t = ordered[i].hours
        ended = left = 0
        while i < len(ordered) and ordered[i].hours == t:
            ended += ordered[i].ended
            left += 1
            i += 1
        if ended:
            s *= 1 - ended / at_risk
            times.append(t)
            values.append(s)
        at_risk -= left
    return Survival(tuple(times), tuple(values), len(ordered))


@dataclass(frozen=True)
class Chance:
    hours: int
    p: float | None
    """P(rentable within ``hours``); None: not enough history behind it."""
    spells: int
    """Spells whose outcome at this horizon is known (restocked by then, or lasted that long)."""


@dataclass(frozen=True)
class Forecast:
    """The restock forecast for one card (a provider, or all pooled) at one moment."""

    chances: tuple[Chance, ...]
    median_wait_h: float | None
    """Half the spells like this one restocked by then; None: not within the history, or
    not enough history."""
    spells: int
    """Every spell behind the figures (the pooled level)."""
    provider_spells: int | None
    """Of them at the provider asked (None: no provider asked)."""
    hour_spells: int
    """Of them (at the provider, if asked) that began within WINDOW_H of this hour of week."""
    hour_of_week: int
    elapsed_h: float = 0.0
    """How long the card has been sold out already (the figures are from now on)."""
    longest_h: float = 0.0
    """The longest spell observed (a median beyond it is "over N h")."""

    @property
    def enough(self) -> bool:
        return self.spells >= MIN_SPELLS

    def within(self, hours: int) -> float | None:
        return next((c.p for c in self.chances if c.hours == hours), None)

    def wait_text(self) -> str:
        """ "expected wait about 3 h, from 41 sold-out spells" or "not enough history (...)"."""
        if not self.enough:
            return not_enough(self.spells)
        if self.median_wait_h is None:
            wait = f"expected wait over {_h(self.longest_h)}"
        else:
            wait = f"expected wait about {_h(self.median_wait_h)}"
        said = f"{wait}, from {self.spells} sold-out spell{'s' * (self.spells != 1)}"
        if self.provider_spells is None or self.provider_spells == self.spells:
            return said
        # At one provider the figure blends its own spells with every provider's: say how
        # many are its own (a sentence "at vastai ... from 317 spells" when vastai had 17).
        return f"{said} of every provider ({self.provider_spells} at this one)"

    def chances_text(self) -> str:
        """ "35% within 1 h, 70% within 6 h, 95% within 24 h" (- where too few spells)."""
        return ", ".join(
            f"{'-' if c.p is None else f'{c.p:.0%}'} within {c.hours} h" for c in self.chances
        )


def not_enough(spells: int) -> str:
    return (
        f"not enough history ({spells} sold-out spell{'s' * (spells != 1)}; "
        f"a forecast needs {MIN_SPELLS})"
    )


def _h(hours: float) -> str:
    number, unit = wait_figure(hours)
    return f"{number} {unit}"


def wait_figure(hours: float) -> tuple[str, str]:
    """A wait as every surface rounds it, (number, unit): minutes below an hour ("2",
    "min"), one decimal below ten hours ("1.5", "h"), whole hours above ("15", "h")."""
    if hours < 1:
        return str(max(1, round(hours * 60))), "min"
    return (f"{hours:.0f}" if hours >= 10 else f"{hours:.1f}".rstrip("0").rstrip(".")), "h"


def _near(a: int, b: int, size: int) -> bool:
    d = abs(a - b) % size
    return min(d, size - d) <= WINDOW_H


@dataclass
class RestockModel:
    """Spells fitted once; ``forecast`` per provider and hour of week (curves cached).

    ``prior``: how many spells the level above is worth; None: chosen on the spells
    themselves (``choose_prior``)."""

    spells: Sequence[Spell]
    prior: float | None = None
    _curves: dict[tuple[str | None, int | None, int | None], Survival] = field(
        default_factory=dict, repr=False
    )

    def __post_init__(self) -> None:
        # A censored spell of no length (sold out at the last poll only) says nothing yet.
        self.spells = [s for s in self.spells if s.ended or s.hours > 0]
        if self.prior is None:
            self.prior = choose_prior(self.spells)

    def _km(self, provider: str | None, hod: int | None, how: int | None) -> Survival:
        key = (provider, hod, how)
        if key not in self._curves:
            self._curves[key] = kaplan_meier(
                [
                    s
                    for s in self.spells
                    if (provider is None or s.provider == provider)
                    and (hod is None or _near(s.start.hour, hod, 24))
                    and (how is None or _near(s.hour_of_week, how, 168))
                ]
            )
        return self._curves[key]

    def levels(self, provider: str | None, how: int | None) -> list[Survival]:
        """The curves from the pooled one down to the most specific asked."""
        out = [self._km(None, None, None)]
        if provider is not None:
            out.append(self._km(provider, None, None))
        if how is not None:
            out.append(self._km(provider, how % 24, None))
            out.append(self._km(provider, None, how))
        return out

    def survival(
        self, provider: str | None, how: int | None, prior: float | None = None
    ) -> Callable[[float], float]:
        """The blended curve: each level leans on the one above, n / (n + prior)."""
        levels = self.levels(provider, how)
        k = self.prior if prior is None else prior
        assert k is not None
        weights = [s.spells / (s.spells + k) if k else 1.0 for s in levels]

        def s_of(hours: float) -> float:
            value = levels[0].at(hours)
            for level, w in zip(levels[1:], weights[1:], strict=True):
                value = w * level.at(hours) + (1 - w) * value
            return value

        return s_of

    def forecast(
        self, provider: str | None, at: datetime, *, elapsed_h: float = 0.0, pooled: bool = False
    ) -> Forecast:
        """From ``at`` on, for a card sold out ``elapsed_h`` hours already (0: just sold
        out). ``pooled``: the base rate (the pooled curve only, no provider or hour)."""
        how = None if pooled else hour_of_week(at)
        curve = self.survival(None if pooled else provider, how)
        levels = self.levels(None if pooled else provider, how)
        pool = self.spells
        since = curve(elapsed_h)
        chances = []
        for h in HORIZONS_H:
            known = sum(
                1 for s in pool if s.hours >= elapsed_h and (s.hours >= elapsed_h + h or s.ended)
            )
            p = None
            if known >= MIN_SPELLS and since > 0:
                p = min(1.0, max(0.0, 1 - curve(elapsed_h + h) / since))
            chances.append(Chance(h, p, known))
        median = None
        if len(pool) >= MIN_SPELLS and since > 0:
            for t in levels[0].times:
                if t > elapsed_h and curve(t) / since <= 0.5:
                    median = t - elapsed_h
                    break
        return Forecast(
            chances=tuple(chances),
            median_wait_h=median,
            spells=len(pool),
            provider_spells=None if pooled or provider is None else levels[1].spells,
            hour_spells=levels[-1].spells if how is not None else len(pool),
            hour_of_week=hour_of_week(at),
            elapsed_h=elapsed_h,
            longest_h=max((s.hours for s in pool), default=0.0),
        )


def _split(spells: Sequence[Spell], split: float) -> tuple[list[Spell], list[Spell]]:
    """The spells begun before the split time (cut at it: as known then), and the rest."""
    first = min(s.start for s in spells)
    last = max(s.start + timedelta(hours=s.hours) for s in spells)
    cut = first + (last - first) * split
    train = []
    for s in spells:
        if s.start >= cut:
            continue
        if s.start + timedelta(hours=s.hours) > cut:
            s = Spell(s.provider, s.start, _hours(cut - s.start), ended=False)
        train.append(s)
    return train, [s for s in spells if s.start >= cut]


def _brier(
    model: RestockModel, test: Sequence[Spell], priors: Sequence[float | None]
) -> tuple[list[float], int]:
    """Summed squared errors of the chances within HORIZONS_H, per prior (None: the pooled
    curve alone, the base rate), over the (spell, horizon) pairs whose outcome is known."""
    sums = [0.0] * len(priors)
    scored = 0
    curves: dict[tuple[str, int], list[Callable[[float], float]]] = {}
    for s in test:
        key = (s.provider, s.hour_of_week)
        if key not in curves:
            curves[key] = [
                model.survival(None, None, 0.0) if k is None else model.survival(*key, k)
                for k in priors
            ]
        for h in HORIZONS_H:
            if not s.ended and s.hours < h:
                continue  # censored before the horizon: its outcome is unknown
            y = 1.0 if s.ended and s.hours <= h else 0.0
            for i, curve in enumerate(curves[key]):
                sums[i] += (1 - curve(h) - y) ** 2
            scored += 1
    return sums, scored


PRIORS = (4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 1e9)
"""The weights ``choose_prior`` tries (1e9: the pooled curve, in effect)."""


def choose_prior(spells: Sequence[Spell], split: float = SPLIT) -> float:
    """How much the level above weighs, chosen on the spells themselves: split them in
    time, and keep the prior whose forecast scores best on the later part (ties: the larger,
    the plainer). With too few spells to tell, PRIOR_SPELLS. A history without habits so
    chooses to lean on the pooled curve, one with strong ones to follow them."""
    if len(spells) < 4 * MIN_SPELLS:
        return PRIOR_SPELLS
    train, test = _split(spells, split)
    if len(train) < 2 * MIN_SPELLS or len(test) < MIN_SPELLS:
        return PRIOR_SPELLS
    sums, scored = _brier(RestockModel(train, PRIOR_SPELLS), test, PRIORS)
    if not scored:
        return PRIOR_SPELLS
    best = min(sums)
    return max(k for k, total in zip(PRIORS, sums, strict=True) if total <= best + 1e-12)


@dataclass(frozen=True)
class Calibration:
    """A history split in time: fitted on the first part, scored on the rest."""

    forecast_brier: float | None
    """Mean squared error of the forecast's chances (None: nothing to score)."""
    base_brier: float | None
    """The same for the base rate: the pooled curve, no hour of week, no provider."""
    train_spells: int
    test_spells: int
    scored: int
    """(spell, horizon) pairs scored: those whose outcome is known."""
    prior: float | None = None
    """The prior the fit chose on the first part."""


def calibrate(
    spells: Sequence[Spell], split: float = SPLIT, prior: float | None = None
) -> Calibration:
    """Fit on the spells begun before the split time (cut at it, as known then; the prior
    chosen on them alone unless given), score the chances within 1, 6 and 24 h of each
    spell begun after it, beside the base rate's."""
    spells = [s for s in spells if s.ended or s.hours > 0]
    if not spells:
        return Calibration(None, None, 0, 0, 0)
    train, test = _split(spells, split)
    model = RestockModel(train, prior)
    (ours, base), scored = _brier(model, test, (model.prior, None))
    if not scored:
        return Calibration(None, None, len(train), len(test), 0, model.prior)
    return Calibration(
        round(ours / scored, 4), round(base / scored, 4), len(train), len(test), scored,
        model.prior,
    )  # fmt: skip


__all__ = [
    "HORIZONS_H",
    "MIN_SPELLS",
    "PRIOR_SPELLS",
    "Calibration",
    "Chance",
    "Forecast",
    "Poll",
    "PollState",
    "RestockModel",
    "Spell",
    "Survival",
    "calibrate",
    "choose_prior",
    "hour_of_week",
    "kaplan_meier",
    "not_enough",
    "spells_from_polls",
]
