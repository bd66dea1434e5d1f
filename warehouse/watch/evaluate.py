"""Run the alert state machine over the good runs the watches have not seen yet.

For each watch and each provider it covers, the provider's ``ok`` and ``partial`` runs
since the watch's cursor are applied in order (older polls first, each exactly once); the new states, the
cursors and the outbox rows of the alerts they fire are written in ONE transaction, so a
crash leaves neither a state change without its notification nor the reverse, and the
next evaluation simply redoes the work.

A watch only reads runs that started after it was created; its first good run of a
provider is its baseline: offers in stock then were in stock before the watch existed,
which is not a transition (``machine.first_state``).

No alert from drift (rule of truth 7): a layout_changed or failed run is never read; a
partial run gives readings for the offers it saw, and ABSENT for those it closed (it read
their listing whole and they were no longer there: rule 10). Only a confirmed absence is
absence: what a run kept stale, and everything a run that quarantined an item without a
key (``RunRef.blind``) does not list, gets no reading at all (not ABSENT: the run could not
see it), so an offer a run did not see never fires, never counts as a confirming poll and
never re-arms. An offer the warehouse turned sold out (no longer listed where the provider
lists only capacity) is read sold out, like any other.

A pair's first state comes from a look that confirmed the offer: an offer the watch never
confirmed since it began (kept stale at its first poll, or closed only by blind runs) is
at its baseline when first seen, so its first confirmed look sets the phase silently
(``runs.confirmed_before``); only an offer whose absence a run confirmed is new when listed.

An alert is announced only when it is sent (or pending delivery). An alert from a run more
than STALE_AFTER old is recorded expired, not sent, and does not use up the transition:
the pair stays one in-stock poll from firing (ARRIVING), so the next poll that confirms the
card rentable announces it, and a poll that finds it gone does not.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import duckdb

from gpurent_core.fx import FxTable
from warehouse.costed import fx_table_for
from warehouse.lake import leased_transaction
from warehouse.watch.criteria import Watch, assess
from warehouse.watch.machine import (
    AlertKind,
    PairState,
    Phase,
    Reading,
    Signal,
    Step,
    advance,
    first_state,
)
from warehouse.watch.message import compose, cost_for_message
from warehouse.watch.outbox import Notification, enqueue
from warehouse.watch.runs import (
    RunRef,
    confirmed_before,
    good_runs_after,
    kept_stale,
    offers_of_run,
)
from warehouse.watch.store import list_watches

log = logging.getLogger(__name__)

# An alert from a run that finished longer ago than this is recorded as expired, not sent:
# a poller that was down for hours should not announce a card that freed up yesterday.
STALE_AFTER = timedelta(hours=1)

_PairKey = tuple[int, str, str]  # watch_id, provider, offer_key


@dataclass(frozen=True)
class Alert:
    """A confirmed transition that fired."""

    watch_id: int
    provider: str
    offer_key: str
    kind: AlertKind
    run_id: str
    title: str
    body: str
    stale: bool = False

    @property
    def idempotency_key(self) -> str:
        return f"w{self.watch_id}/{self.provider}/{self.offer_key}/{self.kind.value}/{self.run_id}"


@dataclass
class Evaluation:
    """What one evaluation did."""

    runs: int = 0
    """(watch, run) pairs applied."""
    alerts: list[Alert] = field(default_factory=list)
    rearmed: int = 0
    queued: int = 0
    """Outbox rows written (one per alert per destination; expired ones included)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "runs_evaluated": self.runs,
            "alerts": [
                {
                    "watch_id": a.watch_id,
                    "provider": a.provider,
                    "offer_key": a.offer_key,
                    "kind": a.kind.value,
                    "run_id": a.run_id,
                    "title": a.title,
                    "stale": a.stale,
                }
                for a in self.alerts
            ],
            "rearmed": self.rearmed,
            "queued": self.queued,
        }


