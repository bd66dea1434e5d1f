"""The offer record and its companions: the staging contract between spiders and warehouse.

One JSON Lines feed per provider per run carries these records (ARCHITECTURE section 2).
Every line is one object with a ``kind`` field: ``offer`` or ``quarantine``.
Money is ``Decimal`` (serialised as a string), times are UTC.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, field_validator

from gpurent_core.enums import (
    BillingUnit,
    FeeBasis,
    FeeType,
    Hosting,
    Interconnect,
    PriceBasis,
    PriceKind,
    RunStatus,
    SkipKind,
    StockStatus,
)
from gpurent_core.host import CUDA_VERSION_PATTERN

# Decimals travel as strings so no float ever touches a price.
Money = Annotated[
    Decimal, PlainSerializer(lambda d: format(d, "f"), return_type=str, when_used="json")
]

# Host measures (bandwidth, a reliability score, vCPUs, GB) travel as strings too: read the
# same by the feed's SQL path and its exact path (warehouse.feed_sql).
Measure = Money


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_enum_values=False, defer_build=True)


class AddonFee(_Record):
    """One add-on fee attached to an offer, as published (normalised later by the cost engine)."""

    fee_type: FeeType
    amount: Money
    currency: str = Field(pattern=r"^[A-Z]{3}$")
    unit: BillingUnit | None = None
    """Time unit the amount is per; None for volume fees (egress per GB)."""
    basis: FeeBasis = FeeBasis.INSTANCE
    quantity: Decimal | None = None
    """Fixed quantity that comes with the offer (e.g. vCPUs per GPU); None: the user's choice."""
    included_quantity: Decimal | None = None
    """Free allowance before the fee applies (e.g. first 20 GB free)."""
    mandatory: bool = False
    charged_while_stopped: bool | None = None
    """Also billed while the instance is stopped; None: no source says, and the cost engine
    counts it as charged (an unknown term is never read the cheap way)."""
    note: str | None = None


class PricePlan(_Record):
    """An extra way to rent the same offer (day/week/month package, spot, member)."""

    price: Money
    currency: str = Field(pattern=r"^[A-Z]{3}$")
    billing_unit: BillingUnit
    price_basis: PriceBasis
    price_kind: PriceKind


class OfferRecord(_Record):
    """One offer seen in one successful provider run."""

    kind: Literal["offer"] = "offer"
    provider: str
    offer_key: str
    run_id: str
    observed_at: datetime
    gpu_vendor: str
    gpu_model: str
    gpu_vram_gb: int | None = Field(ge=1)
    """Per-card memory; None when the name leaves it open and the offer does not state it
    (never guessed; such an offer never counts as fitting a VRAM floor)."""
    gpu_form_factor: str | None = None
    gpu_count: int = Field(ge=1)
    raw_gpu_name: str
    status: StockStatus
    available_count: int | None = Field(default=None, ge=0)
    price: Money = Field(ge=0)
    currency: str = Field(pattern=r"^[A-Z]{3}$")
    billing_unit: BillingUnit
    price_basis: PriceBasis
    price_kind: PriceKind = PriceKind.ON_DEMAND
    region: str | None = None
    url: str | None = None
    # What the host publishes about itself (docs/usage.md, "Host attributes"): each None
    # where the provider does not say it, never guessed.
    cuda_version: str | None = Field(default=None, pattern=CUDA_VERSION_PATTERN)
    """The highest CUDA version the host's driver supports ("12.4"); compared as numbers."""
    driver_version: str | None = None
    """The host's NVIDIA driver version, as published ("550.54.15")."""
    interconnect: Interconnect | None = None
    nvlink_gbps: Measure | None = Field(default=None, ge=0)
    """NVLink bandwidth the provider publishes, GB/s."""
    host_reliability: Measure | None = Field(default=None, ge=0, le=1)
    """The provider's reliability score of the host, 0..1 (Vast.ai reliability)."""
    hosting: Hosting | None = None
    max_rental_hours: int | None = Field(default=None, ge=0)
    """The longest rental the host allows from the observation, in whole hours."""
    vcpus_per_gpu: Measure | None = Field(default=None, ge=0)
    ram_gb_per_gpu: Measure | None = Field(default=None, ge=0)
    disk_gb_per_gpu: Measure | None = Field(default=None, ge=0)
    fees: tuple[AddonFee, ...] = ()
    plans: tuple[PricePlan, ...] = ()

    @field_validator("observed_at")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        if value.tzinfo is None:
            raise ValueError("observed_at must be timezone-aware (UTC)")
        return value.astimezone(UTC)


class QuarantineRecord(_Record):
    """Input set aside because it could not be trusted (rule of truth 6)."""

    kind: Literal["quarantine"] = "quarantine"
    provider: str
    run_id: str
    observed_at: datetime
    offer_key: str | None = None
    reason: str
    field: str | None = None
    raw: dict[str, Any] | str | None = None


class SkipRecord(_Record):
    """An item of a listing that is no GPU rental offer gpurent ranks (``SkipKind``): counted
    in the run report by kind, never written to the feed, never making a run partial."""

    kind: Literal["skip"] = "skip"
    provider: str
    run_id: str
    observed_at: datetime
    offer_key: str | None = None
    skip_kind: SkipKind
    detail: str


class ProviderRun(_Record):
    """How one provider's crawl went: written by the flow, stored in ``crawl_runs``.

    What the run could not read (rule of truth 10) says which of the provider's offers the
    run's absence does not close: ``unread_keys`` (exact offer keys) and ``unread_prefixes``
    (every offer whose key starts with one; ``""`` is every offer), besides the keys of the
    feed's own quarantine lines. ``sold_out_unlisted``: key prefixes under which the
    provider lists only what has capacity, so an offer it stopped listing there is sold out
    in its own words, not gone.
    """

    run_id: str
    provider: str
    started_at: datetime
    finished_at: datetime
    status: RunStatus
    offers: int = 0
    quarantined: int = 0
    http_errors: int = 0
    message: str | None = None
    skipped: tuple[tuple[str, int], ...] = ()
    """Items skipped, as (``SkipKind`` value, count) pairs (a tuple: runs are hashable)."""
    unread_keys: tuple[str, ...] = ()
    unread_prefixes: tuple[str, ...] = ()
    sold_out_unlisted: tuple[str, ...] = ()

    @property
    def duration_s(self) -> float:
        return (self.finished_at - self.started_at).total_seconds()


FeedRecord = OfferRecord | QuarantineRecord


def parse_parser_record(data: dict[str, Any]) -> FeedRecord | SkipRecord:
    """A parser's record from its JSON form: a feed line, or a skip (which a parser makes
    but the spider never writes to the feed: fixtures and tests hold them)."""
    if data.get("kind") == "skip":
        return SkipRecord.model_validate(data)
    return parse_feed_line(data)


def parse_feed_line(data: dict[str, Any]) -> FeedRecord:
    """Build a record from one decoded feed line; raises pydantic.ValidationError on bad input."""
    if data.get("kind") == "quarantine":
        return QuarantineRecord.model_validate(data)
    return OfferRecord.model_validate(data)


def utcnow() -> datetime:
    return datetime.now(UTC)
