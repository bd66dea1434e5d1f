"""What gpurent should say after each poll, worked out from the simulation's truth alone (never
from gpurent's answers), by the rules of truth as ARCHITECTURE.md states them:

* Rule 10: an offer listed readably on an answer that came back is confirmed (fresh, its
  truth as expected). An offer the poll could not read keeps its last confirmed state,
  stale: every offer of a listing that lost an answer it may have been on (a paged listing
  that lost a page: all of them; a split listing that lost a request: those of its part;
  an outage: all), and an offer whose own item was unreadable with its key readable. An
  offer absent from answers that came back whole is gone.
* Rule 11: only the fresh offers are ranked.
* Rule 7 (``WatchOracle``): a watch fires on a confirmed transition sold out/absent -> in
  stock (confirmed by the next poll that sees the offer, or at once by a free count that
  covers the watch's cards), once per transition; it re-arms after two polls that saw the
  offer out (sold out, too few cards, or absent). A poll that did not see an offer gives
  no reading of it. The watch's first poll of a provider is its baseline: what is in stock
  then was in stock before the watch (no transition).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from benchmarks.market_sim.adapters.base import Adapter, Expect, ItemKind
from benchmarks.market_sim.truth import FaultKind, ProviderPoll, answered
from gpurent_core.providers import PER_MACHINE_FREE_COUNTS


class Why(StrEnum):
    """Why an offer is expected stale this poll."""

    OUTAGE = "outage"
    PAGE = "lost page"
    REQUEST = "lost request"
    ITEM = "unreadable item"


@dataclass
class View:
    """What gpurent should hold for one provider after one poll."""

    provider: str
    poll: int
    fresh: dict[str, Expect]
    """Confirmed by this poll: listed readably on an answer that came back."""
    stale: dict[str, tuple[Expect, Why]]
    """Kept from an earlier poll (its last confirmed state), because this poll could not
    read it."""
    absent: set[str]
    """Offers the market listed before and does not list now (vanished)."""
    closed: set[str]
    """Vanished offers whose absence was observable (not among ``stale``): gone."""
    read_any: bool
    """Some answer of the listing came back (the run saw something)."""
    skipped: int
    """Skipped items on the answers that came back."""
    unreadable: int
    """Unreadable items (the listing's own and garbled offers) on answers that came back."""


class Knowledge:
    """One provider's expected state over the polls (the oracle of rules 10 and 11)."""

    def __init__(self, adapter: Adapter) -> None:
        self.adapter = adapter
        self.held: dict[str, Expect] = {}
        """Open offers gpurent should hold (fresh or stale), with their last confirmed state."""
        self.ever: set[str] = set()
        self.variant: dict[str, str] = {}

    def advance(self, listing: ProviderPoll) -> View:
        adapter = self.adapter
        fault = listing.fault
        read = set(answered(adapter.layout, len(listing.pages), fault))
        self.variant.update(listing.variants)
        fresh: dict[str, Expect] = {}
        garbled: set[str] = set()
        skipped = unreadable = 0
        for index, page in enumerate(listing.pages):
            if index not in read:
                continue
            for item in page:
                key = adapter.offer_key(item.offer)
                if item.kind is ItemKind.OFFER:
                    fresh[key] = adapter.expect(item.offer)
                elif item.kind is ItemKind.GARBLED:
                    garbled.add(key)
                    unreadable += 1
                elif item.kind is ItemKind.SKIP:
                    skipped += 1
                else:
                    unreadable += 1

        def unread(key: str) -> Why | None:
            if fault is not None and fault.kind is FaultKind.OUTAGE:
                return Why.OUTAGE
            if fault is not None and fault.kind is FaultKind.PAGE:
                return Why.PAGE  # a paged listing that lost a page vouches for no absence
            if fault is not None and fault.kind is FaultKind.REQUEST:
                lost = adapter.variants[fault.page or 0]
                # Where a catalog that answered lists every offer of the listing, an offer
                # it no longer names is gone whichever request was lost (rule 10).
                listed = key in listing.offers or not adapter.catalog_lists_all
                if self.variant.get(key) == lost and listed:
                    return Why.REQUEST
            return Why.ITEM if key in garbled else None

        stale: dict[str, tuple[Expect, Why]] = {}
        for key, last in list(self.held.items()):
            if key in fresh:
                continue
            why = unread(key)
            if why is not None:
                stale[key] = (last, why)
            else:
                del self.held[key]
        self.held.update(fresh)
        self.ever.update(listing.offers)
        absent = self.ever - set(listing.offers)
        return View(
            provider=listing.provider,
            poll=listing.poll,
            fresh=fresh,
            stale=stale,
            absent=absent,
            closed=absent - set(stale),
            read_any=bool(read),
            skipped=skipped,
            unreadable=unreadable,
        )


# -- rule 7 ---------------------------------------------------------------------------


@dataclass(frozen=True)
class WatchSpec:
    """A watch of the run: every card of at least 1 GB at every provider, ``cards`` cards."""

    watch_id: int
    cards: int


def rentable(expect: Expect, cards: int, *, per_machine: bool = True) -> bool:
    """The offer can be rented now for ``cards`` cards: an offer of N cards is in stock only
    when all N are free (when the provider gives a count); a machine is rented whole.
    ``per_machine``: the provider's free count is of one machine (else of a pool)."""
    if not expect.in_stock:
        return False
    rent: int | None = expect.gpu_count
    if cards > expect.gpu_count:
        # A machine is rented as listed; a per-card offer rents more cards than it lists
        # only where a free count of one machine shows that many
        # (gpurent_core.cost.stock.cards_to_rent: a card price with no count says nothing of
        # how many cards a machine has, nor does a count of a data center's cards).
        shown = per_machine and expect.available is not None and expect.available >= cards
        rent = cards if (expect.per_card and shown) else None
    if rent is None:
        return False
    return expect.available is None or expect.available >= rent


class _Phase(StrEnum):
    BASELINE = "baseline"
    ARMED = "armed"
    ARRIVING = "arriving"
    FIRED = "fired"
    LEAVING = "leaving"


class Cause(StrEnum):
    """What an alert announces: the offer came in stock after being..."""

    SOLD_OUT = "after sold out"
    """...seen out of stock (sold out, or too few cards free for the watch)."""
    ABSENT = "after absent"
    """...seen gone from a listing read whole (it came back under the same key)."""
    NEW = "new offer"
    """...never listed since the watch's baseline (a new offer)."""


Pair = tuple[int, str, str]
"""(watch id, provider, offer key)."""


@dataclass
class WatchOracle:
    """The alerts rule 7 calls for, poll by poll, from the expected views."""

    watches: list[WatchSpec]
    phases: dict[Pair, _Phase] = field(default_factory=dict)
    last_out: dict[Pair, Cause] = field(default_factory=dict)
    started: set[tuple[int, str]] = field(default_factory=set)
    """(watch, provider) pairs whose baseline poll has passed."""

    def advance(self, view: View) -> dict[Pair, Cause]:
        """The alerts due at this poll, with what each announces."""
        fires: dict[Pair, Cause] = {}
        saw = bool(view.fresh)  # a run that stored offers: gpurent's "good" poll
        per_machine = view.provider in PER_MACHINE_FREE_COUNTS
        for watch in self.watches:
            baseline = saw and (watch.watch_id, view.provider) not in self.started
            for key, expect in sorted(view.fresh.items()):
                pair = (watch.watch_id, view.provider, key)
                phase = self.phases.get(pair)
                if phase is None:
                    phase = _Phase.BASELINE if baseline else _Phase.ARMED
                    self.last_out[pair] = Cause.NEW
                in_stock = rentable(expect, watch.cards, per_machine=per_machine)
                covers = expect.available is not None and expect.available >= watch.cards
                phase, fired = _step(phase, in_stock=in_stock, covers=covers)
                self.phases[pair] = phase
                if fired:
                    fires[pair] = self.last_out[pair]
                if not in_stock:
                    self.last_out[pair] = Cause.SOLD_OUT
            for key in sorted(view.closed):
                pair = (watch.watch_id, view.provider, key)
                if pair in self.phases:  # seen absent by a poll that could see it
                    self.phases[pair], _ = _step(self.phases[pair], in_stock=False, covers=False)
                    self.last_out[pair] = Cause.ABSENT
            if saw:
                self.started.add((watch.watch_id, view.provider))
        return fires


def _step(phase: _Phase, *, in_stock: bool, covers: bool) -> tuple[_Phase, bool]:
    """One observation of a pair: (the new phase, whether an alert is due)."""
    if phase is _Phase.BASELINE:
        return (_Phase.FIRED if in_stock else _Phase.ARMED), False
    if phase is _Phase.ARMED:
        if in_stock:
            return (_Phase.FIRED, True) if covers else (_Phase.ARRIVING, False)
        return _Phase.ARMED, False
    if phase is _Phase.ARRIVING:
        return (_Phase.FIRED, True) if in_stock else (_Phase.ARMED, False)
    if phase is _Phase.FIRED:
        return (_Phase.FIRED if in_stock else _Phase.LEAVING), False
    return (_Phase.FIRED if in_stock else _Phase.ARMED), False  # LEAVING
