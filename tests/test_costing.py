"""The true-cost engine: hand-computed examples, then properties."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpurent_core.billing_facts import BillingStart, terms_for
from gpurent_core.cost.engine import TrueCost, rank_key, true_cost
from gpurent_core.cost.money import quantize_money
from gpurent_core.cost.offer import CostInput, DoesNotFit, price_per_gpu_hour
from gpurent_core.cost.usage import UsageProfile
from gpurent_core.fx import FX_ENV_VAR, FxRate, FxRateMissing, FxTable
from gpurent_core.model import (
    AddonFee,
    BillingUnit,
    FeeBasis,
    FeeType,
    OfferRecord,
    PriceBasis,
    PriceKind,
    PricePlan,
    StockStatus,
)
from gpurent_core.units import HOURS_PER_UNIT, convert_rate, hourly_rate

D = Decimal
H = BillingUnit.HOUR
NOV = date(2026, 11, 1)


def fee(
    fee_type: FeeType,
    amount: str,
    currency: str = "CNY",
    unit: BillingUnit | None = BillingUnit.HOUR,
    basis: FeeBasis = FeeBasis.INSTANCE,
    *,
    quantity: Decimal | None = None,
    included_quantity: Decimal | None = None,
    mandatory: bool = False,
    charged_while_stopped: bool = False,
) -> AddonFee:
    return AddonFee(
        fee_type=fee_type,
        amount=D(amount),
        currency=currency,
        unit=unit,
        basis=basis,
        quantity=quantity,
        included_quantity=included_quantity,
        mandatory=mandatory,
        charged_while_stopped=charged_while_stopped,
    )


def plan(
    price: str,
    unit: BillingUnit,
    kind: PriceKind = PriceKind.COMMITMENT,
    basis: PriceBasis = PriceBasis.INSTANCE,
    currency: str = "CNY",
) -> PricePlan:
    return PricePlan(
        price=D(price), currency=currency, billing_unit=unit, price_basis=basis, price_kind=kind
    )


def profile(
    hours: str = "730",
    storage: str = "50",
    egress: str = "0",
    *,
    keep_disks_while_stopped: bool = True,
    gpus: int = 1,
) -> UsageProfile:
    return UsageProfile(
        hours_per_month=D(hours),
        storage_gb=D(storage),
        egress_gb_per_month=D(egress),
        keep_disks_while_stopped=keep_disks_while_stopped,
        gpus=gpus,
    )


# ------------------------------------------------------------------ AutoDL

AUTODL_FEES = (
    # 系统盘 30GB ¥0.10/日, always there, billed while the instance is kept.
    fee(
        FeeType.SYSTEM_DISK,
        "0.10",
        unit=BillingUnit.DAY,
        mandatory=True,
        charged_while_stopped=True,
    ),
    # file storage ¥0.01/GB/日 beyond 20 GB free, billed daily whatever the instance does.
    fee(
        FeeType.DATA_DISK,
        "0.01",
        unit=BillingUnit.DAY,
        basis=FeeBasis.GB,
        included_quantity=D(20),
        mandatory=True,
        charged_while_stopped=True,
    ),
    # 无卡模式 is a choice, not part of renting the card.
    fee(FeeType.NO_GPU_MODE, "0.10"),
)


def autodl(**kw: object) -> CostInput:
    args: dict[str, object] = {
        "price": D("2.72"),
        "currency": "CNY",
        "billing_unit": H,
        "price_basis": PriceBasis.INSTANCE,
        "fees": AUTODL_FEES,
    }
    args.update(kw)
    return CostInput(**args)  # type: ignore[arg-type]


def test_autodl_payg_200_hours_with_disks_kept() -> None:
    tc = true_cost(autodl(), profile("200"))
    # hourly: 2.72 + 0.10/24 + 0.01 x (50-20)/24 = 2.72 + 0.0041666.. + 0.0125
    assert tc.hourly == D("2.736667")
    assert tc.base_hourly == D("2.720000")
    assert tc.addons_hourly == {
        FeeType.SYSTEM_DISK: D("0.004167"),
        FeeType.DATA_DISK: D("0.012500"),
    }
    # monthly: 2.72 x 200 = 544; disks all 730 h: 0.10 x 730/24 = 3.041666..; 0.30 x 730/24 = 9.125
    assert tc.plan.cost == D("544.000000")
    assert tc.addons_monthly == {
        FeeType.SYSTEM_DISK: D("3.041667"),
        FeeType.DATA_DISK: D("9.125000"),
    }
    assert tc.monthly == D("556.166667")
    assert tc.currency == tc.display_currency == "CNY"
    assert tc.fx_rate is None
    assert tc.monthly_display == tc.monthly
    assert [s.fee.fee_type for s in tc.not_counted] == [FeeType.NO_GPU_MODE]
    assert tc.not_counted[0].reason == "optional"


def test_autodl_disks_released_when_stopped_accrue_only_for_hours_used() -> None:
    tc = true_cost(autodl(), profile("200", keep_disks_while_stopped=False))
    # 544 + 0.10 x 200/24 + 0.30 x 200/24 = 544 + 0.8333.. + 2.5
    assert tc.monthly == D("547.333333")
    assert tc.hourly == D("2.736667")  # the running rate does not depend on it


def test_autodl_storage_within_the_free_allowance_costs_nothing() -> None:
    tc = true_cost(autodl(), profile("200", storage="15"))
    assert tc.addons_hourly[FeeType.DATA_DISK] == 0
    assert tc.addons_monthly[FeeType.DATA_DISK] == 0
    assert tc.hourly == D("2.724167")


def test_explain_shows_the_numbers_a_reader_recomputes() -> None:
    text = true_cost(autodl(), profile("200")).explain()
    assert "2.72 CNY/hour x 200 hour" in text
    assert "= 544.000000" in text
    assert "system_disk 0.10 CNY/day x 1 instance x 30.4167 day" in text
    assert "= 3.041667" in text
    assert "max(0, 50 storage GB - 20 included)" in text
    assert "= 556.166667 CNY/month" in text
    assert "Not counted: no_gpu_mode (optional)" in text


# ------------------------------------------------------------------ Vast.ai

VAST = CostInput(
    price=D("0.2467"),
    currency="USD",
    billing_unit=H,
    price_basis=PriceBasis.INSTANCE,
    fees=(
        fee(
            FeeType.DATA_DISK,
            "0.15",
            "USD",
            unit=BillingUnit.MONTH,
            basis=FeeBasis.GB,
            mandatory=True,
            charged_while_stopped=True,
        ),
        fee(FeeType.EGRESS, "2", "USD", unit=None, basis=FeeBasis.TB),
    ),
)


def test_vast_storage_per_gb_month_and_egress_per_tb() -> None:
    tc = true_cost(VAST, profile("730", storage="50", egress="500"))
    # storage: 0.15 x 50 / 730 = 0.01027397.. per hour; 7.50 a month
    assert tc.addons_hourly[FeeType.DATA_DISK] == D("0.010274")
    assert tc.addons_monthly[FeeType.DATA_DISK] == D("7.500000")
    # egress: 2 USD/TB x 0.5 TB = 1.00 a month, spread 1/730 per hour
    assert tc.addons_monthly[FeeType.EGRESS] == D("1.000000")
    assert tc.addons_hourly[FeeType.EGRESS] == D("0.001370")
    # hourly 0.2467 + 8.5/730 = 0.258343835..
    assert tc.hourly == D("0.258344")
    # monthly 0.2467 x 730 + 7.5 + 1 = 180.091 + 8.5
    assert tc.monthly == D("188.591000")
    assert tc.not_counted == ()


def test_egress_counts_even_when_not_marked_mandatory_and_zero_traffic_costs_zero() -> None:
    assert VAST.fees[1].mandatory is False
    tc = true_cost(VAST, profile("730"))
    assert tc.addons_monthly[FeeType.EGRESS] == 0
    assert tc.monthly == D("187.591000")


# ------------------------------------------------------------------ Cudo

CUDO_FEES = (
    fee(FeeType.VCPU, "0.0021", "USD", basis=FeeBasis.VCPU, quantity=D(4), mandatory=True),
    fee(FeeType.MEMORY, "0.0034", "USD", basis=FeeBasis.GIB_RAM, quantity=D(16), mandatory=True),
    fee(FeeType.DATA_DISK, "0.000107", "USD", basis=FeeBasis.GB, mandatory=True),
    fee(FeeType.PUBLIC_IP, "0.0035", "USD"),
)


def cudo(gpu_count: int = 1, fees: tuple[AddonFee, ...] = CUDO_FEES) -> CostInput:
    return CostInput(
        price=D("0.52"),
        currency="USD",
        billing_unit=H,
        price_basis=PriceBasis.GPU,
        gpu_count=gpu_count,
        fees=fees,
    )


def test_cudo_per_component_prices() -> None:
    tc = true_cost(cudo(), profile("730"))
    # 0.52 x 1 + 0.0021 x 4 + 0.0034 x 16 + 0.000107 x 50 = 0.52 + 0.0084 + 0.0544 + 0.00535
    assert tc.hourly == D("0.588150")
    assert tc.addons_hourly == {
        FeeType.VCPU: D("0.008400"),
        FeeType.MEMORY: D("0.054400"),
        FeeType.DATA_DISK: D("0.005350"),
    }
    assert tc.monthly == D("429.349500")  # 0.58815 x 730
    assert [s.fee.fee_type for s in tc.not_counted] == [FeeType.PUBLIC_IP]


def test_cudo_two_gpus_multiplies_the_gpu_price_not_the_fixed_quantities() -> None:
    tc = true_cost(cudo(gpu_count=2), profile("100", gpus=2))
    assert tc.base_hourly == D("1.040000")
    assert tc.price_per_gpu_hour == D("0.520000")
    assert tc.hourly == D("1.108150")  # quantities are for the whole offer
    assert tc.monthly == D("110.815000")


def test_vcpu_fee_without_quantity_is_listed_not_guessed() -> None:
    fees = (fee(FeeType.VCPU, "0.0021", "USD", basis=FeeBasis.VCPU, mandatory=True),)
    tc = true_cost(cudo(fees=fees), profile("730"))
    assert tc.hourly == D("0.520000")
    assert tc.not_counted[0].reason == "per-vcpu fee without a fixed quantity"
    assert "Not counted: vcpu" in tc.explain()


# ------------------------------------------------------------------ plans


def test_month_package_beats_730_hours_of_hourly() -> None:
    inp = autodl(
        fees=(),
        plans=(
            plan("60", BillingUnit.DAY),
            plan("400", BillingUnit.WEEK),
            plan("1500", BillingUnit.MONTH),
        ),
    )
    tc = true_cost(inp, profile("730"))
    # hourly 2.72 x 730 = 1985.6; day ceil(730/24)=31 x 60 = 1860; week 5 x 400 = 2000; month 1500
    assert tc.plan.source == "plan"
    assert tc.plan.billing_unit is BillingUnit.MONTH
    assert tc.plan.price_kind is PriceKind.COMMITMENT
    assert tc.plan.units == 1
    assert tc.monthly == D("1500.000000")
    assert tc.hourly == D("2.720000")  # the hourly figure stays the headline's
    assert "1985.600000" in tc.explain()  # the losers are shown too


def test_day_packages_win_at_200_hours() -> None:
    inp = autodl(fees=(), plans=(plan("60", BillingUnit.DAY), plan("1500", BillingUnit.MONTH)))
    tc = true_cost(inp, profile("200"))
    # 544 hourly vs ceil(200/24) = 9 days x 60 = 540
    assert tc.plan.billing_unit is BillingUnit.DAY
    assert tc.plan.units == 9
    assert tc.monthly == D("540.000000")


def test_year_package_is_pro_rated_to_a_month() -> None:
    inp = autodl(fees=(), plans=(plan("12000", BillingUnit.YEAR),))
    tc = true_cost(inp, profile("730"))
    assert tc.plan.billing_unit is BillingUnit.YEAR
    assert tc.plan.units == D("0.083333")
    assert tc.monthly == D("1000.000000")
    # at few hours the year is not worth it
    assert true_cost(inp, profile("100")).plan.billing_unit is H


def test_hourly_commitment_rate_is_paid_for_the_whole_month() -> None:
    inp = autodl(fees=(), plans=(plan("2.00", H),))
    # 200 h: reserved 2.00 x 730 = 1460 > 544 on demand
    assert true_cost(inp, profile("200")).monthly == D("544.000000")
    # 730 h: 1460 < 1985.6
    tc = true_cost(inp, profile("730"))
    assert tc.monthly == D("1460.000000")
    assert tc.plan.units == 730


def test_spot_plan_is_ignored_and_member_only_on_request() -> None:
    inp = autodl(
        fees=(),
        plans=(plan("1.00", H, PriceKind.SPOT), plan("2.50", H, PriceKind.MEMBER)),
    )
    tc = true_cost(inp, profile("200"))
    assert tc.monthly == D("544.000000")
    assert tc.plan.source == "headline"
    assert "not considered: plan spot 1" in tc.explain()
    member = true_cost(inp, profile("200"), include_member=True)
    assert member.monthly == D("500.000000")
    assert member.plan.price_kind is PriceKind.MEMBER


def test_per_gpu_plan_is_multiplied_by_the_offer_gpus() -> None:
    inp = CostInput(
        price=D("8.00"),
        currency="CNY",
        billing_unit=H,
        price_basis=PriceBasis.INSTANCE,
        gpu_count=4,
        plans=(plan("1000", BillingUnit.MONTH, basis=PriceBasis.GPU),),
    )
    tc = true_cost(inp, profile("730"))
    assert tc.plan.offer_price == D("4000.000000")
    assert tc.monthly == D("4000.000000")  # < 8 x 730 = 5840


def test_package_headline_is_converted_per_hour() -> None:
    inp = CostInput(
        price=D("1154.64"),
        currency="CNY",
        billing_unit=BillingUnit.MONTH,
        price_basis=PriceBasis.INSTANCE,
    )
    tc = true_cost(inp, profile("730"))
    assert tc.hourly == D("1.581699")  # 1154.64 / 730 = 1.58169863..
    assert tc.monthly == D("1154.640000")
    assert true_cost(inp, profile("10")).monthly == D("1154.640000")  # one whole month


def test_per_second_price_scales_exactly() -> None:
    inp = CostInput(
        price=D("0.0001"),
        currency="USD",
        billing_unit=BillingUnit.SECOND,
        price_basis=PriceBasis.INSTANCE,
    )
    tc = true_cost(inp, profile("200"))
    assert tc.hourly == D("0.360000")
    assert tc.monthly == D("72.000000")
    assert tc.plan.units == 720000  # seconds


# ------------------------------------------------------------------ bases and fit


def test_per_gpu_and_whole_machine_prices() -> None:
    per_gpu = CostInput(
        price=D("1.00"), currency="USD", billing_unit=H, price_basis=PriceBasis.GPU, gpu_count=4
    )
    whole = CostInput(
        price=D("4.00"),
        currency="USD",
        billing_unit=H,
        price_basis=PriceBasis.INSTANCE,
        gpu_count=4,
    )
    a = true_cost(per_gpu, profile("730", gpus=2))
    b = true_cost(whole, profile("730", gpus=2))
    assert a.base_hourly == b.base_hourly == D("4.000000")
    assert a.price_per_gpu_hour == b.price_per_gpu_hour == D("1.000000")
    assert a.monthly == b.monthly == D("2920.000000")
    assert price_per_gpu_hour(D("4.00"), H, PriceBasis.INSTANCE, 4) == D("1.000000")
    assert price_per_gpu_hour(D("24"), BillingUnit.DAY, PriceBasis.GPU, 8) == D("1.000000")
    assert price_per_gpu_hour(D("1"), BillingUnit.DAY, PriceBasis.INSTANCE, 3) == D("0.013889")


@pytest.mark.parametrize("basis", list(PriceBasis))
def test_more_gpus_than_the_offer_does_not_fit(basis: PriceBasis) -> None:
    inp = CostInput(price=D("1"), currency="USD", billing_unit=H, price_basis=basis, gpu_count=2)
    with pytest.raises(DoesNotFit, match="3 GPU"):
        true_cost(inp, profile(gpus=3))
    assert true_cost(inp, profile(gpus=2)).hourly > 0


def test_storage_stopped_fee_accrues_only_while_stopped() -> None:
    # RunPod-style volume: 0.10/GB/month running, 0.20/GB/month while stopped.
    inp = CostInput(
        price=D("0.34"),
        currency="USD",
        billing_unit=H,
        price_basis=PriceBasis.GPU,
        fees=(
            fee(FeeType.DATA_DISK, "0.10", "USD", BillingUnit.MONTH, FeeBasis.GB, mandatory=True),
            fee(
                FeeType.STORAGE_STOPPED,
                "0.20",
                "USD",
                BillingUnit.MONTH,
                FeeBasis.GB,
                mandatory=True,
            ),
        ),
    )
    tc = true_cost(inp, profile("200"))
    assert tc.addons_hourly == {FeeType.DATA_DISK: D("0.006849"), FeeType.STORAGE_STOPPED: D("0")}
    # running: 5/730 x 200 = 1.369863 ; stopped: 10/730 x 530 = 7.260274
    assert tc.addons_monthly == {
        FeeType.DATA_DISK: D("1.369863"),
        FeeType.STORAGE_STOPPED: D("7.260274"),
    }
    assert tc.monthly == D("76.630137")  # 68 + 1000/730 + 5300/730
    released = true_cost(inp, profile("200", keep_disks_while_stopped=False))
    assert released.addons_monthly[FeeType.STORAGE_STOPPED] == 0


def _one_fee_offer(unit: BillingUnit, while_stopped: bool | None) -> CostInput:
    disk = AddonFee(
        fee_type=FeeType.SYSTEM_DISK,
        amount=D("7.3"),
        currency="CNY",
        unit=unit,
        mandatory=True,
        charged_while_stopped=while_stopped,
    )
    return CostInput(D("1"), "CNY", H, PriceBasis.GPU, fees=(disk,))


@pytest.mark.parametrize("unit", [BillingUnit.HOUR, BillingUnit.DAY, BillingUnit.WEEK])
def test_unknown_charged_while_stopped_is_counted_as_charged_and_said_to_be_assumed(
    unit: BillingUnit,
) -> None:
    unknown = true_cost(_one_fee_offer(unit, None), profile("200"))
    known_yes = true_cost(_one_fee_offer(unit, True), profile("200"))
    known_no = true_cost(_one_fee_offer(unit, False), profile("200"))
    # Never the cheap reading: unknown costs what "charged" costs, more than "not charged".
    assert unknown.monthly == known_yes.monthly > known_no.monthly
    assert unknown.hourly == known_yes.hourly == known_no.hourly  # the running rate is the same
    assert any("charged while stopped" in term for term in unknown.unknown_terms)
    assert "assumed charged while stopped" in unknown.explain()
    assert not any("while stopped" in term for term in known_yes.unknown_terms)
    assert "assumed" not in known_no.explain().split("Billing terms")[0]
    # Released between sessions, nothing is kept, so nothing is assumed either.
    released = true_cost(_one_fee_offer(unit, None), profile("200", keep_disks_while_stopped=False))
    assert released.monthly == known_no.monthly
    assert not any("while stopped" in term for term in released.unknown_terms)


@pytest.mark.parametrize("unit", [BillingUnit.MONTH, BillingUnit.YEAR])
@pytest.mark.parametrize("keep", [True, False])
@pytest.mark.parametrize("hours", ["1.5", "200", "730"])
def test_a_fee_per_month_or_year_is_paid_for_the_whole_month(
    unit: BillingUnit, keep: bool, hours: str
) -> None:
    tc = true_cost(_one_fee_offer(unit, None), profile(hours, keep_disks_while_stopped=keep))
    share = Fraction("7.3") * 730 / HOURS_PER_UNIT[unit]  # the month's share of the fee
    assert tc.addons_monthly[FeeType.SYSTEM_DISK] == quantize_money(share)
    # One that the provider says stops with the instance accrues for the hours used.
    pro_rata = true_cost(_one_fee_offer(unit, False), profile(hours, keep_disks_while_stopped=keep))
    expected = Fraction("7.3") * Fraction(hours) / HOURS_PER_UNIT[unit]
    assert pro_rata.addons_monthly[FeeType.SYSTEM_DISK] == quantize_money(expected)


def test_one_off_fee_is_counted_once_a_month() -> None:
    inp = autodl(fees=(fee(FeeType.IMAGE, "10", unit=None, mandatory=True),))
    tc = true_cost(inp, profile("200"))
    assert tc.addons_monthly[FeeType.IMAGE] == D("10.000000")
    assert tc.addons_hourly[FeeType.IMAGE] == D("0.050000")


def test_fee_in_another_currency_is_converted_at_the_table_rate() -> None:
    fx = FxTable([FxRate("EUR", "USD", D("1.25"), NOV, "test")])
    inp = CostInput(
        price=D("1"),
        currency="USD",
        billing_unit=H,
        price_basis=PriceBasis.INSTANCE,
        fees=(fee(FeeType.PUBLIC_IP, "0.004", "EUR", mandatory=True),),
    )
    tc = true_cost(inp, profile("730"), fx=fx)
    assert tc.addons_hourly[FeeType.PUBLIC_IP] == D("0.005000")
    assert "EUR/USD 1.25" in tc.explain()


# ------------------------------------------------------------------ display currency


def test_display_currency_conversion_records_the_rate() -> None:
    fx = FxTable([FxRate("USD", "CNY", D("8"), NOV, "test parity")])
    tc = true_cost(autodl(), profile("200"), display_currency="USD", fx=fx, on=date(2026, 11, 20))
    assert tc.fx_rate is not None
    assert (tc.fx_rate.base, tc.fx_rate.quote, tc.fx_rate.rate) == ("CNY", "USD", D("0.125"))
    assert tc.fx_rate.derived and tc.fx_rate.rate_date == NOV
    assert tc.display_currency == "USD" and tc.currency == "CNY"
    assert tc.monthly == D("556.166667")
    assert tc.monthly_display == D("69.520833")  # 556.1666.. / 8, from the exact value
    assert tc.hourly_display == D("0.342083")  # 2.7366666.. / 8
    assert tc.price_per_gpu_hour_display == D("0.340000")
    assert "In USD: x CNY/USD 0.125 (2026-11-01" in tc.explain()


def test_missing_rate_raises_and_same_currency_needs_no_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(FxRateMissing):
        true_cost(autodl(), profile("200"), display_currency="JPY", fx=FxTable())
    # A broken GPURENT_FX is not even read when nothing has to be converted.
    monkeypatch.setenv(FX_ENV_VAR, "garbage")
    assert true_cost(autodl(), profile("200"), display_currency="CNY").fx_rate is None


def test_default_table_uses_env_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FX_ENV_VAR, "USD/CNY=5")
    tc = true_cost(VAST, profile("730"), display_currency="CNY")
    assert tc.fx_rate is not None and tc.fx_rate.source == FX_ENV_VAR
    assert tc.monthly_display == D("937.955000")  # 187.591 x 5


def test_rank_key_orders_by_monthly_then_hourly() -> None:
    fx = FxTable([FxRate("USD", "CNY", D("8"), NOV, "test")])
    autodl_tc = true_cost(autodl(), profile("200"), display_currency="USD", fx=fx)  # 69.52
    vast_tc = true_cost(VAST, profile("200"), display_currency="USD", fx=fx)  # 49.34 + 7.50
    cudo_tc = true_cost(cudo(), profile("200"), display_currency="USD", fx=fx)  # 0.58815 x 200
    assert vast_tc.monthly_display == D("56.840000")
    assert autodl_tc.monthly_display == D("69.520833")
    assert cudo_tc.monthly_display == D("117.630000")
    assert sorted([cudo_tc, autodl_tc, vast_tc], key=rank_key) == [vast_tc, autodl_tc, cudo_tc]
    # Same month (a 1500 package), different hourly: the lower hourly ranks first.
    month = (plan("1500", BillingUnit.MONTH),)
    cheap = true_cost(autodl(fees=(), plans=month), profile("730"))
    dear = true_cost(autodl(fees=(), plans=month, price=D("3.00")), profile("730"))
    assert cheap.monthly == dear.monthly
    assert sorted([dear, cheap], key=rank_key) == [cheap, dear]
    assert rank_key(cheap) == (D("1500.000000"), D("2.720000"))


def test_from_offer_takes_the_record_fields() -> None:
    offer = OfferRecord(
        provider="autodl",
        offer_key="m1",
        run_id="r1",
        observed_at=datetime(2026, 11, 1, tzinfo=UTC),
        gpu_vendor="nvidia",
        gpu_model="RTX 4090",
        gpu_vram_gb=24,
        gpu_count=2,
        raw_gpu_name="RTX 4090",
        status=StockStatus.IN_STOCK,
        price=D("2.72"),
        currency="CNY",
        billing_unit=H,
        price_basis=PriceBasis.GPU,
        fees=AUTODL_FEES,
        plans=(plan("1.0", H, PriceKind.SPOT),),
    )
    inp = CostInput.from_offer(offer)
    assert inp == CostInput(
        price=D("2.72"),
        currency="CNY",
        billing_unit=H,
        price_basis=PriceBasis.GPU,
        price_kind=PriceKind.ON_DEMAND,
        gpu_count=2,
        fees=AUTODL_FEES,
        plans=(plan("1.0", H, PriceKind.SPOT),),
        terms=terms_for("autodl"),
    )
    # The provider's metering terms come from the billing facts: AutoDL bills per second
    # from power-on.
    assert inp.terms.granularity_s == 1 and inp.terms.starts is BillingStart.POWER_ON
    assert true_cost(inp, profile("200")).base_hourly == D("5.440000")


def test_inputs_are_validated() -> None:
    with pytest.raises(TypeError):
        UsageProfile(hours_per_month=200.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        UsageProfile(hours_per_month=D(0))
    with pytest.raises(ValueError):
        UsageProfile(hours_per_month=D(731))
    with pytest.raises(ValueError):
        UsageProfile(storage_gb=D(-1))
    with pytest.raises(ValueError):
        UsageProfile(gpus=0)
    with pytest.raises(ValueError):
        CostInput(price=D(-1), currency="USD", billing_unit=H, price_basis=PriceBasis.GPU)
    with pytest.raises(ValueError):
        price_per_gpu_hour(D(1), H, PriceBasis.INSTANCE, 0)
    assert UsageProfile(hours_per_month=200).hours_per_month == D(200)  # type: ignore[arg-type]


def test_quantize_money_is_half_even_at_six_places() -> None:
    assert quantize_money(Fraction(1, 8_000_000)) == D("0.000000")  # 0.000000125 -> even 0
    assert quantize_money(Fraction(3, 2_000_000)) == D("0.000002")  # 0.0000015 -> even 2
    assert quantize_money(Fraction(2, 3)) == D("0.666667")
    assert quantize_money(D("1.5")) == D("1.500000")


# ------------------------------------------------------------------ properties

_units = st.sampled_from(list(BillingUnit))
_money = st.decimals(min_value=0, max_value=1000, places=4, allow_nan=False, allow_infinity=False)
_qty = st.decimals(min_value=0, max_value=500, places=2, allow_nan=False, allow_infinity=False)


@st.composite
def _fees(draw: st.DrawFn) -> AddonFee:
    fee_type = draw(st.sampled_from(list(FeeType)))
    return AddonFee(
        fee_type=fee_type,
        amount=draw(_money),
        currency=draw(st.sampled_from(["CNY", "USD"])),
        unit=draw(st.none() | _units),
        basis=draw(st.sampled_from(list(FeeBasis))),
        quantity=draw(st.none() | _qty),
        included_quantity=draw(st.none() | _qty),
        mandatory=draw(st.booleans()),
        charged_while_stopped=draw(st.booleans()),
    )


_plans = st.builds(
    PricePlan,
    price=_money,
    currency=st.sampled_from(["CNY", "USD"]),
    billing_unit=_units,
    price_basis=st.sampled_from(list(PriceBasis)),
    price_kind=st.sampled_from(list(PriceKind)),
)


@st.composite
def _inputs(draw: st.DrawFn, hourly_on_demand: bool = False) -> CostInput:
    return CostInput(
        price=draw(_money),
        currency=draw(st.sampled_from(["CNY", "USD"])),
        billing_unit=H if hourly_on_demand else draw(_units),
        price_basis=draw(st.sampled_from(list(PriceBasis))),
        price_kind=PriceKind.ON_DEMAND
        if hourly_on_demand
        else draw(st.sampled_from(list(PriceKind))),
        gpu_count=draw(st.integers(min_value=1, max_value=8)),
        fees=tuple(draw(st.lists(_fees(), max_size=5))),
        plans=tuple(draw(st.lists(_plans, max_size=4))),
    )


_profiles = st.builds(
    UsageProfile,
    hours_per_month=st.decimals(min_value=D("0.01"), max_value=730, places=2, allow_nan=False),
    storage_gb=st.decimals(min_value=0, max_value=2000, places=1, allow_nan=False),
    egress_gb_per_month=st.decimals(min_value=0, max_value=5000, places=1, allow_nan=False),
    keep_disks_while_stopped=st.booleans(),
    gpus=st.just(1),
)
_FX = FxTable([FxRate("USD", "CNY", D("7.1"), NOV, "prop")])


@given(price=_money, a=_units, b=_units)
def test_property_unit_conversion_round_trip_is_exact(
    price: Decimal, a: BillingUnit, b: BillingUnit
) -> None:
    there = convert_rate(Fraction(price), a, b)
    assert convert_rate(there, b, a) == Fraction(price)
    assert hourly_rate(there, b) == hourly_rate(price, a)
    assert there == Fraction(price) * HOURS_PER_UNIT[b] / HOURS_PER_UNIT[a]


@settings(max_examples=200, deadline=None)
@given(inp=_inputs(hourly_on_demand=True), prof=_profiles, member=st.booleans())
def test_property_monthly_never_above_on_demand_hourly_times_hours(
    inp: CostInput, prof: UsageProfile, member: bool
) -> None:
    tc = true_cost(inp, prof, fx=_FX, include_member=member)
    hourly_only = true_cost(
        CostInput(
            inp.price,
            inp.currency,
            H,
            inp.price_basis,
            PriceKind.ON_DEMAND,
            inp.gpu_count,
            inp.fees,
        ),
        prof,
        fx=_FX,
    )
    assert tc.monthly <= hourly_only.monthly
    # and spelled out: hourly x hours + monthly add-ons (each rounded to 6 places)
    bound = tc.base_hourly * prof.hours_per_month + sum(tc.addons_monthly.values(), D(0))
    rounding = D("0.0000005") * prof.hours_per_month + D("0.000001") * (len(tc.addons_monthly) + 1)
    assert tc.monthly <= bound + rounding


@settings(max_examples=200, deadline=None)
@given(
    inp=_inputs(),
    prof=_profiles,
    extra=st.decimals(min_value=0, max_value=1000, places=1, allow_nan=False),
)
def test_property_hourly_monotone_in_storage(
    inp: CostInput, prof: UsageProfile, extra: Decimal
) -> None:
    more = UsageProfile(
        prof.hours_per_month,
        prof.storage_gb + extra,
        prof.egress_gb_per_month,
        prof.keep_disks_while_stopped,
        prof.gpus,
    )
    small = true_cost(inp, prof, fx=_FX)
    large = true_cost(inp, more, fx=_FX)
    assert large.monthly >= small.monthly
    # The storage goes on the optional disk cheapest for the month (gpurent_core.cost.fees); with
    # several to choose from, more GB may move it to one whose running rate is lower.
    sized = [
        f
        for f in inp.fees
        if f.fee_type in (FeeType.SYSTEM_DISK, FeeType.DATA_DISK, FeeType.STORAGE_STOPPED)
        and f.basis in (FeeBasis.GB, FeeBasis.TB)
        and f.quantity is None
    ]
    optional_disks = [f for f in sized if f.fee_type is not FeeType.STORAGE_STOPPED]
    if any(f.mandatory for f in sized) or len(optional_disks) < 2:
        assert large.hourly >= small.hourly


def _all_money(tc: TrueCost) -> list[Decimal]:
    return [
        tc.base_hourly,
        tc.hourly,
        tc.monthly,
        tc.price_per_gpu_hour,
        tc.hourly_display,
        tc.monthly_display,
        tc.price_per_gpu_hour_display,
        tc.plan.cost,
        tc.plan.units,
        *tc.addons_hourly.values(),
        *tc.addons_monthly.values(),
    ]


@settings(max_examples=200, deadline=None)
@given(inp=_inputs(), prof=_profiles, display=st.sampled_from(["CNY", "USD", None]))
def test_property_costs_are_never_negative_and_explain_renders(
    inp: CostInput, prof: UsageProfile, display: str | None
) -> None:
    tc = true_cost(inp, prof, fx=_FX, display_currency=display)
    assert all(v >= 0 for v in _all_money(tc))
    assert tc.hourly >= tc.base_hourly
    assert tc.monthly >= tc.plan.cost
    assert f"= {tc.monthly} {tc.currency}/month" in tc.explain()
