"""Stock text, free counts and rentable flags -> StockStatus and a free-card count.

Rule of truth 1 runs through every function here: only a positive statement ("已租满",
"Sold out", a free count of 0, ``rentable: false``) gives ``sold_out``. Missing, blank,
contradictory or unrecognised input gives ``unknown``, never ``sold_out``.

How a stock text is read (``parse_availability``), in categories rather than examples:

* **Negation.** A negator (EN "no", "not", "none", "nothing", "zero", "without", "never",
  "non-", "...n't"; CN 无, 没有/没, 不, 非, 未, 零, with 暂/暂时/目前/尚 before them) that
  governs an availability word ("available", "in stock", "free", "left", "capacity";
  可用, 可租, 空闲, 库存, 货, 余量, 在售...), with only filler ("currently", "any", "more",
  "longer", "yet"; 在, 的) and thing words (GPU(s), cards, 卡, 台, 机器...) between them, is
  ``sold_out``: "no GPUs currently available", "暂无可用GPU", "不在库存". So is the
  availability word answered by a negator ("available: no", "可用：无", "有货：否") and a bare
  negator ("暂无", "none", "no GPUs"): in a stock cell, "none" is the count. A negator we
  cannot attach to anything ("No GPUs in this region are available", "not sold out",
  "暂无数据") is ``unknown``: we do not read it with confidence, and whatever it is, it
  never reads as in stock.
* **Restocking and "coming soon"** (restocking, back soon, coming soon, available soon,
  waitlist; 补货中, 即将上架, 敬请期待, 排队中) mean nothing can be rented now:
  ``sold_out`` with 0 free. So do exhausted capacity ("out of capacity", "insufficient
  capacity", "at capacity"), delisting (停售, 下架) and 已租完 / 抢光 / 告罄.
* **Scarcity** ("limited", "few left", "capacity constrained", "high demand", "selling
  fast", "almost sold out"; 紧张, 库存紧张, 仅剩, 少量, 不多, 库存不足, 有限) is ``low``: some
  cards are rentable, not many. "High demand" is a scarcity warning, not RunPod's
  ``stockStatus: High``. "Insufficient capacity" (cannot launch) is sold out, but 库存不足
  / 余量不足 ("stock running short") is low.
* **Counts** after or before a free word, also in brackets or after "x": "可用(3)",
  "剩余：4", "余3台", "Available: 5", "5 left", "in stock (2)", "可用 x3"; fractions with a
  free or used word: "空闲 (2/8)", "3/8 free", "已用 5/8". A count of 0 is ``sold_out`` and
  sold out always means 0 free. A negative count, or more free than the total, raises
  AvailabilityParseError: the cell is wrong, and the spider quarantines the item. A number
  with no word ("3/8", "（2）", "x3") is not guessed at: free, used or cards per machine?
* **Contradictions** are ``unknown``: a positive count beside a sold-out statement
  ("sold out (3 available)", "已租满 空闲 3/8"), or sold-out beside scarcity words. A
  sold-out statement beside an in-stock word is sold out: the in-stock word is then a label
  ("Availability: sold out", "可用状态：已售罄").
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from gpurent_core.model import StockStatus

__all__ = [
    "IN_STOCK_WORDS",
    "LOW_WORDS",
    "MAX_COUNT",
    "NEGATOR_WORDS",
    "SOLD_OUT_WORDS",
    "UNKNOWN",
    "Availability",
    "AvailabilityParseError",
    "availability_from_counts",
    "availability_from_flag",
    "parse_availability",
]

MAX_COUNT = 1_000_000
"""More free cards than any provider has in one offer: a larger count is a misread (and would
not fit the warehouse's INTEGER column)."""


class AvailabilityParseError(ValueError):
    """A stock text or count that states something impossible; ``reason`` says what."""

    def __init__(self, text: object, reason: str) -> None:
        super().__init__(f"{reason}: {text!r}")
        self.text = text
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Availability:
    """On-shelf state and, when the provider says it, how many cards are free.

    Checked on construction, so no reader can state an impossible pair: sold out is 0 free,
    0 free is sold out, a count is never negative, and an unknown state has no count.
    """

    status: StockStatus
    available_count: int | None = None

    def __post_init__(self) -> None:
        count, status = self.available_count, self.status
        if count is None:
            if status is StockStatus.SOLD_OUT:
                raise ValueError("sold out means 0 free cards, not an unknown count")
            return
        if isinstance(count, bool) or not isinstance(count, int):
            raise ValueError(f"free count must be an integer, got {count!r}")
        if not 0 <= count <= MAX_COUNT:
            raise ValueError(f"free count out of range: {count}")
        if status is StockStatus.UNKNOWN or (count == 0) != (status is StockStatus.SOLD_OUT):
            raise ValueError(f"free count {count} contradicts status {status.value}")


UNKNOWN = Availability(StockStatus.UNKNOWN, None)
SOLD_OUT = Availability(StockStatus.SOLD_OUT, 0)

# Scarcity phrases are matched (and set aside) first: several contain a sold-out word
# ("即将售罄", "almost sold out") or a negator ("不多", "库存不足", "not many left").
LOW_WORDS: tuple[str, ...] = (
    "即将售罄", "快售罄", "即将租满", "快租满", "库存紧张", "资源紧张", "紧张", "少量", "稀缺",
    "仅剩", "仅余", "只剩", "低库存", "库存不足", "余量不足", "不多", "有限", "抢手",
    "almost sold out", "nearly sold out", "selling fast", "low stock", "running low",
    "almost gone", "limited", "few left", "few", "not many left", "scarce", "low",
    "capacity constrained", "constrained", "high demand", "in demand",
)  # fmt: skip
SOLD_OUT_WORDS: tuple[str, ...] = (
    "已租满", "租满", "已租完", "租完", "暂无空闲", "无空闲", "没有空闲", "售罄", "售完", "告罄",
    "抢光", "无卡", "缺货", "暂无库存", "无库存", "无货", "不可租", "不可用", "已满", "满载",
    "补货中", "待补货", "即将上架", "即将开放", "即将推出", "敬请期待", "排队中", "停售", "下架",
    "sold out", "sold-out", "soldout", "unavailable", "not available", "out of stock",
    "not in stock", "no stock", "no capacity", "no availability", "fully booked", "booked out",
    "fully rented", "all rented", "rented out", "none available", "none left",
    "out of capacity", "insufficient capacity", "at capacity", "capacity exhausted",
    "exhausted", "depleted", "restocking", "restock", "back soon", "coming soon",
    "available soon", "in stock soon", "back in stock soon", "waitlist", "wait list",
    "waiting list",
)  # fmt: skip
IN_STOCK_WORDS: tuple[str, ...] = (
    "充足", "有货", "可租", "可用", "空闲", "有空闲", "闲置", "在售", "有库存",
    "in stock", "in-stock", "available", "rentable", "idle", "high", "medium", "normal", "plenty",
)  # fmt: skip
NEGATOR_WORDS: tuple[str, ...] = (
    "no", "not", "none", "nothing", "zero", "without", "never", "cannot", "non", "n't",
    "没有", "没", "无", "不", "非", "未", "零", "否",
)  # fmt: skip
"""What can negate an availability word; a text holding one never reads as in stock."""

# Phrases about another product, where a sold-out word is part of a name: AutoDL's 无卡模式
# (no-GPU mode) says nothing about whether GPUs are free.
_OFF_TOPIC_RE = re.compile(r"无卡模式|(?<![a-z])no-?gpu mode(?![a-z])")


def _en(pattern: str) -> str:
    return rf"(?<![a-z])(?:{pattern})(?![a-z])"


def _words(words: tuple[str, ...]) -> re.Pattern[str]:
    # English words must stand alone: "low" is not in "below", "available" not in "unavailable".
    parts = []
    for word in sorted(words, key=len, reverse=True):
        escaped = re.escape(word)
        parts.append(_en(escaped) if word.isascii() else escaped)
    return re.compile("|".join(parts))


_LOW_RE = _words(LOW_WORDS)
_SOLD_OUT_RE = _words(SOLD_OUT_WORDS)
_IN_STOCK_RE = _words(IN_STOCK_WORDS)

# "no." followed by a number or "of" abbreviates "number" ("No. of GPUs free: 3").
_NEG = (
    _en(r"no(?!\.\s*(?:of(?![a-z])|[0-9:#]))|not|none|nothing|zero|without|never|cannot|non"
        r"|[a-z]+n't")
    + r"|(?:暂时|暂|目前|当前|尚|均)?(?:没有|没|无|不|非|未|零)"
)  # fmt: skip
_NEG_ANSWER = _en(r"no|none|nothing|false") + r"|没有|暂无|无|否"
_FILL = _en(r"any|more|longer|yet|currently|presently|right now|now|the|is|are|being") + "|在|的"
_THING = (
    _en(r"gpus?|cards?|units?|machines?|instances?|nodes?|servers?|hosts?|vms?|pods?|slots?"
        r"|devices?|resources?")
    + r"|gpu|显卡|卡|机器|主机|台|张|个|实例|资源|节点|设备|机型"
)  # fmt: skip
_AVAIL = (
    _en(r"available|availability|avail|in[- ]stock|stock|inventory|free|idle|left|remaining"
        r"|capacity|rentable|for rent|supply|open|vacant|spare")
    + r"|可用|可租|空闲|闲置|有货|库存|存货|货|余量|剩余|在售|可售|资源"
)  # fmt: skip
_SP = r"[\s\-:]*"
_NEGATED_RE = re.compile(
    rf"(?:{_NEG})(?:{_SP}(?:{_FILL}|{_THING}))*{_SP}(?:{_AVAIL})(?:{_SP}(?:{_THING}))*"
)
_ANSWERED_RE = re.compile(
    rf"(?:{_AVAIL})(?:{_SP}(?:{_THING}))*\s*(?:[:=]|{_en('is|are')})?\s*(?:{_NEG_ANSWER})"
)
_BARE_NEGATOR_RE = re.compile(rf"^(?:{_NEG})(?:{_SP}(?:{_THING}))*[\s.!。]*$")
_STRAY_NEGATOR_RE = re.compile(_NEG)

_FREE = (
    r"空闲|剩余|剩|余量|余(?!额)|可用|可租|库存|闲置"
    r"|(?<![a-z])(?:idle|free|available|avail|remaining|left|in stock|spare)(?![a-z])"
)
_USED = r"已用|已租(?!满|完)|占用|使用中|(?<![a-z])(?:used|rented|busy|in use)(?![a-z])"
_COUNT_THING = r"(?:\s*(?:卡|张|台|个|数量|数|(?<![a-z])(?:gpus?|cards?|units?)(?![a-z])))?"
_SIGN = r"(?P<sign>[-−]\s*)?"
_FRACTION_RE = re.compile(r"(?<![0-9])(?P<sign>[-−]\s*)?([0-9]+)\s*/\s*([0-9]+)(?![0-9])")
_FREE_RE = re.compile(_FREE)
_USED_RE = re.compile(_USED)
_COUNT_AFTER_WORD_RE = re.compile(
    rf"(?:{_FREE}){_COUNT_THING}\s*[:=]?\s*[(\[]?\s*(?:[x×]\s*)?{_SIGN}(?<![0-9])([0-9]+)(?![0-9])"
)
_COUNT_BEFORE_WORD_RE = re.compile(
    rf"(?<![a-z0-9.])(?<![a-z] ){_SIGN}([0-9]+){_COUNT_THING}\s*(?:{_FREE})"
)


def _normalise(text: str) -> str:
    # Lower-case once and match without re.IGNORECASE: IGNORECASE lets "ı" match "i", so a
    # word list could no longer say exactly which texts can read as sold out. Format
    # characters (zero-width spaces) become spaces, never nothing ("no\u200bGPU" must not
    # become "nogpu"), and runs of spaces collapse, so a copied cell reads like a typed one.
    text = unicodedata.normalize("NFKC", text).replace("’", "'").lower()
    text = "".join(" " if unicodedata.category(c) == "Cf" else c for c in text)
    return " ".join(text.split())


_TOTAL_AFTER_RE = re.compile(r"\s*(?:out\s+)?of\s+([0-9]+)(?![0-9])")
"""A total right after a count: " of 8", " out of 8"."""


def _checked_count(text: str, count: int, total: int | None = None) -> int:
    if count > MAX_COUNT:
        raise AvailabilityParseError(text, f"free count {count} is past any real offer")
    if total is not None and count > total:
        raise AvailabilityParseError(text, f"free count {count} exceeds total {total}")
    return count


def _fraction_count(text: str) -> int | None:
    """Free cards from "空闲 3/8" (free of total) or "已用 5/8" (used of total)."""
    fraction = _FRACTION_RE.search(text)
    if fraction is None:
        return None
    first, total = int(fraction[2]), int(fraction[3])
    rest = text[: fraction.start()] + " " + text[fraction.end() :]
    used, free = bool(_USED_RE.search(rest)), bool(_FREE_RE.search(rest))
    if used == free:
        return None  # "3/8" alone, or both words: free of total, or used of total? Not guessed.
    if fraction["sign"]:
        raise AvailabilityParseError(text, "negative card count")
    _checked_count(text, first, total)
    return total - first if used else first


def _free_count(text: str) -> int | None:
    """Free cards stated in the text: "空闲 3/8", "已用 5/8", "剩余2卡", "可用(3)", "3 available"."""
    count = _fraction_count(text)
    if count is not None:
        return count
    for pattern in (_COUNT_AFTER_WORD_RE, _COUNT_BEFORE_WORD_RE):
        match = pattern.search(text)
        if match:
            if match["sign"]:
                raise AvailabilityParseError(text, "negative free count")
            # A total said after the count ("9 free of 8", "3 available out of 8") is
            # checked as the fraction's is: the phrasing must not decide what is checked.
            total = _TOTAL_AFTER_RE.match(text, match.end())
            return _checked_count(text, int(match[2]), int(total[1]) if total else None)
    return None


@dataclass(frozen=True, slots=True)
class _Signals:
    """What a stock text states, each phrase counted once."""

    low: bool
    sold: bool
    stray_negator: bool
    in_stock: bool


def _take(pattern: re.Pattern[str], text: str) -> tuple[bool, str]:
    """Whether ``pattern`` occurs, and the text with its matches blanked out."""
    blanked, count = pattern.subn(" ", text)
    return count > 0, blanked


def _signals(text: str) -> _Signals:
    low, rest = _take(_LOW_RE, text)
    negated, rest = _take(_NEGATED_RE, rest)
    answered, rest = _take(_ANSWERED_RE, rest)
    sold_word, rest = _take(_SOLD_OUT_RE, rest)
    bare = bool(_BARE_NEGATOR_RE.match(text))
    return _Signals(
        low=low,
        sold=negated or answered or sold_word or bare,
        stray_negator=not bare and bool(_STRAY_NEGATOR_RE.search(rest)),
        in_stock=bool(_IN_STOCK_RE.search(rest)),
    )


def _decide(signals: _Signals, count: int | None) -> Availability:
    if signals.stray_negator:
        return UNKNOWN
    if count is not None:
        if count == 0:
            return SOLD_OUT
        if signals.sold:
            return UNKNOWN  # "sold out (3 available)": one of the two is wrong
        return Availability(StockStatus.LOW if signals.low else StockStatus.IN_STOCK, count)
    if signals.sold:
        return UNKNOWN if signals.low else SOLD_OUT
    if signals.low:
        return Availability(StockStatus.LOW, None)
    if signals.in_stock:
        return Availability(StockStatus.IN_STOCK, None)
    return UNKNOWN


def parse_availability(text: str | None) -> Availability:
    """Read a stock cell or status field; unrecognised or empty text is ``unknown``.

    Raises AvailabilityParseError (a ValueError) for a text that is not text, or that
    states an impossible count (negative, more free than total).
    """
    if text is None:
        return UNKNOWN
    if not isinstance(text, str):
        raise AvailabilityParseError(
            text, f"stock text must be a string, got {type(text).__name__}"
        )
    normal = _normalise(text)
    if not normal or _OFF_TOPIC_RE.search(normal):
        return UNKNOWN
    return _decide(_signals(normal), _free_count(normal))


def _count_or_none(value: object, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise AvailabilityParseError(value, f"{name} must be a whole number")
    if value < 0:
        raise AvailabilityParseError(value, f"{name} cannot be negative")
    if value > MAX_COUNT:
        raise AvailabilityParseError(value, f"{name} is past any real offer")
    return value


def availability_from_counts(
    free: int | None, total: int | None = None, *, need: int = 1
) -> Availability:
    """Status from a free-card count (AutoDL ``gpu_idle_num``, Matpool ``gpu.available``...).

    ``need`` is how many cards one rental takes: fewer free than that is ``low`` (something
    is free, but not enough), none free is ``sold_out``. Raises ValueError for counts that
    are negative, not whole numbers or past MAX_COUNT, ``need`` < 1, or more free than total:
    that is a parse error, not a stock state.
    """
    if isinstance(need, bool) or not isinstance(need, int) or need < 1:
        raise ValueError(f"need must be at least 1, got {need}")
    free = _count_or_none(free, "free count")
    total = _count_or_none(total, "total count")
    if free is None:
        return UNKNOWN
    if total is not None and free > total:
        raise AvailabilityParseError(free, f"free count {free} does not fit total {total}")
    if free == 0:
        return SOLD_OUT
    if free < need:
        return Availability(StockStatus.LOW, free)
    return Availability(StockStatus.IN_STOCK, free)


def availability_from_flag(rentable: bool | None, count: int | None = None) -> Availability:
    """Status from a yes/no field (Vast.ai ``rentable``, Paperspace ``isAvailable``, Lambda
    region listed) and an optional free count.

    A flag that contradicts the count (rentable with 0 free, not rentable with cards free)
    is ``unknown``: one of the two fields is wrong and we cannot tell which. A flag that is
    not a bool raises ValueError: ``"false"`` as text is drift, not a signal.
    """
    count = _count_or_none(count, "count")
    if rentable is not None and not isinstance(rentable, bool):
        raise AvailabilityParseError(rentable, "rentable flag must be true, false or null")
    if rentable is None:
        return availability_from_counts(count) if count is not None else UNKNOWN
    if rentable:
        if count == 0:
            return UNKNOWN
        return Availability(StockStatus.IN_STOCK, count)
    if count:
        return UNKNOWN
    return SOLD_OUT
