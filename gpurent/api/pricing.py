"""Offers with their true cost: ``offers``, ``cheapest`` and ``explain``.

Every answer is computed here, once, over ``warehouse.costed`` (the exact cost engine of
``gpurent_core.cost``); the command line and the dashboard only present it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpurent.api.errors import (
    AmbiguousOfferId,
    BadFilter,
    NoSuchOffer,
    UnknownName,
    check_limit,
)
from gpurent.api.names import (
    display_currency,
    human_age,
    match_offer_id,
    offer_id,
    provider_code,
    read_gpu,
    resolve_provider,
    split_offer_id,
)
from gpurent.api.profile import usage as make_usage
from gpurent.api.warehouse import open_warehouse, retried_read

if TYPE_CHECKING:  # the model and the engine load when an answer is asked for
    from gpurent_core.cost.engine import TrueCost
    from gpurent_core.cost.usage import UsageProfile
    from gpurent_core.enums import StockStatus
    from gpurent_core.host import HostFilter
    from gpurent_core.terms import FeeTerms, PlanTerms


@dataclass(frozen=True)
class Offer:
    """One offer of the latest state with its true cost for a usage profile.

    Money is Decimal: ``price`` in the provider's ``currency`` and ``billing_unit``;
    ``true_hourly``/``true_monthly`` in ``cost_currency`` (the display currency, through
    ``fx_rate`` of ``fx_date``); ``native_true_*`` in the provider's currency.
    """

    provider: str
    offer_key: str
    offer_id: str
    """The short id `gpurent explain` takes (``gpurent.api.names.offer_id``): the same for the
    same offer in every run."""
    gpu_model: str
    gpu_vram_gb: int | None
    """None: the provider's name leaves the size open (never counted as fitting)."""
    gpu_form_factor: str | None
    """PCIe, SXM, NVL, OAM...; None when the provider's name leaves it open."""
    gpu_count: int
    """Cards the cost is for: the offer's count, or the cards asked for on per-card offers."""
    status: StockStatus
    available_count: int | None
    rentable: bool
    """In stock for ``gpu_count`` cards now (``gpurent_core.cost.stock.rentable``)."""
    price: Decimal
    currency: str
    billing_unit: str
    price_basis: str
    price_kind: str
    true_hourly: Decimal
    true_monthly: Decimal
    cost_currency: str
    native_true_hourly: Decimal
    native_true_monthly: Decimal
    price_per_gpu_hour: Decimal
    monthly_plan: str
    fx_rate: Decimal | None
    fx_date: date | None
    storage_price_unknown: bool
    """The storage asked for is not in the cost: the feed lists no price for it."""
    egress_price_unknown: bool
    """The traffic asked for is not in the cost: the offer lists no egress fee and the
    provider's billing facts do not say what traffic costs."""
    region: str | None
    url: str | None
    """The provider's page (or the endpoint) the offer was read from, where it has one."""
    observed_at: datetime
    stale: bool
    """Not confirmed by its provider's latest run (which could not see it, or failed): this is
    its last good state, ``age_s`` old. Ranked only when asked for (rule of truth 11)."""
    age_s: int | None
    run_id: str
    raw_gpu_name: str | None
    # What the host publishes about itself; each None where the provider does not publish
    # it (never guessed). docs/usage.md "Host attributes" lists who publishes what.
    cuda_version: str | None
    """The highest CUDA version the host's driver supports ("12.4")."""
    driver_version: str | None
    interconnect: str | None
    """nvlink (stated NVLink: bridge, NVSwitch, an NVL card), sxm (SXM modules) or pcie."""
    nvlink_gbps: Decimal | None
    """NVLink bandwidth the provider publishes, GB/s."""
    host_reliability: Decimal | None
    """The provider's reliability score of the host, 0..1."""
    hosting: str | None
    """secure (data center), verified or community (an unverified marketplace host)."""
    max_rental_hours: int | None
    """The longest rental the host allows, in hours from the observation."""
    vcpus_per_gpu: Decimal | None
    ram_gb_per_gpu: Decimal | None
    disk_gb_per_gpu: Decimal | None
    fees: tuple[FeeTerms, ...]
    plans: tuple[PlanTerms, ...]
    cost: TrueCost
    """The engine's whole breakdown (``cost.explain()`` prints it line by line)."""

    @classmethod
    def from_costed(cls, costed: Any) -> Offer:
        from gpurent_core.enums import StockStatus
        from gpurent_core.terms import FeeTerms, PlanTerms

        row = costed.as_row()
        terms = costed.terms()
        return cls(
            **{k: row[k] for k in _ROW_FIELDS},
            offer_id=offer_id(row["provider"], row["offer_key"]),
            status=StockStatus(row["status"]),
            raw_gpu_name=costed.offer.get("raw_gpu_name"),
            fees=tuple(FeeTerms(**f) for f in terms["fees"]),
            plans=tuple(PlanTerms(**p) for p in terms["plans"]),
            cost=costed.cost,
        )

    def as_row(self, *, terms: bool = True) -> dict[str, Any]:
        """A flat dict (JSON and CSV rows); with ``terms`` also ``fees`` and ``plans`` as
        dicts, so a reader can recompute the cost."""
        row: dict[str, Any] = {k: getattr(self, k) for k in (*_ROW_FIELDS, "offer_id", "status")}
        row["status"] = self.status.value
        if terms:
            row["fees"] = [_plain(asdict(f)) for f in self.fees]
            row["plans"] = [_plain(asdict(p)) for p in self.plans]
        return row


