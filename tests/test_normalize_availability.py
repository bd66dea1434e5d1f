"""Availability parsing: the corpus, counts and flags, and "unknown is not sold out"."""

from __future__ import annotations

import csv
import re
import unicodedata
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from gpurent_core.model import StockStatus
from gpurent_core.normalize.availability import (
    IN_STOCK_WORDS,
    LOW_WORDS,
    MAX_COUNT,
    NEGATOR_WORDS,
    SOLD_OUT_WORDS,
    Availability,
    AvailabilityParseError,
    availability_from_counts,
    availability_from_flag,
    parse_availability,
)

CORPUS = Path(__file__).parent / "corpus" / "availability.csv"


def _rows() -> list[dict[str, str]]:
    with CORPUS.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


ROWS = _rows()


def test_corpus_is_big_enough_and_every_row_says_where_it_comes_from() -> None:
    with CORPUS.open(encoding="utf-8", newline="") as handle:
        assert next(csv.reader(handle)) == ["input", "status", "available_count", "note"]
    assert len(ROWS) >= 60
    assert all(row["note"].strip() for row in ROWS)
    assert len({row["input"] for row in ROWS}) == len(ROWS), "duplicate corpus rows"
    assert {row["status"] for row in ROWS} == {s.value for s in StockStatus}


@pytest.mark.parametrize("row", ROWS, ids=[row["input"] or "<empty>" for row in ROWS])
def test_corpus(row: dict[str, str]) -> None:
    expected_count = int(row["available_count"]) if row["available_count"] else None
    assert parse_availability(row["input"]) == Availability(
        StockStatus(row["status"]), expected_count
    )


def test_none_is_unknown() -> None:
    assert parse_availability(None) == Availability(StockStatus.UNKNOWN, None)


@pytest.mark.parametrize(
    ("free", "total", "need", "expected"),
    [
        (None, 8, 1, Availability(StockStatus.UNKNOWN, None)),
        (None, None, 4, Availability(StockStatus.UNKNOWN, None)),
        (3, 8, 1, Availability(StockStatus.IN_STOCK, 3)),
        (3, None, 1, Availability(StockStatus.IN_STOCK, 3)),
        (4, 8, 4, Availability(StockStatus.IN_STOCK, 4)),
        (3, 8, 4, Availability(StockStatus.LOW, 3)),
        (1, 8, 2, Availability(StockStatus.LOW, 1)),
        (0, 8, 1, Availability(StockStatus.SOLD_OUT, 0)),
        (0, 0, 1, Availability(StockStatus.SOLD_OUT, 0)),
        (0, None, 8, Availability(StockStatus.SOLD_OUT, 0)),
    ],
)
def test_availability_from_counts(
    free: int | None, total: int | None, need: int, expected: Availability
) -> None:
    assert availability_from_counts(free, total, need=need) == expected


@pytest.mark.parametrize(
    ("free", "total", "need"),
    [
        (-1, 8, 1),
        (9, 8, 1),
        (1, -1, 1),
        (1, 8, 0),
        (1, 0, 1),  # a zero total holds no free card
        (MAX_COUNT + 1, None, 1),
        (True, None, 1),  # a bool is an int by accident, never a count
        ("3", None, 1),
        (Decimal("1E+400"), None, 1),
        (1.5, None, 1),
        (1, 8, True),
    ],
)
def test_availability_from_counts_refuses_impossible_counts(
    free: object, total: object, need: object
) -> None:
    with pytest.raises(ValueError):
        availability_from_counts(free, total, need=need)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("rentable", "count"), [("false", None), (1, None), (None, -1), (False, -3), (True, {})]
)
def test_availability_from_flag_refuses_what_is_not_a_flag_or_count(
    rentable: object, count: object
) -> None:
    with pytest.raises(ValueError):
        availability_from_flag(rentable, count)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("rentable", "count", "expected"),
    [
        (None, None, Availability(StockStatus.UNKNOWN, None)),
        (None, 2, Availability(StockStatus.IN_STOCK, 2)),
        (None, 0, Availability(StockStatus.SOLD_OUT, 0)),
        (True, None, Availability(StockStatus.IN_STOCK, None)),
        (True, 3, Availability(StockStatus.IN_STOCK, 3)),
        (False, None, Availability(StockStatus.SOLD_OUT, 0)),
        (False, 0, Availability(StockStatus.SOLD_OUT, 0)),
        # Contradictions: one of the two fields is wrong, so neither is trusted.
        (True, 0, Availability(StockStatus.UNKNOWN, None)),
        (False, 2, Availability(StockStatus.UNKNOWN, None)),
    ],
)
def test_availability_from_flag(
    rentable: bool | None, count: int | None, expected: Availability
) -> None:
    assert availability_from_flag(rentable, count) == expected


