"""Billing facts per provider: the checklist renters go through before ordering.

Kept as data, one file per provider in its folder (``spiders/providers/<folder>/
billing_facts.toml``, see ``gpurent_core.providers``), with a source and a date for every
fact, because these terms change and a renter must be able to check them. A fact not in the
file is unknown and shown as such: gpurent does not fill gaps with guesses. The files are read
by path; nothing of ``spiders`` is imported.

A file holds one ``[[fact]]`` per answer, each with the words a renter reads (``value``),
where it comes from (``source``) and when that source said it (``as_of``). A question with no
fact is unknown, never "none": write a fact saying "none" only when a source says so. The
provider is the folder's: a fact does not name it.

Some facts change what a rental really costs, so besides the words a person reads they carry
typed terms the code uses:

* ``seconds = N`` on ``billing_granularity`` and ``minimum_rental``: the cost engine rounds
  each session up to the granularity and to the minimum (0 = no minimum; ``BillingTerms``);
* ``starts = "power-on" | "ready"`` on ``billing_starts``: whether boot time is billed;
* ``fees = [{...}]`` on fee facts (system disk, storage, egress, public IP, no-GPU mode):
  platform-wide add-on fees. Spiders attach them to every offer of the provider
  (``platform_fees``), so the stored offer says what it cost at the time and the cost engine
  prices it like any fee. Keys: ``type`` (gpurent FeeType), ``amount`` (a decimal, written as
  a number), ``currency``, ``unit`` (second..year; omit for per-GB traffic), ``basis``
  (instance | gpu | gb | tb; default instance), ``included`` (free allowance),
  ``mandatory``, ``while_stopped`` (also billed while the instance is stopped), ``what``
  (names the fee when a fact declares several; else the fact's value does).

Fees that differ per offer (Vast.ai, Cudo, Hyperstack, TensorDock, Verda) come from the
provider's API and are attached by its parser, not declared here.

These files are the one place those terms live: a spider does not keep its own copy.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from enum import StrEnum
from functools import cache
from typing import TYPE_CHECKING, Any

from gpurent_core.enums import BillingUnit, FeeBasis, FeeType
from gpurent_core.providers import BILLING_FACTS_FILE, PROVIDERS
from gpurent_core.terms import FeeTerms

if TYPE_CHECKING:
    from gpurent_core.model import AddonFee

DATA_FILE = BILLING_FACTS_FILE


class BillingFactKind(StrEnum):
    """The questions a renter asks before ordering."""

    BILLING_GRANULARITY = "billing_granularity"
    """Smallest unit billed (second, minute, hour)."""
    BILLING_STARTS = "billing_starts"
    """When the meter starts: power-on, or only once the instance is ready."""
    STORAGE_WHILE_STOPPED = "storage_while_stopped"
    """What storage costs while the instance is stopped."""
    SYSTEM_DISK = "system_disk"
    """Included or charged system disk."""
    EGRESS_FEE = "egress_fee"
    """Outbound traffic charges."""
    PUBLIC_IP_FEE = "public_ip_fee"
    """Charge for a public IPv4 address."""
    MINIMUM_RENTAL = "minimum_rental"
    """Shortest rental accepted."""
    REFUND_TERMS = "refund_terms"
    """Refunds of prepaid packages."""
    DISCOUNTS = "discounts"
    """Member, night, spot or commitment discounts."""
    BILLING_UNITS = "billing_units"
    """Which billing units (hour/day/month/year packages) the provider sells."""
    NO_GPU_MODE = "no_gpu_mode"
    """Running without the GPU at a lower rate."""


# The checklist every provider is shown against; a kind without a fact is "unknown".
CHECKLIST: tuple[BillingFactKind, ...] = (
    BillingFactKind.BILLING_GRANULARITY,
    BillingFactKind.BILLING_STARTS,
    BillingFactKind.MINIMUM_RENTAL,
    BillingFactKind.STORAGE_WHILE_STOPPED,
    BillingFactKind.SYSTEM_DISK,
    BillingFactKind.EGRESS_FEE,
    BillingFactKind.PUBLIC_IP_FEE,
    BillingFactKind.REFUND_TERMS,
    BillingFactKind.DISCOUNTS,
    BillingFactKind.BILLING_UNITS,
)

# Facts whose ``seconds`` the cost engine reads.
_DURATION_KINDS = frozenset({BillingFactKind.BILLING_GRANULARITY, BillingFactKind.MINIMUM_RENTAL})


class BillingStart(StrEnum):
    """When the meter starts."""

    POWER_ON = "power-on"
    """From power-on (or creation): boot time is billed."""
    READY = "ready"
    """Only once the instance is ready: boot time is free."""


@dataclass(frozen=True)
class BillingFact:
    provider: str
    fact: BillingFactKind
    value: str
    """The fact in words, as a renter reads it."""
    source: str
    as_of: date
    seconds: int | None = None
    """Granularity or minimum rental in seconds (0 = no minimum)."""
    starts: BillingStart | None = None
    fees: tuple[FeeTerms, ...] = ()
    """Platform-wide fees this fact describes, attached to every offer of the provider."""

    def as_row(self) -> dict[str, object]:
        """The fact as the CLI and the dashboard show it."""
        return {
            "fact": self.fact.value,
            "value": self.value,
            "used_in_cost": self.used_in_cost(),
            "source": self.source,
            "as_of": self.as_of,
        }

    def used_in_cost(self) -> str:
        """How the cost engine uses this fact, in words ('' when it is for reading only)."""
        if self.seconds is not None:
            if self.fact is BillingFactKind.BILLING_GRANULARITY:
                return f"rounds each session up to {duration_text(self.seconds)}"
            if self.seconds == 0:
                return "no minimum: a short session bills its length"
            return f"bills each session at least {duration_text(self.seconds)}"
        if self.starts is not None:
            return "boot time billed" if self.starts is BillingStart.POWER_ON else "boot time free"
        return "; ".join(_describe_fee(f) for f in self.fees)


@dataclass(frozen=True)
class BillingTerms:
    """The facts that change how many metered hours a usage profile pays for.

    ``None`` means unknown: the engine then meters exactly (no rounding, no minimum) and bills
    boot time (a renter would rather be told too much than too little), and says so.
    """

    granularity_s: int | None = None
    minimum_s: int | None = None
    starts: BillingStart | None = None
    egress_stated: bool = False
    """The provider's facts say what outbound traffic costs (its fees, or "none"): where an
    offer carries no egress fee, its traffic is then free, not unknown."""

    def __post_init__(self) -> None:
        if self.granularity_s is not None and self.granularity_s < 1:
            raise ValueError(f"granularity must be >= 1 s, got {self.granularity_s}")
        if self.minimum_s is not None and self.minimum_s < 0:
            raise ValueError(f"minimum rental must be >= 0 s, got {self.minimum_s}")


class BillingFactsError(ValueError):
    """The billing facts file breaks its own rules (a bug in the data, caught at load)."""


def duration_text(seconds: int) -> str:
    """A number of seconds in the largest whole unit: 3600 -> '1 h', 600 -> '10 min'."""
    if seconds == 0:
        return "0 s"
    for size, name in ((3600, "h"), (60, "min")):
        if seconds % size == 0:
            return f"{seconds // size} {name}"
    return f"{seconds} s"


def _describe_fee(fee: FeeTerms) -> str:
    per = f"/{fee.unit.value}" if fee.unit else ""
    basis = "GB" if fee.basis is FeeBasis.GB else fee.basis.value
    free = f" beyond {fee.included_quantity:f} free" if fee.included_quantity is not None else ""
    kind = "mandatory" if fee.mandatory else "optional"
    stopped = {True: ", also while stopped", False: "", None: ", while stopped: unknown"}[
        fee.charged_while_stopped if fee.unit is not None else False
    ]
    return (
        f"{fee.fee_type.value} fee {fee.amount:f} {fee.currency}{per} per {basis}{free}"
        f" ({kind}{stopped})"
    )


_FEE_KEYS = frozenset(
    {
        "type",
        "amount",
        "currency",
        "unit",
        "basis",
        "included",
        "mandatory",
        "while_stopped",
        "what",
    }
)


def _fee(raw: Mapping[str, Any], fact_value: str, cited: str, where: str) -> FeeTerms:
    if unknown := set(raw) - _FEE_KEYS:
        raise BillingFactsError(f"{where}: unknown fee keys {sorted(unknown)}")
    amount = raw["amount"]
    # Floats never reach here (parse_float=Decimal); a bool is an int but not an amount.
    if isinstance(amount, bool) or not isinstance(amount, Decimal | int):
        raise BillingFactsError(f"{where}: fee amount must be a number, got {amount!r}")
    included = raw.get("included")
    stopped = raw.get("while_stopped")  # absent: no source says (counted as charged)
    if stopped is not None and not isinstance(stopped, bool):
        raise BillingFactsError(f"{where}: while_stopped must be true or false, got {stopped!r}")
    return FeeTerms(
        fee_type=FeeType(raw["type"]),
        amount=Decimal(amount),
        currency=raw["currency"],
        unit=BillingUnit(raw["unit"]) if "unit" in raw else None,
        basis=FeeBasis(raw.get("basis", FeeBasis.INSTANCE.value)),
        included_quantity=Decimal(included) if included is not None else None,
        mandatory=bool(raw["mandatory"]),
        charged_while_stopped=stopped,
        # `what` names this fee when one fact declares several; the note keeps the source.
        note=f"{raw.get('what', fact_value)} ({cited})",
    )


def _fact(raw: Mapping[str, Any], index: int, file: str, of: str | None) -> BillingFact:
    where = f"{file} fact #{index + 1} ({of or raw.get('provider')}/{raw.get('fact')})"
    known = {"fact", "value", "source", "as_of", "seconds", "starts", "fees"}
    if of is None:
        known.add("provider")  # a file of no one folder names each fact's provider
    if unknown := set(raw) - known:
        raise BillingFactsError(f"{where}: unknown keys {sorted(unknown)}")
    try:
        kind = BillingFactKind(raw["fact"])
        value, source, as_of = str(raw["value"]), str(raw["source"]), raw["as_of"]
        provider = of if of is not None else str(raw["provider"])
    except (KeyError, ValueError) as exc:
        raise BillingFactsError(f"{where}: {exc}") from exc
    if not isinstance(as_of, date) or not source.strip() or not value.strip():
        raise BillingFactsError(f"{where}: needs a value, a source and an as_of date")
    seconds = raw.get("seconds")
    if seconds is not None and (kind not in _DURATION_KINDS or not isinstance(seconds, int)):
        raise BillingFactsError(f"{where}: 'seconds' is an integer, for granularity or minimum")
    if kind is BillingFactKind.BILLING_GRANULARITY and seconds is not None and seconds < 1:
        raise BillingFactsError(f"{where}: granularity must be at least 1 second")
    starts = raw.get("starts")
    if starts is not None and kind is not BillingFactKind.BILLING_STARTS:
        raise BillingFactsError(f"{where}: 'starts' belongs to billing_starts")
    cited = f"{source}, as of {as_of.isoformat()}"
    fees = tuple(_fee(f, value, cited, where) for f in raw.get("fees", ()))
    return BillingFact(
        provider=provider,
        fact=kind,
        value=value,
        source=source,
        as_of=as_of,
        seconds=seconds,
        starts=BillingStart(starts) if starts is not None else None,
        fees=fees,
    )


def parse_billing_facts(
    text: str, provider: str | None = None, file: str = DATA_FILE
) -> tuple[BillingFact, ...]:
    """Facts from the TOML text (``[[fact]]`` tables) of ``provider``'s file (without
    ``provider``, each fact names its own); raises BillingFactsError on bad data, naming
    ``file``."""
    try:
        doc = tomllib.loads(text, parse_float=Decimal)
    except tomllib.TOMLDecodeError as exc:
        raise BillingFactsError(f"{file}: {exc}") from exc
    unknown_tables = set(doc) - {"fact"}
    if unknown_tables:
        raise BillingFactsError(f"{file}: unknown keys {sorted(unknown_tables)}")
    facts = tuple(_fact(raw, i, file, provider) for i, raw in enumerate(doc.get("fact", [])))
    seen: set[tuple[str, BillingFactKind]] = set()
    for f in facts:
        # One typed term per provider and kind, or the engine would have to pick one.
        if f.seconds is not None or f.starts is not None:
            key = (f.provider, f.fact)
            if key in seen:
                raise BillingFactsError(f"{file}: two typed {f.fact.value} for {f.provider}")
            seen.add(key)
    return facts


@cache
def load_billing_facts() -> tuple[BillingFact, ...]:
    """Every provider's facts, in the order of the list of providers, then of each file."""
    facts: list[BillingFact] = []
    for info in PROVIDERS:
        path = info.path / DATA_FILE
        shown = f"spiders/providers/{info.folder}/{DATA_FILE}"
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise BillingFactsError(f"{shown}: cannot read ({exc})") from exc
        facts.extend(parse_billing_facts(text, info.name, shown))
    return tuple(facts)