class OfferList(list[Offer]):
    """The offers of an answer, in its order, and what it left out, counted before ``limit``:

    ``stale_left_out``: offers the answer would hold but left out because their provider's
    latest run did not confirm them (stale rows: rule of truth 11; ``include_stale=True``
    adds them, marked ``stale``); 0 when stale rows were asked for.

    ``cards_left_out``: in-stock answers for more than one card (``cheapest(gpus=N)``) only:
    per-card offers left out because no free count shows N cards on one machine.

    ``unpublished_left_out``: answers with a host filter (``min_cuda``, ``interconnect``...)
    only: offers left out because they do not publish an attribute filtered on (each one
    they do publish meets the filter).

    ``spot_left_out``: ``cheapest`` without ``include_spot`` only: spot (interruptible,
    preemptible) offers left out; a month at a price the provider may take back at any
    time is no month's rent.

    ``market_seen``: False when the warehouse holds no offer at all (no provider has had a
    good run yet): an empty answer then says nothing of the market, it is blind.

    ``unconvertible_left_out``: offers priced in a currency no rate converts to the one
    asked (``unconvertible_currencies`` names them): left out and counted, never the whole
    answer refused for one of them."""

    stale_left_out: int
    cards_left_out: int
    unpublished_left_out: int
    spot_left_out: int
    market_seen: bool
    unconvertible_left_out: int
    unconvertible_currencies: tuple[str, ...]

    def __init__(
        self,
        offers: Iterable[Offer] = (),
        *,
        stale_left_out: int = 0,
        cards_left_out: int = 0,
        unpublished_left_out: int = 0,
        spot_left_out: int = 0,
        market_seen: bool = True,
        unconvertible_left_out: int = 0,
        unconvertible_currencies: tuple[str, ...] = (),
    ) -> None:
        super().__init__(offers)
        self.stale_left_out = stale_left_out
        self.cards_left_out = cards_left_out
        self.unpublished_left_out = unpublished_left_out
        self.spot_left_out = spot_left_out
        self.market_seen = market_seen
        self.unconvertible_left_out = unconvertible_left_out
        self.unconvertible_currencies = unconvertible_currencies


_NOT_FROM_ROW = {"offer_id", "status", "raw_gpu_name", "fees", "plans", "cost"}
_ROW_FIELDS = tuple(f for f in Offer.__dataclass_fields__ if f not in _NOT_FROM_ROW)


def host_filter(
    *,
    min_cuda: str | float | None = None,
    interconnect: str | None = None,
    min_reliability: Decimal | float | str | None = None,
    hosting: str | None = None,
    min_vcpus_per_gpu: Decimal | float | str | None = None,
    min_ram_gb_per_gpu: Decimal | float | str | None = None,
) -> HostFilter | None:
    """The host filter of an answer's keywords (None: none asked); ``BadFilter`` names the
    keyword it cannot read."""
    from gpurent_core.enums import Hosting, Interconnect
    from gpurent_core.host import HostFilter, version_tuple

    asked: dict[str, Any] = {
        "min_cuda": None if min_cuda is None else str(min_cuda).strip(),
        "interconnect": None if interconnect is None else str(interconnect).strip().lower(),
        "min_reliability": min_reliability,
        "hosting": None if hosting is None else str(hosting).strip().lower(),
        "min_vcpus_per_gpu": min_vcpus_per_gpu,
        "min_ram_gb_per_gpu": min_ram_gb_per_gpu,
    }
    if all(v is None for v in asked.values()):
        return None
    choices: dict[str, Any] = {"interconnect": Interconnect, "hosting": Hosting}
    for name, value in asked.items():
        try:
            if name == "min_cuda" and value is not None:
                version_tuple(str(value))
            elif name in choices and value is not None:
                choices[name](value)
            elif value is not None:
                HostFilter(**{name: value})
        except (ValueError, ArithmeticError) as exc:
            known = ", ".join(m.value for m in choices[name]) if name in choices else ""
            detail = f"one of {known}" if known else str(exc)
            raise BadFilter(f"{name}={value!r}: {detail}", argument=name) from None
    return HostFilter(**asked)


