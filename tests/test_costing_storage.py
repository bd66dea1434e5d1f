"""Storage asked for is paid for on every offer (issue 12), and what "in stock" means for a unit.

Fees are written as the parsers emit them (see spiders/providers/*/fixtures/*/output.json): AutoDL's
file storage and GPUShare's /hy-nas are optional add-ons, Vast.ai's and RunPod's disks are
mandatory, Lambda's feed has no storage fee at all.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpurent_core.cost.engine import true_cost
from gpurent_core.cost.offer import CostInput
from gpurent_core.cost.stock import cards_to_rent, rentable
from gpurent_core.cost.usage import UsageProfile
from gpurent_core.model import AddonFee, BillingUnit, FeeBasis, FeeType, PriceBasis
from gpurent_core.providers import BY_NAME, PER_MACHINE_FREE_COUNTS

D = Decimal
H = BillingUnit.HOUR


def storage(
    amount: str,
    unit: BillingUnit,
    *,
    fee_type: FeeType = FeeType.DATA_DISK,
    currency: str = "CNY",
    included: str | None = None,
    mandatory: bool = False,
    while_stopped: bool = True,
) -> AddonFee:
    return AddonFee(
        fee_type=fee_type,
        amount=D(amount),
        currency=currency,
        unit=unit,
        basis=FeeBasis.GB,
        included_quantity=D(included) if included is not None else None,
        mandatory=mandatory,
        charged_while_stopped=while_stopped,
    )


AUTODL_FEED_FEES = (
    AddonFee(
        fee_type=FeeType.SYSTEM_DISK,
        amount=D("0.10"),
        currency="CNY",
        unit=BillingUnit.DAY,
        mandatory=True,
    ),
    storage("0.01", BillingUnit.DAY, included="20"),  # optional in AutoDL's feed
    AddonFee(fee_type=FeeType.NO_GPU_MODE, amount=D("0.10"), currency="CNY", unit=H),
)


def cny(price: str, fees: tuple[AddonFee, ...]) -> CostInput:
    return CostInput(
        price=D(price), currency="CNY", billing_unit=H, price_basis=PriceBasis.GPU, fees=fees
    )


def gb(n: str) -> UsageProfile:
    return UsageProfile(storage_gb=D(n))


def test_autodl_optional_file_storage_counts_what_is_asked_beyond_the_free_20_gb() -> None:
    inp = cny("1.39", AUTODL_FEED_FEES)
    zero, fifty, five_hundred = (true_cost(inp, gb(n)) for n in ("0", "50", "500"))
    # 0 GB: the system disk only (0.10/24 per hour, 0.10 x 730/24 a month).
    assert zero.hourly == D("1.394167")
    assert zero.monthly == D("1017.741667")
    # 50 GB: 30 GB beyond the allowance x 0.01/day -> 0.0125/h; kept while stopped: 9.125.
    assert fifty.addons_hourly[FeeType.DATA_DISK] == D("0.012500")
    assert fifty.addons_monthly[FeeType.DATA_DISK] == D("9.125000")
    assert fifty.monthly == D("1026.866667")
    # 500 GB: 480 GB x 0.01/day -> 0.20/h, 146 a month.
    assert five_hundred.addons_monthly[FeeType.DATA_DISK] == D("146.000000")
    assert five_hundred.monthly == D("1163.741667")
    assert "the 500 GB asked for are counted on the optional data_disk fee" in (
        five_hundred.explain()
    )
    # No-GPU mode stays a choice, not part of renting the card.
    assert [s.fee.fee_type for s in five_hundred.not_counted] == [FeeType.NO_GPU_MODE]
    assert not five_hundred.storage_price_unknown


def test_gpushare_hy_nas_storage_rises_with_the_gb_asked() -> None:
    inp = cny("1.98", (storage("0.0007", H),))
    costs = [true_cost(inp, gb(n)).monthly for n in ("0", "50", "500")]
    # 0.0007 x GB x 730 h (kept while stopped): 0, 25.55, 255.50 on top of 1.98 x 730.
    assert costs == [D("1445.400000"), D("1470.950000"), D("1700.900000")]
    assert true_cost(inp, gb("0")).not_counted[0].reason == "optional; no storage asked for"


def test_the_cheapest_optional_disk_takes_the_storage_and_the_others_are_named() -> None:
    nvme = storage("0.2", BillingUnit.MONTH, currency="USD")
    hdd = storage("0.05", BillingUnit.MONTH, currency="USD")
    inp = CostInput(
        price=D("1.00"),
        currency="USD",
        billing_unit=H,
        price_basis=PriceBasis.INSTANCE,
        fees=(nvme, hdd),
    )
    tc = true_cost(inp, gb("100"))
    assert tc.addons_monthly == {FeeType.DATA_DISK: D("5.000000")}  # 100 GB x 0.05
    assert tc.monthly == D("735.000000")
    assert [(s.fee, s.reason) for s in tc.not_counted] == [
        (nvme, "optional; the 100 GB storage is counted on a cheaper data_disk fee")
    ]


def test_a_mandatory_storage_fee_takes_the_storage_and_optional_disks_stay_optional() -> None:
    boot = storage("0.2", BillingUnit.MONTH, currency="USD", mandatory=True)
    hdd = storage("0.05", BillingUnit.MONTH, currency="USD")
    inp = CostInput(
        price=D("1.00"),
        currency="USD",
        billing_unit=H,
        price_basis=PriceBasis.INSTANCE,
        fees=(boot, hdd),
    )
    tc = true_cost(inp, gb("100"))
    assert tc.addons_monthly == {FeeType.DATA_DISK: D("20.000000")}
    assert [(s.fee, s.reason) for s in tc.not_counted] == [(hdd, "optional")]


def test_vast_and_runpod_mandatory_disks_are_priced_as_before() -> None:
    runpod = CostInput(
        price=D("0.33"),
        currency="USD",
        billing_unit=H,
        price_basis=PriceBasis.GPU,
        fees=(
            storage("0.10", BillingUnit.MONTH, currency="USD", mandatory=True, while_stopped=False),
            storage(
                "0.20",
                BillingUnit.MONTH,
                fee_type=FeeType.STORAGE_STOPPED,
                currency="USD",
                mandatory=True,
            ),
        ),
    )
    tc = true_cost(runpod, UsageProfile(hours_per_month=D(200), storage_gb=D(50)))
    # running: 0.10 x 50 x 200/730; stopped: 0.20 x 50 x 530/730; plus 0.33 x 200.
    assert tc.addons_monthly == {
        FeeType.DATA_DISK: D("1.369863"),
        FeeType.STORAGE_STOPPED: D("7.260274"),
    }
    assert tc.monthly == D("74.630137")
    assert tc.not_counted == () and not tc.storage_price_unknown


def test_an_offer_without_any_storage_fee_says_its_storage_price_is_unknown() -> None:
    lambda_like = CostInput(
        price=D("0.5"), currency="USD", billing_unit=H, price_basis=PriceBasis.INSTANCE
    )
    tc = true_cost(lambda_like, gb("50"))
    assert tc.storage_price_unknown
    assert tc.monthly == D("365.000000")  # not priced as if it were free: flagged instead
    assert "Storage price unknown" in tc.explain()
    assert "50 GB asked for are not counted" in tc.explain()
    # Nothing asked for, nothing unknown.
    assert not true_cost(lambda_like, gb("0")).storage_price_unknown


def test_a_fixed_size_disk_is_not_where_the_users_storage_goes() -> None:
    fixed = AddonFee(
        fee_type=FeeType.DATA_DISK,
        amount=D("0.01"),
        currency="CNY",
        unit=H,
        basis=FeeBasis.GB,
        quantity=D(30),
    )
    tc = true_cost(cny("1", (fixed,)), gb("50"))
    assert tc.storage_price_unknown
    assert tc.not_counted[0].reason == "optional"


@settings(max_examples=150, deadline=None)
@given(
    amounts=st.lists(
        st.decimals(min_value=0, max_value=1, places=4, allow_nan=False), min_size=1, max_size=3
    ),
    included=st.none() | st.decimals(min_value=0, max_value=100, places=0, allow_nan=False),
    small=st.decimals(min_value=0, max_value=500, places=1, allow_nan=False),
    extra=st.decimals(min_value=0, max_value=500, places=1, allow_nan=False),
)
def test_property_optional_storage_monthly_never_falls_as_storage_grows(
    amounts: list[Decimal], included: Decimal | None, small: Decimal, extra: Decimal
) -> None:
    fees = tuple(
        storage(str(a), BillingUnit.MONTH, included=None if included is None else str(included))
        for a in amounts
    )
    inp = cny("1", fees)
    low, high = true_cost(inp, gb(str(small))), true_cost(inp, gb(str(small + extra)))
    assert high.monthly >= low.monthly
    # and the storage is counted on the cheapest disk listed
    billable = max(D(0), small + extra - (included or D(0)))
    assert high.addons_monthly.get(FeeType.DATA_DISK, D(0)) == (
        (min(amounts) * billable).quantize(D("0.000001")) if small + extra > 0 else D(0)
    )


# ------------------------------------------------------------------ rentable


def row(**kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "status": "in_stock",
        "gpu_count": 1,
        "available_count": None,
        "price_basis": "gpu",
        "provider": "autodl",  # its free count is of one machine
    }
    return base | kw


@pytest.mark.parametrize(
    ("offer", "needed", "expected"),
    [
        # the issue: a 2-card whole machine with 1 free card cannot be rented as listed
        (row(gpu_count=2, available_count=1, price_basis="instance", status="low"), 2, False),
        (row(gpu_count=2, available_count=1, price_basis="instance"), 1, False),
        (row(gpu_count=2, available_count=2, price_basis="instance"), 2, True),
        (row(gpu_count=2, available_count=1, price_basis="gpu"), 1, False),
        (row(gpu_count=8, available_count=7, price_basis="instance"), 2, False),
        (row(gpu_count=2, available_count=None, price_basis="instance"), 2, True),
        # per-card offers rent more cards than listed while the free count covers them; with
        # no free count, no more than listed (the rule changed: 16 cards were invented)
        (row(gpu_count=1, available_count=4), 2, True),
        (row(gpu_count=1, available_count=1), 2, False),
        (row(gpu_count=1, available_count=None), 4, False),
        (row(gpu_count=1, available_count=None, price_basis="instance"), 2, False),
        # a count of a region's or a platform's free cards is no machine of that many
        (row(gpu_count=1, available_count=12, provider="gongji"), 2, False),
        (row(gpu_count=1, available_count=12, provider="cudo"), 1, True),
        # unknown is not in stock; sold out is not either
        (row(status="unknown", available_count=5), 1, False),
        (row(status="sold_out", available_count=0), 1, False),
        (row(status="low", available_count=1), 1, True),
    ],
)
def test_rentable_is_in_stock_for_the_unit_rented(
    offer: dict[str, Any], needed: int, expected: bool
) -> None:
    assert rentable(offer, needed) is expected


def test_cards_to_rent_rents_machines_as_listed_and_cards_as_wanted() -> None:
    assert cards_to_rent(row(gpu_count=4, price_basis="instance"), 2) == 4
    assert cards_to_rent(row(gpu_count=1, available_count=6), 3) == 3
    assert cards_to_rent(row(gpu_count=2, price_basis="instance"), 3) is None


def test_more_cards_than_listed_only_where_the_free_count_shows_them() -> None:
    # A per-card price with no free count tells nothing of how many cards a machine has.
    assert cards_to_rent(row(gpu_count=1, available_count=None), 16) is None
    assert cards_to_rent(row(gpu_count=1, available_count=8), 16) is None
    assert cards_to_rent(row(gpu_count=1, available_count=16), 16) == 16
    assert not rentable(row(gpu_count=1, available_count=None), 16)


@pytest.mark.parametrize("provider", sorted(BY_NAME.keys() - PER_MACHINE_FREE_COUNTS))
def test_a_pooled_free_count_never_makes_a_machine_of_more_cards(provider: str) -> None:
    # Cudo's totalGpuFree (a data center), JarvisLabs' num_free_devices (a region), Gongji's
    # 空闲 12/64 (the platform): cards free across machines are no 12-card machine.
    offer = row(gpu_count=1, available_count=12, provider=provider)
    assert cards_to_rent(offer, 1) == 1
    assert cards_to_rent(offer, 2) is None
    assert not rentable(offer, 12)


def test_the_per_machine_providers_are_named_in_the_registry() -> None:
    # One list says whose count is per machine; the engine and its SQL copy read it.
    assert {"autodl", "gpushare", "lanyun", "tensordock"} == PER_MACHINE_FREE_COUNTS
    assert not PER_MACHINE_FREE_COUNTS & {"cudo", "jarvislabs", "gongji", "suanjia"}


def test_a_fee_billed_only_while_stopped_does_not_price_the_running_storage() -> None:
    # Xiangongyun bills the system disk only once the GPU is released: nothing says what
    # the storage costs while running, so it is unknown, not free.
    stopped = storage("0.00003", H, fee_type=FeeType.STORAGE_STOPPED, mandatory=True)
    alone = true_cost(cny("1.30", (stopped,)), gb("2000"))
    assert alone.storage_price_unknown
    assert "no per-GB storage fee for the running hours" in alone.explain()
    # Beside a mandatory disk fee, the storage is priced through it.
    disk = storage("0.0001", H, mandatory=True)
    assert not true_cost(cny("1.30", (disk, stopped)), gb("2000")).storage_price_unknown
    # Beside an optional disk, the storage goes on that disk.
    optional = storage("0.0001", H)
    priced = true_cost(cny("1.30", (optional, stopped)), gb("2000"))
    assert not priced.storage_price_unknown
    assert priced.addons_hourly[FeeType.DATA_DISK] == D("0.200000")
