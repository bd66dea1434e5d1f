"""Declaring add-on fees (`AddonFee`) the same way for every provider.

A fee is named by what it is counted per: per GB (disks, volumes, storage kept while
stopped), per instance (a system disk, a public IP, a mode of the machine), per vCPU or per
GiB of RAM (the parts of a component-priced VM). The helpers fix the basis and leave every
other term to the caller, so each provider module still reads as its own price sheet.
"""

from __future__ import annotations

from decimal import Decimal

from gpurent.model import AddonFee, BillingUnit, FeeBasis, FeeType


def per_gb_fee(
    amount: Decimal,
    currency: str,
    unit: BillingUnit,
    *,
    mandatory: bool,
    note: str,
    fee_type: FeeType = FeeType.DATA_DISK,
    included_gb: Decimal | None = None,
    while_stopped: bool = False,
) -> AddonFee:
    """A fee per GB of storage per `unit` (a data disk unless `fee_type` says otherwise)."""
    return AddonFee(
        fee_type=fee_type,
        amount=amount,
        currency=currency,
        unit=unit,
        basis=FeeBasis.GB,
        included_quantity=included_gb,
        mandatory=mandatory,
        charged_while_stopped=while_stopped,
        note=note,
    )


def per_instance_fee(
    fee_type: FeeType,
    amount: Decimal,
    currency: str,
    unit: BillingUnit,
    *,
    mandatory: bool,
    note: str | None = None,
    while_stopped: bool = False,
) -> AddonFee:
    """A fee counted once per instance per `unit` (system disk, public IP, no-GPU mode)."""
    return AddonFee(
        fee_type=fee_type,
        amount=amount,
        currency=currency,
        unit=unit,
        basis=FeeBasis.INSTANCE,
        mandatory=mandatory,
        charged_while_stopped=while_stopped,
        note=note,
    )


# The unit each part of a component-priced VM is counted in.
VM_PART_BASIS = {FeeType.VCPU: FeeBasis.VCPU, FeeType.MEMORY: FeeBasis.GIB_RAM}


def vm_part_fee(
    part: FeeType, amount: Decimal, currency: str, *, quantity: Decimal, note: str
) -> AddonFee:
    """The hourly charge of the `quantity` vCPUs (`FeeType.VCPU`) or GiB of RAM
    (`FeeType.MEMORY`) that a component-priced VM must take with its card."""
    return AddonFee(
        fee_type=part,
        amount=amount,
        currency=currency,
        unit=BillingUnit.HOUR,
        basis=VM_PART_BASIS[part],
        quantity=quantity,
        mandatory=True,
        note=note,
    )
