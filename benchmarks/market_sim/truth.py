"""The simulated market: what each provider really lists at each poll, and which of its
answers are lost. Seeded and deterministic (``random.Random(seed)``); simulated time is the
poll index.

Each provider keeps about ``target`` offers. Between two polls an offer may vanish (and may
come back later under the same key), sell out, restock, change its free count or its
price, and new offers appear; now and then one offer's price cell is unreadable for a poll
(its key still readable). Every listing also carries one skipped item (a card the catalog
leaves out on purpose) and one unreadable item (an unknown card or a price that is no
number), which are no market offers.

Faults (never at poll 1, which is every watch's baseline): a whole provider answers 503 on
every route (an outage); a paged listing loses one page (any page: losing the first of a
listing whose first page says how many follow loses them all, and a sequential listing
never asks for the pages after a lost one); a split listing loses one request. However few
offers the pages that answered hold, a lost answer is no layout change (rule 3 speaks of
pages that answered): the oracle expects what they list confirmed and the rest kept stale.
Each fault kind is forced once, from poll 3, where chance has not yet produced it, so a
short run cannot miss one.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field, replace
from decimal import Decimal
from enum import StrEnum

from benchmarks.market_sim.adapters.base import (
    SKIP_SID,
    UNREADABLE_SID,
    Adapter,
    Item,
    ItemKind,
    Layout,
    SimOffer,
)

CENT = Decimal("0.01")
MAX_FREE = 8


class FaultKind(StrEnum):
    OUTAGE = "outage"
    """Every route of the provider answers 503 (a runtime fault of the replay server)."""
    PAGE = "page"
    """One page of a paged listing answers 503 every time."""
    REQUEST = "request"
    """One request of a split listing answers 503 every time."""


@dataclass(frozen=True)
class Fault:
    kind: FaultKind
    page: int | None = None
    """Index of the lost page or request in the provider's answers (None: outage)."""


@dataclass
class ProviderPoll:
    """One provider at one poll: the truth, the answers and what was lost."""

    provider: str
    poll: int
    offers: dict[str, SimOffer]
    """The market's truth: every offer listed at this poll, by offer key."""
    variants: dict[str, str]
    """Offer key to the part of a split listing it belongs to."""
    items: list[Item]
    pages: list[list[Item]]
    fault: Fault | None = None
    events: Counter[str] = field(default_factory=Counter)


@dataclass(frozen=True)
class Rates:
    """Chances per offer (or per provider, for arrivals and faults) per poll."""

    vanish: float = 0.04
    sell_out: float = 0.10
    restock: float = 0.30
    free_change: float = 0.15
    price_change: float = 0.08
    appear: float = 0.35
    reappear: float = 0.15
    garble: float = 0.08
    outage: float = 0.025
    lost_page: float = 0.10
    lost_request: float = 0.12


class _Provider:
    """One provider's market between polls."""

    def __init__(self, adapter: Adapter, rng: random.Random, target: int) -> None:
        self.adapter = adapter
        self.rng = rng
        self.target = target
        self.next_sid = 10
        self.live: dict[int, SimOffer] = {}
        self.gone: dict[int, SimOffer] = {}
        self.listed_before: set[int] = set()
        for _ in range(target):
            self.add(self.new_offer(sold_out_chance=0.25))

    def new_offer(self, *, sold_out_chance: float) -> SimOffer:
        template = self.rng.randrange(len(self.adapter.templates))
        variant = self.rng.choices(self.adapter.variants, self.adapter.variant_weights)[0]
        free = 0 if self.rng.random() < sold_out_chance else self.rng.randint(1, MAX_FREE)
        offer = SimOffer(self.next_sid, template, variant, self.adapter.base_price(template), free)
        self.next_sid += 1
        return offer

    def add(self, offer: SimOffer) -> None:
        self.live[offer.sid] = offer

    def step(self, rates: Rates, events: Counter[str]) -> None:
        """The market moves from one poll to the next."""
        rng = self.rng
        for sid in sorted(self.live):
            offer = self.live[sid]
            if len(self.live) > self.target * 0.8 and rng.random() < rates.vanish:
                self.gone[sid] = self.live.pop(sid)
                events["vanish"] += 1
                continue
            if offer.free > 0 and rng.random() < rates.sell_out:
                offer = replace(offer, free=0)
                events["sell_out"] += 1
            elif offer.free == 0 and rng.random() < rates.restock:
                offer = replace(offer, free=rng.randint(1, MAX_FREE))
                events["restock"] += 1
            elif offer.free > 0 and rng.random() < rates.free_change:
                offer = replace(offer, free=rng.randint(1, MAX_FREE))
                events["free_change"] += 1
            if rng.random() < rates.price_change:
                offer = replace(offer, price=self.moved(offer))
                events["price_change"] += 1
            self.live[sid] = offer
        if len(self.live) < self.target * 1.2 and rng.random() < rates.appear:
            self.add(self.new_offer(sold_out_chance=0.2))
            events["appear"] += 1
        if self.gone and rng.random() < rates.reappear:
            sid = rng.choice(sorted(self.gone))
            back = replace(self.gone.pop(sid), free=rng.randint(1, MAX_FREE))
            self.add(back)
            events["reappear"] += 1

    def moved(self, offer: SimOffer) -> Decimal:
        base = self.adapter.base_price(offer.template)
        step = max(CENT, (base * Decimal("0.05")).quantize(CENT))
        sign = self.rng.choice((-1, 1))
        price = (offer.price + sign * step * self.rng.randint(1, 3)).quantize(CENT)
        return price if price > 0 else step

    def listing(self, poll: int, rates: Rates, events: Counter[str]) -> ProviderPoll:
        garbled: int | None = None
        candidates = sorted(self.listed_before & set(self.live))
        if poll > 1 and candidates and self.rng.random() < rates.garble:
            garbled = self.rng.choice(candidates)
            events["garble"] += 1
        self.listed_before = set(self.live)
        junk = self.rng.randrange(len(self.adapter.templates))
        return listing_of(
            self.adapter, poll, list(self.live.values()), garbled=garbled, junk_template=junk
        )


