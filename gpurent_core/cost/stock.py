"""Whether an offer can supply the cards a user needs, and be rented now.

Stock for a unit (``rentable``). An offer of N cards is rented as listed: it is in stock for
a user who needs ``cards_needed`` cards only when its status is in_stock or low, it can
supply the cards (``cards_to_rent``) and the provider's free count, when it gives one,
covers every card rented. A 2-card machine with 1 free card is not in stock. ``cheapest``,
sizing and the watches all read this one function; it works on stored rows, so it lives
apart from the arithmetic (a watch checks stock without loading the engine).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpurent_core import providers as registry
from gpurent_core.enums import PriceBasis, StockStatus


def cards_to_rent(offer: Mapping[str, Any], wanted: int) -> int | None:
    """Cards the user would rent from ``offer`` (a stored row or an offer record's fields),
    or None when it cannot supply ``wanted`` cards.

    Whole-machine offers (price per instance) are rented as listed. Per-card offers rent
    more cards than listed only when the provider's free count says that many are free on
    one machine (AutoDL, GPUShare, Lanyun, TensorDock: ``free_count_per_machine``): a card
    price with no free count says nothing of how many cards one machine has, and a count of
    a region's or a platform's free cards (Cudo, JarvisLabs, Gongji...) is no machine of
    that many, so 12 cards are never assumed from either. With no more wanted than listed,
    the listed count is rented.
    """
    count = int(offer["gpu_count"])
    if str(offer["price_basis"]) == PriceBasis.INSTANCE.value:
        return count if count >= wanted else None
    if wanted <= count:
        return count
    free = offer.get("available_count")
    if free is None or offer.get("provider") not in registry.PER_MACHINE_FREE_COUNTS:
        return None
    return wanted if int(free) >= wanted else None


def could_supply(offer: Mapping[str, Any], wanted: int) -> bool:
    """Whether ``offer`` is of a kind that can supply ``wanted`` cards at all, free or not:
    a machine of fewer cards, or a card price with no per-machine free count, never can, so
    a look at it says nothing of ``wanted`` cards (it is not "sold out" for them)."""
    count = int(offer["gpu_count"])
    if wanted <= count:
        return True
    if str(offer["price_basis"]) == PriceBasis.INSTANCE.value:
        return False
    return offer.get("provider") in registry.PER_MACHINE_FREE_COUNTS


def rentable(offer: Mapping[str, Any], cards_needed: int = 1) -> bool:
    """Whether ``offer`` can be rented now by someone who needs ``cards_needed`` cards.

    True when its status is in_stock or low, it can supply the cards (``cards_to_rent``) and
    the provider's free count, when it gives one, covers every card rented: an offer of N
    cards with fewer than N free cannot be rented as listed. Unknown stock is never
    rentable. The one rule for ``cheapest``, sizing, the dashboard and the watches.
    """
    if not StockStatus(str(offer["status"])).rentable:
        return False
    cards = cards_to_rent(offer, cards_needed)
    if cards is None:
        return False
    free = offer.get("available_count")
    return free is None or int(free) >= cards
