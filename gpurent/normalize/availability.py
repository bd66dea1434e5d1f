"""Stock text, free counts and rentable flags -> StockStatus and a free-card count.

Rule of truth 1 runs through every function here: only a positive statement ("已租满",
"Sold out", a free count of 0, ``rentable: false``) gives ``sold_out``. Missing, blank,
contradictory or unrecognised input gives ``unknown``, never ``sold_out``.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from gpurent.model import StockStatus

__all__ = [
    "IN_STOCK_WORDS",
    "LOW_WORDS",
    "SOLD_OUT_WORDS",
    "Availability",
    "availability_from_counts",
    "availability_from_flag",
    "parse_availability",
]


@dataclass(frozen=True, slots=True)
class Availability:
    """On-shelf state and, when the provider says it, how many cards are free."""

    status: StockStatus
    available_count: int | None = None


UNKNOWN = Availability(StockStatus.UNKNOWN, None)

# Checked in this order: scarcity phrases that contain a sold-out word ("即将售罄",
# "almost sold out") first, then sold-out phrases that contain an in-stock word
# ("无空闲", "不可用", "unavailable"), then the in-stock words.
LOW_WORDS: tuple[str, ...] = (
    "即将售罄", "快售罄", "库存紧张", "紧张", "少量", "稀缺", "仅剩", "低库存",
    "almost sold out", "nearly sold out", "selling fast", "low stock", "limited", "few left",
    "scarce", "low",
)  # fmt: skip
SOLD_OUT_WORDS: tuple[str, ...] = (
    "已租满", "租满", "暂无空闲", "无空闲", "没有空闲", "售罄", "售完", "无卡", "缺货",
    "暂无库存", "无库存", "无货", "不可租", "不可用", "已满",
    "sold out", "sold-out", "soldout", "unavailable", "not available", "out of stock",
    "not in stock", "no stock", "no capacity", "no availability", "fully booked",
    "none available", "none left",
)  # fmt: skip
IN_STOCK_WORDS: tuple[str, ...] = (
    "充足", "有货", "可租", "可用", "空闲", "有空闲",
    "in stock", "in-stock", "available", "rentable", "idle", "high", "medium", "normal", "plenty",
)  # fmt: skip


def _words(words: tuple[str, ...]) -> re.Pattern[str]:
    # English words must stand alone: "low" is not in "below", "available" not in "unavailable".
    parts = []
    for word in sorted(words, key=len, reverse=True):
        escaped = re.escape(word)
        if word.isascii():
            escaped = rf"(?<![a-z]){escaped}(?![a-z])"
        parts.append(escaped)
    return re.compile("|".join(parts))


_LOW_RE = _words(LOW_WORDS)
_SOLD_OUT_RE = _words(SOLD_OUT_WORDS)
_IN_STOCK_RE = _words(IN_STOCK_WORDS)

_FREE = r"空闲|剩余|剩|可用|可租|库存|(?<![a-z])(?:idle|free|available|avail|remaining|left|in stock)(?![a-z])"
_USED = r"已用|已租(?!满)|占用|使用中|(?<![a-z])(?:used|rented|busy|in use)(?![a-z])"
_THING = r"(?:\s*(?:卡|张|台|个|数量|数|(?<![a-z])(?:gpus?|cards?|units?)(?![a-z])))?"
_FRACTION_RE = re.compile(r"(?<![0-9])([0-9]+)\s*/\s*([0-9]+)(?![0-9])")
_FREE_RE = re.compile(_FREE)
_USED_RE = re.compile(_USED)
_COUNT_AFTER_WORD_RE = re.compile(rf"(?:{_FREE}){_THING}\s*[:=]?\s*(?<![0-9])([0-9]+)(?![0-9])")
_COUNT_BEFORE_WORD_RE = re.compile(rf"(?<![a-z0-9.])(?<![a-z] )([0-9]+){_THING}\s*(?:{_FREE})")


def _normalise(text: str) -> str:
    # Lower-case once and match without re.IGNORECASE: IGNORECASE lets "ı" match "i", so a
    # word list could no longer say exactly which texts can read as sold out.
    return unicodedata.normalize("NFKC", text).strip().lower()


def _free_count(text: str) -> int | None:
    """Free cards stated in the text: "空闲 3/8", "已用 5/8", "剩余2卡", "3 available"."""
    fraction = _FRACTION_RE.search(text)
    if fraction:
        first, total = int(fraction[1]), int(fraction[2])
        rest = text[: fraction.start()] + " " + text[fraction.end() :]
        used, free = bool(_USED_RE.search(rest)), bool(_FREE_RE.search(rest))
        if used != free and first <= total:
            return total - first if used else first
        # "3/8" alone: free of total, or used of total? Do not guess.
    for pattern in (_COUNT_AFTER_WORD_RE, _COUNT_BEFORE_WORD_RE):
        match = pattern.search(text)
        if match:
            return int(match[1])
    return None


def parse_availability(text: str | None) -> Availability:
    """Read a stock cell or status field; unrecognised or empty text is ``unknown``."""
    if text is None:
        return UNKNOWN
    text = _normalise(text)
    if not text:
        return UNKNOWN
    scarce = bool(_LOW_RE.search(text))
    count = _free_count(text)
    if count is not None:
        if count == 0:
            return Availability(StockStatus.SOLD_OUT, 0)
        return Availability(StockStatus.LOW if scarce else StockStatus.IN_STOCK, count)
    if scarce:
        return Availability(StockStatus.LOW, None)
    if _SOLD_OUT_RE.search(text):
        return Availability(StockStatus.SOLD_OUT, None)
    if _IN_STOCK_RE.search(text):
        return Availability(StockStatus.IN_STOCK, None)
    return UNKNOWN


def availability_from_counts(
    free: int | None, total: int | None = None, *, need: int = 1
) -> Availability:
    """Status from a free-card count (AutoDL ``gpu_idle_num``, Matpool ``gpu.available``...).

    ``need`` is how many cards one rental takes: fewer free than that is ``low`` (something
    is free, but not enough), none free is ``sold_out``. Raises ValueError for negative
    counts, ``need`` < 1 or more free than total: that is a parse error, not a stock state.
    """
    if need < 1:
        raise ValueError(f"need must be at least 1, got {need}")
    if free is None:
        return UNKNOWN
    if free < 0:
        raise ValueError(f"free count cannot be negative, got {free}")
    if total is not None and (total < 0 or free > total):
        raise ValueError(f"free count {free} does not fit total {total}")
    if free == 0:
        return Availability(StockStatus.SOLD_OUT, 0)
    if free < need:
        return Availability(StockStatus.LOW, free)
    return Availability(StockStatus.IN_STOCK, free)


def availability_from_flag(rentable: bool | None, count: int | None = None) -> Availability:
    """Status from a yes/no field (Vast.ai ``rentable``, Paperspace ``isAvailable``, Lambda
    region listed) and an optional free count.

    A flag that contradicts the count (rentable with 0 free, not rentable with cards free)
    is ``unknown``: one of the two fields is wrong and we cannot tell which.
    """
    if count is not None and count < 0:
        raise ValueError(f"count cannot be negative, got {count}")
    if rentable is None:
        return availability_from_counts(count) if count is not None else UNKNOWN
    if rentable:
        if count == 0:
            return UNKNOWN
        return Availability(StockStatus.IN_STOCK, count)
    if count:
        return UNKNOWN
    return Availability(StockStatus.SOLD_OUT, count)