def _plain(fields: dict[str, Any]) -> dict[str, Any]:
    from warehouse.costed import plain

    return {k: plain(v) if isinstance(v, Decimal) else v for k, v in fields.items()}


@retried_read
def _costed(
    db: Path | str | None,
    profile: UsageProfile,
    currency: str | None,
    *,
    gpu: str | None = None,
    gpu_model: str | None = None,
    form_factor: str | None = None,
    min_vram: int | None = None,
    provider: str | None = None,
    in_stock: bool = False,
    limit: int | None = None,
    include_stale: bool = False,
    host: HostFilter | None = None,
    spot: bool | None = None,
) -> OfferList:
    from warehouse.costed import costed_latest_offers, left_out, unconvertible_currencies
    from warehouse.db import fetch_one

    check_limit(limit)
    shown_in = display_currency(currency)
    model, vram, form = gpu_model, None, form_factor
    if gpu is not None:
        name = read_gpu(gpu)
        if (
            name.form_factor
            and form_factor
            and name.form_factor.casefold() != form_factor.casefold()
        ):
            raise UnknownName(
                f"{gpu!r} names {name.form_factor}, and form_factor={form_factor!r} was asked: "
                "no offer is both",
                argument="gpu",
            )
        model, vram, form = name.model, name.vram_gb, name.form_factor or form_factor
    with open_warehouse(db) as con:
        provider_name = resolve_provider(con, provider) if provider is not None else None
        filters: dict[str, Any] = {
            "gpu_model": model,
            "gpu_vram_gb": vram,
            "gpu_form_factor": form,
            "min_vram_gb": min_vram,
            "provider": provider_name,
            "host": host,
            "spot": spot,
        }
        costed = costed_latest_offers(
            con,
            profile,
            display_currency=shown_in,
            limit=limit,  # only the first `limit` are costed exactly (warehouse.ranking)
            include_stale=include_stale,
            in_stock_only=in_stock,
            **filters,
        )
        # Each reason an offer the filters keep is not in the answer, counted so the answer
        # can say why (16 cards are never assumed from a card price, spot is no month's rent).
        out = left_out(
            con, profile, in_stock_only=in_stock, include_stale=include_stale,
            unconvertible=unconvertible_currencies(con, shown_in), **filters,
        )  # fmt: skip
        any_offer = fetch_one(con, "SELECT EXISTS (SELECT 1 FROM current_offers)")
        seen = bool(costed) or bool(any_offer and any_offer[0])
    return OfferList(
        (Offer.from_costed(c) for c in costed),
        stale_left_out=out.stale,
        cards_left_out=out.cards,
        unpublished_left_out=out.unpublished,
        spot_left_out=out.spot,
        market_seen=seen,
        unconvertible_left_out=out.unconvertible,
        unconvertible_currencies=out.unconvertible_currencies,
    )


