"""Price parsing: the corpus of real-world spellings, the rules around it, and properties."""

from __future__ import annotations

import csv
import re
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from gpurent_core.model import BillingUnit, PriceKind
from gpurent_core.normalize.price import (
    AUTODL_PRICE_SCALE,
    CENTS,
    LAMBDA_PRICE_SCALE,
    MATPOOL_PRICE_SCALE,
    MILLI,
    MILLICENT,
    PPIO_PRICE_SCALE,
    AmountError,
    ParsedPrice,
    PriceParseError,
    from_minor_units,
    parse_minor_unit_field,
    parse_price,
    parse_prices,
)

CORPUS = Path(__file__).parent / "corpus" / "prices.csv"
COLUMNS = [
    "input", "amount", "currency", "unit", "basis", "kind", "default_currency", "default_unit",
    "note",
]  # fmt: skip


def _rows() -> list[dict[str, str]]:
    with CORPUS.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


ROWS = _rows()


def _defaults(row: dict[str, str]) -> dict[str, str]:
    return {key: row[key] for key in ("default_currency", "default_unit") if row[key]}


def test_corpus_is_big_enough_and_every_row_says_where_it_comes_from() -> None:
    with CORPUS.open(encoding="utf-8", newline="") as handle:
        assert next(csv.reader(handle)) == COLUMNS
    assert len(ROWS) >= 120
    assert all(row["note"].strip() for row in ROWS)
    assert sum(row["amount"] == "error" for row in ROWS) >= 20
    inputs = [(row["input"], row["default_currency"], row["default_unit"]) for row in ROWS]
    assert len(inputs) == len(set(inputs)), "duplicate corpus rows"


GOOD = [row for row in ROWS if row["amount"] != "error"]
BAD = [row for row in ROWS if row["amount"] == "error"]


@pytest.mark.parametrize("row", GOOD, ids=[row["input"] for row in GOOD])
def test_corpus_price(row: dict[str, str]) -> None:
    price = parse_price(row["input"], **_defaults(row))  # type: ignore[arg-type]
    assert isinstance(price.amount, Decimal)
    assert price.amount == Decimal(row["amount"])
    assert price.currency == row["currency"]
    assert price.unit is BillingUnit(row["unit"])
    assert price.basis == (row["basis"] or None)
    assert price.kind is PriceKind(row["kind"])


@pytest.mark.parametrize("row", BAD, ids=[row["input"] or "<empty>" for row in BAD])
def test_corpus_error(row: dict[str, str]) -> None:
    with pytest.raises(PriceParseError) as caught:
        parse_price(row["input"], **_defaults(row))  # type: ignore[arg-type]
    assert caught.value.reason
    assert isinstance(caught.value, ValueError)


def test_written_decimals_are_kept() -> None:
    assert str(parse_price("¥2.20/小时").amount) == "2.20"
    assert str(parse_price("4,999元/月").amount) == "4999"


def test_member_price_beside_list_price() -> None:
    prices = parse_prices("¥1.98/时 会员¥1.88/时")
    assert [(p.amount, p.kind) for p in prices] == [
        (Decimal("1.98"), PriceKind.ON_DEMAND),
        (Decimal("1.88"), PriceKind.MEMBER),
    ]
    assert parse_price("¥1.98/时 会员¥1.88/时").amount == Decimal("1.98")


def test_original_and_current_price() -> None:
    former, current = parse_prices("原价 ¥2.50 现价 ¥1.98/小时")
    assert former.former and former.amount == Decimal("2.50")
    # The 原价 shares the unit written once, after the current price.
    assert former.unit is BillingUnit.HOUR
    assert not current.former and current.amount == Decimal("1.98")
    assert parse_price("原价 ¥2.50 现价 ¥1.98/小时") == current


def test_was_price_after_sale_price() -> None:
    sale, was = parse_prices("$0.79/hr (was $1.09)")
    assert (sale.amount, sale.former) == (Decimal("0.79"), False)
    assert (was.amount, was.former, was.unit) == (Decimal("1.09"), True, BillingUnit.HOUR)


