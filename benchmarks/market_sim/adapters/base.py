"""What every adapter shares: the simulated offer, the listing entry, the expected row, and
the base class that turns a poll's listing into a provider's routes and bodies.

An adapter knows one provider's real request and answer shapes (taken from its bundled
default recording, ``spiders/providers/<folder>/recordings/``) and nothing of gpurent's
parsers: it writes N offers (key, GPU, price, stock) into that shape, plus the listing's
skipped item (a Kepler card the catalog leaves out on purpose) and its unreadable item (an
unknown card, or a price that is no number), and it says what gpurent should read back
(``expect``): the offer key, status, free count and price the provider's own words mean.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum
from typing import Any, ClassVar

from gpurent_core.providers import provider

SKIP_GPU = "Tesla K80"
"""A Kepler card: the catalog leaves it out on purpose, so the item is skipped (rule 9)."""
UNKNOWN_GPU = "Quantum X9000"
"""No card of the catalog: an offer that cannot be read, quarantined (rule 9)."""
NOT_A_PRICE = "n/a"
"""A price cell that is no number: an offer that cannot be read, its key still readable."""

SKIP_SID = 1
"""Sim id of every listing's skipped item (first in the listing: on its first page)."""
UNREADABLE_SID = 999_999
"""Sim id of every listing's unreadable item (last in the listing: on its last page)."""


class Layout(StrEnum):
    """How a provider's listing reaches us, which decides what a lost answer leaves unread."""

    SINGLE = "single"
    """One request lists every offer."""
    PAGES = "pages"
    """Page 1 says how many pages there are; the others are asked together."""
    PAGES_SEQUENTIAL = "pages_sequential"
    """Each page leads to the next: a lost page is never followed."""
    SPLIT = "split"
    """Several requests, each deciding the offers of its own part (a cloud, a region)."""


class ItemKind(StrEnum):
    OFFER = "offer"
    """A readable offer."""
    GARBLED = "garbled"
    """A market offer whose price cell is no number this poll (its key still readable)."""
    SKIP = "skip"
    """The listing's skipped item (a card the catalog leaves out on purpose)."""
    UNREADABLE = "unreadable"
    """The listing's unreadable item (not a market offer: it never was readable)."""


@dataclass(frozen=True)
class SimOffer:
    """One offer of the simulated market, as it stands at one poll."""

    sid: int
    """The simulation's id (the provider's offer key is derived from it)."""
    template: int
    """Index of the adapter's template item (GPU and the fields not simulated)."""
    variant: str
    """The part of a split listing it is listed in ("" elsewhere)."""
    price: Decimal
    """The headline price in the provider's feed units (currency and basis of the feed)."""
    free: int
    """Free cards (0: sold out)."""


@dataclass(frozen=True)
class Item:
    """One entry of a provider's listing at one poll."""

    kind: ItemKind
    offer: SimOffer


@dataclass(frozen=True)
class Expect:
    """What gpurent should hold for an offer the provider listed readably."""

    status: str
    """``in_stock`` or ``sold_out``."""
    available: int | None
    """The free count gpurent should store for an in-stock offer (None: not published)."""
    price: Decimal
    gpu_count: int
    per_card: bool
    """Price basis ``gpu`` (True) or ``instance``."""

    @property
    def in_stock(self) -> bool:
        return self.status == "in_stock"


@dataclass
class Answer:
    """One request of a poll: the route's match fields and the JSON body it answers."""

    match: dict[str, Any]
    body: Any
    items: list[Item] = field(default_factory=list)
    """The listing entries this answer carries (empty for a catalog or an end page)."""


