"""Declaring add-on fees (`AddonFee`) the same way for every provider.

A fee is named by what it is counted per: per GB (disks, volumes, storage kept while
stopped), per instance (a system disk, a public IP, a mode of the machine), per vCPU or per
GiB of RAM (the parts of a component-priced VM). The helpers fix the basis and leave every
other term to the caller, so each provider module still reads as its own price sheet.

A fee amount or quantity that is negative or not finite is refused here (a `FieldProblem`
of the fee), whoever read it: a negative fee would lower the true cost. A caller that treats
the fee as a side field catches it and sets it aside (`spiders.parsers.common.set_aside`),
so the offer stands without that fee.
"""

from __future__ import annotations

from decimal import Decimal

from gpurent_core.model import AddonFee, BillingUnit, FeeBasis, FeeType
from spiders.parsers.common import INVALID_VALUE, PRICE_UNPARSED, FieldProblem


def _amount(amount: Decimal, fee_type: FeeType) -> Decimal:
    if not Decimal(amount).is_finite() or amount < 0:  # an int amount reads as itself
        raise FieldProblem(PRICE_UNPARSED, fee_type.value, f"{fee_type.value} fee {amount}")
    return amount


def _quantity(quantity: Decimal | None, fee_type: FeeType) -> Decimal | None:
    if quantity is not None and (not Decimal(quantity).is_finite() or quantity < 0):
        raise FieldProblem(INVALID_VALUE, fee_type.value, f"{fee_type.value} quantity {quantity}")
    return quantity


def per_gb_fee(
    amount: Decimal,
    currency: str,
    unit: BillingUnit,
    *,
    mandatory: bool,
    note: str,
    fee_type: FeeType = FeeType.DATA_DISK,
    included_gb: Decimal | None = None,
    while_stopped: bool | None = None,
) -> AddonFee:
    """A fee per GB of storage per `unit` (a data disk unless `fee_type` says otherwise)."""
    return AddonFee(
        fee_type=fee_type,
        amount=_amount(amount, fee_type),
        currency=currency,
        unit=unit,
        basis=FeeBasis.GB,
        included_quantity=_quantity(included_gb, fee_type),
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
    while_stopped: bool | None = None,
) -> AddonFee:
    """A fee counted once per instance per `unit` (system disk, public IP, no-GPU mode)."""
    return AddonFee(
        fee_type=fee_type,
        amount=_amount(amount, fee_type),
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
        amount=_amount(amount, part),
        currency=currency,
        unit=BillingUnit.HOUR,
        basis=VM_PART_BASIS[part],
        quantity=_quantity(quantity, part),
        mandatory=True,
        # The CPUs and RAM of a VM stop with it: component-priced clouds bill a stopped VM
        # for its storage only (Cudo, Hyperstack, TensorDock pricing pages).
        charged_while_stopped=False,
        note=note,
    )