def test_original_beside_member_price_is_still_the_list_price() -> None:
    member, listed = parse_prices("会员价：¥1.32/时；原价：¥1.39/时")
    assert member.kind is PriceKind.MEMBER
    assert listed.kind is PriceKind.ON_DEMAND and not listed.former


def test_spot_beside_on_demand() -> None:
    on_demand, spot = parse_prices("On-Demand $0.79/hr | Spot $0.39/hr")
    assert (on_demand.kind, spot.kind) == (PriceKind.ON_DEMAND, PriceKind.SPOT)
    assert parse_price("Spot $0.39/hr").kind is PriceKind.SPOT


def test_only_a_former_price_is_returned_flagged() -> None:
    price = parse_price("原价 ¥2.50/时")
    assert price.former and price.amount == Decimal("2.50")


@pytest.mark.parametrize(
    ("text", "starting"),
    [
        ("¥1.92/时起", True),
        ("¥1.58起/时", True),
        ("from $0.34/hr", True),
        ("Starting at $0.34/hr", True),
        ("低至¥1.32/时", True),
        ("¥1.98/时", False),
        ("¥1.98/时 起租1小时", False),
    ],
)
def test_starting_at(text: str, starting: bool) -> None:
    assert parse_price(text).starting_at is starting


def test_ambiguous_prices_raise_but_parse_prices_returns_them() -> None:
    with pytest.raises(PriceParseError, match="several"):
        parse_price("¥1.58/时 ¥1.98/时")
    assert len(parse_prices("¥1.58/时 ¥1.98/时")) == 2


def test_current_marker_breaks_a_tie() -> None:
    assert parse_price("¥1.98/时 现价¥1.58/时").amount == Decimal("1.58")


def test_never_guesses_a_currency() -> None:
    with pytest.raises(PriceParseError, match="currency"):
        parse_price("1.98/h")
    assert parse_price("1.98/h", default_currency="usd").currency == "USD"


def test_default_currency_must_be_a_code() -> None:
    with pytest.raises(ValueError, match="ISO 4217"):
        parse_price("1.98/h", default_currency="dollars")


def test_default_unit_accepts_enum_or_value() -> None:
    assert parse_price("¥1.98", default_unit=BillingUnit.DAY).unit is BillingUnit.DAY
    assert parse_price("¥1.98", default_unit="month").unit is BillingUnit.MONTH  # type: ignore[arg-type]


def test_explicit_unit_beats_default() -> None:
    price = parse_price("¥45.6/天", default_currency="USD", default_unit=BillingUnit.HOUR)
    assert (price.currency, price.unit) == ("CNY", BillingUnit.DAY)


def test_error_carries_text_and_reason() -> None:
    with pytest.raises(PriceParseError) as caught:
        parse_price("")
    assert caught.value.text == ""
    assert caught.value.reason == "empty price text"


def test_parsed_price_is_frozen() -> None:
    price = parse_price("¥1.98/时")
    with pytest.raises(AttributeError):
        price.amount = Decimal(0)  # type: ignore[misc]


# --- integer minor units ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "per_unit", "expected"),
    [
        (2720, AUTODL_PRICE_SCALE, "2.72"),
        (10000, MILLI, "10"),
        (1577, MILLI, "1.577"),
        ("2720", MILLI, "2.72"),
        (Decimal("2720"), MILLI, "2.72"),
        (129, LAMBDA_PRICE_SCALE, "1.29"),
        (2392, CENTS, "23.92"),
        (220000, MATPOOL_PRICE_SCALE, "2.2"),
        (100000, MILLICENT, "1"),
        (226000, PPIO_PRICE_SCALE, "2.26"),
        (0, MILLI, "0"),
        (1, 8, "0.125"),
    ],
)
def test_from_minor_units(value: int | str | Decimal, per_unit: int, expected: str) -> None:
    result = from_minor_units(value, per_unit)
    assert isinstance(result, Decimal)
    assert str(result) == expected