def listing_of(
    adapter: Adapter,
    poll: int,
    offers: list[SimOffer],
    *,
    garbled: int | None = None,
    junk_template: int = 0,
    fault: Fault | None = None,
) -> ProviderPoll:
    """A provider's listing at one poll: its skipped item first, the market's offers by sim
    id (``garbled``: the one whose price cell is unreadable), its unreadable item last."""
    variant = adapter.variants[-1]
    price = adapter.base_price(junk_template)
    skip = SimOffer(SKIP_SID, junk_template, variant, price, 1)
    unreadable = SimOffer(UNREADABLE_SID, junk_template, variant, price, 1)
    items = [Item(ItemKind.SKIP, skip)]
    for offer in sorted(offers, key=lambda o: o.sid):
        kind = ItemKind.GARBLED if offer.sid == garbled else ItemKind.OFFER
        items.append(Item(kind, offer))
    items.append(Item(ItemKind.UNREADABLE, unreadable))
    keyed = {adapter.offer_key(o): o for o in offers}
    return ProviderPoll(
        provider=adapter.name,
        poll=poll,
        offers=keyed,
        variants={k: o.variant for k, o in keyed.items()},
        items=items,
        pages=adapter.pages(items),
        fault=fault,
    )


class Market:
    """The whole simulated market: ``poll(i)`` for i = 1, 2, ... in order."""

    def __init__(
        self, adapters: list[Adapter], *, seed: int, target: int = 10, rates: Rates | None = None
    ) -> None:
        self.rng = random.Random(seed)
        self.rates = rates or Rates()
        self.providers = [_Provider(a, self.rng, target) for a in adapters]
        self.events: Counter[str] = Counter()
        self.polls = 0

    def poll(self) -> list[ProviderPoll]:
        """The next poll: the market moves (from poll 2 on), then each provider's listing
        and the answers it loses."""
        self.polls += 1
        index = self.polls
        out = []
        for provider in self.providers:
            events: Counter[str] = Counter()
            if index > 1:
                provider.step(self.rates, events)
            listing = provider.listing(index, self.rates, events)
            listing.events = events
            out.append(listing)
        if index > 1:
            self.spoil(out, index)
        for listing in out:
            self.events.update(listing.events)
        return out

    def spoil(self, listings: list[ProviderPoll], index: int) -> None:
        """Draw this poll's faults; force a kind not seen yet (from poll 3)."""
        rates = self.rates
        for listing in listings:
            adapter = self.adapter(listing.provider)
            draw = self.rng.random()
            if draw < rates.outage:
                listing.fault = Fault(FaultKind.OUTAGE)
            elif draw < rates.outage + rates.lost_page:
                listing.fault = self.lost_answer(adapter, listing, FaultKind.PAGE)
            elif draw < rates.outage + rates.lost_page + rates.lost_request:
                listing.fault = self.lost_answer(adapter, listing, FaultKind.REQUEST)
        if index < 3:
            return
        seen = {f.kind for f in (lst.fault for lst in listings) if f is not None}
        for kind in FaultKind:
            if self.events[f"fault_{kind.value}"] or kind in seen:
                continue
            for listing in listings:
                if listing.fault is not None:
                    continue
                adapter = self.adapter(listing.provider)
                fault = (
                    Fault(kind) if kind is FaultKind.OUTAGE
                    else self.lost_answer(adapter, listing, kind)
                )  # fmt: skip
                if fault is not None:
                    listing.fault = fault
                    seen.add(kind)
                    break
        for listing in listings:
            if listing.fault is not None:
                listing.events[f"fault_{listing.fault.kind.value}"] += 1

    def adapter(self, name: str) -> Adapter:
        return next(p.adapter for p in self.providers if p.adapter.name == name)

    def lost_answer(self, adapter: Adapter, listing: ProviderPoll, kind: FaultKind) -> Fault | None:
        """A page (paged listings) or request (split listings) to lose; None when the
        listing has no answer of that kind."""
        paged = adapter.layout in (Layout.PAGES, Layout.PAGES_SEQUENTIAL)
        split = adapter.layout is Layout.SPLIT
        if (kind is FaultKind.PAGE and not paged) or (kind is FaultKind.REQUEST and not split):
            return None
        return Fault(kind, self.rng.randrange(len(listing.pages)))


def answered(layout: Layout, pages: int, fault: Fault | None) -> list[int]:
    """The indexes of the answers a crawl reads when ``fault`` strikes: an outage loses all;
    a lost first page of a paged listing loses all (it says how many pages follow); a lost
    page of a sequential listing loses every page after it; otherwise only that answer."""
    if fault is None:
        return list(range(pages))
    if fault.kind is FaultKind.OUTAGE or fault.page is None:
        return []
    if layout is Layout.PAGES and fault.page == 0:
        return []
    if layout is Layout.PAGES_SEQUENTIAL:
        return list(range(fault.page))
    return [i for i in range(pages) if i != fault.page]
