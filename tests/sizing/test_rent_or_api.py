"""Rent or call an API: the arithmetic (sizing.rent_or_api), the dated price table
(sizing.api_prices) and the comparison document and its verdict (sizing.api_comparison)."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpurent_core.fx import FxRate, FxTable
from sizing.api_comparison import comparison, verdict
from sizing.api_prices import (
    ApiPrice,
    ApiPriceError,
    MatchedPrice,
    Relation,
    matching_prices,
    read_price,
    read_refreshed,
    refreshed_path,
    shipped_prices,
    write_refreshed,
)
from sizing.models import find_model, get_model
from sizing.rent_or_api import (
    FULL_LOAD,
    Load,
    RentalSpeed,
    Workload,
    break_even,
    capacity_per_hour,
    rental_cost,
)

TODAY = date(2026, 12, 4)
SHAPE = Workload(prompt_tokens=1000, gen_tokens=100, batch=4)
# One cycle: the batch's four prompts prefilled in 0.5 s (0.125 s for one alone), then 100
# tokens at 20 tokens/s = 5.5 s in all.
SPEED = RentalSpeed(
    hourly=Decimal("2"),
    ttft_ms=Decimal("125"),
    tokens_per_s_per_user=Decimal("20"),
    ttft_worst_ms=Decimal("500"),
)


# ---------------------------------------------------------------- the arithmetic


def test_capacity_is_batch_requests_each_cycle() -> None:
    assert capacity_per_hour(SHAPE, SPEED) == Fraction(4 * 3600) / Fraction(11, 2)


def test_cost_of_a_request_by_hand() -> None:
    full = rental_cost(SHAPE, SPEED, FULL_LOAD)
    half = rental_cost(SHAPE, SPEED, Load(utilisation=Fraction(1, 2)))
    assert full is not None and half is not None
    # 2 an hour over 2618.18 requests an hour; half the use, twice the cost of each.
    assert full.capacity_per_hour == Decimal("2618.2")
    assert full.per_request == Decimal("0.000764")
    assert half.per_request == Decimal("0.001528")
    # The prefill holds the card 0.5 of 5.5 s: that share over 1000 prompt tokens.
    assert full.per_million_input == Decimal("0.069444")
    assert full.per_million_output == Decimal("6.944444")
    assert full.per_million_tokens == Decimal("0.694444")


def test_break_even_by_hand_and_against_a_free_api() -> None:
    meet = break_even(SHAPE, SPEED, Decimal("0.001"))
    assert meet is not None
    assert meet.utilisation == Decimal("0.7639")  # 2 / (2618.18 x 0.001)
    assert meet.requests_per_day == Decimal("48000")  # 2 x 24 / 0.001
    assert meet.rent_can_win
    assert break_even(SHAPE, SPEED, Decimal("0.0001")).utilisation > 1  # type: ignore[union-attr]
    assert break_even(SHAPE, SPEED, Decimal(0)) is None


def test_a_load_beyond_one_rental_rents_more() -> None:
    per_day = 2618 * 24 * 3  # about three rentals' full capacity
    cost = rental_cost(SHAPE, SPEED, Load(requests_per_day=per_day + 1000))
    assert cost is not None
    assert cost.rentals == 4
    assert Decimal(0) < cost.utilisation <= 1
    light = rental_cost(SHAPE, SPEED, Load(requests_per_day=100))
    assert light is not None and light.rentals == 1
    # A whole day's rental over 100 requests.
    assert light.per_request == Decimal("0.480000")


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"utilisation": Fraction(1, 2), "requests_per_day": 10},
        {"utilisation": Fraction(0)},
        {"utilisation": Fraction(11, 10)},
        {"requests_per_day": 0},
    ],
)
def test_a_load_is_one_figure_in_range(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        Load(**kwargs)


def test_a_rental_that_serves_nothing_has_no_cost() -> None:
    stuck = RentalSpeed(
        hourly=Decimal(1),
        ttft_ms=Decimal(5),
        tokens_per_s_per_user=Decimal(0),
        ttft_worst_ms=Decimal(20),
    )
    assert rental_cost(SHAPE, stuck, FULL_LOAD) is None
    assert break_even(SHAPE, stuck, Decimal("0.01")) is None


money = st.decimals(min_value=Decimal("0.05"), max_value=Decimal("50"), places=2)
speeds = st.builds(
    RentalSpeed,
    hourly=money,
    ttft_ms=st.decimals(min_value=Decimal("1"), max_value=Decimal("5000"), places=1),
    ttft_worst_ms=st.decimals(min_value=Decimal("1"), max_value=Decimal("50000"), places=1),
    tokens_per_s_per_user=st.decimals(min_value=Decimal("1"), max_value=Decimal("300"), places=1),
)
shapes = st.builds(
    Workload,
    prompt_tokens=st.integers(1, 32_000),
    gen_tokens=st.integers(1, 4_000),
    batch=st.integers(1, 64),
)


@given(shape=shapes, speed=speeds, api=st.decimals(Decimal("0.00001"), Decimal("1"), places=5))
def test_at_the_break_even_use_renting_costs_what_the_api_does(
    shape: Workload, speed: RentalSpeed, api: Decimal
) -> None:
    meet = break_even(shape, speed, api)
    assert meet is not None
    if not Decimal("0.01") <= meet.utilisation <= 1:
        return  # outside a load one rental can carry (or rounded to nothing)
    cost = rental_cost(shape, speed, Load(utilisation=Fraction(meet.utilisation)))
    assert cost is not None
    # The break-even share is rounded to 4 places: the costs then agree to that share.
    assert abs(cost.per_request - api) <= api * Decimal("0.01") + Decimal("0.000001")


@given(shape=shapes, speed=speeds, low=st.integers(1, 99), high=st.integers(1, 100))
def test_more_use_never_makes_a_request_dearer_and_the_split_adds_up(
    shape: Workload, speed: RentalSpeed, low: int, high: int
) -> None:
    low, high = sorted((low, high))
    cheap = rental_cost(shape, speed, Load(utilisation=Fraction(high, 100)))
    dear = rental_cost(shape, speed, Load(utilisation=Fraction(low, 100)))
    assert cheap is not None and dear is not None
    assert cheap.per_request <= dear.per_request
    assert cheap.per_million_input is not None and cheap.per_million_output is not None
    parts = (
        cheap.per_million_input * shape.prompt_tokens + cheap.per_million_output * shape.gen_tokens
    ) / 1_000_000
    # Each figure is rounded to 6 places: the split adds up to the request within that.
    assert abs(parts - cheap.per_request) <= Decimal("0.0000011")


# ---------------------------------------------------------------- the price table


def test_every_shipped_price_is_dated_sourced_and_names_a_catalog_model() -> None:
    prices = shipped_prices()
    assert {p.currency for p in prices} >= {"USD", "CNY"}  # both markets
    for p in prices:
        assert find_model(p.model) is not None, p
        assert re.match(r"^https://[^ ]+$", p.source), p
        assert p.as_of <= TODAY, p
        assert p.input_per_million >= 0 and p.output_per_million >= 0


def _entry(**changes: Any) -> dict[str, Any]:
    entry = {
        "provider": "acme",
        "api_model": "acme/llama-8b",
        "model": "Llama-3.1-8B",
        "input": "0.10",
        "output": "0.20",
        "currency": "USD",
        "as_of": "2026-11-01",
        "source": "https://acme.test/pricing",
    }
    return entry | changes


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"input": 0.1}, "quoted decimal"),
        ({"output": "-1"}, "not a price"),
        ({"output": "cheap"}, "not a number"),
        ({"as_of": "last week"}, "not a date"),
        ({"currency": "usd"}, "ISO code"),
        ({"colour": "red"}, "unknown ['colour']"),
    ],
)
def test_a_wrong_entry_is_refused_with_where_and_why(changes: dict[str, Any], words: str) -> None:
    with pytest.raises(ApiPriceError, match=re.escape(words)):
        read_price(_entry(**changes), "test entry")


def test_same_equivalent_and_never_a_name_alone() -> None:
    prices = [
        read_price(_entry(), "a"),
        read_price(_entry(api_model="acme/llama-70b", model="Llama-3.3-70B"), "b"),
        read_price(_entry(api_model="acme/mystery", model="Mystery-70B"), "c"),
    ]
    found = {
        m.price.api_model: m.relation for m in matching_prices(get_model("Llama-3.1-70B"), prices)
    }
    # 3.3 70B has 3.1 70B's architecture: equivalent; the 8B is not; an unknown name never.
    assert found == {"acme/llama-70b": Relation.EQUIVALENT}
    same = matching_prices(get_model("Llama-3.1-8B"), prices)
    assert [(m.price.api_model, m.relation) for m in same] == [("acme/llama-8b", Relation.SAME)]


def test_the_newest_reading_of_one_api_price_wins(tmp_path: Path) -> None:
    old = read_price(_entry(), "old")
    new = read_price(_entry(input="0.05", as_of="2026-12-01"), "new")
    path = refreshed_path(tmp_path / "gpurent.duckdb")
    write_refreshed(path, [new], datetime(2026, 12, 1, 3, tzinfo=UTC))
    assert read_refreshed(path) == (new,)
    matched = matching_prices(get_model("Llama-3.1-8B"), [old, *read_refreshed(path)])
    assert [m.price.input_per_million for m in matched] == [Decimal("0.05")]
    assert read_refreshed(tmp_path / "absent.json") == ()


# ---------------------------------------------------------------- the document and verdict


def _offer(
    key: str, hourly: str, ttft: float | None = 500.0, per_user: float | None = 20.0
) -> dict[str, Any]:
    return {
        "provider": "acme",
        "offer_key": key,
        "card": "RTX 4090 24GB",
        "gpu_count": 1,
        "true_hourly": Decimal(hourly),
        "cost_currency": "USD",
        # the batch's four prompts at once in ``ttft`` ms
        "ttft_ms": None if ttft is None else ttft / 4,
        "ttft_worst_ms": ttft,
        "tokens_per_s_per_user": per_user,
    }


def _matched(price: str, currency: str = "USD", **changes: Any) -> MatchedPrice:
    entry = _entry(input=price, output=price, currency=currency, **changes)
    return MatchedPrice(read_price(entry, "m"), Relation.SAME)


FX = FxTable([FxRate("USD", "CNY", Decimal("7.00"), date(2026, 11, 1), "test")])


def _doc(
    offers: list[dict[str, Any]], prices: list[MatchedPrice], load: Load = FULL_LOAD
) -> dict[str, Any]:
    return comparison(offers, prices, "bf16", SHAPE, load, "USD", FX, TODAY)


def test_api_prices_are_converted_ordered_and_unconvertible_ones_set_apart() -> None:
    doc = _doc(
        [_offer("a", "2")],
        [
            _matched("7", "CNY", provider="cnapi"),  # 1 USD a million tokens
            _matched("0.5", provider="usapi"),
            _matched("1", "EUR", provider="euapi"),
        ],
    )
    assert [r["provider"] for r in doc["apis"]] == ["usapi", "cnapi"]
    assert doc["apis"][1]["per_request"] == Decimal("0.001100")  # 1100 tokens at 1 USD/M
    assert [r["provider"] for r in doc["apis_apart"]] == ["euapi"]
    assert "EUR" in doc["apis_apart"][0]["why"]


def test_the_verdict_says_who_wins_and_where_they_meet() -> None:
    # The rental: 0.000764 a request at full load.
    dear_api = _doc([_offer("a", "2")], [_matched("1")])  # 0.0011 a request
    assert "renting is cheaper" in verdict(dear_api)
    assert "renting pays above 69.4 % of capacity" in verdict(dear_api)
    cheap_api = _doc([_offer("a", "2")], [_matched("0.1")])  # 0.00011 a request
    assert "the API is cheaper even at full load" in verdict(cheap_api)
    quiet = _doc([_offer("a", "2")], [_matched("1")], Load(utilisation=Fraction(1, 2)))
    assert "the API is cheaper" in verdict(quiet)  # 0.001528 against 0.0011
    free = _doc([_offer("a", "2")], [_matched("0")])
    assert "the API is free: renting never pays" in verdict(free)
    assert "no API price" in verdict(_doc([_offer("a", "2")], []))


def test_the_verdict_says_when_only_the_first_offers_of_another_ranking_were_set_beside() -> None:
    offers, prices = [_offer("a", "2"), _offer("b", "3")], [_matched("1")]
    some = comparison(offers, prices, "bf16", SHAPE, FULL_LOAD, "USD", FX, TODAY, every_offer=False)
    assert "the cheapest of the 2 rentals shown (acme" in verdict(some)
    assert "the cheapest rental (acme" in verdict(_doc(offers, prices))


def test_an_offer_without_a_speed_is_never_costed() -> None:
    doc = _doc([_offer("slow", "1", ttft=None), _offer("a", "2")], [_matched("1")])
    rows = {r["offer_key"]: r for r in doc["offers"]}
    assert "per_request" not in rows["slow"] and "unknown" in rows["slow"]["why"]
    assert "(acme RTX 4090 24GB x1)" in verdict(doc)
    assert rows["a"]["cheaper_than_api"] is True


def test_old_prices_are_counted() -> None:
    doc = _doc([_offer("a", "2")], [_matched("1", as_of="2025-01-01")])
    assert doc["old_prices"] == 1 and doc["apis"][0]["old"] is True


def test_a_price_for_the_answer_reads_as_apiprice() -> None:
    p = ApiPrice("x", "x/m", "Llama-3.1-8B", Decimal("1"), Decimal("3"), "USD", TODAY, "https://x")
    assert p.request_cost(1000, 100) == Decimal("0.0013")


def test_a_rental_hour_costs_its_true_monthly_over_the_hours_paid() -> None:
    """A card at 2 an hour that also sells the month for 730: always on, an hour of it
    costs 1 (as `cheapest` costs the month), so a request costs half what the hourly rate
    says; without the hours paid the true hourly is all there is."""
    packaged = _offer("a", "2") | {"true_monthly": Decimal("730")}
    paid = comparison(
        [packaged], [_matched("1")], "bf16", SHAPE, FULL_LOAD, "USD", FX, TODAY,
        hours_paid=Decimal(730),
    )  # fmt: skip
    hourly = _doc([_offer("a", "2")], [_matched("1")])
    [row], [metered] = paid["offers"], hourly["offers"]
    assert row["per_hour_used"] == Decimal("1.000000") and metered["per_hour_used"] == 2
    assert abs(row["per_request"] * 2 - metered["per_request"]) <= Decimal("0.000001")
    assert row["break_even_utilisation"] < metered["break_even_utilisation"]