class Adapter:
    """Base of the per-provider adapters (subclasses set the class attributes)."""

    name: ClassVar[str]
    layout: ClassVar[Layout] = Layout.SINGLE
    page_items: ClassVar[int] = 4
    """Entries per page of a paged listing (the simulation's, not the provider's page size)."""
    variants: ClassVar[tuple[str, ...]] = ("",)
    """The parts of a split listing; weights in ``variant_weights``."""
    variant_weights: ClassVar[tuple[float, ...]] = (1.0,)
    catalog_lists_all: ClassVar[bool] = False
    """An always-answered request (``extra``) names every offer of the listing: an offer it
    no longer names is gone even when the request that prices it was lost."""
    counts: ClassVar[bool] = True
    """The provider publishes a free-card count."""
    per_card: ClassVar[bool] = True
    unreadable_by: ClassVar[str] = "gpu"
    """How the listing's unreadable item is spoilt: "gpu" (an unknown card) or "price"."""

    def __init__(self) -> None:
        self.folder = provider(self.name).recordings
        self.default_routes: list[dict[str, Any]] = self.read("routes.json")
        self.templates: list[Any] = self.load_templates()

    # -- the default recording ---------------------------------------------------

    def read(self, name: str) -> Any:
        return json.loads((self.folder / name).read_text(encoding="utf-8"))

    def load_templates(self) -> list[Any]:
        raise NotImplementedError

    def default_route(self, **wanted: Any) -> dict[str, Any]:
        """The first default route whose fields hold ``wanted`` (a subset), its match part."""
        for route in self.default_routes:
            if all(_holds(route.get(k), v) for k, v in wanted.items()):
                return {k: copy.deepcopy(route[k]) for k in _MATCH_KEYS if k in route}
        raise LookupError(f"{self.name}: no default route with {wanted}")

    # -- what the simulation asks --------------------------------------------------

    def base_price(self, template: int) -> Decimal:
        """The template's headline price in feed units (the simulation moves from there)."""
        raise NotImplementedError

    def offer_key(self, offer: SimOffer) -> str:
        raise NotImplementedError

    def expect(self, offer: SimOffer) -> Expect:
        in_stock = offer.free > 0
        return Expect(
            status="in_stock" if in_stock else "sold_out",
            available=offer.free if (self.counts and in_stock) else None,
            price=offer.price,
            gpu_count=1,
            per_card=self.per_card,
        )

    def pages(self, items: list[Item]) -> list[list[Item]]:
        """The listing's answers, each with the entries it carries, in request order."""
        if self.layout is Layout.SPLIT:
            return [[i for i in items if i.offer.variant == v] for v in self.variants]
        if self.layout is Layout.SINGLE:
            return [items]
        size = self.page_items
        return [items[i : i + size] for i in range(0, len(items), size)] or [[]]

    def answers(self, pages: list[list[Item]]) -> list[Answer]:
        """One answer per page of ``pages`` (same order), plus none: see ``extra``."""
        raise NotImplementedError

    def extra(self, items: list[Item]) -> list[Answer]:
        """Requests that decide no offer by themselves (a catalog): always answered."""
        return []

    # -- helpers for the item shapes ------------------------------------------------

    def template(self, item: Item) -> Any:
        return copy.deepcopy(self.templates[item.offer.template])

    def gpu_name(self, item: Item, name: str, *, skip: str = SKIP_GPU) -> str:
        """The GPU name cell: the template's, a left-out card, or an unknown one."""
        if item.kind is ItemKind.SKIP:
            return skip
        if item.kind is ItemKind.UNREADABLE and self.unreadable_by == "gpu":
            return UNKNOWN_GPU
        return name

    def price_cell(self, item: Item, value: Any) -> Any:
        """The price cell: ``value``, or a word that is no number (garbled, unreadable)."""
        garbled = item.kind is ItemKind.GARBLED
        if garbled or (item.kind is ItemKind.UNREADABLE and self.unreadable_by == "price"):
            return NOT_A_PRICE
        return value


_MATCH_KEYS = ("method", "path", "query", "json", "headers")


def _holds(have: Any, want: Any) -> bool:
    if isinstance(want, dict):
        return isinstance(have, dict) and all(_holds(have.get(k), v) for k, v in want.items())
    return bool(have == want)


def number(value: Decimal) -> int | float:
    """A Decimal as the JSON number a provider writes (exact for the simulation's prices,
    which have at most six decimals: ``repr`` of the float is the decimal written)."""
    return int(value) if value == value.to_integral_value() else float(value)


def minor(value: Decimal, scale: int) -> int:
    """A price in 1/``scale`` of the currency (AutoDL's 1/1000 CNY, Matpool's millicent)."""
    return int(value * scale)
