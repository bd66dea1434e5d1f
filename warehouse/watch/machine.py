"""The alert state machine of one (watch, offer) pair: pure, so every rule is unit-tested.

Rule of truth 7: alerts fire on confirmed transitions only, once per transition, and re-arm
only after a confirmed sold-out. Precisely:

Readings. Each *good poll* (an ``ok`` or ``partial`` provider run that fed the latest state;
failed, auth_required and layout_changed runs never reach this module, and a partial run
gives no reading for an offer it kept stale without seeing it) gives the pair one reading:

- ``IN``: the offer is listed, rentable (in_stock or low), can supply the watch's cards and,
  when the watch has a price cap, its true price is at or under the cap. ``covers`` says
  whether the provider's free-card count is known and at least the watch's card count.
- ``OUT_STOCK``: listed but not rentable for this watch (sold_out, too few cards, or no
  longer matching the watch).
- ``OUT_PRICE``: rentable, but its true price is over the watch's cap.
- ``ABSENT``: not in the run at all (the run closed it: it read the listing whole and the
  offer was no longer there, rule of truth 10).
- ``UNKNOWN``: listed with no readable stock signal, or a price that cannot be compared
  (no FX rate). Unknown is never in stock and never sold out (rule of truth 1).

Phases:

- ``BASELINE``: not yet confirmed since the watch began: seen by the watch's first good poll
  of the provider, or first seen after polls that never confirmed it (kept stale, or not
  listed by runs that set aside an item without a key); its first known reading sets the
  phase silently (nothing was *observed* to change).
- ``ARMED``: confirmed out (or never in) since the watch started: the next confirmed IN fires.
- ``ARRIVING``: armed, and the last good poll read IN without a covering free count.
- ``FIRED``: in, alert sent (or in stock when the watch started): no alert until re-armed.
- ``LEAVING``: fired, and the last good poll read out.

Transitions (``advance``):

- ARMED + IN covering -> FIRED, fire. ARMED + IN not covering -> ARRIVING.
- ARRIVING + IN -> FIRED, fire (the second consecutive good poll in stock confirms it).
- ARRIVING + out -> ARMED. ARRIVING + UNKNOWN -> ARMED (the streak is broken; still armed).
- FIRED + out -> LEAVING. FIRED + IN or UNKNOWN -> FIRED.
- LEAVING + out -> ARMED, re-armed (two consecutive good polls without it in stock).
- LEAVING + IN -> FIRED, no alert (it flapped). LEAVING + UNKNOWN -> FIRED (streak broken).

Why re-arming always takes two polls, even after a positive sold-out with 0 free: free
counts flap (AutoDL hosts go 2 -> 0 -> 2 free as people start and stop instances). If a
single sold-out re-armed and a single covering count fired, every flap would alert again.
Firing stays fast (one poll when the count covers the watch); re-arming is the hysteresis.

The alert kind: ``PRICE_DROP`` when the last out reading before the in-streak was
OUT_PRICE (it was rentable but too dear), else ``RESTOCK`` (sold out, absent, or new).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Signal(StrEnum):
    """What one good poll says about one offer, for one watch."""

    IN = "in"
    """Rentable for the watch: stock, cards and (if capped) price all fit."""
    OUT_STOCK = "out_stock"
    """Listed but not rentable for the watch (sold out, too few cards, no longer matching)."""
    OUT_PRICE = "out_price"
    """Rentable, but dearer than the watch's cap."""
    ABSENT = "absent"
    """Not listed by the provider's good run."""
    UNKNOWN = "unknown"
    """No readable stock signal, or a price that cannot be compared: neither in nor out."""

    @property
    def is_out(self) -> bool:
        return self in (Signal.OUT_STOCK, Signal.OUT_PRICE, Signal.ABSENT)


class Phase(StrEnum):
    """Where a (watch, offer) pair stands; see the module docstring."""

    BASELINE = "baseline"
    """Seen at the watch's start with unknown stock: the first known reading sets the phase."""
    ARMED = "armed"
    """Confirmed out (or never in): the next confirmed in-stock reading fires."""
    ARRIVING = "arriving"
    """Armed, and one good poll read it in stock without a covering free count."""
    FIRED = "fired"
    """In stock and alerted (or in stock when the watch started): not armed."""
    LEAVING = "leaving"
    """Fired, and one good poll read it out: one more out reading re-arms."""


class AlertKind(StrEnum):
    """Why a watch fired."""

    RESTOCK = "restock"
    """The offer came (back) in stock: from sold out, absent, or newly listed."""
    PRICE_DROP = "price_drop"
    """An in-stock offer's true price fell to or under the watch's cap."""


@dataclass(frozen=True)
class Reading:
    """One good poll's view of an offer for a watch."""

    signal: Signal
    covers: bool = False
    """The provider's free-card count is known and at least the watch's card count."""

    def __post_init__(self) -> None:
        if self.covers and self.signal is not Signal.IN:
            raise ValueError("only an IN reading can cover the watch")


@dataclass(frozen=True)
class PairState:
    """The remembered state of a (watch, offer) pair."""

    phase: Phase
    last_out: Signal | None = None
    """The latest out reading (OUT_STOCK, OUT_PRICE or ABSENT), which names the alert kind."""

    def __post_init__(self) -> None:
        if self.last_out is not None and not self.last_out.is_out:
            raise ValueError(f"last_out must be an out signal, got {self.last_out}")


@dataclass(frozen=True)
class Step:
    """The outcome of one reading."""

    state: PairState
    fired: AlertKind | None = None
    rearmed: bool = False


def first_state(*, baseline: bool) -> PairState:
    """The state of a pair the watch has never seen.

    ``baseline``: this is the watch's first good poll of the provider, or no poll since the
    watch began confirmed the offer (``runs.confirmed_before``), so whatever is in stock now
    may have been in stock all along (not a transition). Otherwise a poll confirmed it
    absent: it is new to the provider's listing, hence armed.
    """
    if baseline:
        return PairState(Phase.BASELINE)
    return PairState(Phase.ARMED, Signal.ABSENT)


def _kind(state: PairState) -> AlertKind:
    return AlertKind.PRICE_DROP if state.last_out is Signal.OUT_PRICE else AlertKind.RESTOCK


def advance(state: PairState, reading: Reading) -> Step:
    """Apply one good poll's reading to a pair (the table in the module docstring)."""
    signal = reading.signal
    last_out = signal if signal.is_out else state.last_out
    phase = state.phase

    if phase is Phase.BASELINE:
        if signal is Signal.IN:
            return Step(PairState(Phase.FIRED, last_out))
        if signal.is_out:
            return Step(PairState(Phase.ARMED, last_out))
        return Step(state)

    if phase is Phase.ARMED:
        if signal is Signal.IN:
            if reading.covers:
                return Step(PairState(Phase.FIRED, last_out), fired=_kind(state))
            return Step(PairState(Phase.ARRIVING, last_out))
        return Step(PairState(Phase.ARMED, last_out))

    if phase is Phase.ARRIVING:
        if signal is Signal.IN:
            return Step(PairState(Phase.FIRED, last_out), fired=_kind(state))
        return Step(PairState(Phase.ARMED, last_out))  # out, or unknown: streak broken

    if phase is Phase.FIRED:
        if signal.is_out:
            return Step(PairState(Phase.LEAVING, last_out))
        return Step(PairState(Phase.FIRED, last_out))

    # LEAVING
    if signal.is_out:
        return Step(PairState(Phase.ARMED, last_out), rearmed=True)
    return Step(PairState(Phase.FIRED, last_out))  # back in (a flap), or unknown: streak broken
