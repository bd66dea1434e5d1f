"""Price index method gpi-2, the pure part: hand-computed rows and properties (hypothesis).

The warehouse read is tests/warehouse/test_index_v2_warehouse.py; the command, the API and
the byte-for-byte reproducibility are tests/tracking/test_index_v2_cli.py.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpurent_core.defaults import DEFAULT_INDEX_METHOD
from gpurent_core.enums import IndexMethod
from warehouse import index, index_v2
from warehouse.index_v2 import (
    MAX_SPREAD,
    MIN_PROVIDERS,
    WEIGHT_CAP,
    Market,
    OfferDay,
    Price,
    QuoteKind,
    compute_rows,
    compute_value,
    market_of,
    quantile,
    quote_kind,
)

D = Decimal
DAY = date(2026, 11, 1)


def quotes(**by_provider: list[str]) -> list[tuple[str, Decimal]]:
    return [(p, D(x)) for p, prices in by_provider.items() for x in prices]


# ---------------------------------------------------------------- hand-computed rows


def test_the_index_is_the_median_of_provider_medians_with_their_quartiles() -> None:
    # Provider medians: a 3 (of 2, 3, 10), b 4, c 5.5 (of 5, 6). Sorted 3, 4, 5.5:
    # median 4; p25 at position 0.5: 3.5; p75 at position 1.5: 4.75.
    value = compute_value(quotes(a=["2", "3", "10"], b=["4"], c=["5", "6"]))
    assert (value.index_price, value.p25, value.p75) == (D("4.000000"), D("3.500000"), D("4.75"))
    assert (value.n_offers, value.n_providers, value.withheld_reason) == (6, 3, None)
    assert value.weights == tuple((p, Fraction(1, 3)) for p in "abc")


def test_one_odd_provider_does_not_move_the_median_far() -> None:
    # 2.0 2.2 2.4 9.0: median 2.3 (gpi-1 would screen 9.0; the median needs no screening);
    # p25 = 2.0 + 0.75 x 0.2 = 2.15, p75 = 2.4 + 0.25 x 6.6 = 4.05; 4.05 / 2.15 < 2.
    value = compute_value(quotes(a=["2.0"], b=["2.2"], c=["2.4"], d=["9.0"]))
    assert (value.index_price, value.p25, value.p75) == (D("2.3"), D("2.15"), D("4.05"))
    assert str(value.index_price) == "2.300000"  # six places, always


def test_too_dispersed_a_row_is_withheld_with_the_ratio() -> None:
    # 1.0 1.1 3.0 3.2: p25 1.075, p75 3.05, ratio 2.837... above 2.
    value = compute_value(quotes(a=["1.0"], b=["1.1"], c=["3.0"], d=["3.2"]))
    assert (value.index_price, value.p25, value.p75) == (None, None, None)
    assert value.withheld_reason == f"too dispersed: p75/p25 = 2.84, above {MAX_SPREAD}"
    assert (value.n_offers, value.n_providers, value.weights) == (4, 4, ())


def test_exactly_at_the_spread_limit_is_published() -> None:
    # 1, 2, 3: p25 1.5, p75 2.5. 1, 1, 2, 2, 2: p25 (position 1) 1, p75 (position 3) 2,
    # exactly MAX_SPREAD times p25: not above it.
    assert compute_value(quotes(a=["1"], b=["2"], c=["3"])).index_price == D(2)
    edge = compute_value(quotes(a=["1"], b=["1"], c=["2"], d=["2"], e=["2"]))
    assert edge.p75 == MAX_SPREAD * edge.p25 and edge.index_price == D(2)
    over = compute_value(quotes(a=["1"], b=["1"], c=["2.01"], d=["2.01"], e=["2.01"]))
    assert over.withheld_reason == "too dispersed: p75/p25 = 2.01, above 2"


@pytest.mark.parametrize(
    ("given_quotes", "reason"),
    [
        ([], "no in-stock quote"),
        (quotes(a=["1", "2", "3"]), "only 1 provider quotes (a); at least 3 needed"),
        (quotes(b=["1"], a=["2"]), "only 2 providers quote (a, b); at least 3 needed"),
    ],
)
def test_fewer_than_three_providers_withhold_the_row(
    given_quotes: list[tuple[str, Decimal]], reason: str
) -> None:
    value = compute_value(given_quotes)
    assert (value.index_price, value.p25, value.p75, value.weights) == (None, None, None, ())
    assert value.withheld_reason == reason
    assert value.n_offers == len(given_quotes)


def test_quantiles_interpolate_between_order_statistics() -> None:
    values = [Fraction(x) for x in (1, 2, 4, 8)]
    assert quantile(values, Fraction(0)) == 1 and quantile(values, Fraction(1)) == 8
    assert quantile(values, Fraction(1, 2)) == 3  # the median of an even count
    assert quantile(values, Fraction(1, 4)) == Fraction(7, 4)  # position 0.75
    assert quantile([Fraction(5)], Fraction(3, 4)) == 5
    with pytest.raises(ValueError):
        quantile([], Fraction(1, 2))


@pytest.mark.parametrize(
    ("price_kind", "unit", "kind"),
    [
        ("on_demand", "hour", QuoteKind.ON_DEMAND),
        ("on_demand", "second", QuoteKind.ON_DEMAND),
        ("on_demand", "minute", QuoteKind.ON_DEMAND),
        ("spot", "hour", QuoteKind.SPOT),
        ("on_demand", "month", QuoteKind.MONTHLY),
        ("commitment", "month", QuoteKind.MONTHLY),
        ("commitment", "hour", None),  # a reserved term priced per hour: its term unknown
        ("on_demand", "day", None),
        ("commitment", "week", None),
        ("on_demand", "year", None),
        ("member", "hour", None),
        ("member", "month", None),
    ],
)
def test_which_prices_are_which_kind(price_kind: str, unit: str, kind: QuoteKind | None) -> None:
    assert quote_kind(price_kind, unit) is kind


def test_the_market_is_the_registry_home() -> None:
    assert market_of("autodl") is Market.CN and market_of("gpushare") is Market.CN
    assert market_of("lambda") is Market.INTL and market_of("runpod") is Market.INTL
    assert market_of("no-such-provider") is Market.INTL


def test_the_method_names_are_the_enum_and_the_default_is_gpi_3() -> None:
    assert index.METHOD_VERSION == IndexMethod.GPI_1 == "gpi-1"
    assert index_v2.METHOD_VERSION == IndexMethod.GPI_2 == "gpi-2"
    assert IndexMethod.GPI_3 == "gpi-3" and set(index_v2.RULES) == {"gpi-2", "gpi-3"}
    assert DEFAULT_INDEX_METHOD is IndexMethod.GPI_3  # tests/tracking/test_index_gpi3.py
    assert WEIGHT_CAP * MIN_PROVIDERS <= 1  # one vote among the fewest never exceeds it


# ---------------------------------------------------------------- rows from offers


def offer(
    provider: str,
    key: str,
    *prices: tuple[QuoteKind, str, str],
    form: str | None = "SXM",
    in_stock: bool = True,
    day: date = DAY,
    listed: tuple[QuoteKind, ...] = (),
) -> OfferDay:
    held = tuple(Price(kind, D(amount), ccy) for kind, amount, ccy in prices)
    return OfferDay(
        day=day,
        provider=provider,
        offer_key=key,
        gpu_model="H100",
        gpu_vram_gb=80,
        gpu_form_factor=form,
        in_stock=in_stock,
        listed=frozenset(listed) | {p.kind for p in held},
        prices=held if in_stock else (),
    )


def usd_cny(base: str, quote: str, day: date) -> Fraction | None:
    table = {("USD", "CNY"): Fraction(7), ("CNY", "USD"): Fraction(1, 7)}
    return table.get((base, quote))


OD, SPOT, MONTH = QuoteKind.ON_DEMAND, QuoteKind.SPOT, QuoteKind.MONTHLY


def test_rows_keep_form_factors_kinds_and_markets_apart() -> None:
    offers = [
        offer("lambda", "l1", (OD, "2.00", "USD"), (MONTH, "1.50", "USD")),
        offer("runpod", "r1", (OD, "2.20", "USD"), (SPOT, "1.10", "USD")),
        offer("vastai", "v1", (OD, "2.40", "USD"), (SPOT, "1.00", "USD")),
        offer("vastai", "v2", (OD, "1.20", "USD"), form=None),  # unstated: its own group
        offer("vastai", "v3", (OD, "0.10", "USD"), form="PCIe", in_stock=False),
        offer("autodl", "a1", (OD, "14.00", "CNY")),
        offer("gpushare", "g1", (OD, "2.00", "USD")),  # a CN platform pricing in USD
        offer("featurize", "f1", (OD, "15.00", "CNY"), (OD, "16.00", "CNY")),
    ]
    rows = compute_rows(offers, rate=usd_cny)
    keys = [(r["gpu_form_factor"], r["market"], r["price_kind"], r["currency"]) for r in rows]
    assert keys == [
        ("PCIe", "intl", "on_demand", "USD"),
        ("SXM", "CN", "on_demand", "CNY"),
        ("SXM", "intl", "on_demand", "USD"),
        ("SXM", "intl", "spot", "USD"),
        ("SXM", "intl", "monthly", "USD"),
        (None, "intl", "on_demand", "USD"),
    ]
    pcie, cn, intl, spot, monthly, unstated = rows
    assert pcie["withheld_reason"] == "no in-stock quote" and pcie["in_stock_share"] == D(0)
    assert (pcie["n_observed"], pcie["n_offers"]) == (1, 0)
    # CN in CNY: autodl 14, gpushare 2 USD = 14 CNY, featurize the cheapest of its two: 15.
    assert (cn["index_price"], cn["p25"], cn["p75"]) == (D(14), D(14), D("14.5"))
    assert intl["index_price"] == D("2.2") and intl["n_providers"] == 3
    assert spot["withheld_reason"] == "only 2 providers quote (runpod, vastai); at least 3 needed"
    assert monthly["n_providers"] == 1 and monthly["index_price"] is None
    assert unstated["n_observed"] == 1 and unstated["index_price"] is None
    assert {r["method_version"] for r in rows} == {"gpi-2"}
    assert all(list(r) == list(index_v2.COLUMNS) for r in rows)


def test_a_named_currency_converts_every_market() -> None:
    offers = [offer(p, "x", (OD, "2.00", "USD")) for p in ("lambda", "runpod", "autodl")]
    rows = compute_rows(offers, rate=usd_cny, currencies=["CNY", "USD"])
    assert [(r["market"], r["currency"]) for r in rows] == [
        ("CN", "CNY"), ("CN", "USD"), ("intl", "CNY"), ("intl", "USD"),
    ]  # fmt: skip
    assert rows[0]["n_offers"] == 1 and rows[2]["n_offers"] == 2


def test_a_quote_without_a_rate_stays_out_of_that_currency() -> None:
    offers = [offer(p, "x", (OD, "2.00", "EUR")) for p in ("lambda", "runpod", "vastai")]
    (row,) = compute_rows(offers, rate=usd_cny)
    assert (row["n_offers"], row["n_observed"], row["index_price"]) == (0, 3, None)
    assert row["withheld_reason"] == "no in-stock quote"


def test_the_share_in_stock_counts_the_offers_listing_the_kind() -> None:
    offers = [
        offer("lambda", "a", (OD, "2", "USD")),
        offer("lambda", "b", (OD, "2", "USD"), in_stock=False),
        offer("lambda", "c", (OD, "2", "USD"), in_stock=False),
        offer("lambda", "d", in_stock=False, listed=(SPOT,)),
    ]
    od, spot = compute_rows(offers, rate=usd_cny)
    assert (od["n_observed"], od["in_stock_share"]) == (3, D("0.3333"))
    assert (spot["price_kind"], spot["n_observed"], spot["in_stock_share"]) == ("spot", 1, 0)
    assert str(od["in_stock_share"]) == "0.3333" and str(spot["in_stock_share"]) == "0.0000"


# ---------------------------------------------------------------- properties

PROVIDERS = ["a", "b", "c", "d", "e", "f"]
PRICES = st.decimals(min_value=D("0.05"), max_value=D("500"), places=2)
QUOTES = st.dictionaries(
    st.sampled_from(PROVIDERS), st.lists(PRICES, min_size=1, max_size=5), max_size=6
)


def flat(by_provider: dict[str, list[Decimal]]) -> list[tuple[str, Decimal]]:
    return [(p, x) for p, xs in by_provider.items() for x in xs]


@given(by_provider=QUOTES, data=st.data())
def test_a_provider_with_many_offers_never_weighs_above_the_cap(
    by_provider: dict[str, list[Decimal]], data: st.DataObject
) -> None:
    if not by_provider:
        return
    loud = data.draw(st.sampled_from(sorted(by_provider)))
    extra = data.draw(st.lists(PRICES, min_size=10, max_size=40))
    louder = {**by_provider, loud: by_provider[loud] + extra}
    value = compute_value(flat(louder))
    if value.index_price is None:
        assert value.weights == ()
        return
    weights = dict(value.weights)
    assert sorted(weights) == sorted(louder) and sum(weights.values()) == 1
    assert max(weights.values()) <= WEIGHT_CAP
    assert weights[loud] == min(weights.values())  # its forty offers count as one vote
    # Whatever its offers say, it cannot pull the figure outside the others' quotes.
    others = [index.median(xs) for p, xs in louder.items() if p != loud]
    assert min(others) <= value.index_price <= max(others)


@given(by_provider=QUOTES)
def test_the_index_lies_between_its_quartiles(by_provider: dict[str, list[Decimal]]) -> None:
    value = compute_value(flat(by_provider))
    if value.index_price is not None:
        assert value.p25 is not None and value.p75 is not None
        assert value.p25 <= value.index_price <= value.p75
        assert value.p75 <= MAX_SPREAD * value.p25 + D("0.000002")  # both rounded
        assert value.n_providers >= MIN_PROVIDERS


@given(by_provider=QUOTES)
def test_a_withheld_row_has_a_reason_and_no_price(by_provider: dict[str, list[Decimal]]) -> None:
    value = compute_value(flat(by_provider))
    withheld = value.withheld_reason is not None
    assert withheld == (value.index_price is None)
    if withheld:
        assert (value.p25, value.p75, value.weights) == (None, None, ())
        assert value.withheld_reason
        enough = len(by_provider) >= MIN_PROVIDERS
        assert value.withheld_reason.startswith("too dispersed" if enough else ("no ", "only "))
    assert value.n_providers == len(by_provider)
    assert value.n_offers == sum(len(xs) for xs in by_provider.values())


@given(by_provider=QUOTES, data=st.data())
def test_shuffled_quotes_give_the_same_value(
    by_provider: dict[str, list[Decimal]], data: st.DataObject
) -> None:
    given_order = flat(by_provider)
    shuffled = data.draw(st.permutations(given_order))
    assert compute_value(shuffled) == compute_value(given_order)


NAMES = ["lambda", "runpod", "vastai", "autodl", "gpushare", "featurize"]
PRICE = st.tuples(
    st.sampled_from(list(QuoteKind)),
    st.decimals(min_value=D("0.5"), max_value=D("40"), places=2),
    st.sampled_from(["USD", "CNY", "EUR"]),
)
OFFER_DAYS = st.lists(
    st.builds(
        lambda provider, key, prices, form, in_stock, day: offer(
            provider, key, *[(k, str(a), c) for k, a, c in prices], form=form,
            in_stock=in_stock, day=day, listed=(OD,),
        ),
        st.sampled_from(NAMES),
        st.sampled_from(["k1", "k2", "k3", "k4"]),
        st.lists(PRICE, max_size=3),
        st.sampled_from(["SXM", "PCIe", "NVL", None]),
        st.booleans(),
        st.sampled_from([DAY, date(2026, 11, 2)]),
    ),
    max_size=25,
)  # fmt: skip


@given(offers=OFFER_DAYS, data=st.data())
def test_shuffled_offers_give_identical_rows(offers: list[OfferDay], data: st.DataObject) -> None:
    shuffled = data.draw(st.permutations(offers))
    for currencies in (None, ["USD"], ["CNY", "USD"]):
        rows = compute_rows(offers, rate=usd_cny, currencies=currencies)
        again = compute_rows(shuffled, rate=usd_cny, currencies=currencies)
        assert again == rows
        assert [repr(r) for r in again] == [repr(r) for r in rows]  # the same digits too
    # Every row's prices are published together or not at all, and its groups are apart.
    rows = compute_rows(offers, rate=usd_cny)
    for row in rows:
        prices = (row["index_price"], row["p25"], row["p75"])
        assert (row["withheld_reason"] is None) == all(p is not None for p in prices)
        assert row["currency"] == index_v2.NATURAL_CURRENCY[Market(row["market"])]
    keys = [tuple(r[c] for c in index_v2.COLUMNS[:7]) for r in rows]
    assert len(keys) == len(set(keys))
