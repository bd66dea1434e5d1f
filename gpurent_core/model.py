"""The offer record and its companions: the staging contract between spiders and warehouse.

One JSON Lines feed per provider per run carries these records (ARCHITECTURE section 2).
Every line is one object with a ``kind`` field: ``offer`` or ``quarantine``.
Money is ``Decimal`` (serialised as a string), times are UTC.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, field_validator

# Decimals travel as strings so no float ever touches a price.
Money = Annotated[
    Decimal, PlainSerializer(lambda d: format(d, "f"), return_type=str, when_used="json")
]


class StockStatus(StrEnum):
    """On-shelf state of an offer. Unknown is never sold out (rule of truth 1)."""

    IN_STOCK = "in_stock"
    """The provider says cards can be rented now."""
    LOW = "low"
    """Rentable now, but the provider signals scarcity (few cards, "库存紧张", stockStatus Low)."""
    SOLD_OUT = "sold_out"
    """The provider positively says nothing can be rented now."""
    UNKNOWN = "unknown"
    """No readable stock signal (public price list without stock, missing field)."""

    @property
    def rentable(self) -> bool:
        return self in (StockStatus.IN_STOCK, StockStatus.LOW)


class BillingUnit(StrEnum):
    """The time unit a published price is quoted per."""

    SECOND = "second"
    """Price per second of use."""
    MINUTE = "minute"
    """Price per minute of use."""
    HOUR = "hour"
    """Price per hour of use (the usual pay-as-you-go unit)."""
    DAY = "day"
    """Price of a one-day package."""
    WEEK = "week"
    """Price of a one-week package."""
    MONTH = "month"
    """Price of a one-month package (gpurent counts a month as 730 hours, 8760/12)."""
    YEAR = "year"
    """Price of a one-year package."""


class PriceBasis(StrEnum):
    """What one unit of the published price buys."""

    GPU = "gpu"
    """The price is per GPU; an offer of N cards costs N times it."""
    INSTANCE = "instance"
    """The price is for the whole machine or instance as offered."""


class PriceKind(StrEnum):
    """Commercial kind of a price."""

    ON_DEMAND = "on_demand"
    """Pay-as-you-go list price, not interruptible."""
    SPOT = "spot"
    """Interruptible / preemptible / bid price."""
    MEMBER = "member"
    """Price that needs a membership or a discount tier."""
    COMMITMENT = "commitment"
    """Prepaid package or reserved term (day/week/month/year plans, 3-month commitments)."""


class FeeType(StrEnum):
    """Kinds of add-on fee that change what a rental really costs."""

    SYSTEM_DISK = "system_disk"
    """Boot / system disk."""
    DATA_DISK = "data_disk"
    """Data disk or volume, usually per GB."""
    STORAGE_STOPPED = "storage_stopped"
    """Storage billed while the instance is stopped."""
    EGRESS = "egress"
    """Outbound traffic."""
    INGRESS = "ingress"
    """Inbound traffic."""
    PUBLIC_IP = "public_ip"
    """A public IPv4 address."""
    IMAGE = "image"
    """A paid image or software licence."""
    NO_GPU_MODE = "no_gpu_mode"
    """Running the instance without its GPU (AutoDL 无卡模式)."""
    VCPU = "vcpu"
    """Per-vCPU charge for component-priced clouds (Cudo)."""
    MEMORY = "memory"
    """Per-GiB RAM charge for component-priced clouds (Cudo)."""


class FeeBasis(StrEnum):
    """What one unit of an add-on fee is counted per."""

    INSTANCE = "instance"
    """Once per instance."""
    GPU = "gpu"
    """Per GPU of the offer."""
    GB = "gb"
    """Per GB (storage size or traffic volume)."""
    TB = "tb"
    """Per TB of traffic."""
    VCPU = "vcpu"
    """Per vCPU."""
    GIB_RAM = "gib_ram"
    """Per GiB of RAM."""


class RunStatus(StrEnum):
    """How a provider run ended (rule of truth 2)."""

    OK = "ok"
    """Every page answered and parsed; rows feed the latest state."""
    PARTIAL = "partial"
    """Some pages failed; the rows that came feed the latest state."""
    FAILED = "failed"
    """Nothing usable came back (network error, 5xx); the last good state stays."""
    AUTH_REQUIRED = "auth_required"
    """Credentials missing or rejected; public rows (if any) still load, stock stays unknown."""
    LAYOUT_CHANGED = "layout_changed"
    """The provider answered 200 but the page no longer parses into offers."""


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_enum_values=False)


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
    charged_while_stopped: bool = False
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


class ProviderRun(_Record):
    """How one provider's crawl went: written by the flow, stored in ``crawl_runs``."""

    run_id: str
    provider: str
    started_at: datetime
    finished_at: datetime
    status: RunStatus
    offers: int = 0
    quarantined: int = 0
    http_errors: int = 0
    message: str | None = None

    @property
    def duration_s(self) -> float:
        return (self.finished_at - self.started_at).total_seconds()


FeedRecord = OfferRecord | QuarantineRecord


def parse_feed_line(data: dict[str, Any]) -> FeedRecord:
    """Build a record from one decoded feed line; raises pydantic.ValidationError on bad input."""
    if data.get("kind") == "quarantine":
        return QuarantineRecord.model_validate(data)
    return OfferRecord.model_validate(data)


def utcnow() -> datetime:
    return datetime.now(UTC)
