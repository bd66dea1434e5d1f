"""The offer record's enumerations, declared once: the model, the warehouse's CHECK lists
(kept in step by ``tests/warehouse/test_warehouse_migrations.py``) and the command line's
option choices all read them from here.

Plain ``StrEnum``s with no pydantic, so that a command's ``--help`` does not load the
record models.
"""

from __future__ import annotations

from enum import StrEnum


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


class SkipKind(StrEnum):
    """Why an item of a listing was skipped: it is not a GPU rental offer gpurent ranks, so
    it is counted by kind in the run report and makes no run partial (rule of truth 9).
    An item that *is* an offer but cannot be read is quarantined instead."""

    NOT_A_GPU_OFFER = "not_a_gpu_offer"
    """Not a GPU rental at all: a CPU-only type, a storage product."""
    OUTSIDE_CATALOG = "outside_catalog"
    """A card the catalog leaves out on purpose: pre-Pascal cards, vGPU/MIG slices."""
    NO_PUBLIC_PRICE = "no_public_price"
    """Listed without a public price ("contact sales", "询价")."""
    NOT_OFFERED = "not_offered"
    """A rate the provider does not offer to the public (reserved-only, retired)."""


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


class Interconnect(StrEnum):
    """How the cards of a machine are joined, as the provider states it (never guessed)."""

    NVLINK = "nvlink"
    """NVLink stated: a bridge or NVSwitch, a published NVLink bandwidth, an NVL card, an
    '-NVLink' machine type."""
    SXM = "sxm"
    """SXM modules (their socket carries NVLink between the cards of a board)."""
    PCIE = "pcie"
    """PCIe cards, no NVLink stated."""


class Hosting(StrEnum):
    """Who runs the host, as the provider classes it."""

    SECURE = "secure"
    """The provider's own or vetted data-center capacity ("Secure Cloud", datacenter hosts)."""
    VERIFIED = "verified"
    """A marketplace host the provider has verified."""
    COMMUNITY = "community"
    """A marketplace host not (yet) verified: community cloud."""


class IndexMethod(StrEnum):
    """A method of the daily price index (docs/price-index.md); each row carries its own."""

    GPI_1 = "gpi-1"
    """Per GPU: the capped mean of provider medians of on-demand quotes, screened."""
    GPI_2 = "gpi-2"
    """Per GPU, form factor, price kind and market: the median of provider medians, with
    quartiles; withheld when too few providers or too dispersed."""
    GPI_3 = "gpi-3"
    """gpi-2, with a quote only from offers rentable as listed (all cards of the unit free)
    and one vote per supplier (a marketplace's re-listing votes as the cloud it re-lists)."""
