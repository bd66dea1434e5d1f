"""Buy or rent (``tco``): what owning a card costs over years against renting the same card
at the price the warehouse tracks, and the use at which the two cost the same.

The arithmetic is ``gpurent_core.cost.ownership``'s; the rental price is the median true
cost per card-hour of the card's offers that can be rented now, as ``offers(in_stock=True)``
costs and counts them: only offers their provider's latest run confirmed (a stale row is
never a price to rent at), in stock or low with every card of the unit free (unknown stock
never counts), on demand (spot, member and committed prices are another bargain, left out
and counted). No such offer: no rental price, never a guess.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpurent.api.errors import BadUsage, UnknownFigure
from gpurent.api.names import display_currency, read_gpu
from gpurent_core.defaults import DEFAULT_HOST_WATTS_PER_GPU, DEFAULT_TCO_YEARS

if TYPE_CHECKING:
    from gpurent.api.names import GpuName

__all__ = ["TcoAnswer", "tco"]

RENT_MEDIAN = "median"
"""``TcoAnswer.rent_from``: the median of the tracked offers."""
RENT_GIVEN = "given"
"""``TcoAnswer.rent_from``: the rental price given by hand."""


@dataclass(frozen=True)
class TcoAnswer:
    """Owning one card over ``years`` against renting it, used ``hours_per_day`` a day.

    Money is Decimal in ``currency`` (the price, the power price and a rental price given
    by hand are read in it; tracked rental prices are converted into it through the FX
    table), rounded to 6 places; ``break_even_hours_per_day`` to 9."""

    gpu: str
    """The card as the tables name it ("RTX 4090 24G")."""
    gpu_model: str
    gpu_vram_gb: int | None
    gpu_form_factor: str | None
    currency: str
    years: int
    hours_per_day: Decimal
    hours: Decimal
    """Hours the card works over the period (365 days a year)."""
    purchase_price: Decimal
    resale: Decimal
    """What the card sells for at the end (0: kept, or nothing asked)."""
    resale_share: Decimal | None
    """The share of the price ``resale`` was given as (0.3), else None (an amount)."""
    card_watts: Decimal
    watts_from: str
    """"catalog" (the GPU catalog's board power, ``tdp_w``) or "given"."""
    host_watts: Decimal
    host_watts_assumed: bool
    """True: ``host_watts`` is gpurent's stated assumption (``gpurent_core.defaults``)."""
    power_price: Decimal
    """Per kWh."""
    energy_kwh: Decimal
    power_cost: Decimal
    own_cost: Decimal
    """Price less resale plus power, over the period."""
    own_per_hour: Decimal
    rent_per_card_hour: Decimal | None
    """The rental price compared with; None: no offer can be rented now (no guess)."""
    rent_from: str | None
    """"median" (of the tracked offers), "given" (by hand) or None (no price)."""
    rent_offers: int
    """Offers the median is of (confirmed, rentable now, on demand); 0 when given."""
    rent_providers: int
    rent_lowest: Decimal | None
    """The cheapest and the dearest of those offers, per card-hour."""
    rent_highest: Decimal | None
    stale_left_out: int
    """The card's in-stock offers left out as not confirmed by their provider's latest run."""
    other_kinds_left_out: int
    """The card's confirmed in-stock offers left out as not on demand (spot, member...)."""
    rent_cost: Decimal | None
    saving: Decimal | None
    """``rent_cost - own_cost``: what owning saves over the period (below 0: costs more)."""
    cheaper: str | None
    """"owning", "renting" or "equal" at ``hours_per_day``; None without a rental price."""
    break_even_hours_per_day: Decimal | None
    """Hours a day at which the two cost the same (owning cheaper above it; may exceed 24:
    renting cheaper at any use). None without a rental price, or when an hour rented costs
    no more than an hour's power (owning never catches up)."""

    def as_row(self) -> dict[str, Any]:
        """Every field, in order (JSON and CSV)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class _Rate:
    per_card_hour: Decimal | None
    offers: int = 0
    providers: int = 0
    lowest: Decimal | None = None
    highest: Decimal | None = None
    stale_left_out: int = 0
    other_kinds_left_out: int = 0


def tco(
    gpu: str,
    price: Decimal | int,
    *,
    hours_per_day: Decimal | int,
    power_price: Decimal | int,
    years: int = DEFAULT_TCO_YEARS,
    resale: Decimal | int | str | None = None,
    watts: Decimal | int | None = None,
    host_watts: Decimal | int = DEFAULT_HOST_WATTS_PER_GPU,
    rent_price: Decimal | int | None = None,
    currency: str | None = None,
    db: Path | str | None = None,
) -> TcoAnswer:
    """Owning ``gpu`` (bought at ``price``) for ``years`` against renting it, used
    ``hours_per_day`` a day, with the hours a day at which the two cost the same.

    ``gpu`` is read as a provider's name is ('4090', 'H100 SXM'); its board power comes
    from the GPU catalog unless ``watts`` gives it (``UnknownFigure`` when the catalog has
    none, or the name leaves several cards of different power open). ``host_watts``: the
    rest of the machine's draw per card (default: gpurent's stated assumption).
    ``power_price`` is per kWh. ``resale``: what the card sells for at the end, an amount,
    or a share of the price: a number below 1 (0.3) or a percentage ('30%').

    The rental price is ``rent_price`` (per card-hour) when given (the warehouse is not
    read), else the median price of a card-hour of the card's confirmed, rentable,
    on-demand offers rented ``hours_per_day`` a day (``gpurent_core.cost.card_hour``;
    ``NoWarehouse`` without a warehouse); with none, the renting figures
    are None. ``currency`` (default: the settings') is the currency of every amount, given
    and answered. Numbers it cannot take raise ``BadUsage`` naming the keyword.
    """
    from gpurent_core.cost.ownership import BadFigure, Owning, compare

    code = display_currency(currency)
    name = read_gpu(gpu)
    card, watts_from = (_given(watts, "watts"), "given") if watts is not None else _board(name)
    amount = _given(price, "price")
    left, share = _resale(resale, amount)
    try:
        owning = Owning(
            price=amount,
            resale=left,
            card_watts=card,
            host_watts=_given(host_watts, "host_watts"),
            power_price=_given(power_price, "power_price"),
            years=years,
        )
        given_hours = _given(hours_per_day, "hours_per_day")
        owning.hours(given_hours)  # refused here, before the warehouse is read
        given_rate = _given(rent_price, "rent_price") if rent_price is not None else None
        if given_rate is not None and given_rate <= 0:
            raise BadFigure("rent_price", f"rent_price must be above 0, got {rent_price}")
        rate = (
            _Rate(given_rate)
            if given_rate is not None
            else _tracked_rate(gpu, code, db, given_hours)
        )
        found = compare(owning, given_hours, rate.per_card_hour)
    except BadFigure as exc:
        argument = {"card_watts": "watts"}.get(exc.name, exc.name)
        raise BadUsage(str(exc), argument=argument) from None
    identity = name.identity
    return TcoAnswer(
        gpu=_label(name),
        gpu_model=name.model,
        gpu_vram_gb=name.vram_gb if name.vram_gb is not None else identity.vram_gb,
        gpu_form_factor=name.form_factor,
        currency=code,
        years=owning.years,
        hours_per_day=given_hours,
        hours=found.hours,
        purchase_price=amount,
        resale=left,
        resale_share=share,
        card_watts=card,
        watts_from=watts_from,
        host_watts=owning.host_watts,
        host_watts_assumed=host_watts == DEFAULT_HOST_WATTS_PER_GPU,
        power_price=owning.power_price,
        energy_kwh=found.energy_kwh,
        power_cost=found.power_cost,
        own_cost=found.own_cost,
        own_per_hour=found.own_per_hour,
        rent_per_card_hour=rate.per_card_hour,
        rent_from=None
        if rate.per_card_hour is None
        else (RENT_GIVEN if given_rate is not None else RENT_MEDIAN),
        rent_offers=rate.offers,
        rent_providers=rate.providers,
        rent_lowest=rate.lowest,
        rent_highest=rate.highest,
        stale_left_out=rate.stale_left_out,
        other_kinds_left_out=rate.other_kinds_left_out,
        rent_cost=found.rent_cost,
        saving=found.saving,
        cheaper=_cheaper(found.saving),
        break_even_hours_per_day=found.break_even_hours_per_day,
    )


def _label(name: GpuName) -> str:
    """The card as the tables name it, with the size its reading gives (a one-size model's
    too: "Ascend 910B2 64G"), else as the filter describes it ("H100")."""
    from gpurent.api.names import gpu_label

    if name.identity.vram_gb is None:
        return name.describe()
    return gpu_label(name.model, name.identity.vram_gb, name.form_factor)


def _cheaper(saving: Decimal | None) -> str | None:
    if saving is None:
        return None
    return "owning" if saving > 0 else "renting" if saving < 0 else "equal"


def _given(value: object, keyword: str) -> Decimal:
    """A number given for ``keyword`` as a Decimal (ints taken; floats, text and NaN refused)."""
    if isinstance(value, bool) or not isinstance(value, Decimal | int):
        raise BadUsage(
            f"{keyword} must be a Decimal (never float), got {value!r}", argument=keyword
        )
    number = Decimal(value)
    if not number.is_finite():
        raise BadUsage(f"{keyword} must be a finite number, got {value}", argument=keyword)
    if abs(number) > LARGEST_FIGURE:
        # A typo, not a figure: 1e400 was taken, and the answer printed 400 digits.
        raise BadUsage(f"{keyword} is at most {LARGEST_FIGURE:,}, got {value}", argument=keyword)
    return number


LARGEST_FIGURE = 10**12
"""The largest price, power price, watts or hours a buy-or-rent figure takes."""


def _resale(value: Decimal | int | str | None, price: Decimal) -> tuple[Decimal, Decimal | None]:
    """(the resale amount, the share of the price it was given as, or None).

    A percentage ('30%') or a number below 1 (0.3) is a share of the price; any other
    number an amount in the answer's currency."""
    if value is None:
        return Decimal(0), None
    percent = False
    if isinstance(value, str):
        text = value.strip()
        percent = text.endswith("%")
        try:
            number = Decimal(text.removesuffix("%").strip())
        except InvalidOperation:
            raise BadUsage(
                f"resale {value!r} is not an amount, a share below 1 (0.3) or a percentage (30%)",
                argument="resale",
            ) from None
    else:
        number = _given(value, "resale")
    if not number.is_finite() or number < 0:
        raise BadUsage(f"resale must be 0 or more, got {value}", argument="resale")
    if percent or number < 1:
        share = number / 100 if percent else number
        if share > 1:
            raise BadUsage(f"resale {value} is more than the price", argument="resale")
        # The share of an exact price, rounded as money is.
        from gpurent_core.cost.money import quantize_money

        return quantize_money(Fraction(share) * Fraction(price)), share
    return number, None


def _board(name: GpuName) -> tuple[Decimal, str]:
    """The board power of the card ``name`` names, from the GPU catalog, or UnknownFigure."""
    from gpurent_core.catalog.gpus import get_catalog

    identity = name.identity
    skus = [
        sku
        for sku in get_catalog().variants(name.model)
        if (identity.vram_gb is None or sku.vram_gb == identity.vram_gb)
        and (identity.form_factor is None or sku.form_factor == identity.form_factor)
    ]
    powers = {sku.tdp_w for sku in skus}
    if len(powers) == 1 and None not in powers:
        return Decimal(powers.pop() or 0), "catalog"
    if not skus or powers == {None}:
        card = skus[0].label if len(skus) == 1 else name.describe()
        raise UnknownFigure(
            f"the GPU catalog has no board power (TDP) for {card}: give the card's watts "
            "with --watts",
            argument="gpu",
        )
    each = ", ".join(
        f"{sku.label} ({f'{sku.tdp_w} W' if sku.tdp_w else 'TDP unknown'})" for sku in skus
    )
    raise UnknownFigure(
        f"{name.describe()!r} leaves the board power open: {each}; name one (as "
        f"'{skus[-1].model} {skus[-1].form_factor or f'{skus[-1].vram_gb}G'}') or give "
        "--watts",
        argument="gpu",
    )


def _tracked_rate(gpu: str, currency: str, db: Path | str | None, hours_per_day: Decimal) -> _Rate:
    """The median price of a card-hour of ``gpu`` for ``hours_per_day`` of use, over its
    confirmed, rentable, on-demand offers in ``currency`` (``offers(in_stock=True)``;
    ``gpurent_core.cost.card_hour``: no storage, no traffic, packages and minimums in),
    with what it left out."""
    from statistics import median

    from gpurent.api.pricing import offers
    from gpurent_core.cost.card_hour import card_hour_profile, card_hour_rate, quotes_card_hour
    from gpurent_core.cost.money import quantize_money

    use = card_hour_profile(hours_per_day)
    found = offers(gpu=gpu, in_stock=True, include_stale=False, usage=use, currency=currency, db=db)
    on_demand = [o for o in found if quotes_card_hour(o.price_kind)]
    rates = sorted(card_hour_rate(o.true_monthly, use, o.gpu_count) for o in on_demand)
    if not rates:
        return _Rate(
            None,
            stale_left_out=found.stale_left_out,
            other_kinds_left_out=len(found) - len(on_demand),
        )
    return _Rate(
        quantize_money(median(rates)),
        offers=len(rates),
        providers=len({o.provider for o in on_demand}),
        lowest=quantize_money(rates[0]),
        highest=quantize_money(rates[-1]),
        stale_left_out=found.stale_left_out,
        other_kinds_left_out=len(found) - len(on_demand),
    )
