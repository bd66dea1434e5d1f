"""Names as a user types them, resolved the way providers' names are, or refused with
suggestions: GPU models (through the normaliser), providers, currencies."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpurent.api.errors import UnknownName

if TYPE_CHECKING:
    import duckdb


def _compact(text: str) -> str:
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def close_matches(word: str, known: Sequence[str], *, n: int = 3) -> list[str]:
    """Known names close to ``word`` (difflib on lower-case letters and digits), best first.

    A name is also matched without its first word, so '4090ti' finds 'RTX 4090'.
    """
    by_key: dict[str, str] = {}
    for name in known:
        by_key.setdefault(_compact(name), name)
        _, _, rest = name.partition(" ")
        if rest:
            by_key.setdefault(_compact(rest), name)
    found = difflib.get_close_matches(_compact(word), list(by_key), n=n * 2, cutoff=0.5)
    return list(dict.fromkeys(by_key[key] for key in found))[:n]


def suggest(word: str, known: Sequence[str]) -> str:
    near = close_matches(word, known)
    return f"; did you mean {' or '.join(near)}?" if near else ""


def resolve_gpu(text: str) -> tuple[str, int | None]:
    """A GPU name read as a provider's is: (canonical model, the VRAM when the text picks one
    of the model's sizes, else None). Unknown or ambiguous names raise ``UnknownName``
    naming close catalog models."""
    from gpurent_core.catalog.gpus import get_catalog
    from gpurent_core.normalize.gpu import UnresolvedGpuName
    from gpurent_core.normalize.gpu import resolve_gpu as normalise

    catalog = get_catalog()
    try:
        identity = normalise(text)
    except UnresolvedGpuName as exc:
        raise UnknownName(
            f"{exc.reason}{suggest(text, catalog.models())} (`gpurent gpus` lists the catalog)",
            argument="gpu",
        ) from exc
    sizes = {sku.vram_gb for sku in catalog.variants(identity.model)}
    picked = identity.vram_gb if identity.vram_gb is not None and len(sizes) > 1 else None
    return identity.model, picked


def resolve_provider(con: duckdb.DuckDBPyConnection, name: str) -> str:
    """``name`` as gpurent knows it (lower case), or ``UnknownName`` naming the known ones."""
    from flows.providers import provider_infos
    from warehouse.queries import known_providers

    wanted = name.strip().lower()
    in_warehouse = known_providers(con)
    if wanted in in_warehouse:
        return wanted
    known = sorted({*in_warehouse, *provider_infos()})
    if wanted in known:
        return wanted
    raise UnknownName(
        f"unknown provider {name!r}{suggest(wanted, known)} (known: {', '.join(known)})",
        argument="provider",
    )


def resolve_currency(value: str | None) -> str | None:
    """An ISO 4217 code some rate reaches (upper case), None for None, else ``UnknownName``."""
    if value is None:
        return None
    code = value.strip().upper()
    if len(code) != 3 or not code.isalpha():
        raise UnknownName(
            f"{value!r} is not an ISO 4217 currency code (try CNY or USD)", argument="currency"
        )
    from gpurent_core.fx import FX_ENV_VAR, FxError, load_fx_table

    try:
        known = load_fx_table().currencies
    except FxError as exc:
        raise UnknownName(f"{FX_ENV_VAR} is not readable: {exc}", argument="currency") from exc
    if code not in known:
        # A currency no rate reaches would convert nothing (and a watch in it never fire).
        raise UnknownName(
            f"no exchange rate for {code}: known {', '.join(sorted(known))}; "
            f"add one with {FX_ENV_VAR}={code}/CNY=<rate>",
            argument="currency",
        )
    return code


def display_currency(value: str | None) -> str:
    """The currency to rank in: ``value`` checked, else the settings' (``GPURENT_CURRENCY``)."""
    from gpurent_core.config import load_settings

    return resolve_currency(value) or load_settings().currency
