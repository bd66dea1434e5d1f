"""The model catalog (``data/models.json``): popular open models by name, with sources.

Names are matched case-insensitively, with or without the organisation prefix
("Qwen/Qwen2.5-7B-Instruct") and with the usual suffixes (-Instruct, -Chat, -it, -hf, and
quantisation words: -AWQ, -GPTQ-Int4, -FP8, -bnb-4bit, GGUF quant names, ".gguf") stripped
when the full name is not known. ``read_name`` also says which quantisation the name
declares (``Qwen2.5-32B-Instruct-AWQ`` is an AWQ checkpoint, not a bf16 one) and whether
the entry found is another model than the one named (``llama-3-8b`` is sized as
Llama-3.1-8B). ``generic_arch`` builds a stand-in architecture from a bare parameter count,
as a last resort.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, fields
from functools import cache
from importlib import resources
from typing import Any

from sizing.arch import ModelArch
from sizing.quant import GGUF_ANY, INT4_ANY, INT8_ANY

_META = frozenset({"name", "aliases", "params_b", "active_params_b", "source", "base"})
_ARCH_FIELDS = frozenset(f.name for f in fields(ModelArch)) - {"name", "extra"}
_TUNE_WORDS = frozenset({"instruct", "chat", "it", "hf", "base"})
"""Words naming a fine-tune of the same architecture (stripped, never "another model")."""
_QUANT_WORDS = frozenset(
    {
        "gguf", "awq", "gptq", "fp8", "int4", "int8", "dynamic", "bnb", "4bit", "8bit", "nf4",
        "w8a8", "w4a16", "fp16", "bf16", "f16", "quantized", "quant",
    }
)  # fmt: skip
"""Words naming a quantisation (or format) of a checkpoint, not another model."""
_VENDOR_WORDS = frozenset({"meta"})
"""Vendor words some ids repeat in the model name ("meta-llama/Meta-Llama-3.1-8B")."""
_GGUF_QUANT = re.compile(r"(?:^|-)(i?q[1-8](?:-(?:k|0|1|s|m|l|xs|xxs))*)$")
"""A GGUF quant at the end of a folded name: q4-k-m, q8-0, iq4-xs (underscores folded)."""


class UnknownModel(LookupError):
    """A model name the catalog does not hold."""


@dataclass(frozen=True)
class CatalogModel:
    """A catalog entry: the architecture and where its facts come from."""

    arch: ModelArch
    params_b: float
    """The published total parameter count, billions."""
    active_params_b: float | None
    source: str
    aliases: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.arch.name


def _fold(name: str) -> str:
    text = name.strip().lower().replace("_", "-").replace(" ", "-")
    return text.rsplit("/", 1)[-1]


def _build(entries: list[dict[str, Any]]) -> dict[str, CatalogModel]:
    raw: dict[str, dict[str, Any]] = {}
    out: dict[str, CatalogModel] = {}
    for entry in entries:
        name = entry["name"]
        if not entry.get("source"):
            raise ValueError(f"model {name} has no source")
        facts = {k: v for k, v in entry.items() if k not in _META}
        unknown = set(facts) - _ARCH_FIELDS
        if unknown:
            raise ValueError(f"model {name}: unknown fields {sorted(unknown)}")
        if "base" in entry:
            facts = {**raw[entry["base"]], **facts}
        raw[name] = facts
        out[name] = CatalogModel(
            arch=ModelArch(name=name, **facts),
            params_b=float(entry["params_b"]),
            active_params_b=entry.get("active_params_b"),
            source=entry["source"],
            aliases=tuple(entry.get("aliases", ())),
        )
    return out


@cache
def catalog() -> dict[str, CatalogModel]:
    """Every catalog model by its canonical name, in file order."""
    text = resources.files("sizing").joinpath("data/models.json").read_text("utf-8")
    return _build(json.loads(text)["models"])


@cache
def _index() -> dict[str, str]:
    index: dict[str, str] = {}
    for name, model in catalog().items():
        for key in (name, *model.aliases):
            index.setdefault(_fold(key), name)
    return index


def _strip(key: str) -> str:
    """The name without a file extension, fine-tune words and quantisation words."""
    key = key.removesuffix(".gguf")
    while True:
        quant = _GGUF_QUANT.search(key)
        if quant and quant.start(1) > 0:
            key = key[: quant.start()]
            continue
        head, sep, last = key.rpartition("-")
        if sep and head and (last in _TUNE_WORDS or last in _QUANT_WORDS):
            key = head
            continue
        return key


def find_model(name: str) -> CatalogModel | None:
    """The catalog entry for a name or alias, or None."""
    key = _fold(name)
    index = _index()
    if key in index:
        return catalog()[index[key]]
    stripped = _strip(key)
    for candidate in (stripped, _drop_vendor(stripped)):
        if candidate in index:
            return catalog()[index[candidate]]
    return None


def _drop_vendor(key: str) -> str:
    head, sep, rest = key.partition("-")
    return rest if sep and head in _VENDOR_WORDS else key


def name_precision(name: str) -> tuple[str | None, str | None]:
    """The quantisation a model name declares, as (precision, the words that say it).

    precision is a ``quant.PRECISIONS`` name ("awq", "gptq-int8", "fp8", "nf4", "q4_k_m"),
    or GGUF_ANY / INT4_ANY / INT8_ANY when the name says only that much, or the GGUF quant
    as written when gpurent has no bits figure for it ("q4_k_s"); (None, None) when the name
    declares none (a 16-bit checkpoint, or a name that does not say)."""
    key = _fold(name)
    words = set(re.split(r"[-.]", key))
    gguf = key.endswith(".gguf") or "gguf" in words
    quant = _GGUF_QUANT.search(key.removesuffix(".gguf"))
    if quant:
        return quant.group(1).replace("-", "_"), quant.group(1).upper().replace("-", "_")
    if gguf:
        return GGUF_ANY, "GGUF"
    eight = bool(words & {"int8", "8bit"})
    if "awq" in words:
        return "awq", "AWQ"
    if "gptq" in words:
        if eight:
            return "gptq-int8", "GPTQ-Int8"
        return "gptq-int4", "GPTQ-Int4" if "int4" in words else "GPTQ"
    if "fp8" in words:
        return "fp8", "FP8"
    if "bnb" in words or "nf4" in words or "4bit" in words:
        return ("int8", "bnb-8bit") if eight else ("nf4", "bnb-4bit")
    if "int4" in words:
        return INT4_ANY, "Int4"
    if eight:
        return INT8_ANY, "Int8"
    return None, None


def another_model(name: str, entry: CatalogModel) -> bool:
    """Whether ``name`` names another model than ``entry`` (found through an alias such as
    "llama-3-8b" for Llama-3.1-8B): its version numbers differ, or it has words the entry's
    name lacks (fine-tune, quantisation and vendor words aside)."""
    asked = _strip(_fold(name))
    canonical = _fold(entry.name)
    if asked == canonical:
        return False
    if re.findall(r"\d+", asked) != re.findall(r"\d+", canonical):
        return True
    ignored = _TUNE_WORDS | _QUANT_WORDS | _VENDOR_WORDS
    extra = set(re.findall(r"[a-z]+", asked)) - set(re.findall(r"[a-z]+", canonical)) - ignored
    return bool(extra)


def get_entry(name: str) -> CatalogModel:
    """The catalog entry for a name; UnknownModel with suggestions otherwise."""
    found = find_model(name)
    if found is None:
        key = _fold(name)
        close = [n for n in catalog() if key[:5] in n.lower()][:8]
        hint = f" Close: {', '.join(close)}." if close else ""
        raise UnknownModel(
            f"no model {name!r} in the catalog.{hint} See `gpurent models`, or pass "
            "--config path/to/config.json or --params-b."
        )
    return found


def get_model(name: str) -> ModelArch:
    """The architecture of a catalog model; UnknownModel with suggestions otherwise."""
    return get_entry(name).arch


def generic_arch(params_b: float) -> ModelArch:
    """A Llama-shaped dense stand-in with ``params_b`` billion parameters.

    Only the parameter count is known, so the shape follows the Llama 3 family: width about
    128 x depth, 8 KV heads of 128, SwiGLU at 3.5 x width, a 128k vocabulary; layers are
    then set so the total matches. KV and activations are therefore guesses.
    """
    if not 0.05 <= params_b <= 3000:
        raise ValueError("--params-b must be between 0.05 and 3000 (billions)")
    target = params_b * 1e9
    vocab = 128256
    # per layer ~ 12.5 h^2 (GQA attention 2.25 h^2 + MLP 3 x 3.5 h^2), depth ~ h / 128
    hidden = max(512, round((target * 128 / 12.5) ** (1 / 3) / 128) * 128)
    heads = max(hidden // 128, 1)
    kv_heads = 8 if heads % 8 == 0 else heads
    ff = round(3.5 * hidden / 256) * 256
    per_layer = 2 * hidden * hidden + 2 * hidden * kv_heads * 128 + 3 * hidden * ff
    embeddings = 2 * vocab * hidden
    layers = max(1, round((target - embeddings) / per_layer))
    return ModelArch(
        name=f"generic-{params_b:g}B",
        num_layers=layers,
        hidden_size=hidden,
        num_heads=heads,
        num_kv_heads=kv_heads,
        head_dim=128,
        intermediate_size=ff,
        vocab_size=vocab,
    )
