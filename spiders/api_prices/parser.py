"""OpenRouter's public model list (`GET {base}/models` -> `{"data": [model, ...]}`).

The shape is OpenRouter's documented one: the API reference "List all models and their
properties" (https://openrouter.ai/docs/api/api-reference/models/get-models) and its SDKs'
model schema (github.com/OpenRouterTeam/python-sdk, docs/components/model.mdx and
publicpricing.mdx; recordings/PROVENANCE). No key is needed. Each model has `id` ("meta-llama/
llama-3.1-8b-instruct"), `name`, `hugging_face_id` (the weights it serves, "meta-llama/
Llama-3.1-8B-Instruct"; optional, may be null or empty), `context_length` and `pricing`, an
object of decimal strings in USD: `prompt` and `completion` per token (both required),
`request` per request, `image` per input image, `web_search`, `internal_reasoning`,
`input_cache_read`... optional; `discount` (a fraction the price is multiplied by one minus)
and `overrides` (conditional prices: long prompts, time windows; "the top-level pricing keys
always reflect the price that applies under default conditions") are optional too.
OpenRouter prices its routers (`openrouter/auto`) at "-1": the price of whatever model the
router picks. An id may end in a variant (`:free`: no per-token cost, account-wide rate
limits).

Our reading (rules of truth: never guess a price, never read a changed layout as "nothing"):

* one price per model: input and output per **million** tokens, the per-token strings times
  1,000,000 in exact Decimal arithmetic (never a float), currency USD (the list has no other);
* a negative price is a variable one (a router): skipped, counted (`variable_price`); a price
  gone, null, or not a decimal is skipped, counted (`unreadable_price`); a model with a
  per-request fee or a discount the per-token price may or may not include is skipped too
  (`request_fee`, `discount`): its per-token price alone is not what a request costs;
* a model that is no object or has no readable id is skipped (`unreadable_model`); an id
  listed twice with different prices is skipped whole (`conflicting_duplicate`), with the
  same price once;
* the layout: an answer without its `data` list (renamed, removed, not a list) is a layout
  change, and so is a list none of whose models carries `id`, `pricing.prompt` or
  `pricing.completion` (`MODEL`), or a list with models but not one readable price; an error
  body (`{"error": ...}`) or an **empty** `data` list is a failed read, never "no prices".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from spiders.parsers.contract import Contract, check_items
from spiders.parsers.envelope import no_list

MODELS_PATH = "/models"
CURRENCY = "USD"
"""OpenRouter prices everything in US dollars."""
FEED_KIND = "api_price"
"""The `kind` of the spider's feed lines (a provider's are `offer`, `quarantine`)."""
MILLION = Decimal(1_000_000)

MODEL = Contract(noun="model", identity=("id",), price=("pricing.prompt", "pricing.completion"))

# Why a model gives no price (the run report's `skipped`, by reason).
VARIABLE_PRICE = "variable_price"
UNREADABLE_PRICE = "unreadable_price"
REQUEST_FEE = "request_fee"
DISCOUNT = "discount"
UNREADABLE_MODEL = "unreadable_model"
CONFLICTING_DUPLICATE = "conflicting_duplicate"


class NoPrice(ValueError):
    """A model whose price cannot be taken: ``reason`` is one of the skip reasons."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class ModelPrice:
    """One model's price in OpenRouter's list, per million tokens."""

    api_model: str
    hugging_face_id: str | None
    name: str | None
    input_per_million: Decimal
    output_per_million: Decimal
    conditional_prices: bool = False
    """OpenRouter lists other prices for some requests (`pricing.overrides`: long prompts,
    time windows); these are the default ones."""
    currency: str = CURRENCY

    @property
    def variant(self) -> str | None:
        """The id's variant (``free`` of ``...:free``), None without one."""
        _, _, tail = self.api_model.partition(":")
        return tail or None

    def feed_line(self, *, run_id: str, observed_at: datetime, source: str) -> dict[str, Any]:
        """The feed line (JSON-ready: money as plain decimal strings)."""
        return {
            "kind": FEED_KIND,
            "run_id": run_id,
            "observed_at": observed_at.isoformat(),
            "source": source,
            "api_model": self.api_model,
            "hugging_face_id": self.hugging_face_id,
            "name": self.name,
            "variant": self.variant,
            "input_per_million": plain(self.input_per_million),
            "output_per_million": plain(self.output_per_million),
            "currency": self.currency,
            "conditional_prices": self.conditional_prices,
        }


@dataclass
class ModelsPage:
    """What one answer of the list yielded."""

    prices: list[ModelPrice] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)
    """One line per skipped model: its id (or place) and why."""
    missing_fields: list[str] = field(default_factory=list)
    layout_error: str | None = None
    failed_read: str | None = None
    """The answer says nothing about prices (an empty list, an error body)."""