def offers(
    *,
    gpu: str | None = None,
    gpu_model: str | None = None,
    form_factor: str | None = None,
    min_vram: int | None = None,
    provider: str | None = None,
    in_stock: bool = False,
    limit: int | None = None,
    usage: UsageProfile | None = None,
    currency: str | None = None,
    db: Path | str | None = None,
    include_stale: bool | None = None,
    min_cuda: str | float | None = None,
    interconnect: str | None = None,
    min_reliability: Decimal | float | str | None = None,
    hosting: str | None = None,
    min_vcpus_per_gpu: Decimal | float | str | None = None,
    min_ram_gb_per_gpu: Decimal | float | str | None = None,
    include_spot: bool = True,
) -> OfferList:
    """The latest offers (sold-out and unknown ones too unless ``in_stock``), cheapest first
    by true monthly cost, then true hourly.

    ``gpu`` is read as a provider's name is ('4090', 'A100 80G': a size picks that size;
    'H100 SXM': a form factor picks that one, and offers that do not say theirs are left
    out); ``gpu_model`` is a catalog model name taken as it is (every size); ``form_factor``
    keeps that form factor (PCIe, SXM, NVL...; never an unknown one); ``provider`` by its
    gpurent name; ``currency`` is the display currency (default: the settings').

    Stale offers (not confirmed by their provider's latest run: their last good state,
    marked ``stale``) are listed unless ``in_stock``: an unconfirmed row is never offered as
    in stock (rule of truth 11). ``include_stale`` overrides that either way (None: this
    default); the answer's ``stale_left_out`` counts the ones left out.

    Host filters (each None: none): ``min_cuda`` the host's CUDA version at least this
    ("12.4", compared as version numbers); ``interconnect`` nvlink (stated NVLink or SXM
    modules), sxm or pcie; ``min_reliability`` the provider's host score (0..1);
    ``hosting`` secure, verified (secure too) or community; ``min_vcpus_per_gpu`` and
    ``min_ram_gb_per_gpu`` per card. An offer that does not publish a filtered attribute
    is left out; ``unpublished_left_out`` counts those. ``BadFilter`` for a value it cannot
    read. ``include_spot=False`` leaves spot (interruptible) prices out, as ``cheapest``
    does, and ``spot_left_out`` counts them: a page that ranks for renting passes it.
    """
    host = host_filter(
        min_cuda=min_cuda,
        interconnect=interconnect,
        min_reliability=min_reliability,
        hosting=hosting,
        min_vcpus_per_gpu=min_vcpus_per_gpu,
        min_ram_gb_per_gpu=min_ram_gb_per_gpu,
    )
    return _costed(
        db,
        usage or make_usage(),
        currency,
        gpu=gpu,
        gpu_model=gpu_model,
        form_factor=form_factor,
        min_vram=min_vram,
        provider=provider,
        in_stock=in_stock,
        limit=limit,
        include_stale=not in_stock if include_stale is None else include_stale,
        host=host,
        spot=None if include_spot else False,
    )


def cheapest(
    min_vram: int,
    *,
    gpus: int = 1,
    limit: int | None = 10,
    usage: UsageProfile | None = None,
    currency: str | None = None,
    db: Path | str | None = None,
    include_stale: bool = False,
    include_spot: bool = False,
    gpu: str | None = None,
    form_factor: str | None = None,
    min_cuda: str | float | None = None,
    interconnect: str | None = None,
    min_reliability: Decimal | float | str | None = None,
    hosting: str | None = None,
    min_vcpus_per_gpu: Decimal | float | str | None = None,
    min_ram_gb_per_gpu: Decimal | float | str | None = None,
) -> OfferList:
    """The cheapest offers that can be rented now for ``gpus`` cards of at least
    ``min_vram`` GB each, by true monthly cost (ties: true hourly); ``gpu`` and
    ``form_factor`` narrow them as in ``offers``.

    Sold-out offers, offers of unknown stock and machines with fewer free cards than they
    rent are left out; so is a per-card offer whose free count does not show ``gpus`` cards
    on one machine (the answer's ``cards_left_out`` counts those). The storage asked for is
    counted on every provider. Only offers their provider's latest run confirmed are ranked
    (rule of truth 11): ``include_stale`` ranks the stale ones too (their last good state,
    marked ``stale``); the answer's ``stale_left_out`` counts the ones left out. The host
    filters (``min_cuda``, ``interconnect``...) are those of ``offers``, with their
    ``unpublished_left_out`` count. Spot (interruptible, preemptible) prices are left out:
    the provider may take the machine back at any time, so their month is no month's rent
    (``spot_left_out`` counts them); ``include_spot`` ranks them too, their ``price_kind``
    saying ``spot``.
    """
    from dataclasses import replace

    host = host_filter(
        min_cuda=min_cuda,
        interconnect=interconnect,
        min_reliability=min_reliability,
        hosting=hosting,
        min_vcpus_per_gpu=min_vcpus_per_gpu,
        min_ram_gb_per_gpu=min_ram_gb_per_gpu,
    )
    profile = replace(usage, gpus=gpus) if usage is not None else make_usage(gpus=gpus)
    return _costed(
        db,
        profile,
        currency,
        gpu=gpu,
        form_factor=form_factor,
        min_vram=min_vram,
        in_stock=True,
        limit=limit,
        include_stale=include_stale,
        host=host,
        spot=None if include_spot else False,
    )


