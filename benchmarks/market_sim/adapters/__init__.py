"""One adapter per simulated provider: it writes the market's offers into the provider's real
request and answer shapes (see ``base``)."""

from __future__ import annotations

from benchmarks.market_sim.adapters.base import Adapter
from benchmarks.market_sim.adapters.keyed import Runpod, Vastai
from benchmarks.market_sim.adapters.paged import Autodl, Gpushare, Matpool
from benchmarks.market_sim.adapters.single import Cudo, Featurize, Jarvislabs, Ppio, Tensordock

ADAPTERS: tuple[type[Adapter], ...] = (
    Autodl,
    Gpushare,
    Matpool,
    Vastai,
    Runpod,
    Cudo,
    Featurize,
    Jarvislabs,
    Ppio,
    Tensordock,
)
"""Ten JSON API providers without a browser: three paged Chinese markets, a keyset-paged one,
one split over two requests, five single answers."""


def adapters(names: list[str] | None = None) -> list[Adapter]:
    """The adapters of ``names`` (all by default), in ``ADAPTERS`` order."""
    chosen = [cls() for cls in ADAPTERS if names is None or cls.name in names]
    unknown = set(names or ()) - {a.name for a in chosen}
    if unknown:
        raise ValueError(f"no market adapter for {sorted(unknown)}")
    return chosen


__all__ = ["ADAPTERS", "Adapter", "adapters"]
