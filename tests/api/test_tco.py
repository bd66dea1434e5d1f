"""Buy or rent through the library API (``gpurent.api.tco``): the rental price is the median
true cost per card-hour of the card's confirmed, rentable, on-demand offers in a real
warehouse; stale, sold-out and unknown-stock offers never count; the answer is typed."""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from gpurent import api
from gpurent_core.cost.ownership import DAYS_A_YEAR
from gpurent_core.defaults import DEFAULT_HOST_WATTS_PER_GPU, DEFAULT_TCO_YEARS
from gpurent_core.fx import load_fx_table
from tests.api.tco_kit import COUNTED, COUNTED_PROVIDERS, MEDIAN, build_market, build_unrentable

D = Decimal
ASK: dict[str, Any] = {"hours_per_day": D(8), "power_price": D("0.6"), "currency": "CNY"}


@pytest.fixture(scope="module")
def market(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_market(tmp_path_factory.mktemp("tco-market"))


@pytest.fixture(scope="module")
def unrentable(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_unrentable(tmp_path_factory.mktemp("tco-unrentable"))


def test_the_rent_is_the_median_of_the_confirmed_rentable_on_demand_offers(market: Path) -> None:
    answer = api.tco("RTX 4090", D(15000), db=market, **ASK)
    assert answer.rent_per_card_hour == MEDIAN
    assert answer.rent_from == "median"
    assert answer.rent_offers == len(COUNTED) and answer.rent_providers == COUNTED_PROVIDERS
    assert (answer.rent_lowest, answer.rent_highest) == (COUNTED[0], COUNTED[-1])
    # The stale offer and the spot one are left out and counted; the sold-out, unknown,
    # short-of-cards, other-size and other-model offers are no rental at all.
    assert answer.stale_left_out == 1
    assert answer.other_kinds_left_out == 1
    # Every offer left out is cheaper than the cheapest counted: had any one counted, the
    # median would be lower.
    assert answer.rent_lowest == D("1.25")


def test_storage_is_counted_for_no_offer_so_one_median_compares_like_with_like(
    tmp_path: Path,
) -> None:
    """One RTX 4090 sells its disk as an optional fee, the other publishes no storage price:
    priced with storage, the first carries its disk and the second (storage unknown) does
    not, and the median mixes the two. Owning counts no disk, so neither rental does."""
    from gpurent_core.model import AddonFee, BillingUnit, FeeBasis, FeeType
    from tests.api.tco_kit import card
    from tests.warehouse.wh_kit import FeedKit
    from warehouse.db import writing
    from warehouse.load import load_run

    kit = FeedKit(tmp_path)
    disk = AddonFee(
        fee_type=FeeType.DATA_DISK, amount=D("0.01"), currency="CNY",
        unit=BillingUnit.HOUR, basis=FeeBasis.GB,
    )  # fmt: skip
    db = tmp_path / "storage.duckdb"
    with writing(db) as con:
        run = kit.run(1, provider="autodl")
        load_run(con, run, kit.write("autodl", [
            card(kit, run, "with-disk", "2.00", fees=(disk,)),
            card(kit, run, "no-storage-price", "2.00"),
        ]))  # fmt: skip
    answer = api.tco("RTX 4090", D(15000), db=db, **ASK)
    assert answer.rent_offers == 2
    assert answer.rent_lowest == answer.rent_highest == answer.rent_per_card_hour == D("2.00")


def test_stale_sold_out_and_unknown_stock_give_no_rental_price(unrentable: Path) -> None:
    answer = api.tco("RTX 4090", D(15000), db=unrentable, **ASK)
    assert answer.rent_per_card_hour is None and answer.rent_from is None
    assert answer.rent_cost is None and answer.saving is None and answer.cheaper is None
    assert answer.break_even_hours_per_day is None
    assert answer.rent_offers == 0 and answer.stale_left_out == 1
    # Owning is still worked out: no rental price is no reason to hide it.
    assert answer.own_cost == D(15000) + answer.power_cost


def test_the_answer_adds_up(market: Path) -> None:
    answer = api.tco("4090", D(15000), db=market, **ASK)
    hours = Fraction(8) * DAYS_A_YEAR * DEFAULT_TCO_YEARS
    assert answer.hours == D(int(hours))
    kw = (Fraction(450) + Fraction(DEFAULT_HOST_WATTS_PER_GPU)) / 1000
    assert answer.card_watts == D(450) and answer.watts_from == "catalog"
    assert answer.host_watts == DEFAULT_HOST_WATTS_PER_GPU and answer.host_watts_assumed
    assert answer.energy_kwh == D(int(kw * hours))
    assert answer.power_cost == answer.energy_kwh * D("0.6")
    assert answer.own_cost == answer.purchase_price + answer.power_cost
    assert answer.rent_cost == MEDIAN * answer.hours
    assert answer.saving == answer.rent_cost - answer.own_cost
    assert answer.cheaper == ("owning" if answer.saving > 0 else "renting")
    exact = Fraction(15000) / (
        DAYS_A_YEAR * DEFAULT_TCO_YEARS * (Fraction(MEDIAN) - kw * Fraction(6, 10))
    )
    assert answer.break_even_hours_per_day is not None
    assert abs(Fraction(answer.break_even_hours_per_day) - exact) < Fraction(1, 10**9)
    assert (answer.gpu, answer.gpu_model, answer.gpu_vram_gb) == ("RTX 4090 24G", "RTX 4090", 24)


def test_the_answer_is_a_typed_frozen_record(market: Path) -> None:
    answer = api.tco("RTX 4090", D(15000), db=market, **ASK)
    assert isinstance(answer, api.TcoAnswer)
    with pytest.raises(dataclasses.FrozenInstanceError):
        answer.own_cost = D(0)  # type: ignore[misc]
    row = answer.as_row()
    assert list(row) == [f.name for f in dataclasses.fields(api.TcoAnswer)]
    money = ("purchase_price", "power_cost", "own_cost", "own_per_hour", "rent_per_card_hour",
             "rent_cost", "saving", "break_even_hours_per_day", "resale", "energy_kwh")  # fmt: skip
    assert all(isinstance(row[name], Decimal) for name in money)


def test_tracked_prices_are_converted_into_the_currency_asked(market: Path) -> None:
    in_usd = api.tco("RTX 4090", D(2000), db=market, **(ASK | {"currency": "USD"}))
    assert in_usd.currency == "USD" and in_usd.purchase_price == D(2000)  # given: taken as is
    rate = load_fx_table().rate("CNY", "USD").rate
    assert in_usd.rent_per_card_hour is not None
    assert abs(in_usd.rent_per_card_hour - MEDIAN * rate) < D("0.00001")


def test_a_rental_price_given_by_hand_reads_no_warehouse(tmp_path: Path) -> None:
    nowhere = tmp_path / "none.duckdb"
    answer = api.tco("RTX 4090", D(15000), rent_price=D("2.5"), db=nowhere, **ASK)
    assert answer.rent_per_card_hour == D("2.5") and answer.rent_from == "given"
    assert answer.rent_offers == 0 and answer.rent_cost == D("2.5") * answer.hours
    assert not nowhere.exists()
    with pytest.raises(api.NoWarehouse, match="crawl"):
        api.tco("RTX 4090", D(15000), db=nowhere, **ASK)


@pytest.mark.parametrize("resale", ["30%", "0.3", D("0.3")])
def test_resale_as_a_share_of_the_price(market: Path, resale: object) -> None:
    answer = api.tco("RTX 4090", D(15000), resale=resale, db=market, **ASK)  # type: ignore[arg-type]
    assert answer.resale == D(4500) and answer.resale_share == D("0.3")
    kept = api.tco("RTX 4090", D(15000), db=market, **ASK)
    assert kept.own_cost - answer.own_cost == D(4500)


def test_resale_as_an_amount(market: Path) -> None:
    answer = api.tco("RTX 4090", D(15000), resale="4000", db=market, **ASK)
    assert answer.resale == D(4000) and answer.resale_share is None


def test_the_board_power_comes_from_the_catalog_unless_given(market: Path) -> None:
    assert api.tco("H100 SXM", D(200000), db=market, **ASK).card_watts == D(700)
    given = api.tco("H100", D(200000), watts=D(350), db=market, **ASK)
    assert given.card_watts == D(350) and given.watts_from == "given"
    with pytest.raises(api.UnknownFigure, match="watts") as open_power:
        api.tco("H100", D(200000), db=market, **ASK)
    assert "PCIe (350 W)" in str(open_power.value) and "SXM (700 W)" in str(open_power.value)
    with pytest.raises(api.UnknownFigure, match=r"no board power .* --watts"):
        api.tco("Ascend 910B2", D(100000), db=market, **ASK)


@pytest.mark.parametrize(
    ("change", "argument"),
    [
        ({"price": D(0)}, "price"),
        ({"hours_per_day": D(25)}, "hours_per_day"),
        ({"hours_per_day": D(0)}, "hours_per_day"),
        ({"power_price": D(-1)}, "power_price"),
        ({"years": 0}, "years"),
        ({"resale": "16000"}, "resale"),
        ({"resale": "120%"}, "resale"),
        ({"resale": "lots"}, "resale"),
        ({"watts": D(0)}, "watts"),
        ({"host_watts": D(-5)}, "host_watts"),
        ({"rent_price": D(0)}, "rent_price"),
        ({"price": 15000.0}, "price"),
    ],
)
def test_numbers_it_cannot_take_are_refused_naming_the_keyword(
    market: Path, change: dict[str, Any], argument: str
) -> None:
    asked: dict[str, Any] = {"price": D(15000), **ASK, "db": market} | change
    price = asked.pop("price")
    with pytest.raises(api.BadUsage) as refused:
        api.tco("RTX 4090", price, **asked)
    assert refused.value.argument == argument


def test_an_unknown_card_or_currency_is_refused_with_suggestions(market: Path) -> None:
    with pytest.raises(api.UnknownName) as unknown:
        api.tco("RTX 9999 Ti", D(15000), db=market, **ASK)
    assert unknown.value.argument == "gpu"
    with pytest.raises(api.UnknownName, match="no exchange rate"):
        api.tco("RTX 4090", D(15000), db=market, **(ASK | {"currency": "XYZ"}))


def test_the_card_hour_is_priced_for_the_hours_asked_as_the_offer_sells_them(
    tmp_path: Path,
) -> None:
    """Two cards at 2.00 an hour; one also sells a month for 730 (1.00 an hour always on).
    Always on, that card's hour costs what the month package makes it (as `cheapest` costs
    the month); two hours a day, the package would cost more than the hours: 2.00."""
    from gpurent_core.model import BillingUnit, PriceBasis, PriceKind, PricePlan
    from tests.api.tco_kit import card
    from tests.warehouse.wh_kit import FeedKit
    from warehouse.db import writing
    from warehouse.load import load_run

    month = PricePlan(
        price=D("730"), currency="CNY", billing_unit=BillingUnit.MONTH,
        price_basis=PriceBasis.GPU, price_kind=PriceKind.ON_DEMAND,
    )  # fmt: skip
    kit = FeedKit(tmp_path)
    db = tmp_path / "packages.duckdb"
    with writing(db) as con:
        run = kit.run(1, provider="autodl")
        load_run(con, run, kit.write("autodl", [
            card(kit, run, "hourly-only", "2.00"),
            card(kit, run, "with-month", "2.00", plans=(month,)),
        ]))  # fmt: skip
    always = api.tco("RTX 4090", D(15000), db=db, **(ASK | {"hours_per_day": D(24)}))
    assert (always.rent_lowest, always.rent_highest) == (D("1.00"), D("2.00"))
    assert always.rent_per_card_hour == D("1.50")
    assert always.rent_cost == D("1.50") * 24 * int(DAYS_A_YEAR) * DEFAULT_TCO_YEARS
    short = api.tco("RTX 4090", D(15000), db=db, **(ASK | {"hours_per_day": D(2)}))
    assert short.rent_lowest == short.rent_highest == short.rent_per_card_hour == D("2.00")
