"""The vocabulary of published prices: currencies, units, bases and the words that mark a kind.

Kept apart from the parser so that adding a spelling seen on a new provider page is a
one-line change here, with a corpus row in tests/corpus/prices.csv to prove it.
All patterns run on NFKC-normalised text (full-width ￥１．９８／时 is already ¥1.98/时)
and are case-insensitive.
"""

from __future__ import annotations

import re

from gpurent_core.model import BillingUnit

_ASCII_WORD_END = r"(?![a-z])"
_ASCII_WORD_START = r"(?<![a-z])"


def _alternation(words: dict[str, object]) -> str:
    """Longest first, so "hours" wins over "hour" over "h"; ASCII words must end at a word end."""
    parts = []
    for word in sorted(words, key=len, reverse=True):
        escaped = re.escape(word)
        parts.append(
            escaped + _ASCII_WORD_END if word[-1].isascii() and word[-1].isalpha() else escaped
        )
    return "|".join(parts)


# ¥ is CNY here: gpurent's yen-sign prices come from Chinese providers (JPY would be spelt out).
# "$" is USD: every dollar-priced provider gpurent knows (Vast.ai, RunPod, Lambda...) bills in USD.
CURRENCY_PREFIXES: dict[str, str] = {
    "us$": "USD",
    "hk$": "HKD",
    "usd": "USD",
    "rmb": "CNY",
    "cny": "CNY",
    "eur": "EUR",
    "gbp": "GBP",
    "人民币": "CNY",
    "$": "USD",
    "¥": "CNY",
    "€": "EUR",
    "£": "GBP",
}
CURRENCY_SUFFIXES: dict[str, str] = {
    "元": "CNY",
    "块钱": "CNY",
    "块": "CNY",
    "人民币": "CNY",
    "美元": "USD",
    "美金": "USD",
    "刀": "USD",
    "欧元": "EUR",
    "英镑": "GBP",
    "港元": "HKD",
    "港币": "HKD",
    "rmb": "CNY",
    "cny": "CNY",
    "usd": "USD",
    "dollars": "USD",
    "dollar": "USD",
    "eur": "EUR",
    "euros": "EUR",
    "euro": "EUR",
    "gbp": "GBP",
    "hkd": "HKD",
}
# A currency symbol after a number only when no number follows it: in "1.98 $0.27" the
# "$" belongs to 0.27.
SYMBOL_SUFFIXES: dict[str, str] = {"¥": "CNY", "€": "EUR", "$": "USD", "£": "GBP"}
CENT_SUFFIX = "¢"

_PREFIX_CODES = {k: v for k, v in CURRENCY_PREFIXES.items() if k.isascii() and k[0].isalpha()}
_PREFIX_OTHER = {k: v for k, v in CURRENCY_PREFIXES.items() if k not in _PREFIX_CODES}
PREFIX_RE = (
    rf"(?:{_ASCII_WORD_START}(?:{'|'.join(re.escape(k) for k in sorted(_PREFIX_CODES, key=len, reverse=True))})"
    rf"|{'|'.join(re.escape(k) for k in sorted(_PREFIX_OTHER, key=len, reverse=True))})"
)
SUFFIX_RE = re.compile(
    rf"\s*(?:(?P<word>{_alternation(dict.fromkeys(CURRENCY_SUFFIXES))})"
    rf"|(?P<symbol>[¥€$£¢])(?!\s*[0-9.]))",
    re.IGNORECASE,
)

# Digits are ASCII only: Python's \d also matches other scripts' digits, which no price uses.
# A first digit group never starts with 0 ("0,234" is a decimal comma, not 234). NFKC has
# already turned thin and narrow no-break spaces (U+2009, U+202F) and NBSP into spaces, and
# the full-width comma into a comma.
NUMBER_RE = r"""(?P<num>
      [1-9][0-9]{0,2}(?:,[0-9]{3})+(?:\.[0-9]+)?       # 4,999   1,234.56
    | [1-9][0-9]?(?:,[0-9]{2})+,[0-9]{3}(?:\.[0-9]+)?  # 1,23,456 (Indian lakh grouping)
    | [1-9][0-9]{0,2}(?:\.[0-9]{3})+,[0-9]{1,2}        # 1.234,56 (European)
    | [1-9][0-9]{0,2}(?:[ ][0-9]{3})+(?:[.,][0-9]+)?   # 1 234.5  (space, thin space, NBSP)
    | [1-9][0-9]{0,2}(?:['’][0-9]{3})+(?:\.[0-9]+)?    # 1'234.50 (Swiss apostrophe)
    | [1-9][0-9]{0,2}(?:_[0-9]{3})+(?:\.[0-9]+)?       # 1_234.50 (programmer's grouping)
    | 0,[0-9]+(?![0-9])                               # 0,234    (decimal comma)
    | [0-9]+,[0-9]{1,2}(?![0-9])                      # 0,79  2,5
    | [0-9]+(?:\.[0-9]+)?
    | \.[0-9]+
    )(?![0-9])"""