@dataclass
class _Changed:
    state: PairState
    run_id: str
    moved_at: datetime | None
    """Finish time of the run that last moved the phase in this evaluation (None: none did)."""
    fired_at: datetime | None


# No row means "armed, last seen absent" for an offer a run since the watch began confirmed
# (first_state of a pair after the baseline; an offer never confirmed since then starts at
# its baseline instead: runs.confirmed_before), so a pair that returns to that state is
# deleted: the table holds only pairs worth remembering.
_FORGETTABLE = PairState(Phase.ARMED, Signal.ABSENT)


class _States:
    """The pairs' states, loaded once, with the ones changed by this evaluation."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        rows = con.execute(
            "SELECT watch_id, provider, offer_key, phase, last_out FROM watch_offer_states"
        ).fetchall()
        self.states: dict[_PairKey, PairState] = {}
        self._groups: dict[tuple[int, str], set[str]] = {}
        for w, p, k, ph, lo in rows:
            self._put((int(w), str(p), str(k)), PairState(Phase(ph), Signal(lo) if lo else None))
        self.changed: dict[_PairKey, _Changed] = {}
        self._expired: set[_PairKey] = set()

    def expired_once(self, key: _PairKey) -> bool:
        """Whether ``key`` already had an expired alert in this evaluation (recorded once:
        a backlog of old polls with the card in stock is one lost announcement, not many);
        marks it."""
        seen = key in self._expired
        self._expired.add(key)
        return seen

    def _put(self, key: _PairKey, state: PairState) -> None:
        self.states[key] = state
        self._groups.setdefault((key[0], key[1]), set()).add(key[2])

    def offer_keys(self, watch_id: int, provider: str) -> list[str]:
        return sorted(self._groups.get((watch_id, provider), ()))

    def apply(self, key: _PairKey, start: PairState, step: Step, run: RunRef) -> None:
        previous = self.changed.get(key)
        moved = step.state.phase is not start.phase or key not in self.states
        self._put(key, step.state)
        self.changed[key] = _Changed(
            state=step.state,
            run_id=run.run_id,
            moved_at=run.finished_at if moved else (previous.moved_at if previous else None),
            fired_at=run.finished_at if step.fired else (previous.fired_at if previous else None),
        )

    def write(self, con: duckdb.DuckDBPyConnection) -> None:
        for (watch_id, provider, offer_key), ch in self.changed.items():
            if ch.state == _FORGETTABLE:
                con.execute(
                    "DELETE FROM watch_offer_states"
                    " WHERE watch_id = ? AND provider = ? AND offer_key = ?",
                    [watch_id, provider, offer_key],
                )
                continue
            con.execute(
                """
                MERGE INTO watch_offer_states AS t
                USING (
                    SELECT ?::INTEGER AS watch_id, ?::VARCHAR AS provider,
                           ?::VARCHAR AS offer_key, ?::VARCHAR AS phase,
                           ?::VARCHAR AS last_out, ?::VARCHAR AS run_id,
                           ?::TIMESTAMPTZ AS moved_at, ?::TIMESTAMPTZ AS fired_at
                ) AS s
                ON t.watch_id = s.watch_id AND t.provider = s.provider
                    AND t.offer_key = s.offer_key
                WHEN MATCHED THEN UPDATE SET
                    phase = s.phase,
                    last_out = s.last_out,
                    run_id = s.run_id,
                    changed_at = coalesce(s.moved_at, t.changed_at),
                    fired_at = coalesce(s.fired_at, t.fired_at)
                WHEN NOT MATCHED THEN INSERT (
                    watch_id, provider, offer_key, phase, last_out, run_id, changed_at, fired_at
                ) VALUES (
                    s.watch_id, s.provider, s.offer_key, s.phase, s.last_out, s.run_id,
                    s.moved_at, s.fired_at
                )
                """,
                [
                    watch_id, provider, offer_key, ch.state.phase.value,
                    ch.state.last_out.value if ch.state.last_out else None,
                    ch.run_id, ch.moved_at, ch.fired_at,
                ],
            )  # fmt: skip


def _cursors(con: duckdb.DuckDBPyConnection) -> dict[tuple[int, str], RunRef]:
    rows = con.execute(
        "SELECT watch_id, provider, run_started_at, run_finished_at, run_id FROM watch_cursors"
    ).fetchall()
    return {(int(w), str(p)): RunRef(s, f, str(r)) for w, p, s, f, r in rows}


def _providers_with_runs(con: duckdb.DuckDBPyConnection) -> list[str]:
    return [str(p) for (p,) in con.execute("SELECT DISTINCT provider FROM crawl_runs").fetchall()]


def evaluate_watches(
    con: duckdb.DuckDBPyConnection,
    *,
    now: datetime,
    display_currency: str = "CNY",
    fx: FxTable | None = None,
    watches: Iterable[Watch] | None = None,
) -> Evaluation:
    """Apply every unevaluated good run to every watch; queue the alerts that fire.

    Must be called outside an open transaction (it owns BEGIN / COMMIT, rolling back and
    re-raising on any error).
    """
    chosen = list(watches) if watches is not None else list_watches(con)
    result = Evaluation()
    if not chosen:
        return result
    fx = fx or fx_table_for(con)

    with leased_transaction(con):
        # On a lake, two pollers evaluating at once would both queue each alert (no keys
        # there) with ids from the same sequence: the second to commit is refused, and its
        # caller's retry (``warehouse.lake.retrying_writes``) finds the runs evaluated.
        states = _States(con)
        cursors = _cursors(con)
        new_cursors: dict[tuple[int, str], RunRef] = {}
        notifications: list[Notification] = []
        for provider in sorted(_providers_with_runs(con)):
            pending = {
                watch.watch_id: set(
                    good_runs_after(
                        con,
                        provider,
                        after=cursors.get((watch.watch_id, provider)),
                        not_before=watch.created_at,
                    )
                )
                for watch in chosen
                if watch.covers_provider(provider)
            }
            # Run by run, oldest first, each read once for every watch that still needs it
            # (a backlog after downtime is never held in memory all at once).
            for run in sorted(set().union(*pending.values())):
                offers = offers_of_run(con, provider, run.run_id)
                unseen = kept_stale(con, provider, run.run_id)
                for watch in chosen:
                    if run not in pending.get(watch.watch_id, ()):
                        continue
                    key = (watch.watch_id, provider)
                    baseline = key not in cursors and key not in new_cursors
                    unconfirmed: set[str] = set()
                    if not baseline:
                        new = {
                            str(o["offer_key"])
                            for o in offers
                            if (watch.watch_id, provider, str(o["offer_key"])) not in states.states
                            and watch.matches(o)
                        }
                        unconfirmed = new - confirmed_before(
                            con, provider, new, since=watch.created_at, before=run
                        )
                    for alert in _apply_run(
                        watch, provider, run, offers, states,
                        baseline=baseline, fx=fx, display_currency=display_currency,
                        now=now, result=result, unseen=unseen, unconfirmed=unconfirmed,
                    ):  # fmt: skip
                        result.alerts.append(alert)
                        notifications.extend(_notifications(watch, alert))
                    new_cursors[key] = run
                    result.runs += 1
        states.write(con)
        for (watch_id, provider), run in new_cursors.items():
            con.execute(
                """
                MERGE INTO watch_cursors AS t
                USING (
                    SELECT ?::INTEGER AS watch_id, ?::VARCHAR AS provider, ?::VARCHAR AS run_id,
                           ?::TIMESTAMPTZ AS run_started_at, ?::TIMESTAMPTZ AS run_finished_at,
                           ?::TIMESTAMPTZ AS evaluated_at
                ) AS s
                ON t.watch_id = s.watch_id AND t.provider = s.provider
                WHEN MATCHED THEN UPDATE SET
                    run_id = s.run_id, run_started_at = s.run_started_at,
                    run_finished_at = s.run_finished_at, evaluated_at = s.evaluated_at
                WHEN NOT MATCHED THEN INSERT (
                    watch_id, provider, run_id, run_started_at, run_finished_at, evaluated_at
                ) VALUES (
                    s.watch_id, s.provider, s.run_id, s.run_started_at, s.run_finished_at,
                    s.evaluated_at
                )
                """,
                [watch_id, provider, run.run_id, run.started_at, run.finished_at, now],
            )
        result.queued = enqueue(con, notifications, now=now)
    return result


def _apply_run(
    watch: Watch,
    provider: str,
    run: RunRef,
    offers: list[dict[str, Any]],
    states: _States,
    *,
    baseline: bool,
    fx: FxTable,
    display_currency: str,
    now: datetime,
    result: Evaluation,
    unseen: set[str] | frozenset[str] = frozenset(),
    unconfirmed: set[str] | frozenset[str] = frozenset(),
) -> list[Alert]:
    """One good run applied to one watch: a reading for every pair it saw; the pairs it no
    longer lists read absent (the run closed them), except those it kept stale (``unseen``)
    and every one when the run is blind (``RunRef.blind``), which it leaves as they were.
    ``unconfirmed``: offers listed now that no run since the watch began confirmed: they
    start at their baseline, as at the watch's first poll."""
    alerts: list[Alert] = []
    listed: set[str] = set()
    expired = now - run.finished_at > STALE_AFTER
    for offer in offers:
        offer_key = str(offer["offer_key"])
        listed.add(offer_key)
        key = (watch.watch_id, provider, offer_key)
        known = states.states.get(key)
        if known is None and not watch.matches(offer):
            continue  # never concerned this watch: no state to keep
        assessment = assess(watch, offer, fx=fx)
        start = known or first_state(baseline=baseline or offer_key in unconfirmed)
        step = advance(start, assessment.reading)
        fired = step.fired
        if fired is not None and expired:
            # Not announced: the pair stays one in-stock poll from firing, so the next
            # poll that confirms it rentable announces it (and one that does not, does not).
            step = Step(PairState(Phase.ARRIVING, step.state.last_out))
        states.apply(key, start, step, run)
        result.rearmed += step.rearmed
        if fired is not None and not (expired and states.expired_once(key)):
            cost = cost_for_message(watch, offer, display_currency=display_currency, fx=fx)
            message = compose(watch, offer, fired, cost, seen_at=run.finished_at)
            alerts.append(
                Alert(
                    watch_id=watch.watch_id,
                    provider=provider,
                    offer_key=offer_key,
                    kind=fired,
                    run_id=run.run_id,
                    title=message.title,
                    body=message.body,
                    stale=expired,
                )
            )
    if run.blind:
        return alerts  # no absence it saw is confirmed: nothing it does not list moves
    for offer_key in states.offer_keys(watch.watch_id, provider):
        if offer_key in listed or offer_key in unseen:
            continue  # unseen is not absent: the run could not see it (stale)
        key = (watch.watch_id, provider, offer_key)
        start = states.states[key]
        step = advance(start, Reading(Signal.ABSENT))
        if step.state != start:
            states.apply(key, start, step, run)
        result.rearmed += step.rearmed
    return alerts


def _notifications(watch: Watch, alert: Alert) -> list[Notification]:
    return [
        Notification(
            idempotency_key=alert.idempotency_key,
            target_seq=seq,
            watch_id=watch.watch_id,
            kind=alert.kind.value,
            provider=alert.provider,
            offer_key=alert.offer_key,
            run_id=alert.run_id,
            title=alert.title,
            body=alert.body,
            status="expired" if alert.stale else "pending",
        )
        for seq in range(len(watch.notify_urls))
    ]
