"""GPU-name resolution: what a provider wrote -> a canonical catalog identity, or a reason why not.

The resolver never guesses. Matching is exact on a compacted key (lower-case letters and
digits only, brand words removed) against the catalog's model names and aliases; memory
size, form factor and memory type written in the name, and a VRAM hint from another
field, only narrow the catalog's variants of that model down. A name that matches no model,
or more than one model, raises :class:`UnresolvedGpuName` with a reason a person can act on.

Decisions worth knowing:

* "A10G" (AWS) is its own SKU, not an A10: AWS runs it at other clocks.
* Virtual slices ("vGPU-32GB", MIG profiles "3g.40gb", GRID profiles) name no physical
  card: unresolved.
* Kepler/Maxwell cards (K80, M4000, ...) are outside the catalog, which starts at Pascal.
* A *family* is one catalog model: every SKU with the same ``model`` name (the H100 family
  is H100 80 GB PCIe, 80 GB SXM and 94 GB NVL). Its variants differ only in VRAM and form
  factor, never in what the card is. A name resolves to a family, not to one SKU: the
  identity is (model, vram_gb, form_factor) with None for what the name and the hints leave
  open. So "H100 80GB" is the H100 with 80 GB and form factor None (PCIe or SXM), and a bare
  "H100" has VRAM None too. Two catalog models are never one family, even on one chip with
  one VRAM (RTX 4000 Ada and RTX 4000 SFF Ada at 20 GB, H100 and H800): their specs differ,
  so a name that could be either stays ambiguous.
* The one exception is declared in ``FAMILIES``: a vendor line whose variants are separate
  catalog models but which listings routinely name without the variant. Huawei's 910B comes
  as 910B1/B2/B3 (64 GB) and 910B4 (32 GB), and Chinese clouds write "910B" or "昇腾910B".
  Such a name resolves to the family ("Ascend 910B", not a catalog model of its own) with
  what its variants left share: VRAM None for a bare "910B", 64 GB when a figure says 64
  (still B1, B2 or B3). A figure that leaves one variant gives that variant: "910B 32GB" is
  the 910B4. A fuller name ("910B2") is that variant as before.
* When the model has several VRAM sizes and nothing says which (H20 96/141 GB, RTX 3060
  8/12 GB, A100 40/80 GB), ``vram_gb`` is None: the offer is kept with its VRAM unknown,
  never given the commonest size. Callers must not count an unknown VRAM as fitting.
* Modded boards (RTX 4090 / 4090D 48 GB, RTX 4080 / 4080 SUPER 32 GB, RTX 3080 20 GB, RTX
  2080 Ti 22 GB) count only when a VRAM figure points at them: hosts always advertise the
  extra memory, so a bare "RTX 4090" is the vendor's 24 GB card and "RTX 4090 48G" is the
  modded one, with ``modded`` set on the identity. Likewise ``form_factor`` is None when the
  variants left differ in it (or when the card has none, like a GeForce card).
* A "PCIe" in the name of a consumer card is ignored: every GeForce card is a PCIe card.
  A PCIe generation is read only when it cannot be the memory size: "V100 PCIe 32GB" is
  32 GB, not PCIe 3 and 2 GB.
* Pricing-plan words are not part of the card: "spot", "on-demand", "preemptible",
  "interruptible", "reserved", RunPod's "secure"/"community" and the Chinese 竞价, 抢占式,
  按量, 按需, 包月 are stripped before matching ("H100 (Spot)" is an H100). Which plan an
  offer is on is the parser's business, not the name's.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache

from gpurent_core.catalog import Catalog, GpuSku, get_catalog
from gpurent_core.enums import SkipKind

__all__ = [
    "FAMILIES",
    "GpuIdentity",
    "UnresolvedGpuName",
    "alias_index",
    "compact_key",
    "family_members",
    "identity_as_json",
    "normalise_text",
    "resolve_gpu",
    "resolve_gpu_or_error",
    "snap_vram_gb",
    "split_gpu_count",
]


@dataclass(frozen=True, slots=True)
class GpuIdentity:
    """A canonical GPU identity; vram_gb / form_factor are None when the name leaves them open."""

    vendor: str
    model: str
    vram_gb: int | None
    form_factor: str | None
    modded: bool = False
    """True when (model, vram_gb) is a third-party board with memory added (catalog ``modded``)."""


class UnresolvedGpuName(ValueError):
    """A GPU name that does not resolve to exactly one catalog model (quarantine it), or
    names what the catalog leaves out on purpose (``left_out``: skip it, rule of truth 9)."""

    def __init__(self, raw: str, reason: str, left_out: SkipKind | None = None) -> None:
        super().__init__(f"{reason} (input: {raw!r})")
        self.raw = raw
        self.reason = reason
        self.left_out = left_out
        """Set when the name is no card gpurent ranks, on purpose: no GPU at all
        (NOT_A_GPU_OFFER), or a card class the catalog leaves out (OUTSIDE_CATALOG:
        pre-Pascal, laptop chips, virtual slices). None: an unknown or unclear card."""

    def __reduce__(
        self,
    ) -> tuple[type[UnresolvedGpuName], tuple[str, str, SkipKind | None]]:
        # Keeps the exception picklable (Prefect and multiprocessing pickle errors), with
        # whether the name is left out on purpose.
        return (type(self), (self.raw, self.reason, self.left_out))


FAMILIES: Mapping[str, frozenset[str]] = {
    # Huawei publishes no per-variant datasheet and listings often omit the variant digit.
    "Ascend 910B": frozenset({"Ascend 910B1", "Ascend 910B2", "Ascend 910B3", "Ascend 910B4"}),
}
"""Family name -> the catalog models it covers, for names that do not say which (see the
module docstring). The family is no catalog model: its identity is what its variants share."""


def family_members(model: str) -> frozenset[str]:
    """The catalog models a family name covers; empty for any other name."""
    return FAMILIES.get(model, frozenset())


# --- text normalisation ---------------------------------------------------------------

# Chinese words that carry meaning for matching; other CJK text acts as a separator
# (tokens are ASCII letters and digits only), so 显卡, 魔改, 涡轮版 simply vanish.
_CJK_WORDS: tuple[tuple[str, str], ...] = (
    ("昇腾", " ascend "),
    ("英伟达", " nvidia "),
    ("笔记本", " laptop "),
    ("移动版", " laptop "),
)

# Words that never distinguish one catalog model from another.
_NOISE_TOKENS: frozenset[str] = frozenset(
    {
        "nvidia", "geforce", "tesla", "amd", "instinct", "radeon", "huawei", "intel",
        "habana", "moore", "threads", "mthreads", "gpu", "gpus", "graphics", "card",
        "cards", "accelerator", "edition", "server", "workstation", "generation", "gen",
        "grace", "blackwell", "hopper", "ampere", "turing", "volta", "pascal", "lovelace",
        "superchip", "module", "ecc", "vram", "memory", "mem", "ram", "with", "active",
        "founders", "blower", "turbo", "datacenter", "tensor", "core",
        # A bridge option, a crypto-limiter variant and RunPod's "WK" (Workstation Edition):
        # none changes which card it is.
        "nvlink", "lhr", "wk",
    }
)  # fmt: skip

# Brand words glued to the model in slugs ("geforcertx4090-pcie-24gb").
_BRAND_PREFIXES: tuple[str, ...] = ("nvidia", "geforce", "tesla", "amd", "instinct", "radeon")

_FORM_FACTOR_TOKENS: Mapping[str, str] = {
    **{t: "SXM" for t in ("sxm", "sxm2", "sxm3", "sxm4", "sxm5", "sxm6", "hgx", "dgx")},
    "pcie": "PCIe",
    "fhhl": "PCIe",
    "nvl": "NVL",
    "oam": "OAM",
}
_MEMORY_TYPE_RE = re.compile(r"^(hbm2e?|hbm3e?|gddr5x?|gddr6x?|gddr7)$")
_RACK_RE = re.compile(r"^nvl\d+$")  # "GB200 NVL72" names a rack, the GPU is the GB200
_GLUED_FORM_RE = re.compile(r"^(.*\d.*?)(sxm[2-6]?|pcie|nvl)$")  # "a100sxm4", "h100nvl"
# The generation digit is taken only when no further digit or memory unit follows it, so
# "pcie 32gb" keeps its 32 GB and "pcie 8g" its 8 GB ("pcie 4.0", "pcie4", "pcie gen5" read).
_PCIE_RE = re.compile(
    r"pci[\s-]?e(?:xpress)?\s*(?:gen\s*)?"
    r"(?:\d(?:\.\d)?(?![\d.])(?!\s*(?:gib|gb|g|mib|mb)(?![a-z0-9])))?"
    r"(?:\s*x\s*\d{1,2}\b)?"
)
# Pricing-plan words with any brackets around them: "RTX 4090 spot", "H100 (Spot)",
# "A100 抢占式", "4090 按量". Chinese words would vanish as separators anyway; naming them
# keeps the rule in one place.
_PLAN_RE = re.compile(
    r"[(\[]?\s*(?<![a-z0-9])(?:spot(?:\s+instances?)?|on[\s_-]?demand|pre-?emptible"
    r"|interruptible|reserved|secure(?:\s+cloud)?|community(?:\s+cloud)?)(?![a-z0-9])\s*[)\]]?"
    r"|[(\[]?\s*(?:竞价|抢占式?|按量(?:付费|计费)?|按需|包[年月周天日])(?:实例)?\s*[)\]]?"
)
_VRAM_RE = re.compile(r"(?<![a-z0-9.])(\d{1,4}(?:\.\d+)?)\s*(gib|gb|g|mib|mb)(?![a-z0-9])")
# Bounded by "not a letter or digit" rather than \b, so "1g.10gb_spot" is still a MIG profile.
_VIRTUAL_RE = re.compile(
    r"(?<![a-z0-9])(?:v-?gpu|mig(?![a-z0-9])|\d+g\.\d+gb(?![a-z0-9])|grid(?![a-z0-9]))"
)
_COUNT_PREFIX_RE = re.compile(r"^(\d{1,3})\s*(?:[x×*]|卡)[\s_\-]*(?=\S)", re.IGNORECASE)
# "A6000x2", "RTX 4090 ×2", "RTX 4090 8卡"; the 卡 form needs a space so "4090卡" stays whole.
# The "x" of GTX, RTX and RX is no count: "GTX 980" is not 980 "GT" cards, "RX 580" not 580 "R".
_COUNT_SUFFIX_RE = re.compile(
    r"(?<=\S)(?:[\s_\-]*(?<!\bgt)(?<!\brt)(?<!\br)[x×*]\s*(\d{1,3})|\s+(\d{1,3})\s*卡)$",
    re.IGNORECASE,
)
_RETIRED_RE = re.compile(r"^(?:quadro|grid)?[km]\d{1,4}$|^gtx(?:[5-9]\d{2})(?:ti)?$|^titanx$")
_GEFORCE_NUMBER_RE = re.compile(r"^(?:RTX|GTX) (\d{4}.*)$")
_LAPTOP_TOKENS = frozenset({"laptop", "mobile", "notebook"})


def normalise_text(raw: str) -> str:
    """NFKC (full-width -> ASCII), Chinese keywords -> English, lower case, single spaces."""
    text = unicodedata.normalize("NFKC", raw)
    for word, replacement in _CJK_WORDS:
        text = text.replace(word, replacement)
    return " ".join(text.lower().split())


def _strip_plan_words(text: str) -> str:
    # The separator left behind ("A6000x2-spot" -> "A6000x2-") would hide a count suffix.
    return " ".join(_PLAN_RE.sub(" ", text).split()).strip(" -_")


def split_gpu_count(raw: str) -> tuple[int | None, str]:
    """Split a card count off a name: "8x H100" -> (8, "H100"); "A6000x2" -> (2, "A6000").

    Understands "8x", "8 x", "8×", "8*", "8卡" as prefix and "x2", "×2", "8卡" as suffix.
    The name comes back NFKC-normalised and stripped; (None, name) when there is no count.
    """
    text = unicodedata.normalize("NFKC", raw).strip()
    match = _COUNT_PREFIX_RE.match(text)
    if match and int(match.group(1)) > 0:
        return int(match.group(1)), text[match.end() :].strip()
    match = _COUNT_SUFFIX_RE.search(text)
    if match:
        count = int(match.group(1) or match.group(2))
        if count > 0:
            return count, text[: match.start()].strip()
    return None, text


def compact_key(tokens: Iterable[str]) -> str:
    """Join tokens and drop brand words glued to the front ("geforcertx4090" -> "rtx4090")."""
    key = "".join(tokens)
    stripped = True
    while stripped:
        stripped = False
        for prefix in _BRAND_PREFIXES:
            if key.startswith(prefix) and len(key) > len(prefix):
                key = key[len(prefix) :]
                stripped = True
    return key


def _tokens(text: str) -> list[str]:
    return [t for t in re.split(r"[^a-z0-9]+", text) if t and t not in _NOISE_TOKENS]


def _key_of(spelling: str) -> str:
    return compact_key(_tokens(normalise_text(spelling)))


# --- the alias index ------------------------------------------------------------------


def _spellings(sku: GpuSku) -> list[str]:
    spellings = [sku.model, *sku.aliases]
    if sku.segment == "consumer":
        # "4090 24G", Compshare's GpuType "4090", and the same for aliases: "4080S 32G".
        for spelling in list(spellings):
            bare = _GEFORCE_NUMBER_RE.match(spelling)
            if bare:
                spellings.append(bare.group(1))
    return spellings


@lru_cache(maxsize=8)
def alias_index(catalog: Catalog) -> Mapping[str, frozenset[str]]:
    """Compacted spelling -> canonical model names it may mean (several = ambiguous)."""
    index: dict[str, set[str]] = {}
    for sku in catalog.all():
        for spelling in _spellings(sku):
            key = _key_of(spelling)
            if key:
                index.setdefault(key, set()).add(sku.model)
    return {key: frozenset(models) for key, models in index.items()}


# --- VRAM -----------------------------------------------------------------------------


def snap_vram_gb(hint_gb: Decimal, sizes: Iterable[int]) -> int | None:
    """The nominal size nearest to a reported one; None if it is too far or two are as near.

    Reported sizes run below nominal (ECC reserve, GiB vs GB): a T4 shows 15 GiB, an
    L40S 45 GiB, an A100 80GB 79.6 GiB. Tolerance is 8 % of the nominal size plus 0.5 GB,
    so 40 GB is not a 48 GB card and 11 GB is neither a 10 GB nor a 12 GB one.
    """
    ranked = sorted((abs(hint_gb - size), size) for size in set(sizes))
    if not ranked or (len(ranked) > 1 and ranked[0][0] == ranked[1][0]):
        return None
    distance, size = ranked[0]
    return size if distance <= Decimal(size) * Decimal("0.08") + Decimal("0.5") else None


def _hint_gb(
    raw: str, vram_gb: int | float | Decimal | None, vram_mb: int | float | None
) -> list[Decimal]:
    hints: list[Decimal] = []
    for value, divisor, unit in ((vram_gb, 1, "GB"), (vram_mb, 1024, "MB")):
        if value is None:
            continue
        try:
            number = value if isinstance(value, Decimal) else Decimal(str(value))
        except InvalidOperation as exc:
            raise UnresolvedGpuName(raw, f"VRAM hint {value!r} {unit} is not a number") from exc
        if isinstance(value, bool) or not number.is_finite() or number <= 0:
            raise UnresolvedGpuName(raw, f"VRAM hint {value!r} {unit} is not a positive number")
        # MB hints are MiB as nvidia-smi and Vast.ai report them: 24564 -> 23.99 GiB.
        hints.append(number / divisor)
    return hints


def _extract_vram(raw: str, text: str) -> tuple[Decimal | None, str]:
    values: set[Decimal] = set()
    for number, unit in _VRAM_RE.findall(text):
        value = Decimal(number)
        values.add(value / 1024 if unit in ("mb", "mib") else value)
    if len(values) > 1:
        shown = ", ".join(f"{v.normalize():f} GB" for v in sorted(values))
        raise UnresolvedGpuName(raw, f"name gives several memory sizes ({shown})")
    return (values.pop() if values else None), _VRAM_RE.sub(" ", text)


# --- matching -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Parsed:
    models: frozenset[str]
    form_factor: str | None
    memory_type: str | None
    key: str


def _parse_model(raw: str, tokens: list[str], index: Mapping[str, frozenset[str]]) -> _Parsed:
    # Whole-name aliases first ("GH200 SXM", "RTX PRO 6000 S"), then peel attributes off.
    whole = compact_key(tokens)
    if whole in index:
        return _Parsed(index[whole], None, None, whole)
    form_factors: set[str] = set()
    memory_types: set[str] = set()
    rest: list[str] = []
    for token in tokens:
        glued = _GLUED_FORM_RE.match(token)
        if token in _FORM_FACTOR_TOKENS:
            form_factors.add(_FORM_FACTOR_TOKENS[token])
        elif _MEMORY_TYPE_RE.match(token):
            memory_types.add(token)
        elif _RACK_RE.match(token):
            continue
        elif glued and compact_key([glued.group(1)]) in index:
            rest.append(glued.group(1))
            form_factors.add(_FORM_FACTOR_TOKENS[glued.group(2)])
        else:
            rest.append(token)
    if len(form_factors) > 1:
        raise UnresolvedGpuName(
            raw, f"name gives several form factors ({', '.join(sorted(form_factors))})"
        )
    if len(memory_types) > 1:
        raise UnresolvedGpuName(
            raw, f"name gives several memory types ({', '.join(sorted(memory_types))})"
        )
    key = compact_key(rest)
    return _Parsed(
        index.get(key, frozenset()),
        form_factors.pop() if form_factors else None,
        memory_types.pop() if memory_types else None,
        key,
    )


def _unknown(raw: str, text: str, tokens: list[str], key: str, cat: Catalog) -> UnresolvedGpuName:
    """Why the name found no model, and whether the catalog leaves it out on purpose."""
    if "cpu" in tokens or key in ("none", "nonecpu"):
        return UnresolvedGpuName(raw, "CPU-only offer: no GPU", SkipKind.NOT_A_GPU_OFFER)
    if key and _LAPTOP_TOKENS & set(tokens):
        why = "laptop GPU: not in the catalog (other chip and memory than the desktop card)"
        return UnresolvedGpuName(raw, why, SkipKind.OUTSIDE_CATALOG)
    if key and _RETIRED_RE.match(key):
        why = "Kepler/Maxwell-era card: outside the catalog, which starts at Pascal"
        return UnresolvedGpuName(raw, why, SkipKind.OUTSIDE_CATALOG)
    return UnresolvedGpuName(raw, _why_unknown(text, key, cat))


def _why_unknown(text: str, key: str, catalog: Catalog) -> str:
    if not key:
        return "no GPU model in the name"
    parts = [p for p in re.split(r"\s*(?:/|\||、|\bor\b)\s*", text) if p.strip()]
    if len(parts) > 1:
        named = []
        for part in parts:
            try:
                named.append(resolve_gpu(part, catalog=catalog).model)
            except UnresolvedGpuName:
                continue
        if len(named) > 1:
            return f"name lists several GPU models ({', '.join(dict.fromkeys(named))})"
    return f"unknown GPU model {key!r}: not in the catalog"


def _sizes(skus: Iterable[GpuSku]) -> str:
    return ", ".join(f"{s}" for s in sorted({sku.vram_gb for sku in skus})) + " GB"


def _narrow_by_vram(
    raw: str, candidates: list[GpuSku], name_vram: Decimal | None, hints: list[Decimal]
) -> list[GpuSku]:
    sizes = [sku.vram_gb for sku in candidates]
    models = " / ".join(sorted({sku.model for sku in candidates}))
    snapped: dict[int, str] = {}
    for hint, origin in [(name_vram, "in the name"), *((h, "given") for h in hints)]:
        if hint is None:
            continue
        size = snap_vram_gb(hint, sizes)
        if size is None:
            raise UnresolvedGpuName(
                raw,
                f"VRAM {hint.normalize():f} GB ({origin}) matches no variant of {models} "
                f"(catalog has {_sizes(candidates)})",
            )
        snapped.setdefault(size, origin)
    if len(snapped) > 1:
        shown = " vs ".join(f"{size} GB {origin}" for size, origin in snapped.items())
        raise UnresolvedGpuName(raw, f"VRAM sizes disagree ({shown})")
    if snapped:
        size = next(iter(snapped))
        return [sku for sku in candidates if sku.vram_gb == size]
    # A modded board is not what the model name denotes: hosts advertise its extra memory
    # ("RTX 4090 48G"), so without a VRAM figure "RTX 4090" means the vendor's cards.
    vendor_made = [sku for sku in candidates if not sku.modded]
    return vendor_made or candidates


def _narrow(
    raw: str, parsed: _Parsed, catalog: Catalog, name_vram: Decimal | None, hints: list[Decimal]
) -> list[GpuSku]:
    candidates = [sku for model in sorted(parsed.models) for sku in catalog.variants(model)]
    models = " / ".join(sorted(parsed.models))
    if parsed.form_factor is not None:
        form = parsed.form_factor
        candidates = [
            sku
            for sku in candidates
            if sku.form_factor == form
            or (sku.form_factor is None and sku.segment == "consumer" and form == "PCIe")
        ]
        if not candidates:
            raise UnresolvedGpuName(raw, f"{models} has no {form} variant in the catalog")
    if parsed.memory_type is not None:
        memory = parsed.memory_type
        candidates = [sku for sku in candidates if (sku.memory_type or "").lower() == memory]
        if not candidates:
            raise UnresolvedGpuName(raw, f"{models} has no {memory.upper()} variant in the catalog")
    return _narrow_by_vram(raw, candidates, name_vram, hints)


def _family_of(models: set[str]) -> str | None:
    """The declared family covering every model a name left open, if one does."""
    for family, members in FAMILIES.items():
        if models <= members:
            return family
    return None


def _ambiguous(raw: str, candidates: list[GpuSku], *, vram_known: bool) -> UnresolvedGpuName:
    """The error for a name left on several catalog models, saying what would settle it."""
    models = sorted({sku.model for sku in candidates})
    options = "; ".join(f"{m} ({_sizes(s for s in candidates if s.model == m)})" for m in models)
    sizes_per_model = [{s.vram_gb for s in candidates if s.model == m} for m in models]
    disjoint = sum(map(len, sizes_per_model)) == len(set().union(*sizes_per_model))
    settle = ""
    if disjoint and not vram_known:
        settle = "; a VRAM size would settle it"
    elif vram_known:
        # Different models are never one family (see the module docstring): sharing a VRAM
        # does not merge them, so only a fuller name can say which card it is.
        settle = "; distinct cards with that VRAM: only a fuller name settles it"
    return UnresolvedGpuName(raw, f"ambiguous name: could be {options}{settle}")


def resolve_gpu(
    raw: str,
    *,
    vram_gb: int | float | Decimal | None = None,
    vram_mb: int | float | None = None,
    catalog: Catalog | None = None,
) -> GpuIdentity:
    """Resolve a provider's GPU name to a catalog identity, or raise UnresolvedGpuName.

    ``vram_gb`` / ``vram_mb`` are per-card memory from another field of the offer (MB are
    MiB, as nvidia-smi and Vast.ai report them); they snap to the nearest catalog size of
    the model. A card count in the name ("8x H100") is ignored: use split_gpu_count for it.
    """
    if catalog is not None:
        return _resolve(raw, vram_gb, vram_mb, catalog)
    # A market repeats a few dozen names over thousands of offers: answer each once.
    try:
        found = _resolve_in_packaged_catalog(raw, vram_gb, vram_mb)
    except TypeError:  # an unhashable hint (a signalling NaN): no cache for it
        return _resolve(raw, vram_gb, vram_mb, get_catalog())
    if isinstance(found, tuple):
        reason, left_out = found
        raise UnresolvedGpuName(raw, reason, left_out)
    return found


@lru_cache(maxsize=4096)
def _resolve_in_packaged_catalog(
    raw: str, vram_gb: int | float | Decimal | None, vram_mb: int | float | None
) -> GpuIdentity | tuple[str, SkipKind | None]:
    """``_resolve`` in the packaged catalog: the identity, or why it is refused and whether
    on purpose (the caller skips a name left out on purpose, so both must survive the cache)."""
    try:
        return _resolve(raw, vram_gb, vram_mb, get_catalog())
    except UnresolvedGpuName as refused:
        return refused.reason, refused.left_out


def _resolve(
    raw: str,
    vram_gb: int | float | Decimal | None,
    vram_mb: int | float | None,
    cat: Catalog,
) -> GpuIdentity:
    text = normalise_text(raw)
    if not text:
        raise UnresolvedGpuName(raw, "empty GPU name")
    if _VIRTUAL_RE.search(text):
        raise UnresolvedGpuName(
            raw,
            "virtual GPU slice (vGPU/MIG/GRID profile): no physical card model",
            SkipKind.OUTSIDE_CATALOG,
        )
    hints = _hint_gb(raw, vram_gb, vram_mb)
    text = _strip_plan_words(text)
    _, text = split_gpu_count(text)
    text = _PCIE_RE.sub(" pcie ", text)
    name_vram, text = _extract_vram(raw, text)
    tokens = _tokens(text)
    parsed = _parse_model(raw, tokens, alias_index(cat))
    if not parsed.models:
        raise _unknown(raw, text, tokens, parsed.key, cat)
    candidates = _narrow(raw, parsed, cat, name_vram, hints)
    models = {sku.model for sku in candidates}
    model = candidates[0].model
    if len(models) > 1:
        family = _family_of(models)
        if family is None:
            raise _ambiguous(raw, candidates, vram_known=bool(name_vram or hints))
        model = family
    vrams = {sku.vram_gb for sku in candidates}
    forms = {sku.form_factor for sku in candidates}
    return GpuIdentity(
        vendor=candidates[0].vendor,
        model=model,
        vram_gb=vrams.pop() if len(vrams) == 1 else None,
        form_factor=forms.pop() if len(forms) == 1 else None,
        # Only a VRAM figure selects a modded SKU, so all candidates are modded or none is.
        modded=all(sku.modded for sku in candidates),
    )


def resolve_gpu_or_error(
    raw: str,
    *,
    vram_gb: int | float | Decimal | None = None,
    vram_mb: int | float | None = None,
) -> GpuIdentity | UnresolvedGpuName:
    """resolve_gpu, returning the error instead of raising it (for batch normalisation)."""
    try:
        return resolve_gpu(raw, vram_gb=vram_gb, vram_mb=vram_mb)
    except UnresolvedGpuName as error:
        return error


def identity_as_json(
    raw: str, identity_or_error: GpuIdentity | UnresolvedGpuName
) -> dict[str, object]:
    """The JSON shape of one resolution, as ``gpurent normalize`` prints it.

    ``{"input", "vendor", "model", "vram_gb", "form_factor", "modded"}`` with nulls for what
    the name leaves open, or ``{"input", "error"}`` with the human-readable reason.
    """
    if isinstance(identity_or_error, UnresolvedGpuName):
        return {"input": raw, "error": identity_or_error.reason}
    return {
        "input": raw,
        "vendor": identity_or_error.vendor,
        "model": identity_or_error.model,
        "vram_gb": identity_or_error.vram_gb,
        "form_factor": identity_or_error.form_factor,
        "modded": identity_or_error.modded,
    }
