"""Names as a user types them, resolved the way providers' names are, or refused with
suggestions: GPU models (through the normaliser), providers, currencies; and the short id
every listed offer carries (``offer_id``), which `explain` reads back."""

from __future__ import annotations

import base64
import difflib
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from gpurent.api.errors import UnknownName

if TYPE_CHECKING:
    import duckdb

    from gpurent_core.normalize.gpu import GpuIdentity


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


@dataclass(frozen=True)
class GpuName:
    """A GPU name a user typed, read as a provider's is, as a filter on the latest offers."""

    model: str
    """The canonical catalog model (or declared family)."""
    vram_gb: int | None
    """The size the name picks, when the model comes in several sizes; else None (every size)."""
    form_factor: str | None
    """The form factor the name pins down beyond its model and size ("H100 SXM", "A100 PCIe"),
    else None (every form factor). An offer whose form factor is unknown never matches one."""
    identity: GpuIdentity
    """The normaliser's whole reading (its ``vram_gb`` is set for a one-size model too)."""

    def describe(self) -> str:
        """ "H100 SXM 80G": what the filter keeps, in the tables' words."""
        parts = [self.model, self.form_factor or "", f"{self.vram_gb}G" if self.vram_gb else ""]
        return " ".join(p for p in parts if p)


def read_gpu(text: str) -> GpuName:
    """A GPU name read as a provider's is (``gpurent_core.normalize.gpu``), as a filter.

    The size is kept when the model comes in several ("A100 80G"); the form factor when the
    name pins one down that its model and size leave open ("H100 SXM", "H100 PCIe", but not
    "L40S", whose one form factor says nothing). Unknown or ambiguous names raise
    ``UnknownName`` naming close catalog models."""
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
    form = identity.form_factor
    if form is not None:
        # The form factor counts as named only where the bare model at that size leaves it
        # open: "H100 80GB" is PCIe or SXM, so "H100 SXM" narrows; "L40S" is PCIe anyway,
        # and an L40S offer that does not say so is still the same card.
        try:
            bare = normalise(identity.model, vram_gb=identity.vram_gb).form_factor
        except UnresolvedGpuName:
            bare = None
        if bare == form:
            form = None
    return GpuName(model=identity.model, vram_gb=picked, form_factor=form, identity=identity)


def resolve_gpu(text: str) -> tuple[str, int | None]:
    """A GPU name read as a provider's is: (canonical model, the VRAM when the text picks one
    of the model's sizes, else None). Unknown or ambiguous names raise ``UnknownName``
    naming close catalog models. ``read_gpu`` also gives the form factor a name pins down."""
    name = read_gpu(text)
    return name.model, name.vram_gb


def several_form_factors(model: str) -> bool:
    """Whether the catalog sells ``model`` in more than one form factor (H100: PCIe, SXM,
    NVL), so that a table must say which one an offer is."""
    from gpurent_core.catalog.gpus import get_catalog

    return len({sku.form_factor for sku in get_catalog().variants(model)}) > 1


def card_name(model: str, form_factor: str | None) -> str:
    """A card without its size: "H100 SXM" where the model comes in several form factors
    and the offer says which, else the model ("L40S PCIe" would say nothing "L40S" does not)."""
    return f"{model} {form_factor}" if form_factor and several_form_factors(model) else model


def gpu_label(model: str, vram_gb: int | None, form_factor: str | None) -> str:
    """A card as the tables show it: "H100 SXM 80G", "V100 32G", "H20 ?G" (VRAM unknown)."""
    vram = "?" if vram_gb is None else str(vram_gb)
    return f"{card_name(model, form_factor)} {vram}G"


# --- offer ids ----------------------------------------------------------------------------

OFFER_ID_CHARS = 7
"""Base32 characters of the hash: 35 bits. Two offers share an id with odds of about
n^2 / 2^36 among n offers listed at once under one prefix (1 in 700 at 10,000 offers); such
an id is refused by ``explain``, never read as either offer (``AmbiguousOfferId``)."""
_ALPHABET = frozenset("abcdefghijklmnopqrstuvwxyz234567")


def provider_code(provider: str) -> str:
    """The two letters an offer id starts with: the provider's first two letters or digits
    ("gp" for gpushare). A property of the name alone, so adding a provider never changes
    another's ids; two providers may share one (their ids still differ by the hash)."""
    letters = "".join(ch for ch in provider.casefold() if ch.isascii() and ch.isalnum())
    return (letters + "xx")[:2]


def offer_id(provider: str, offer_key: str) -> str:
    """The short id of an offer: the provider's code and 7 base32 characters ("gp-3kq7xw2").

    Derived from the provider and its offer key only, so the same offer has the same id in
    every run, every answer and every process (no counter, no salt). Short enough to sit
    beside the provider in a table at 80 columns and to type; `explain` reads it back among
    the latest offers of the providers with that code (``match_offer_id``)."""
    digest = hashlib.blake2b(f"{provider}\x00{offer_key}".encode(), digest_size=5).digest()
    code = base64.b32encode(digest).decode("ascii").lower()[:OFFER_ID_CHARS]
    return f"{provider_code(provider)}-{code}"


def split_offer_id(text: str) -> tuple[str, str] | None:
    """(provider code, hash) of an id as typed (case and spaces forgiven), or None when
    ``text`` does not have an id's shape."""
    code, sep, digest = text.strip().casefold().partition("-")
    if not sep or len(code) != 2 or not code.isalnum() or len(digest) != OFFER_ID_CHARS:
        return None
    return (code, digest) if not set(digest) - _ALPHABET else None


def match_offer_id(text: str, offers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The (provider, offer_key) pairs among ``offers`` whose id is ``text``."""
    wanted = text.strip().casefold()
    return [(p, k) for p, k in offers if offer_id(p, k) == wanted]


def resolve_provider(con: duckdb.DuckDBPyConnection, name: str) -> str:
    """``name`` as gpurent knows it (lower case), or ``UnknownName`` naming the known ones."""
    from gpurent_core.providers import BY_NAME
    from warehouse.queries import known_providers

    wanted = name.strip().lower()
    in_warehouse = known_providers(con)
    if wanted in in_warehouse:
        return wanted
    known = sorted({*in_warehouse, *BY_NAME})
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
    """The currency to rank in: ``value`` checked, else the settings' (``GPURENT_CURRENCY``),
    checked the same way (read as "usd" or "GBP" it would fail later in the FX table, under
    the name of an option nobody gave)."""
    from gpurent_core.config import load_settings

    if value is not None:
        return resolve_currency(value) or value
    configured = load_settings().currency
    try:
        return resolve_currency(configured) or configured
    except UnknownName as exc:
        raise UnknownName(f"GPURENT_CURRENCY: {exc}") from exc


def human_age(then: datetime | None, now: datetime) -> str:
    """How long ago ``then`` was, in its largest whole unit ("3h ago"); "" for None."""
    if then is None:
        return ""
    seconds = max(0, int((now - then).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return f"{seconds}s ago"
