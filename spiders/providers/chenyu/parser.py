"""晨羽智云 GPU list (`GET /api/open/v2/gpu/list` -> `{code, msg, data: {gpu_list, total}}`).

The shape is Chenyu's documented one (its API reference, enterprise.chenyu.cn/api-reference/
gpu/list, read 2026-12-04; recordings/PROVENANCE): the envelope `{code, msg, data}` (`code` 0
is success; the reference's examples test `code == 0` and print `msg` otherwise) and per item
of `data.gpu_list`: `gpu_name`, `gpu_uuid` (the GPU model's id, which instance creation takes),
`status` (an integer) and `price: {hour, day, week, month, year}`.

Our reading of an item:

* `gpu_uuid`: the offer key (one offer per GPU model; the list names no region or host);
  `gpu_name` names the card.
* `price.hour`: the headline price, CNY per card-hour on demand. The reference shows the
  numbers without a unit; the platform bills in 元 (its account balance is in 元) and an
  instance is created from a GPU model and a card count (1/2/4/8), so the price is per card.
* `price.day`, `.week`, `.month`, `.year`: package prices of one card, kept as plans
  (commitment); an absent one is no plan, a bad one is set aside and the offer stands.
* `status`: the reference gives no meaning for its values (the example shows 1, in a list
  described as the platform's available GPU models). gpurent does not guess: it is read for
  no stock, and every offer's stock is `unknown` (rule of truth 1: never in stock, never
  sold out, because a value we cannot read says neither).

Contract (`GPU`): identity `gpu_uuid`, `gpu_name`; price `price.hour`; stock `status` (the
documented state field: read for nothing, but gone from every item the layout changed). A
key gone from one item quarantines it; gone from every item is a layout error (never "sold
out").
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from gpurent_core.model import BillingUnit, PriceBasis, PriceKind, PricePlan
from gpurent_core.normalize.availability import UNKNOWN
from spiders.parsers.common import (
    MISSING_FIELD,
    FieldProblem,
    ParseContext,
    Record,
    gpu_offer,
    hourly_price,
    id_text,
    identify_gpu,
    price_plan,
    require,
    set_aside,
    to_price,
)
from spiders.parsers.contract import Contract, apply_check, check_items, contracted
from spiders.parsers.envelope import ApiPage, code_envelope

CURRENCY = "CNY"
SITE_URL = "https://www.chenyu.cn/"
STOCK_KEY = "status"
GPU = Contract(
    "GPU",
    identity=("gpu_uuid", "gpu_name"),
    price=("price.hour",),
    stock=(STOCK_KEY,),
)
CONTRACTS: tuple[Contract, ...] = (GPU,)
PLAN_UNITS: tuple[tuple[str, BillingUnit], ...] = (
    ("day", BillingUnit.DAY),
    ("week", BillingUnit.WEEK),
    ("month", BillingUnit.MONTH),
    ("year", BillingUnit.YEAR),
)


class GpuListPage(ApiPage):
    """The GPU list answer (an envelope `code` other than 0 is an API error)."""


def parse_gpu_list(data: Any, ctx: ParseContext) -> GpuListPage:
    problem = code_envelope(data, code_key="code", ok=0, message_key="msg")
    if problem is not None:
        return GpuListPage.unanswered(problem)
    payload = data.get("data")
    items = payload.get("gpu_list") if isinstance(payload, dict) else None
    if not isinstance(items, list):
        return GpuListPage(layout_error="no 'data.gpu_list' list in a code 0 answer")
    page = GpuListPage()
    for item in items:
        page.records.extend(gpu_records(item, ctx))
    apply_check(page, check_items(items, GPU))
    return page


def offer_key(item: Any) -> str | None:
    """The GPU model's `gpu_uuid`: never dependent on the stock answer."""
    return id_text(item.get("gpu_uuid")) if isinstance(item, dict) else None


def gpu_records(item: Any, ctx: ParseContext) -> list[Record]:
    key = offer_key(item)
    return contracted(ctx, item, GPU, offer_key=key, build=lambda: _build(item, key, ctx))


def _build(item: dict[str, Any], key: str | None, ctx: ParseContext) -> list[Record]:
    if key is None:
        raise FieldProblem(MISSING_FIELD, "gpu_uuid", "gpu_uuid is missing")
    raw_name = require(item, "gpu_name")
    if not isinstance(raw_name, str):
        raise FieldProblem(MISSING_FIELD, "gpu_name", "gpu_name is not text")
    identity = identify_gpu(raw_name, field="gpu_name")
    prices = item.get("price")
    if not isinstance(prices, dict):
        raise FieldProblem(MISSING_FIELD, "price.hour", "price is not an object")
    hourly = hourly_price(prices.get("hour"), "price.hour")
    side: list[Record] = []
    plans = _plans(prices, key, ctx, side)
    record = gpu_offer(
        ctx,
        offer_key=key,
        raw=item,
        gpu=identity,
        raw_gpu_name=raw_name,
        gpu_count=1,
        stock=UNKNOWN,  # `status` values are undocumented: no stock is read from them
        price=hourly,
        currency=CURRENCY,
        price_basis=PriceBasis.GPU,
        url=SITE_URL,
        plans=plans,
    )
    return [record, *side]


def _plans(
    prices: dict[str, Any], key: str, ctx: ParseContext, side: list[Record]
) -> list[PricePlan]:
    plans = []
    for name, unit in PLAN_UNITS:
        amount = _plan_price(prices, name, key, ctx, side)
        if amount is not None:
            plans.append(price_plan(amount, CURRENCY, PriceBasis.GPU, PriceKind.COMMITMENT, unit))
    return plans


def _plan_price(
    prices: dict[str, Any], name: str, key: str, ctx: ParseContext, side: list[Record]
) -> Decimal | None:
    """`price.<name>`: None when absent; a bad value is set aside, the offer stands."""
    value = prices.get(name)
    if value is None:
        return None
    try:
        return to_price(value, f"price.{name}")
    except FieldProblem as problem:
        side.extend(set_aside(ctx, problem, offer_key=key, item={f"price.{name}": value}))
        return None
