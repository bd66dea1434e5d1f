"""Billing facts per provider: the checklist renters go through before ordering.

Kept as data (``gpurent/data/billing_facts.csv``) with a source and a date for every fact,
because these terms change and a renter must be able to check them. A fact not in the file
is unknown and shown as such: gpurent does not fill gaps with guesses.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from datetime import date
from enum import StrEnum
from functools import cache
from importlib import resources


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


@dataclass(frozen=True)
class BillingFact:
    provider: str
    fact: BillingFactKind
    value: str
    source: str
    as_of: date


@cache
def load_billing_facts() -> tuple[BillingFact, ...]:
    text = resources.files("gpurent.data").joinpath("billing_facts.csv").read_text("utf-8")
    return tuple(
        BillingFact(
            provider=row["provider"],
            fact=BillingFactKind(row["fact"]),
            value=row["value"],
            source=row["source"],
            as_of=date.fromisoformat(row["as_of"]),
        )
        for row in csv.DictReader(text.splitlines())
    )


def facts_for(provider: str) -> list[BillingFact]:
    return [f for f in load_billing_facts() if f.provider == provider]