@pytest.mark.parametrize(
    ("value", "per_unit"),
    [
        (1, 3),
        (2.72, 1000),
        ("abc", 1000),
        ("NaN", 100),
        (1, 0),
        (1, -10),
        # What drifted JSON hands a minor-unit reader (Matpool priceMillicent 1e400...):
        (Decimal("1E+400"), MILLICENT),
        ("1e400", MILLICENT),
        (Decimal("NaN"), 100),
        (Decimal("Infinity"), 100),
        (Decimal("1E-400"), 100),
        ({}, 100),
        ([], 100),
        (True, 100),
        (None, 100),
        (-5, 100),
        ("-5", 100),
        (Decimal("-0.01"), 100),
        ("1_000", 100),  # Decimal() would take these three; no provider writes them
        ("١٢", 100),
        ("Infinity", 100),
        (10**30, 100),
        (1, True),
    ],
)
def test_from_minor_units_refuses(value: object, per_unit: int) -> None:
    with pytest.raises(ValueError) as caught:
        from_minor_units(value, per_unit)  # type: ignore[arg-type]
    assert type(caught.value) is AmountError  # never InvalidOperation or TypeError
    assert caught.value.reason and "\n" not in caught.value.reason


def test_minor_unit_field_too_large_is_a_price_parse_error() -> None:
    with pytest.raises(PriceParseError, match="too large"):
        parse_price("payg_price: 99999999999999999999999999")


def test_known_minor_unit_fields() -> None:
    parsed = parse_minor_unit_field('"payg_price": 2720,')
    assert parsed is not None
    amount, field = parsed
    assert (amount, field.currency, field.unit) == (Decimal("2.72"), "CNY", BillingUnit.HOUR)
    assert parse_minor_unit_field("price: 226000") is None  # too generic to guess
    assert parse_minor_unit_field("payg_price: 27.20") is None  # not an integer count


# --- properties ---------------------------------------------------------------------------

SYMBOLS = {
    "CNY": ["¥", "￥", "RMB ", "CNY ", "人民币"],
    "USD": ["$", "US$", "USD ", "$ "],
    "EUR": ["€", "EUR ", "€ "],
    "GBP": ["£", "GBP "],
}
SUFFIXES = {
    "CNY": ["元", " 元", " CNY", "RMB"],
    "USD": [" USD", "USD", " dollars"],
    "EUR": ["€", " €", " EUR", " euros"],
    "GBP": [" GBP", "£"],
}
UNIT_WORDS = {
    BillingUnit.SECOND: ["s", "sec", "second", "秒"],
    BillingUnit.MINUTE: ["min", "minute", "分钟", "分"],
    BillingUnit.HOUR: ["h", "hr", "hour", "时", "小时"],
    BillingUnit.DAY: ["d", "day", "天", "日"],
    BillingUnit.WEEK: ["wk", "week", "周"],
    BillingUnit.MONTH: ["mo", "month", "月"],
    BillingUnit.YEAR: ["yr", "year", "年"],
}
BASIS_WORDS = {None: [""], "gpu": ["GPU", "卡"], "instance": ["instance", "台"], "gb": ["GB"]}


