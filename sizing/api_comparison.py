"""The rent-or-API part of a size answer: the offers that fit beside the APIs serving the
model, in the answer's currency, with the break-even use of each offer.

Built from the answer's own rows (``true_hourly``, ``ttft_worst_ms``, ``tokens_per_s_per_user``),
so every figure can be recomputed from what `gpurent size --format json` prints. API prices
in another currency are converted with the dated FX table; one that cannot be converted is
listed apart with why, never dropped silently.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import date
from decimal import Decimal
from typing import Any

from gpurent_core.fx import FxRateMissing, FxTable
from sizing.api_prices import OLD_AFTER_DAYS, MatchedPrice
from sizing.rent_or_api import (
    MONEY_PLACES,
    Load,
    RentalSpeed,
    Workload,
    break_even,
    rental_cost,
)

NO_API = (
    "no API price in gpurent's table serves this model or one of its architecture; "
    "`gpurent api-prices refresh` reads OpenRouter's list"
)
NO_SPEED = "its first-token time or decode speed is unknown: its capacity cannot be told"


def api_rows(
    matched: Iterable[MatchedPrice],
    workload: Workload,
    currency: str,
    fx: FxTable,
    today: date,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Each API price as a row in ``currency`` (cheapest request first), and those that
    could not be converted, with why."""
    rows: list[dict[str, Any]] = []
    apart: list[dict[str, Any]] = []
    for match in matched:
        p = match.price
        base = {
            "provider": p.provider,
            "api_model": p.api_model,
            "model": p.model,
            "relation": match.relation.value,
            "served_as": p.served_as,
            "input_per_million": p.input_per_million,
            "output_per_million": p.output_per_million,
            "price_currency": p.currency,
            "as_of": p.as_of.isoformat(),
            "age_days": p.age_days(today),
            "old": p.age_days(today) > OLD_AFTER_DAYS,
            "source": p.source,
            "note": p.note,
        }
        native = p.request_cost(workload.prompt_tokens, workload.gen_tokens)
        try:
            converted, rate = fx.convert(native, p.currency, currency)
        except FxRateMissing as exc:
            apart.append(base | {"why": str(exc)})
            continue
        rows.append(
            base
            | {
                "per_request": converted.quantize(MONEY_PLACES),
                "per_million_tokens": (converted * 1_000_000 / workload.tokens).quantize(
                    MONEY_PLACES
                ),
                "currency": currency,
                "fx": None
                if rate.base == rate.quote
                else f"{rate.pair} {rate.rate} ({rate.rate_date})",
            }
        )
    rows.sort(key=lambda r: (r["per_request"], r["provider"], r["api_model"], r["price_currency"]))
    return rows, apart


def offer_rows(
    offers: Sequence[Mapping[str, Any]],
    workload: Workload,
    load: Load,
    cheapest_api: Mapping[str, Any] | None,
    hours_paid: Decimal | None = None,
) -> list[dict[str, Any]]:
    """Each offer's cost per request under ``load`` and its break-even use against the
    cheapest API (None without an API or a speed)."""
    rows = []
    for offer in offers:
        row: dict[str, Any] = {
            "provider": offer["provider"],
            "offer_key": offer["offer_key"],
            "card": offer["card"],
            "gpu_count": offer["gpu_count"],
            "true_hourly": offer["true_hourly"],
            "per_hour_used": _hour_used(offer, hours_paid),
            "currency": offer["cost_currency"],
        }
        speed = _speed(offer, row["per_hour_used"])
        cost = None if speed is None else rental_cost(workload, speed, load)
        if speed is None or cost is None:
            rows.append(row | {"why": NO_SPEED})
            continue
        row |= {
            "capacity_per_hour": cost.capacity_per_hour,
            "rentals": cost.rentals,
            "utilisation": cost.utilisation,
            "per_request": cost.per_request,
            "per_million_input": cost.per_million_input,
            "per_million_output": cost.per_million_output,
            "per_million_tokens": cost.per_million_tokens,
        }
        if cheapest_api is not None:
            meet = break_even(workload, speed, cheapest_api["per_request"])
            row["break_even_utilisation"] = None if meet is None else meet.utilisation
            row["break_even_requests_per_day"] = None if meet is None else meet.requests_per_day
            row["cheaper_than_api"] = cost.per_request < cheapest_api["per_request"]
        rows.append(row)
    return rows