# What a number may not be followed by: another digit mark ("1..5", "1.2.3", "1,2345") or an
# exponent ("1e400"). Such a number is refused, never read as its first part.
MALFORMED_TAIL_RE = re.compile(r"(?:[.,'’_]+[0-9]|e[+-]?[0-9])[0-9.,'’_]*(?:e[+-]?[0-9]+)?", re.I)
# "/0", "/ 8": a price divided by a count ("¥3/0h", "¥10/8卡/时") is not read: a zero
# denominator is no price, and a price per 8 cards is not a per-unit rate written out.
DENOMINATOR_RE = re.compile(r"\s*/\s*(?P<den>[0-9][0-9.,]*)")
# A single mark then three digits: grouping ("1,234" = 1234) where the dot is the decimal
# mark, a decimal ("1,234" = 1.234) where the comma is. Ambiguous in those currencies.
AMBIGUOUS_GROUP_RE = re.compile(r"[1-9][0-9]{0,2}[.,][0-9]{3}")
DECIMAL_COMMA_CURRENCIES = frozenset({"EUR"})
# Currencies gpurent does not read: a price in one must not take the default currency.
UNREAD_CURRENCY_CODES = (
    "JPY", "INR", "KRW", "SGD", "AUD", "CAD", "CHF", "TWD", "RUB", "BRL", "SEK", "NOK", "DKK",
    "PLN", "TRY", "THB", "VND", "IDR", "MYR", "PHP", "NZD", "ZAR", "MXN", "AED", "SAR", "ILS",
)  # fmt: skip
_UNREAD_CODES = "|".join(UNREAD_CURRENCY_CODES)
UNREAD_CODE_BEFORE_RE = re.compile(rf"(?<![A-Za-z])(?:{_UNREAD_CODES})\s*$")
UNREAD_CODE_AFTER_RE = re.compile(rf"\s*(?:{_UNREAD_CODES})(?![A-Za-z])")
KNOWN_SYMBOLS = frozenset("¥€$£¢")
NOT_FINITE_RE = re.compile(r"(?<![a-z])(?:nan|inf|infinity)(?![a-z])", re.I)
MULTIPLIERS: dict[str, int] = {"k": 1_000, "千": 1_000, "万": 10_000}
MULTIPLIER_RE = re.compile(r"\s*(?:(?P<mult>万|千)|(?P<k>k)(?![a-z]))", re.IGNORECASE)

ATOM_RE = re.compile(
    rf"(?:(?P<pre>{PREFIX_RE})\s*)?{NUMBER_RE}",
    re.IGNORECASE | re.VERBOSE,
)

