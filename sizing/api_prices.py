"""Per-token prices of serverless APIs serving open models, dated and sourced.

Two sources, read together:

* the table shipped with gpurent (``data/api_prices.toml``): prices read from providers'
  pages, each with its date and address;
* a refreshed list (``api_prices.json`` beside the warehouse), written by `gpurent
  api-prices refresh` from OpenRouter's public model list: machine-read, dated by the crawl.

An API price counts for a sized model when it serves the same catalog model ("same") or
another catalog model of the very same architecture ("equivalent": Llama 3.3 70B for a
Llama 3.1 70B workload, DeepSeek-R1 for DeepSeek-V3). A model gpurent cannot place in its
catalog is not compared: a name alone never makes two models equal.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from sizing.arch import ModelArch

REFRESHED_FILE = "api_prices.json"
"""The refreshed list's file name, in the warehouse's folder."""
OLD_AFTER_DAYS = 180
"""A price read longer ago than this is flagged old: API prices move within months."""


class ApiPriceError(ValueError):
    """An API price table that cannot be read (a wrong field, a price that is no number)."""


class Relation(StrEnum):
    """How an API's model stands to the sized one."""

    SAME = "same"
    EQUIVALENT = "equivalent"
    """Another model of the same architecture: the same speed and memory, other weights."""


@dataclass(frozen=True)
class ApiPrice:
    """One API's price for one model: money per million prompt and generated tokens."""

    provider: str
    api_model: str
    model: str
    """The catalog model it serves."""
    input_per_million: Decimal
    output_per_million: Decimal
    currency: str
    as_of: date
    source: str
    served_as: str | None = None
    """The precision the provider says it serves (fp8...); None when it does not say."""
    note: str | None = None

    def request_cost(self, prompt_tokens: int, gen_tokens: int) -> Decimal:
        """What one request of ``prompt_tokens`` in and ``gen_tokens`` out costs, exactly."""
        money = prompt_tokens * self.input_per_million + gen_tokens * self.output_per_million
        return money / Decimal(1_000_000)

    def age_days(self, today: date) -> int:
        return (today - self.as_of).days


@dataclass(frozen=True)
class MatchedPrice:
    price: ApiPrice
    relation: Relation


def _money(value: Any, where: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ApiPriceError(f"{where}: a price must be a quoted decimal, got {value!r}")
    try:
        amount = Decimal(str(value))
    except InvalidOperation as exc:
        raise ApiPriceError(f"{where}: {value!r} is not a number") from exc
    if not amount.is_finite() or amount < 0:
        raise ApiPriceError(f"{where}: {value!r} is not a price (>= 0)")
    return amount


_REQUIRED = ("provider", "api_model", "model", "input", "output", "currency", "as_of", "source")
_OPTIONAL = ("served_as", "note")


def read_price(entry: Mapping[str, Any], where: str) -> ApiPrice:
    """One table entry as an ApiPrice; ApiPriceError names what is wrong and where."""
    missing = [k for k in _REQUIRED if k not in entry]
    unknown = sorted(set(entry) - set(_REQUIRED) - set(_OPTIONAL))
    if missing or unknown:
        raise ApiPriceError(f"{where}: missing {missing}, unknown {unknown}")
    when = entry["as_of"]
    try:
        as_of = when if isinstance(when, date) else date.fromisoformat(str(when))
    except ValueError as exc:
        raise ApiPriceError(f"{where}: as_of {when!r} is not a date") from exc
    if isinstance(as_of, datetime):
        as_of = as_of.date()
    currency = str(entry["currency"])
    if len(currency) != 3 or not currency.isupper():
        raise ApiPriceError(f"{where}: currency {currency!r} is not an ISO code")
    return ApiPrice(
        provider=str(entry["provider"]),
        api_model=str(entry["api_model"]),
        model=str(entry["model"]),
        input_per_million=_money(entry["input"], f"{where} input"),
        output_per_million=_money(entry["output"], f"{where} output"),
        currency=currency,
        as_of=as_of,
        source=str(entry["source"]),
        served_as=entry.get("served_as"),
        note=entry.get("note"),
    )


@cache
def shipped_prices() -> tuple[ApiPrice, ...]:
    """The table shipped with gpurent."""
    text = resources.files("sizing").joinpath("data/api_prices.toml").read_text("utf-8")
    doc = tomllib.loads(text)
    return tuple(
        read_price(entry, f"api_prices.toml price {n}")
        for n, entry in enumerate(doc.get("price", []), start=1)
    )


def refreshed_path(db: Path) -> Path:
    """Where `gpurent api-prices refresh` keeps its list for the warehouse ``db``."""
    return db.parent / REFRESHED_FILE


def read_refreshed(path: Path) -> tuple[ApiPrice, ...]:
    """The refreshed list at ``path`` (none when absent). Its entries have the table's
    fields; ``as_of`` is the day of the crawl that read them."""
    if not path.is_file():
        return ()
    try:
        doc = json.loads(path.read_text("utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ApiPriceError(f"{path}: not readable as JSON ({exc})") from exc
    entries = doc.get("prices") if isinstance(doc, dict) else None
    if not isinstance(entries, list):
        raise ApiPriceError(f"{path}: no 'prices' list")
    return tuple(read_price(e, f"{path} price {n}") for n, e in enumerate(entries, start=1))


def write_refreshed(path: Path, prices: Iterable[ApiPrice], fetched_at: datetime) -> None:
    """Write the refreshed list atomically (a reader never sees half of it)."""
    rows = []
    for p in prices:
        row = {f.name: getattr(p, f.name) for f in fields(p)}
        rows.append(
            {
                "provider": row["provider"],
                "api_model": row["api_model"],
                "model": row["model"],
                "input": format(row["input_per_million"], "f"),
                "output": format(row["output_per_million"], "f"),
                "currency": row["currency"],
                "as_of": row["as_of"].isoformat(),
                "source": row["source"],
                **{k: row[k] for k in _OPTIONAL if row[k] is not None},
            }
        )
    doc = {"fetched_at": fetched_at.isoformat(), "prices": rows}
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_suffix(".json.part")
    scratch.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", "utf-8")
    scratch.replace(path)


def _shape(arch: ModelArch) -> tuple[Any, ...]:
    """The architecture without its name: equal shapes run at equal speed and memory."""
    return tuple(getattr(arch, f.name) for f in fields(arch) if f.name not in {"name", "extra"})


def matching_prices(arch: ModelArch, prices: Iterable[ApiPrice]) -> list[MatchedPrice]:
    """The prices that serve ``arch``'s model (same), or one of its architecture
    (equivalent), the newest reading per (provider, api_model, currency). Entries
    naming a model the catalog does not hold are never matched."""
    from sizing.models import find_model

    wanted = _shape(arch)
    found: dict[tuple[str, str, str], MatchedPrice] = {}
    for price in prices:
        entry = find_model(price.model)
        if entry is None:
            continue
        if entry.arch.name == arch.name:
            relation = Relation.SAME
        elif _shape(entry.arch) == wanted:
            relation = Relation.EQUIVALENT
        else:
            continue
        key = (price.provider, price.api_model, price.currency)
        kept = found.get(key)
        # The newest reading of one API's price wins (a refresh over the shipped table).
        if kept is None or price.as_of > kept.price.as_of:
            found[key] = MatchedPrice(price, relation)
    return list(found.values())