@pytest.mark.parametrize(
    "text",
    ["空闲 (9/8)", "空闲 3/0", "已用 9/8", "剩余: -1", "available: -2", "-3 free", "空闲 -1/8",
     "可用 2000000 卡",
     # A total said in words after the count is checked as a fraction's is (audit: "9 free
     # of 8" read as 9 free cards, though `normalize --help` gives it as an error).
     "9 free of 8", "9 available out of 8", "available: 9 of 8"],
)  # fmt: skip
def test_impossible_counts_in_text_are_refused_with_a_reason(text: str) -> None:
    with pytest.raises(AvailabilityParseError) as caught:
        parse_availability(text)
    assert isinstance(caught.value, ValueError)
    assert caught.value.reason and "\n" not in str(caught.value)


@pytest.mark.parametrize("value", [3, {}, [], True, b"High"])
def test_stock_value_that_is_not_text_is_refused(value: object) -> None:
    with pytest.raises(AvailabilityParseError, match="must be a string"):
        parse_availability(value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("status", "count"),
    [
        (StockStatus.SOLD_OUT, None),  # sold out is 0 free, never an unknown count
        (StockStatus.SOLD_OUT, 2),
        (StockStatus.IN_STOCK, 0),
        (StockStatus.LOW, 0),
        (StockStatus.UNKNOWN, 3),
        (StockStatus.IN_STOCK, -1),
        (StockStatus.IN_STOCK, MAX_COUNT + 1),
        (StockStatus.IN_STOCK, True),
    ],
)
def test_availability_refuses_impossible_pairs(status: StockStatus, count: object) -> None:
    with pytest.raises(ValueError):
        Availability(status, count)  # type: ignore[arg-type]


def test_every_sold_out_reading_says_zero_free() -> None:
    sold = [row for row in ROWS if row["status"] == "sold_out"]
    assert len(sold) >= 40
    assert all(parse_availability(row["input"]).available_count == 0 for row in sold)
    assert availability_from_flag(False).available_count == 0


def test_availability_is_frozen() -> None:
    with pytest.raises(AttributeError):
        parse_availability("High").status = StockStatus.SOLD_OUT  # type: ignore[misc]


def test_word_lists_do_not_overlap() -> None:
    assert not set(SOLD_OUT_WORDS) & set(IN_STOCK_WORDS)
    assert not set(SOLD_OUT_WORDS) & set(LOW_WORDS)
    assert not set(IN_STOCK_WORDS) & set(LOW_WORDS)
    # No in-stock word holds a negator, so "a negator means never in stock" can hold.
    cn_negators = [n for n in NEGATOR_WORDS if not n.isascii()]
    assert not [w for w in IN_STOCK_WORDS if any(n in w for n in cn_negators)]


# --- properties ---------------------------------------------------------------------------


def _has_sold_out_signal(text: str) -> bool:
    """A sold-out word, a negator ("no GPU available", "暂无"), a negative answer ("有货
    FALSE", "in stock: false" answer the stock question no), or any digit (a count of 0 or
    "8/8 used" is a sold-out statement). Substrings, so this over-approximates."""
    normal = unicodedata.normalize("NFKC", text).lower()
    return any(word in normal for word in (*SOLD_OUT_WORDS, *NEGATOR_WORDS, "false")) or any(
        c.isdigit() for c in normal
    )


NEUTRAL = ["gpu", "卡", "RTX 4090", "status:", "北京A区", "region", "/", "(", ")", "库存", "剩余"]
pieces = st.one_of(
    st.sampled_from([*IN_STOCK_WORDS, *LOW_WORDS, *NEUTRAL]),
    st.text(max_size=8),
)


@given(st.lists(pieces, max_size=6).map(" ".join))
@example("不可用的")
@example("available later")
@example("低")
@example("high demand")
@example("有货 FALSE")  # found by hypothesis: a negative answer, sold out by design
def test_never_sold_out_without_a_sold_out_word(text: str) -> None:
    if _has_sold_out_signal(text):
        return
    assert parse_availability(text).status is not StockStatus.SOLD_OUT


@given(st.lists(st.sampled_from([*IN_STOCK_WORDS, *LOW_WORDS, *NEUTRAL]), min_size=1, max_size=4))
def test_known_words_without_counts_are_never_sold_out(words: list[str]) -> None:
    # Deterministic vocabulary, so the property above cannot pass only by filtering.
    result = parse_availability(" ".join(words))
    assert result.status is not StockStatus.SOLD_OUT
    assert result.available_count is None


@given(st.integers(min_value=0, max_value=64), st.integers(min_value=0, max_value=64))
def test_idle_fraction_matches_counts(free: int, extra: int) -> None:
    total = free + extra
    text = f"空闲 {free}/{total}"
    assert parse_availability(text) == availability_from_counts(free, total)
    used = f"已用 {total - free}/{total}"
    assert parse_availability(used) == availability_from_counts(free, total)


@given(st.integers(min_value=0, max_value=MAX_COUNT), st.integers(min_value=1, max_value=16))
def test_counts_never_unknown_and_sold_out_only_at_zero(free: int, need: int) -> None:
    result = availability_from_counts(free, need=need)
    assert result.status is not StockStatus.UNKNOWN
    assert (result.status is StockStatus.SOLD_OUT) == (free == 0)
    assert result.available_count == free


