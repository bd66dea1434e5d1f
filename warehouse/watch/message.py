"""What an alert says: what freed up, where, its true price, the free count and a link.

Composed when the transition is evaluated and stored in the outbox as is, so a retried
delivery sends the words of the moment it happened, not of the moment it got through.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from gpurent_core.enums import BillingUnit
from gpurent_core.fx import FxError, FxTable
from warehouse.costed import CostedOffer, cost_offer, plain
from warehouse.watch.criteria import Watch
from warehouse.watch.machine import AlertKind


@dataclass(frozen=True)
class Message:
    title: str
    body: str


def _money(value: Decimal) -> str:
    return f"{value:,.2f}"


def cost_for_message(
    watch: Watch, offer: Mapping[str, Any], *, display_currency: str, fx: FxTable | None
) -> CostedOffer | None:
    """The offer's true cost in the watch's currency (else ``display_currency``), falling
    back to its own currency when no FX rate is known."""
    wanted = watch.currency or display_currency
    for currency in dict.fromkeys((wanted, str(offer["currency"]))):
        try:
            return cost_offer(offer, watch.profile(), display_currency=currency, fx=fx)
        except FxError:
            continue
    return None


def compose(
    watch: Watch,
    offer: Mapping[str, Any],
    kind: AlertKind,
    cost: CostedOffer | None,
    *,
    seen_at: datetime,
) -> Message:
    """Title and plain-text body of one alert."""
    form = offer.get("gpu_form_factor") if watch.gpu_form_factor else None
    # A watch on "H100 SXM" is told it is the SXM that freed up.
    gpu = " ".join(str(p) for p in (offer["gpu_model"], form) if p) + f" {offer['gpu_vram_gb']} GB"
    if offer.get("price_kind") == "spot":  # only for a watch that includes spot: said first
        gpu += " (spot: interruptible)"
    where = str(offer["provider"]) + (f" ({offer['region']})" if offer.get("region") else "")
    free = offer.get("available_count")
    free_text = f"{free} free card(s)" if free is not None else "free count not published"
    if kind is AlertKind.PRICE_DROP:
        title = f"gpurent: {gpu} price drop at {where}"
        headline = f"{gpu} at {where} is now within your price, in stock: {free_text}."
    else:
        title = f"gpurent: {gpu} available at {where}"
        headline = f"{gpu} freed up at {where}: {free_text}."
    lines = [headline]
    if cost is not None:
        c = cost.cost
        # What the figure holds, said as it is: storage or traffic whose price is unknown is
        # not in it (as `cheapest` marks it), and a price cap was checked without it.
        left = [p for p, unknown in (("storage", c.storage_price_unknown),
                                      ("traffic", c.egress_price_unknown)) if unknown]  # fmt: skip
        held = (
            "(always on, 50 GB storage, add-ons included)"
            if not left
            else f"(always on, add-ons included; {' and '.join(left)} NOT counted: no price "
            "published for it"
            + ("; your price cap was checked without it" if watch.max_price is not None else "")
            + ")"
        )
        lines.append(
            f"True price for {cost.gpus_rented} card(s): {_money(c.hourly_display)} "
            f"{c.display_currency}/hour, {_money(c.monthly_display)} {c.display_currency}/month "
            f"{held}."
        )
        if c.plan.billing_unit is BillingUnit.YEAR:
            # A month that is a twelfth of a year paid up front is no price of a month: the
            # renter pays the year to get it (`cheapest` marks it, as this says).
            lines.append(
                f"That month is a twelfth of a year's package, paid up front: "
                f"{_money(c.plan.offer_price)} {c.plan.currency} for the year."
            )
        if c.display_currency != c.currency:
            lines.append(
                f"In {c.currency}: {_money(c.hourly)}/hour, {_money(c.monthly)}/month"
                + (f" (FX {c.fx_rate.describe()})." if c.fx_rate else ".")
            )
    basis = "per GPU" if offer["price_basis"] == "gpu" else "per instance"
    lines.append(
        f"Listed: {plain(Decimal(offer['price']))} {offer['currency']}/{offer['billing_unit']} "
        f"{basis} ({offer['price_kind']}), {offer['gpu_count']} card(s) per offer."
    )
    lines.append(f"Watch #{watch.watch_id}: {watch.describe()}.")
    lines.append(f"Seen {seen_at:%Y-%m-%d %H:%M} UTC, offer {offer['offer_key']}.")
    if offer.get("url"):
        lines.append(f"Link: {offer['url']}")
    return Message(title=title, body="\n".join(lines))


def trial_message(watch: Watch, *, now: datetime) -> Message:
    """What `gpurent watch test` sends."""
    return Message(
        title=f"gpurent: test of watch #{watch.watch_id}",
        body=(
            f"This is a test notification for watch #{watch.watch_id}: {watch.describe()}.\n"
            f"Sent {now:%Y-%m-%d %H:%M} UTC. Real alerts say what freed up, where, its true "
            "price, the free count and a link."
        ),
    )