# Time units. "m" alone is refused: minute or month, and a wrong guess is off by 43800x.
TIME_WORDS: dict[str, BillingUnit] = {
    "seconds": BillingUnit.SECOND,
    "second": BillingUnit.SECOND,
    "secs": BillingUnit.SECOND,
    "sec": BillingUnit.SECOND,
    "s": BillingUnit.SECOND,
    "秒钟": BillingUnit.SECOND,
    "秒": BillingUnit.SECOND,
    "minutes": BillingUnit.MINUTE,
    "minute": BillingUnit.MINUTE,
    "mins": BillingUnit.MINUTE,
    "min": BillingUnit.MINUTE,
    "分钟": BillingUnit.MINUTE,
    "分鐘": BillingUnit.MINUTE,
    "分": BillingUnit.MINUTE,
    "hours": BillingUnit.HOUR,
    "hour": BillingUnit.HOUR,
    "hrs": BillingUnit.HOUR,
    "hr": BillingUnit.HOUR,
    "h": BillingUnit.HOUR,
    "小时": BillingUnit.HOUR,
    "小時": BillingUnit.HOUR,
    "钟头": BillingUnit.HOUR,
    "时": BillingUnit.HOUR,
    "時": BillingUnit.HOUR,
    "days": BillingUnit.DAY,
    "day": BillingUnit.DAY,
    "d": BillingUnit.DAY,
    "天": BillingUnit.DAY,
    "日": BillingUnit.DAY,
    "weeks": BillingUnit.WEEK,
    "week": BillingUnit.WEEK,
    "wks": BillingUnit.WEEK,
    "wk": BillingUnit.WEEK,
    "星期": BillingUnit.WEEK,
    "周": BillingUnit.WEEK,
    "週": BillingUnit.WEEK,
    "months": BillingUnit.MONTH,
    "month": BillingUnit.MONTH,
    "mth": BillingUnit.MONTH,
    "mos": BillingUnit.MONTH,
    "mo": BillingUnit.MONTH,
    "个月": BillingUnit.MONTH,
    "月": BillingUnit.MONTH,
    "years": BillingUnit.YEAR,
    "year": BillingUnit.YEAR,
    "annum": BillingUnit.YEAR,
    "yrs": BillingUnit.YEAR,
    "yr": BillingUnit.YEAR,
    "年": BillingUnit.YEAR,
}
AMBIGUOUS_TIME_WORDS = ("m",)
BASIS_WORDS: dict[str, str] = {
    "gpus": "gpu",
    "gpu": "gpu",
    "cards": "gpu",
    "card": "gpu",
    "张卡": "gpu",
    "显卡": "gpu",
    "卡": "gpu",
    "张": "gpu",
    "instances": "instance",
    "instance": "instance",
    "nodes": "instance",
    "node": "instance",
    "machines": "instance",
    "machine": "instance",
    "servers": "instance",
    "server": "instance",
    "pods": "instance",
    "pod": "instance",
    "vms": "instance",
    "vm": "instance",
    "实例": "instance",
    "机器": "instance",
    "主机": "instance",
    "整机": "instance",
    "台": "instance",
    "gib": "gb",
    "gb": "gb",
    "g": "gb",
    "tib": "tb",
    "tb": "tb",
}
_ALL_TOKENS: dict[str, object] = {
    **TIME_WORDS,
    **BASIS_WORDS,
    **dict.fromkeys(AMBIGUOUS_TIME_WORDS),
}
TOKEN_RE = re.compile(rf"(?P<tok>{_alternation(_ALL_TOKENS)})", re.IGNORECASE)

# Separators inside a unit clause: "/GPU/hr", "per GPU per hour", "每卡每小时", "GPU-hour",
# "卡·时", "卡时". The first one is mandatory; a bare "1.98 GPU" is not a rate.
FIRST_SEP_RE = re.compile(r"\s*(?:/|每|per(?![a-z])|an?(?![a-z])|each(?![a-z]))\s*", re.IGNORECASE)
AFTER_BASIS_SEP_RE = re.compile(r"\s*(?:/|每|per(?![a-z])|[-·・*×])?\s*", re.IGNORECASE)
AFTER_TIME_SEP_RE = re.compile(r"\s*(?:/|每|per(?![a-z]))\s*", re.IGNORECASE)
ADVERB_UNITS: dict[str, BillingUnit] = {
    "hourly": BillingUnit.HOUR,
    "daily": BillingUnit.DAY,
    "weekly": BillingUnit.WEEK,
    "monthly": BillingUnit.MONTH,
    "yearly": BillingUnit.YEAR,
    "annually": BillingUnit.YEAR,
}
ADVERB_RE = re.compile(rf"\s*(?P<adv>{_alternation(dict.fromkeys(ADVERB_UNITS))})", re.IGNORECASE)
STARTING_SUFFIX_RE = re.compile(r"\s*起(?!租)")
RANGE_RE = re.compile(
    rf"\s*(?:-|–|—|~|〜|至|到|to(?![a-z]))\s*(?:{PREFIX_RE}\s*)?[0-9.]", re.IGNORECASE
)
# A minus sign at the start or after a label mark; "1.58 - 2.20" is a range, "GPU-$2" a hyphen.
NEGATIVE_BEFORE_RE = re.compile(r"(?:^|[:=(])\s*[-−]\s*$")