# Negation, in categories: a negator, optional filler and thing words, an availability word,
# in either language, any case, with full-width forms and odd spacing.
EN_NEGATORS = ["no", "not", "none", "nothing", "zero", "never", "isn't", "aren't"]
CN_NEGATORS = ["无", "暂无", "没有", "没", "不", "非", "未", "零", "暂时没有", "目前无"]
EN_FILLERS = ["", "any", "more", "currently", "longer", "yet", "gpus", "cards", "GPU", "nodes"]
CN_FILLERS = ["", "在", "的", "GPU", "卡", "显卡", "机器"]
EN_AVAIL = ["available", "in stock", "free", "left", "remaining", "capacity", "stock", "idle"]
CN_AVAIL = ["可用", "可租", "空闲", "库存", "余量", "剩余", "在售", "闲置", "有货"]
SPACES = ["", " ", "  ", "\u3000", "\u00a0", "\u200b", "\t"]


def _full_width(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


@st.composite
def negated_phrases(draw: st.DrawFn) -> str:
    if draw(st.booleans()):
        neg, avail = draw(st.sampled_from(EN_NEGATORS)), draw(st.sampled_from(EN_AVAIL))
        fillers = draw(st.lists(st.sampled_from(EN_FILLERS), max_size=3))
        gap = st.sampled_from([s for s in SPACES if s])  # English words need a space
    else:
        neg, avail = draw(st.sampled_from(CN_NEGATORS)), draw(st.sampled_from(CN_AVAIL))
        fillers = draw(st.lists(st.sampled_from(CN_FILLERS), max_size=2))
        gap = st.sampled_from(SPACES)
    words = [w for w in (neg, *fillers, avail) if w]
    text = words[0] + "".join(draw(gap) + w for w in words[1:])
    text = text.upper() if draw(st.booleans()) else text
    return _full_width(text) if draw(st.booleans()) else text


@given(negated_phrases())
@example("no GPU available")
@example("暂无可用GPU")
@example("NOT CURRENTLY AVAILABLE")
def test_negated_availability_is_sold_out(text: str) -> None:
    assert parse_availability(text) == Availability(StockStatus.SOLD_OUT, 0)


@given(
    st.text(max_size=12),
    st.sampled_from([*EN_NEGATORS, *CN_NEGATORS, "non-", "cannot"]),
    st.text(max_size=12),
)
@example("GPUs in this region:", "not", "available")
@example("", "未", "空闲 3/8")
def test_a_negator_anywhere_never_reads_in_stock(before: str, negator: str, after: str) -> None:
    # Unseen phrasing around a negator may be unreadable (unknown), never in stock.
    text = f"{before} {negator} {after}"
    try:
        result = parse_availability(text)
    except AvailabilityParseError:
        return  # an impossible count: refused, which is not in stock either
    assert result.status is not StockStatus.IN_STOCK


@given(st.text(max_size=40))
@example("空闲 99999999999999999999/8")
@example("剩余：-0")
@example("可用（１２）")
def test_any_text_gives_an_availability_or_a_value_error(text: str) -> None:
    try:
        result = parse_availability(text)
    except ValueError as exc:
        assert isinstance(exc, AvailabilityParseError) and exc.reason
        return
    assert isinstance(result, Availability)
    assert (result.status is StockStatus.SOLD_OUT) == (result.available_count == 0)


COUNT_FORMS = [
    "可用({n})", "可用（{n}）", "空闲 ({n}/{t})", "剩余：{n}", "余{n}台", "Available: {n}",
    "{n} left", "in stock ({n})", "{n}/{t} free", "可用 x{n}", "空闲 {n}/{t}",
]  # fmt: skip


@given(
    st.sampled_from(COUNT_FORMS),
    st.integers(min_value=0, max_value=512),
    st.integers(min_value=0, max_value=512),
)
def test_counts_in_every_form_are_read(form: str, free: int, extra: int) -> None:
    text = form.format(n=free, t=free + extra)
    assert parse_availability(text) == availability_from_counts(free)


@given(
    st.sampled_from([f for f in COUNT_FORMS if "{t}" in f]), st.integers(1, 64), st.integers(0, 63)
)
def test_more_free_than_total_is_refused(form: str, free: int, total: int) -> None:
    if total >= free:
        total = free - 1
    with pytest.raises(AvailabilityParseError, match="exceeds total"):
        parse_availability(form.format(n=free, t=total))


@given(st.sampled_from([f for f in COUNT_FORMS if "{t}" not in f]), st.integers(1, 64))
def test_negative_counts_are_refused(form: str, free: int) -> None:
    text = form.format(n=f"-{free}")
    assert re.search(r"-[0-9]", text)
    with pytest.raises(AvailabilityParseError, match="negative"):
        parse_availability(text)