def plain(amount: Decimal) -> str:
    """``amount`` as a plain decimal string without trailing zeros ("0.15", "2", "0")."""
    text = format(amount, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text if text not in ("", "-0") else "0"


def per_million(value: Any, where: str) -> Decimal:
    """A per-token USD price (a decimal string, or an exact JSON number) per million tokens;
    `NoPrice` when it is unreadable or negative (a variable price)."""
    if isinstance(value, str):
        try:
            amount = Decimal(value.strip())
        except InvalidOperation:
            raise NoPrice(UNREADABLE_PRICE, f"{where} {value[:40]!r} is not a number") from None
    elif isinstance(value, int | Decimal) and not isinstance(value, bool):
        amount = Decimal(value)
    else:
        shown = "missing" if value is None else f"{type(value).__name__} {value!r}"[:60]
        raise NoPrice(UNREADABLE_PRICE, f"{where} is {shown}")
    if not amount.is_finite():
        raise NoPrice(UNREADABLE_PRICE, f"{where} {value!r} is not a number")
    if amount < 0:
        raise NoPrice(VARIABLE_PRICE, f"{where} is {value!r}: priced as the model it picks")
    return amount * MILLION


def _extra_cost(pricing: Mapping[str, Any]) -> None:
    """`NoPrice` when a request costs more than its tokens (a per-request fee) or the
    listed price may not be the one paid (a discount)."""
    if pricing.get("request") is not None:
        fee = per_million(pricing["request"], "pricing.request")
        if fee != 0:
            raise NoPrice(REQUEST_FEE, f"a fee of {plain(fee / MILLION)} USD per request")
    discount = pricing.get("discount")
    if discount is None:
        return
    try:
        none_off = Decimal(str(discount).strip()) == 0 and not isinstance(discount, bool)
    except InvalidOperation:
        none_off = False
    if not none_off:
        raise NoPrice(DISCOUNT, f"pricing.discount {str(discount)[:20]}")


def model_price(item: Any) -> ModelPrice:
    """One model's price, or `NoPrice` saying why there is none."""
    if not isinstance(item, Mapping):
        raise NoPrice(UNREADABLE_MODEL, f"not an object: {type(item).__name__}")
    model_id = item.get("id")
    if not isinstance(model_id, str) or not model_id.strip():
        raise NoPrice(UNREADABLE_MODEL, f"id is {model_id!r}"[:80])
    pricing = item.get("pricing")
    if not isinstance(pricing, Mapping):
        raise NoPrice(
            UNREADABLE_PRICE, "pricing is " + ("missing" if pricing is None else "no object")
        )
    prompt = per_million(pricing.get("prompt"), "pricing.prompt")
    completion = per_million(pricing.get("completion"), "pricing.completion")
    _extra_cost(pricing)
    hf_id = item.get("hugging_face_id")
    name = item.get("name")
    overrides = pricing.get("overrides")
    return ModelPrice(
        api_model=model_id.strip(),
        hugging_face_id=hf_id.strip() if isinstance(hf_id, str) and hf_id.strip() else None,
        name=name.strip() if isinstance(name, str) and name.strip() else None,
        input_per_million=prompt,
        output_per_million=completion,
        conditional_prices=bool(overrides),
    )


def parse_models(data: Any) -> ModelsPage:
    """The prices of one answer of `GET /models` (see the module docstring)."""
    if isinstance(data, dict) and "data" not in data and "error" in data:
        return ModelsPage(failed_read=f"error body instead of data: {_error_text(data['error'])}")
    items = data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return ModelsPage(layout_error=no_list(data, "data"))
    if not items:
        return ModelsPage(failed_read="the 'data' list is empty: a failed read, not 'no prices'")
    page = ModelsPage()
    found: dict[str, ModelPrice] = {}
    conflicting: set[str] = set()
    for n, item in enumerate(items):
        try:
            price = model_price(item)
        except NoPrice as no:
            page.skipped[no.reason] += 1
            page.notes.append(f"skipped {_label(item, n)}: {no}")
            continue
        kept = found.get(price.api_model)
        if kept is None:
            found[price.api_model] = price
        elif kept != price:
            conflicting.add(price.api_model)
    for api_model in sorted(conflicting):
        del found[api_model]
        page.skipped[CONFLICTING_DUPLICATE] += 1
        page.notes.append(f"skipped {api_model}: listed twice with different prices")
    page.prices = list(found.values())
    check = check_items(items, MODEL)
    page.missing_fields = check.missing_fields
    if check.layout_error is not None:
        page.layout_error = check.layout_error
    elif not page.prices:
        page.layout_error = f"none of the {len(items)} models has a readable price"
    return page


def _label(item: Any, n: int) -> str:
    model_id = item.get("id") if isinstance(item, Mapping) else None
    return model_id if isinstance(model_id, str) and model_id.strip() else f"model #{n + 1}"


def _error_text(error: Any) -> str:
    if isinstance(error, Mapping):
        code, message = error.get("code"), error.get("message")
        return f"{code} {message if isinstance(message, str) else ''}".strip()[:100]
    return str(error)[:100]
