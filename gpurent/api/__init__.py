"""gpurent's library API: the answers the command line and the dashboard show, for programs.

    from gpurent import api

    for offer in api.cheapest(32, gpus=1, db="var/demo.duckdb"):
        print(offer.provider, offer.gpu_model, offer.true_monthly, offer.cost_currency)

Every function reads the warehouse (``db``: a path, else ``GPURENT_DB``, else the user data
directory) and returns typed objects with Decimal money; the cost of each offer is the exact
one of ``gpurent_core.cost``, for the usage given (``api.usage(...)``; default: 730 h a
month, 50 GB of storage). Only offers their provider's latest run confirmed are ranked
(``include_stale=True`` adds the stale ones, marked ``stale``); ``cheapest`` and ``offers``
return an ``OfferList``, a list whose ``stale_left_out`` says how many they left out.
Refusals are ``api.ApiError`` subclasses (``ValueError``) with one line each:
``NoWarehouse`` (``NotAWarehouse``: a file that is none), ``WarehouseBusy``, ``WarehouseDamaged``, ``UnknownName`` (with suggestions),
``NoSuchOffer`` (``AmbiguousOfferId``: a short id two offers share), ``BadUsage``,
``BadFilter`` (a host filter it cannot read), ``UnknownFigure`` (a card's board power the
catalog does not settle, for ``tco``).

``tco`` (buy or rent) sets owning a card over years against renting it at the median true
cost of its confirmed in-stock offers, with the hours a day at which the two cost the same.

``api_prices`` lists serverless APIs' per-token prices for open models (the dated, sourced
table shipped with gpurent, and the list beside the warehouse that ``refresh_api_prices``
reads from OpenRouter: ``RefreshFailed`` keeps the old one), each with its age and an
``old`` flag.

``offers`` and ``cheapest`` also narrow on what the host publishes (``min_cuda``,
``interconnect``, ``min_reliability``, ``hosting``, ``min_vcpus_per_gpu``,
``min_ram_gb_per_gpu``): an offer that does not publish a filtered attribute is left out,
and the answer's ``unpublished_left_out`` counts those; every ``Offer`` carries the host
attributes (``cuda_version``, ``interconnect``, ``host_reliability``...), None where the
provider does not publish them.

Every offer carries a short id (``Offer.offer_id``, ``api.offer_id(provider, offer_key)``),
the same in every run, which ``explain`` takes in place of provider and key.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpurent.api import names, views
    from gpurent.api.errors import (
        AmbiguousOfferId,
        ApiError,
        ApiPricesUnreadable,
        BadFilter,
        BadUsage,
        NoSuchOffer,
        NotAWarehouse,
        NoWarehouse,
        RefreshFailed,
        UnknownFigure,
        UnknownName,
        WarehouseBusy,
        WarehouseDamaged,
    )
    from gpurent.api.forecast import RestockForecast, restock_forecast
    from gpurent.api.market import IndexPoint, ProviderState, index, providers
    from gpurent.api.names import offer_id
    from gpurent.api.ownership import TcoAnswer, tco
    from gpurent.api.pricing import Explanation, Offer, OfferList, cheapest, explain, offers
    from gpurent.api.profile import usage, with_gpus
    from gpurent.api.sizing import (
        CannotSize,
        Engine,
        ExcludedOffer,
        LeftOutGroup,
        Mode,
        Objective,
        PlacementFit,
        SizeAnswer,
        SizedOffer,
        model_names,
        precision_names,
        size,
    )
    from gpurent.api.token_prices import (
        ListedPrice,
        RefreshAnswer,
        UnmatchedModel,
        api_prices,
        refresh_api_prices,
    )

# Where each public name lives (no module is named like a function it holds: importing
# a submodule sets it as an attribute of the package). They load on first use, so that `import gpurent.api` (and
# the command line's start-up) does not pay for the cost engine, DuckDB or the sizing
# modules before an answer is asked for.
_HOME = {
    **dict.fromkeys(
        (
            "AmbiguousOfferId",
            "ApiError",
            "ApiPricesUnreadable",
            "BadFilter",
            "BadUsage",
            "NoSuchOffer",
            "NotAWarehouse",
            "NoWarehouse",
            "RefreshFailed",
            "UnknownFigure",
            "UnknownName",
            "WarehouseBusy",
            "WarehouseDamaged",
        ),
        "errors",
    ),
    "offer_id": "names",
    **dict.fromkeys(("TcoAnswer", "tco"), "ownership"),
    **dict.fromkeys(("IndexPoint", "ProviderState", "index", "providers"), "market"),
    **dict.fromkeys(("RestockForecast", "restock_forecast"), "forecast"),
    **dict.fromkeys(
        ("Explanation", "Offer", "OfferList", "cheapest", "explain", "offers"), "pricing"
    ),
    **dict.fromkeys(
        (
            "CannotSize",
            "Engine",
            "ExcludedOffer",
            "LeftOutGroup",
            "Mode",
            "Objective",
            "PlacementFit",
            "SizeAnswer",
            "SizedOffer",
            "model_names",
            "precision_names",
            "size",
        ),
        "sizing",
    ),
    **dict.fromkeys(("usage", "with_gpus"), "profile"),
    **dict.fromkeys(
        ("ListedPrice", "RefreshAnswer", "UnmatchedModel", "api_prices", "refresh_api_prices"),
        "token_prices",
    ),
}
_MODULES = {"names", "views"}


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        return import_module(f"gpurent.api.{name}")
    if name in _HOME:
        value = getattr(import_module(f"gpurent.api.{_HOME[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'gpurent.api' has no attribute {name!r}")


__all__ = [
    "AmbiguousOfferId",
    "ApiError",
    "ApiPricesUnreadable",
    "BadFilter",
    "BadUsage",
    "CannotSize",
    "Engine",
    "ExcludedOffer",
    "Explanation",
    "IndexPoint",
    "LeftOutGroup",
    "ListedPrice",
    "Mode",
    "NoSuchOffer",
    "NoWarehouse",
    "NotAWarehouse",
    "Objective",
    "Offer",
    "OfferList",
    "PlacementFit",
    "ProviderState",
    "RefreshAnswer",
    "RefreshFailed",
    "RestockForecast",
    "SizeAnswer",
    "SizedOffer",
    "TcoAnswer",
    "UnknownFigure",
    "UnknownName",
    "UnmatchedModel",
    "WarehouseBusy",
    "WarehouseDamaged",
    "api_prices",
    "cheapest",
    "explain",
    "index",
    "model_names",
    "names",
    "offer_id",
    "offers",
    "precision_names",
    "providers",
    "refresh_api_prices",
    "restock_forecast",
    "size",
    "tco",
    "usage",
    "views",
    "with_gpus",
]