@dataclass(frozen=True)
class Explanation:
    """How one offer's true cost is made; every line can be recomputed by hand."""

    offer: Offer | None
    """None: the offer cannot supply the cards asked for."""
    provider: str
    offer_key: str
    gpus: int

    @property
    def lines(self) -> tuple[str, ...]:
        return self.offer.cost.lines if self.offer else ()

    @property
    def caveats(self) -> tuple[str, ...]:
        """What the figures do not say by themselves: the offer is stale (its provider's
        latest run did not confirm it), or it cannot be rented now for its cards."""
        offer = self.offer
        if offer is None:
            return ()
        said = []
        if offer.stale:
            # Rule of truth 11: the last good state, not the present one.
            said.append(
                "Stale: its provider's latest run did not confirm this offer; the figures "
                f"above are its last good state, seen {human_age(offer.observed_at, datetime.now(UTC))} "
                f"({offer.observed_at:%Y-%m-%d %H:%M} UTC). `cheapest` does not rank it."
            )
        if not offer.rentable:
            free = "" if offer.available_count is None else f", {offer.available_count} free"
            said.append(
                f"Not rentable now for {offer.gpu_count} card(s): {offer.status.value}{free}."
            )
        return tuple(said)

    def text(self) -> str:
        """The sum line by line, then the caveats: what a reader must not miss."""
        if self.offer is None:
            return ""
        return "\n".join((self.offer.cost.explain(), *self.caveats))


@retried_read
def explain(
    provider: str,
    offer_key: str | None = None,
    *,
    gpus: int = 1,
    usage: UsageProfile | None = None,
    currency: str | None = None,
    db: Path | str | None = None,
) -> Explanation:
    """The true cost of one latest offer, line by line (``NoSuchOffer`` if it is not listed).

    The offer is ``provider`` and ``offer_key``, or, without ``offer_key``, the short id an
    answer gave it (``Offer.offer_id``, e.g. "gp-3kq7xw2"), given as ``provider``. An id
    that two latest offers share (their keys hash alike) is refused with
    ``AmbiguousOfferId`` naming them: it never picks one."""
    from dataclasses import replace

    from warehouse.costed import cost_offer, fx_table_for
    from warehouse.queries import latest_offers

    profile = replace(usage, gpus=gpus) if usage is not None else make_usage(gpus=gpus)
    shown_in = display_currency(currency)
    with open_warehouse(db) as con:
        if offer_key is None:
            name, offer_key = _offer_by_id(con, provider)
        else:
            name = resolve_provider(con, provider)
        frame = latest_offers(con, provider=name)
        rows = [r for r in frame.iter_rows(named=True) if r["offer_key"] == offer_key]
        if not rows:
            raise NoSuchOffer(
                f"no latest offer {offer_key!r} of {name!r}; "
                f"list them with `gpurent offers --provider {name} -f json`",
                argument="offer_key",
            )
        costed = cost_offer(rows[0], profile, display_currency=shown_in, fx=fx_table_for(con))
    return Explanation(
        offer=Offer.from_costed(costed) if costed is not None else None,
        provider=name,
        offer_key=offer_key,
        gpus=gpus,
    )


def _offer_by_id(con: Any, text: str) -> tuple[str, str]:
    """(provider, offer_key) of the latest offer whose short id is ``text``: among the
    latest offers of the providers whose code it starts with."""
    from warehouse.queries import known_providers

    parts = split_offer_id(text)
    if parts is None:
        raise UnknownName(
            f"{text!r} is not an offer id (like gp-3kq7xw2: the id column of `gpurent offers` "
            "and `cheapest`); or give PROVIDER OFFER_KEY",
            argument="offer_id",
        )
    wanted = text.strip().casefold()
    known = [p for p in known_providers(con) if provider_code(p) == parts[0]]
    offers = [
        (p, k)
        for p, k in con.execute(
            "SELECT provider, offer_key FROM current_offer_rows WHERE list_contains(?, provider)",
            [known],
        ).fetchall()
    ]
    found = match_offer_id(wanted, offers)
    if not found:
        raise NoSuchOffer(
            f"no latest offer has the id {wanted!r} (gone since the answer that showed it?); "
            "list them with `gpurent offers`",
            argument="offer_id",
        )
    if len(found) > 1:
        named = ", ".join(f"{p} {k!r}" for p, k in sorted(found))
        raise AmbiguousOfferId(
            f"the id {wanted!r} is shared by {len(found)} offers ({named}); give one as "
            "`gpurent explain PROVIDER OFFER_KEY`",
            argument="offer_id",
        )
    return found[0]
