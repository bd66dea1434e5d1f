"""What the library API refuses, as exceptions a program can catch and a person can read.

Each is a ``ValueError`` carrying one line (``str(exc)``) and the argument it is about
(``argument``: the API's keyword, e.g. ``"gpu"``), so the command line can name its own
option and a program can point at its own field.
"""

from __future__ import annotations


class ApiError(ValueError):
    """Base class of the API's refusals."""

    def __init__(self, message: str, *, argument: str | None = None) -> None:
        super().__init__(message)
        self.argument = argument


class NoWarehouse(ApiError):
    """There is no warehouse at the path (yet): crawl first, or point at one."""


class WarehouseBusy(ApiError):
    """A crawl or load holds the warehouse longer than a reader waits (``GPURENT_LOCK_WAIT_S``)."""


class UnknownName(ApiError):
    """A GPU, provider or currency gpurent does not know; the message suggests close ones."""


class NoSuchOffer(ApiError):
    """The provider has no latest offer with that key."""


class BadUsage(ApiError):
    """Usage numbers the cost engine refuses (hours beyond a month, negative storage...)."""


class BadFilter(ApiError):
    """A filter value the answer cannot read (a CUDA version that is no version, a
    reliability above 1, an interconnect or hosting gpurent does not know)."""


class AmbiguousOfferId(NoSuchOffer):
    """Two latest offers of one provider share a short id (their keys hash alike, rare): the
    message names their keys, to ask for one by provider and key instead."""


class WarehouseDamaged(NoWarehouse):
    """The warehouse file cannot be read back (a checksum mismatch, a file cut short), found
    when opening it or while reading: waiting will not help; a backup or a new one will.

    A kind of ``NoWarehouse`` (there is no readable warehouse at the path), so a caller that
    already handles a missing one handles this too; catch it first to say "damaged"."""


class NotAWarehouse(NoWarehouse):
    """The file at the path is no gpurent warehouse: not a DuckDB file, or one a newer
    DuckDB wrote. A kind of ``NoWarehouse``; unlike a missing one it is never read as "no
    market yet" (``size`` refuses it rather than answer the estimate alone)."""


class UnknownFigure(ApiError):
    """A figure the answer needs that gpurent has no single value for: the board power of a
    card the GPU catalog gives none for, or of a name that leaves several cards open (H100:
    PCIe, SXM, NVL). The message says how to give it."""


class ApiPricesUnreadable(ApiError):
    """The refreshed API price list beside the warehouse (``api_prices.json``) cannot be read:
    refresh it again (`gpurent api-prices refresh`) or remove it."""


class RefreshFailed(ApiError):
    """OpenRouter's model list was not read (no answer, an error, an empty list, a changed
    layout): the refreshed API price list is kept as it was, and the message says why."""


def check_limit(limit: object, *, optional: bool = True) -> None:
    """``BadUsage`` unless ``limit`` is a whole number from 1 (or None, where ``optional``):
    a slice by 0 or -1 would drop rows and say nothing (the CLI refuses them too)."""
    if limit is None and optional:
        return
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        allowed = "a whole number from 1" + (", or None for all" if optional else "")
        raise BadUsage(f"limit must be {allowed}, got {limit!r}", argument="limit")
