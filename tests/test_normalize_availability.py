"""Availability parsing: the corpus, counts and flags, and "unknown is not sold out"."""

from __future__ import annotations

import csv
import unicodedata
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from gpurent.model import StockStatus
from gpurent.normalize.availability import (
    IN_STOCK_WORDS,
    LOW_WORDS,
    SOLD_OUT_WORDS,
    Availability,
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


@pytest.mark.parametrize(("free", "total", "need"), [(-1, 8, 1), (9, 8, 1), (1, -1, 1), (1, 8, 0)])
def test_availability_from_counts_refuses_impossible_counts(
    free: int, total: int, need: int
) -> None:
    with pytest.raises(ValueError):
        availability_from_counts(free, total, need=need)


@pytest.mark.parametrize(
    ("rentable", "count", "expected"),
    [
        (None, None, Availability(StockStatus.UNKNOWN, None)),
        (None, 2, Availability(StockStatus.IN_STOCK, 2)),
        (None, 0, Availability(StockStatus.SOLD_OUT, 0)),
        (True, None, Availability(StockStatus.IN_STOCK, None)),
        (True, 3, Availability(StockStatus.IN_STOCK, 3)),
        (False, None, Availability(StockStatus.SOLD_OUT, None)),
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


def test_availability_is_frozen() -> None:
    with pytest.raises(AttributeError):
        parse_availability("High").status = StockStatus.SOLD_OUT  # type: ignore[misc]


def test_word_lists_do_not_overlap() -> None:
    assert not set(SOLD_OUT_WORDS) & set(IN_STOCK_WORDS)
    assert not set(SOLD_OUT_WORDS) & set(LOW_WORDS)


# --- properties ---------------------------------------------------------------------------


def _has_sold_out_signal(text: str) -> bool:
    """A sold-out word, or any digit (a count of 0 or "8/8 used" is a sold-out statement)."""
    normal = unicodedata.normalize("NFKC", text).lower()
    return any(word in normal for word in SOLD_OUT_WORDS) or any(c.isdigit() for c in normal)


NEUTRAL = ["gpu", "卡", "RTX 4090", "status:", "北京A区", "region", "/", "(", ")", "库存", "剩余"]
pieces = st.one_of(
    st.sampled_from([*IN_STOCK_WORDS, *LOW_WORDS, *NEUTRAL]),
    st.text(max_size=8),
)


@given(st.lists(pieces, max_size=6).map(" ".join))
@example("不可用的")
@example("available soon")
@example("低")
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


@given(st.integers(min_value=0), st.integers(min_value=1, max_value=16))
def test_counts_never_unknown_and_sold_out_only_at_zero(free: int, need: int) -> None:
    result = availability_from_counts(free, need=need)
    assert result.status is not StockStatus.UNKNOWN
    assert (result.status is StockStatus.SOLD_OUT) == (free == 0)
    assert result.available_count == free
