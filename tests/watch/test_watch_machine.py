"""The alert state machine: the rules of warehouse/watch/machine.py, example by example, then
against an independent reference model (hypothesis state machine) and as properties."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from warehouse.watch.machine import (
    AlertKind,
    PairState,
    Phase,
    Reading,
    Signal,
    advance,
    first_state,
)

IN = Reading(Signal.IN)
IN_COVERED = Reading(Signal.IN, covers=True)
SOLD = Reading(Signal.OUT_STOCK)
DEAR = Reading(Signal.OUT_PRICE)
GONE = Reading(Signal.ABSENT)
UNKNOWN = Reading(Signal.UNKNOWN)
OUTS = [SOLD, DEAR, GONE]


def run(
    readings: list[Reading], *, baseline: bool = False
) -> tuple[list[AlertKind | None], list[bool]]:
    """Fired kinds (None: nothing) and re-arm flags, one per reading."""
    state = first_state(baseline=baseline)
    fired: list[AlertKind | None] = []
    rearmed: list[bool] = []
    for reading in readings:
        step = advance(state, reading)
        state = step.state
        fired.append(step.fired)
        rearmed.append(step.rearmed)
    return fired, rearmed


def fires(readings: list[Reading], *, baseline: bool = False) -> list[int]:
    return [i for i, k in enumerate(run(readings, baseline=baseline)[0]) if k is not None]


# -- the rules, by example ---------------------------------------------------------------


def test_a_covering_free_count_confirms_at_once() -> None:
    assert fires([SOLD, IN_COVERED]) == [1]


def test_without_a_covering_count_the_second_good_poll_confirms() -> None:
    assert fires([SOLD, IN, IN]) == [2]


def test_one_in_stock_poll_between_sold_out_ones_never_fires() -> None:
    assert fires([SOLD, IN, SOLD, IN, SOLD]) == []


def test_unknown_is_neither_in_stock_nor_sold_out() -> None:
    # Unknown between two in-stock readings breaks the streak: not two consecutive polls.
    assert fires([SOLD, IN, UNKNOWN, IN]) == []
    # Unknown after a fire does not re-arm, and does not count towards re-arming.
    assert fires([SOLD, IN_COVERED, UNKNOWN, UNKNOWN, IN_COVERED]) == [1]
    assert fires([SOLD, IN_COVERED, SOLD, UNKNOWN, SOLD, IN_COVERED]) == [1]


def test_fires_once_per_transition() -> None:
    assert fires([SOLD, IN_COVERED, IN_COVERED, IN, IN_COVERED]) == [1]


def test_re_arms_only_after_two_consecutive_out_polls() -> None:
    fired, rearmed = run([SOLD, IN_COVERED, SOLD, SOLD, IN_COVERED])
    assert [i for i, k in enumerate(fired) if k] == [1, 4]
    assert rearmed == [False, False, False, True, False]


def test_a_single_sold_out_with_zero_free_does_not_re_arm() -> None:
    # Free counts flap (2 -> 0 -> 2): one sold-out poll is not a confirmed sold-out.
    assert fires([SOLD, IN_COVERED, SOLD, IN_COVERED, SOLD, IN_COVERED]) == [1]


def test_absent_counts_as_out() -> None:
    assert fires([GONE, IN_COVERED, GONE, GONE, IN_COVERED]) == [1, 4]


def test_a_new_offer_was_absent_so_it_may_fire() -> None:
    assert first_state(baseline=False) == PairState(Phase.ARMED, Signal.ABSENT)
    assert fires([IN_COVERED]) == [0]


def test_at_the_watch_baseline_in_stock_is_not_a_transition() -> None:
    assert fires([IN_COVERED, IN_COVERED], baseline=True) == []
    assert fires([SOLD, IN_COVERED], baseline=True) == [1]
    # Unknown at the baseline: the first known reading sets the phase silently.
    assert fires([UNKNOWN, IN_COVERED, IN], baseline=True) == []
    assert fires([UNKNOWN, SOLD, IN_COVERED], baseline=True) == [2]


def test_price_drop_versus_restock() -> None:
    kinds, _ = run([DEAR, IN_COVERED])
    assert kinds == [None, AlertKind.PRICE_DROP]
    kinds, _ = run([DEAR, SOLD, IN_COVERED])
    assert kinds[-1] is AlertKind.RESTOCK
    # Back over the cap twice re-arms; a second drop fires again.
    kinds, rearmed = run([SOLD, IN_COVERED, DEAR, DEAR, IN_COVERED])
    assert kinds == [None, AlertKind.RESTOCK, None, None, AlertKind.PRICE_DROP]
    assert rearmed[3]


def test_a_covering_reading_must_be_in() -> None:
    with pytest.raises(ValueError):
        Reading(Signal.OUT_STOCK, covers=True)
    with pytest.raises(ValueError):
        PairState(Phase.ARMED, Signal.IN)


# -- an independent reference model ------------------------------------------------------


@dataclass
class Reference:
    """The rule of truth written as streak counters (not phases), to check ``advance``."""

    armed: bool
    decided: bool
    in_streak: int = 0
    out_streak: int = 0
    last_out: Signal | None = None

    def feed(self, reading: Reading) -> tuple[AlertKind | None, bool]:
        signal = reading.signal
        if signal is Signal.UNKNOWN:
            self.in_streak = self.out_streak = 0
            return None, False
        if not self.decided:  # baseline: the first known reading is the starting point
            self.decided = True
            self.armed = signal.is_out
            self.in_streak, self.out_streak = (0, 1) if signal.is_out else (1, 0)
            if signal.is_out:
                self.last_out = signal
            return None, False
        if signal is Signal.IN:
            self.in_streak += 1
            self.out_streak = 0
            if self.armed and (reading.covers or self.in_streak >= 2):
                self.armed = False
                kind = (
                    AlertKind.PRICE_DROP if self.last_out is Signal.OUT_PRICE else AlertKind.RESTOCK
                )
                return kind, False
            return None, False
        self.last_out = signal
        self.out_streak += 1
        self.in_streak = 0
        if not self.armed and self.out_streak >= 2:
            self.armed = True
            return None, True
        return None, False


readings = st.sampled_from([IN, IN_COVERED, SOLD, DEAR, GONE, UNKNOWN])


class AlertMachine(RuleBasedStateMachine):
    """Random poll sequences: the phase machine and the streak model must agree at every step."""

    @initialize(baseline=st.booleans())
    def start(self, baseline: bool) -> None:
        self.state = first_state(baseline=baseline)
        self.model = Reference(armed=not baseline, decided=not baseline, last_out=None)
        if not baseline:
            self.model.last_out = Signal.ABSENT
        self.fired = 0
        self.rearmed = 0

    @rule(reading=readings)
    def poll(self, reading: Reading) -> None:
        step = advance(self.state, reading)
        expected = self.model.feed(reading)
        assert (step.fired, step.rearmed) == expected, (self.state, reading)
        self.state = step.state
        self.fired += step.fired is not None
        self.rearmed += step.rearmed

    @invariant()
    def fires_never_outrun_rearms(self) -> None:
        assert self.fired <= self.rearmed + 1

    @invariant()
    def armed_phases_match_the_model(self) -> None:
        if self.model.decided:
            armed = self.state.phase in (Phase.ARMED, Phase.ARRIVING)
            assert armed == self.model.armed


TestAlertMachine = AlertMachine.TestCase
TestAlertMachine.settings = settings(max_examples=300, stateful_step_count=40, deadline=None)


# -- properties ----------------------------------------------------------------------------

sequences = st.lists(readings, max_size=40)


@given(sequences, st.booleans())
def test_every_fire_is_confirmed(seq: list[Reading], baseline: bool) -> None:
    for i in fires(seq, baseline=baseline):
        assert seq[i].signal is Signal.IN
        assert seq[i].covers or (i > 0 and seq[i - 1].signal is Signal.IN)


@given(sequences, st.booleans())
def test_between_two_fires_there_is_a_confirmed_sold_out(
    seq: list[Reading], baseline: bool
) -> None:
    hits = fires(seq, baseline=baseline)
    for a, b in itertools.pairwise(hits):
        between = seq[a + 1 : b]
        assert any(x.signal.is_out and y.signal.is_out for x, y in itertools.pairwise(between)), (
            a,
            b,
        )


@given(sequences, st.booleans())
def test_unknown_readings_never_fire_or_re_arm(seq: list[Reading], baseline: bool) -> None:
    fired, rearmed = run(seq, baseline=baseline)
    for reading, kind, again in zip(seq, fired, rearmed, strict=True):
        if reading.signal is Signal.UNKNOWN:
            assert kind is None and not again


@given(sequences, st.lists(st.integers(min_value=0, max_value=40), max_size=6))
def test_unknown_polls_never_add_alerts(seq: list[Reading], spots: list[int]) -> None:
    noisy = list(seq)
    for spot in sorted(spots, reverse=True):
        noisy.insert(min(spot, len(noisy)), UNKNOWN)
    assert len(fires(noisy)) <= len(fires(seq))


@given(st.lists(st.sampled_from([IN, IN_COVERED]), min_size=1, max_size=20), st.sampled_from(OUTS))
def test_flapping_after_a_fire_never_fires_again(ins: list[Reading], out: Reading) -> None:
    flapping = [SOLD, IN_COVERED]
    for reading in ins:
        flapping += [out, reading]
    assert fires(flapping) == [1]


@given(st.sampled_from(OUTS), st.sampled_from(OUTS), st.booleans())
def test_two_outs_then_two_ins_always_fire(a: Reading, b: Reading, covered: bool) -> None:
    second = IN_COVERED if covered else IN
    seq = [SOLD, IN_COVERED, a, b, IN, second]
    assert fires(seq)[-1] in (4, 5)
