"""Times from other machines, checked against the one clock the fan-out controls.

A run's place in history is its ``started_at`` (``warehouse.load`` orders runs by it, and the
latest look is the run started last). In a fan-out the crawler machines stamp those times
with their own clocks: a clock two hours ahead made an old run the latest look, so an offer a
later run saw gone stayed ranked in stock, and a failed run from it hid newer good data.

The fan-out knows when it sent the jobs out and when it fetched their outcomes, by its own
clock. A run that claims to have started before the jobs were sent, or to have finished after
its outcome was fetched, was timed by a clock that is off: its times cannot place it in
history. It is stored as a failed run in the fan-out's own window (the look happened, nothing
it saw can be placed), its feed is kept on the shared storage, and the message says which
machine's clock to set right.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from flows.crawl import CrawlOutcome

CLOCK_TOLERANCE = timedelta(seconds=60)
"""How far a crawler's clock may be off before its times are refused: NTP keeps clocks
within a fraction of a second, so a minute is slack, while a skew of minutes already
reorders polls five minutes apart."""


def clock_error(outcome: CrawlOutcome, sent: datetime, fetched: datetime) -> str | None:
    """Why ``outcome``'s times cannot be those of a job sent at ``sent`` whose outcome was
    fetched at ``fetched`` (the fan-out's clock), or None when they can."""
    early = sent - outcome.started_at
    late = outcome.finished_at - fetched
    if early > CLOCK_TOLERANCE:
        off = f"{_seconds(early)} s behind"
    elif late > CLOCK_TOLERANCE:
        off = f"{_seconds(late)} s ahead"
    else:
        return None
    return (
        f"crawler clock about {off} the loader's (run stamped "
        f"{outcome.started_at:%Y-%m-%d %H:%M:%S}Z, sent {sent:%H:%M:%S}Z, fetched "
        f"{fetched:%H:%M:%S}Z): not placed in history, feed kept on the shared storage; "
        "set that machine's clock right (NTP)"
    )


def window_start(run_id: str, sent: datetime) -> datetime:
    """When the window of ``run_id``'s outcomes opens: the time its id was minted
    (``flows.nightly.new_run_id`` stamps it first, by the fan-out's clock), or ``sent`` for
    an id given by hand. A fan-out resumed under the same id finds outcomes crawled before
    this attempt sent anything: they are on time for the id, not behind."""
    try:
        minted = datetime.strptime(run_id[:16], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    except ValueError:
        return sent
    return min(minted, sent)


def refuse_untimely(
    outcomes: list[CrawlOutcome], sent: datetime, fetched: datetime
) -> list[CrawlOutcome]:
    """``outcomes``, each one timed by a clock that is off turned into a refused run in the
    window [sent, fetched] (see the module docstring)."""
    checked = []
    for outcome in outcomes:
        why = clock_error(outcome, sent, fetched)
        if why is not None:
            outcome = replace(outcome, started_at=sent, finished_at=fetched, refused=why)
        checked.append(outcome)
    return checked


def _seconds(delta: timedelta) -> int:
    return int(delta.total_seconds())