def facts_for(provider: str) -> list[BillingFact]:
    return [f for f in load_billing_facts() if f.provider == provider]


def unknown_facts(provider: str) -> list[BillingFactKind]:
    """Checklist questions the file has no answer to for ``provider``."""
    known = {f.fact for f in facts_for(provider)}
    return [k for k in CHECKLIST if k not in known]


@cache
def terms_for(provider: str) -> BillingTerms:
    """The metering terms of ``provider`` (all unknown for a provider without facts)."""
    granularity = minimum = None
    starts = None
    egress = False
    for f in facts_for(provider):
        egress = egress or f.fact is BillingFactKind.EGRESS_FEE
        if f.fact is BillingFactKind.BILLING_GRANULARITY and f.seconds is not None:
            granularity = f.seconds
        elif f.fact is BillingFactKind.MINIMUM_RENTAL and f.seconds is not None:
            minimum = f.seconds
        elif f.starts is not None:
            starts = f.starts
    return BillingTerms(
        granularity_s=granularity, minimum_s=minimum, starts=starts, egress_stated=egress
    )


def platform_fees(provider: str) -> tuple[AddonFee, ...]:
    """Add-on fees every offer of ``provider`` carries, in file order, as the feed's records
    (checked there: a currency that is not three capitals is refused when a spider loads)."""
    from gpurent_core.model import AddonFee  # pydantic: for the spiders, not the readers

    return tuple(
        AddonFee(**{name: getattr(fee, name) for name in AddonFee.model_fields})
        for f in facts_for(provider)
        for fee in f.fees
    )