# Words around a price that say what kind of price it is. Negations ("非会员",
# "non-member", "uninterruptible", "非抢占") must not trigger the marker they contain.
SPOT_RE = re.compile(
    r"竞价|(?<!非)抢占|(?<!不)可中断"
    r"|(?<![a-z])(?<!non-)(?<!non )(?:spot|interrupt[ia]ble|pre-?empt[ia]ble|bid)(?![a-z])",
    re.IGNORECASE,
)
MEMBER_RE = re.compile(
    r"(?<!非)会员|学生|(?<![a-z])vip"
    r"|(?<![a-z])(?<!non-)(?<!non )(?:members?|membership|student)(?![a-z])",
    re.IGNORECASE,
)
COMMITMENT_RE = re.compile(
    r"包(?:天|日|周|月|季|年)|(?:日|周|月|季|年)(?:租|付)|套餐|预付|长租|合约"
    r"|(?<![a-z])(?:reserved|commit(?:ment|ted)?|prepaid|prepay|contract|term)(?![a-z])"
    r"|[0-9]+\s*-?\s*(?:months?|mo|years?|yr|weeks?|wk)(?![a-z])",
    re.IGNORECASE,
)
FORMER_RE = re.compile(
    r"原价|划线价|原售价"
    r"|(?<![a-z])(?:was|regular(?:ly)?|original(?:ly)?|previously|before|msrp)(?![a-z])",
    re.IGNORECASE,
)
CURRENT_RE = re.compile(
    r"现价|折后|优惠价|活动价|特价|特惠|限时|折扣价|秒杀"
    r"|(?<![a-z])(?:now|sale|discount(?:ed)?|promo)(?![a-z])",
    re.IGNORECASE,
)
STARTING_RE = re.compile(
    r"起(?!租)|低至|最低"
    r"|(?<![a-z])(?:from|starting|starts at|as low as)(?![a-z])",
    re.IGNORECASE,
)

# A unit or basis named around the price rather than after it: "包月 ¥1,154", "每小时 ¥1.98",
# "Hourly: $0.79", "整机 ¥15.84/时".
_CN_TIME = {"小时": "hour", "时": "hour", "天": "day", "日": "day", "周": "week", "月": "month",
            "年": "year", "分钟": "minute", "秒": "second"}  # fmt: skip
CONTEXT_UNIT_RES: tuple[tuple[re.Pattern[str], dict[str, BillingUnit]], ...] = (
    (
        re.compile(r"每\s*(?:卡|张卡|gpu)?\s*(小时|时|天|日|周|月|年|分钟|秒)", re.IGNORECASE),
        {k: BillingUnit(v) for k, v in _CN_TIME.items()},
    ),
    (
        re.compile(r"(?:包|按)\s*(小时|时|天|日|周|月|年)|(日|周|月|年)(?:租|付)"),
        {k: BillingUnit(v) for k, v in _CN_TIME.items()},
    ),
    (
        re.compile(
            rf"{_ASCII_WORD_START}({'|'.join(ADVERB_UNITS)}){_ASCII_WORD_END}", re.IGNORECASE
        ),
        ADVERB_UNITS,
    ),
    (
        re.compile(r"(?<![a-z])per\s+(hour|day|week|month|year)(?![a-z])", re.IGNORECASE),
        {
            "hour": BillingUnit.HOUR,
            "day": BillingUnit.DAY,
            "week": BillingUnit.WEEK,
            "month": BillingUnit.MONTH,
            "year": BillingUnit.YEAR,
        },
    ),
)
CONTEXT_BASIS_RES: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(r"每\s*(?:张)?(?:卡|gpu)|(?<![a-z])per\s+(?:gpu|card)(?![a-z])", re.IGNORECASE),
        "gpu",
    ),
    (
        re.compile(
            r"整机|每台|(?<![a-z])per\s+(?:instance|node|machine|server)(?![a-z])", re.IGNORECASE
        ),
        "instance",
    ),
)

# Where the text between two prices splits: what comes before the separator describes the
# price on the left, what comes after describes the price on the right.
GAP_SEPARATORS = ",;|，；、。\n("
LEADING_PAREN_RE = re.compile(r"\s*(?:\([^()]*\)|\[[^\[\]]*\])")
PLAIN_NUMBER_RE = re.compile(
    rf"^\s*(?:(?:from|starting at|starting from|低至|最低)\s*)?{NUMBER_RE}\s*(?:起)?\s*$",
    re.IGNORECASE | re.VERBOSE,
)