@st.composite
def formatted_prices(draw: st.DrawFn) -> tuple[str, Decimal, str, BillingUnit]:
    amount = draw(
        st.decimals(min_value=0, max_value=999_999, allow_nan=False, places=draw(st.integers(0, 6)))
    )
    currency = draw(st.sampled_from(sorted(SYMBOLS)))
    unit = draw(st.sampled_from(list(BillingUnit)))
    word = draw(st.sampled_from(UNIT_WORDS[unit]))
    basis = draw(st.sampled_from(sorted(BASIS_WORDS, key=str)))
    basis_word = draw(st.sampled_from(BASIS_WORDS[basis]))
    # A comma group is ambiguous in EUR ("1,000" may be 1.000), so EUR groups with spaces.
    grouping = draw(st.sampled_from(["", " "] if currency == "EUR" else ["", ",", " "]))
    number = format(amount, ",f").replace(",", grouping)
    style = draw(st.integers(0, 3))
    per = f"/{basis_word}/{word}" if basis_word else f"/{word}"
    if style == 0:
        text = f"{draw(st.sampled_from(SYMBOLS[currency]))}{number}{per}"
    elif style == 1:
        text = f"{number}{draw(st.sampled_from(SUFFIXES[currency]))}{per}"
    elif style == 2:
        long_word = {"s": "second", "sec": "second", "h": "hour", "hr": "hour", "d": "day",
                     "wk": "week", "mo": "month", "yr": "year", "min": "minute"}.get(word, word)  # fmt: skip
        gpu_part = f" per {basis_word}" if basis_word else ""
        text = f"{draw(st.sampled_from(SYMBOLS[currency]))}{number}{gpu_part} per {long_word}"
    else:
        text = f"{draw(st.sampled_from(SYMBOLS[currency]))} {number} / {word}"
    return text, amount, currency, unit


@given(formatted_prices())
@example(("¥1.98/时", Decimal("1.98"), "CNY", BillingUnit.HOUR))
@example(("$1,234.5/GPU/hr", Decimal("1234.5"), "USD", BillingUnit.HOUR))
def test_formatted_price_parses_back(case: tuple[str, Decimal, str, BillingUnit]) -> None:
    text, amount, currency, unit = case
    if currency == "EUR" and re.search(
        r"(?<![0-9.])(?<![0-9] )[1-9][0-9]{0,2}\.[0-9]{3}(?![0-9])", text
    ):
        # "€1.000/s": one dot then three digits is 1 or 1000 where the comma is the decimal mark.
        with pytest.raises(PriceParseError, match="ambiguous"):
            parse_price(text)
        return
    price = parse_price(text)
    assert (price.amount, price.currency, price.unit) == (amount, currency, unit)


def _full_width(text: str) -> str:
    """The full-width forms CN pages use: ASCII ! .. ~ shifted to U+FF01.., space to U+3000."""
    return "".join(
        chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else "\u3000" if c == " " else c for c in text
    )


def _outcome(text: str) -> ParsedPrice | str:
    try:
        return parse_price(text)
    except PriceParseError as exc:
        return f"error: {exc.reason}"


@given(formatted_prices())
def test_full_width_formatted_price_is_the_same(
    case: tuple[str, Decimal, str, BillingUnit],
) -> None:
    text = case[0]
    assert _outcome(_full_width(text)) == _outcome(text)


@given(st.text(alphabet="0123456789.,/ ¥$€元时小hrGPUper卡会员原价起fromwas()-~", max_size=30))
def test_full_width_any_text_is_the_same(text: str) -> None:
    assert _outcome(_full_width(text)) == _outcome(text)


@given(
    st.integers(min_value=0, max_value=10**8 - 1),  # below MAX_AMOUNT even before scaling
    st.sampled_from([CENTS, MILLI, MILLICENT, PPIO_PRICE_SCALE, 10]),
)
def test_minor_units_are_exact(n: int, per_unit: int) -> None:
    assert from_minor_units(n, per_unit) * per_unit == n
    assert from_minor_units(n * per_unit, per_unit) == n
    assert from_minor_units(str(n), per_unit) == from_minor_units(n, per_unit)


@given(st.integers(min_value=0, max_value=10**9), st.integers(min_value=1, max_value=1000))
@example(10**11, 1)  # past MAX_AMOUNT: refused, never rounded
def test_minor_units_exact_or_refused(n: int, per_unit: int) -> None:
    try:
        result = from_minor_units(n, per_unit)
    except ValueError:
        return  # e.g. 1/3: no exact decimal, and a rounded price would be invented
    assert result * per_unit == n


@given(st.text(alphabet="0123456789., /-hr时小卡gpx起", min_size=1, max_size=25))
def test_no_currency_means_error(text: str) -> None:
    # None of these characters can spell a currency, so a parse would be a guess.
    with pytest.raises(PriceParseError):
        parse_price(text, default_unit=BillingUnit.HOUR)