def comparison(
    offers: Sequence[Mapping[str, Any]],
    matched: Iterable[MatchedPrice],
    precision: str,
    workload: Workload,
    load: Load,
    currency: str,
    fx: FxTable,
    today: date,
    *,
    every_offer: bool = True,
    hours_paid: Decimal | None = None,
) -> dict[str, Any]:
    """The whole rent-or-API document of a size answer. ``every_offer``: ``offers`` hold
    every offer that fits or, ranked per token, the cheapest ones per request (the cost of a
    request at a given use is the cost per token at full load, scaled); else only the first
    ones by another objective, and the verdict says so."""
    apis, apart = api_rows(matched, workload, currency, fx, today)
    cheapest = apis[0] if apis else None
    return {
        "load": load.describe(),
        "utilisation": None if load.utilisation is None else _share(load.utilisation),
        "requests_per_day": load.requests_per_day,
        "full_load": f"{workload.batch} requests always in flight (--batch)",
        "precision": precision,
        "every_offer": every_offer,
        "currency": currency,
        "apis": apis,
        "apis_apart": apart,
        "apis_reason": None if apis or apart else NO_API,
        "cheapest_api": None
        if cheapest is None
        else {k: cheapest[k] for k in ("provider", "api_model", "per_request")},
        "offers": offer_rows(offers, workload, load, cheapest, hours_paid),
        "old_prices": sum(1 for r in (*apis, *apart) if r["old"]),
    }


def _hour_used(offer: Mapping[str, Any], hours_paid: Decimal | None) -> Decimal | None:
    """What an hour of the rental costs: its true monthly over the hours paid
    (``TrueCost.per_hour_used_display``: a month package that makes always-on use cheaper
    than the hourly rate is in it); the true hourly when the hours are not given."""
    if hours_paid is not None and offer.get("true_monthly") is not None:
        return (Decimal(offer["true_monthly"]) / hours_paid).quantize(MONEY_PLACES)
    hourly = offer.get("true_hourly")
    return None if hourly is None else Decimal(hourly)


def _speed(offer: Mapping[str, Any], hourly: Decimal | None) -> RentalSpeed | None:
    ttft, worst, per_user = (
        offer.get("ttft_ms"),
        offer.get("ttft_worst_ms"),
        offer.get("tokens_per_s_per_user"),
    )
    if hourly is None or ttft is None or worst is None or per_user is None:
        return None
    return RentalSpeed(
        hourly=hourly,
        ttft_ms=Decimal(str(ttft)),
        tokens_per_s_per_user=Decimal(str(per_user)),
        ttft_worst_ms=Decimal(str(worst)),
    )


def _share(value: Any) -> Decimal:
    return (Decimal(value.numerator) / Decimal(value.denominator)).quantize(Decimal("0.0001"))


def verdict(doc: Mapping[str, Any]) -> str:
    """One sentence: the cheapest rental against the cheapest API, and where they meet."""
    if not doc["apis"]:
        return doc["apis_reason"] or "no API price could be set in this currency (see apart)"
    api = doc["apis"][0]
    priced = [o for o in doc["offers"] if "per_request" in o]
    currency = doc["currency"]
    who = f"{api['provider']} {api['api_model']}"
    if api["relation"] != "same":
        who += f" ({api['relation']}: {api['model']})"
    if api["served_as"] and api["served_as"] != doc["precision"]:
        who += f" (serves {api['served_as']}; sized {doc['precision']})"
    if not priced:
        return (
            f"the cheapest API is {who} at {plain_money(api['per_request'])} {currency} a request; "
            "no offer that fits has a known speed to set beside it"
        )
    best = min(priced, key=lambda o: (o["per_request"], o["provider"], o["offer_key"]))
    if doc["every_offer"]:
        which = "rental"
    else:
        which = "rental shown" if len(priced) == 1 else f"of the {len(priced)} rentals shown"
    head = (
        f"at {doc['load']}, the cheapest {which} ({best['provider']} {best['card']} x"
        f"{best['gpu_count']}) costs {plain_money(best['per_request'])} {currency} a request, "
        f"{who} {plain_money(api['per_request'])}: "
    )
    head += (
        "renting is cheaper" if best["per_request"] < api["per_request"] else "the API is cheaper"
    )
    share = best.get("break_even_utilisation")
    if share is None:
        return head + "; the API is free: renting never pays (mind its rate limits)"
    if share > 1:
        return head + f" even at full load (renting would need {_percent(share)} of capacity)"
    return (
        head + f"; renting pays above {_percent(share)} of capacity "
        f"({best['break_even_requests_per_day']:,} requests a day)"
    )


def plain_money(value: Decimal | None) -> str:
    """Money without trailing zeros (0.000508, 0.13, 0); empty for None."""
    if value is None:
        return ""
    return format(value.normalize(), "f") if value else "0"


def _percent(share: Decimal) -> str:
    return f"{share * 100:.1f} %"
