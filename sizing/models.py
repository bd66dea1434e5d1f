"""The model catalog (``data/models.json``): popular open models by name, with sources.

Names are matched case-insensitively, with or without the organisation prefix
("Qwen/Qwen2.5-7B-Instruct") and with the usual suffixes (-Instruct, -Chat, -it, -hf)
stripped when the full name is not known. ``generic_arch`` builds a stand-in architecture
from a bare parameter count, as a last resort.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, fields
from functools import cache
from importlib import resources
from typing import Any

from sizing.arch import ModelArch

_META = frozenset({"name", "aliases", "params_b", "active_params_b", "source", "base"})
_ARCH_FIELDS = frozenset(f.name for f in fields(ModelArch)) - {"name", "extra"}
_SUFFIXES = re.compile(r"(-(instruct|chat|it|hf|base|gguf|awq|gptq.*|fp8|int4|int8))+$")


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


def find_model(name: str) -> CatalogModel | None:
    """The catalog entry for a name or alias, or None."""
    key = _fold(name)
    index = _index()
    if key in index:
        return catalog()[index[key]]
    stripped = _SUFFIXES.sub("", key)
    if stripped in index:
        return catalog()[index[stripped]]
    return None


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