@given(st.integers(min_value=1, max_value=10**12), st.sampled_from([CENTS, MILLI, MILLICENT]))
def test_negative_minor_units_are_refused(n: int, per_unit: int) -> None:
    for value in (-n, str(-n), Decimal(-n)):
        with pytest.raises(AmountError, match=r"negative|plain"):
            from_minor_units(value, per_unit)


# --- drift: separators, malformed numbers, denominators, huge and non-finite amounts ------


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("$1..5/hr", "malformed number"),
        ("$1.2.3/hr", "malformed number"),
        ("¥1,2345/月", "malformed number"),
        ("$1_2/hr", "malformed number"),
        ("¥3/0h", "divided by zero"),
        ("3/0卡", "divided by zero"),
        ("¥1.5/时/0卡", "divided by zero"),
        ("¥10/8卡/时", "per 8 units"),
        ("¥1e400/h", "exponent notation"),
        ("1e400", "exponent notation"),
        ("$1E3/hr", "exponent notation"),
        ("NaN", "not a finite number"),
        ("Infinity", "not a finite number"),
        ("$999999999/hr", "too large"),
        ("₹1,23,456/month", "not one gpurent reads"),
        ("JPY 100/h", "not one gpurent reads"),
        ("€1,234/month", "ambiguous"),
        ("1.234 €/h", "ambiguous"),
    ],
)
def test_drifted_numbers_are_refused_with_a_reason(text: str, reason: str) -> None:
    with pytest.raises(PriceParseError) as caught:
        parse_price(text, default_currency="USD", default_unit=BillingUnit.HOUR)
    assert reason in caught.value.reason
    assert "\n" not in caught.value.reason


@pytest.mark.parametrize(
    ("text", "amount"),
    [
        ("$1\u2009234.50/mo", "1234.50"),
        ("$1\u202f234.50/mo", "1234.50"),
        ("$1'234.50/mo", "1234.50"),
        ("$1’234.50/mo", "1234.50"),
        ("$1_234.50/mo", "1234.50"),
        ("¥1，234.50/月", "1234.50"),
        ("$1,23,456/month", "123456"),
        ("0,234 €/h", "0.234"),
        ("€1.234,56/mo", "1234.56"),
        ("€2,5/h", "2.5"),
        ("$1,234/mo", "1234"),  # a comma group, where the dot is the decimal mark
        ("$1.234/hr", "1.234"),
        ("截止2024.12.31 ¥1.58/时", "1.58"),  # a date beside the price is not the price
    ],
)
def test_digit_separators_give_the_right_number(text: str, amount: str) -> None:
    assert str(parse_price(text).amount) == amount


PRICE_ALPHABET = (
    "0123456789.,'’_ /-e+¥$€£₹元时小hrGPU卡会员原价起fromwasNaInfy()~，。：\u2009\u00a0"
)


def _price_outcome_is_lawful(text: str, **defaults: object) -> None:
    try:
        price = parse_price(text, **defaults)  # type: ignore[arg-type]
    except ValueError as exc:
        assert isinstance(exc, PriceParseError) and exc.reason and "\n" not in exc.reason
        return
    assert isinstance(price.amount, Decimal)
    assert price.amount.is_finite() and price.amount >= 0
    assert price.amount < Decimal(10) ** 8
    assert "E" not in format(price.amount, "f")


@given(st.text(max_size=40))
@example("¥1e400/h")
@example("$1..5/hr")
@example("payg_price: 99999999999999999999999999")
def test_any_text_gives_a_lawful_price_or_a_price_parse_error(text: str) -> None:
    _price_outcome_is_lawful(text)


@given(st.text(alphabet=PRICE_ALPHABET, max_size=30))
@example("3/0卡")
@example("1e-400")
@example(".0e9")
def test_price_like_text_gives_a_lawful_price_or_a_price_parse_error(text: str) -> None:
    _price_outcome_is_lawful(text)
    _price_outcome_is_lawful(text, default_currency="CNY", default_unit=BillingUnit.HOUR)
