"""Published price text -> amount, currency, billing unit, basis and kind.

Handles what provider pages and APIs actually print, in Chinese and English:
"¥1.98/时", "1.98元/小时", "$2.49 / GPU / hr", "per GPU per hour", "¥0.01/GB/天",
"会员¥1.88/时", "原价 ¥2.50 现价 ¥1.98/小时", "$0.79/hr (was $1.09)", "¥1.92/时起",
full-width digits, thousands separators, and bare numbers with a default currency/unit.

It never guesses: a price without a currency (and no default) or without a time unit
(and no default), a range, or several prices of the same kind that disagree all raise
PriceParseError, which the spider turns into a quarantine row (rule of truth 6).
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation

from gpurent_core.model import BillingUnit, PriceKind
from gpurent_core.normalize import price_words as w
from gpurent_core.normalize.minor_units import (
    AUTODL_PRICE_SCALE,
    CENTS,
    KNOWN_MINOR_UNIT_FIELDS,
    LAMBDA_PRICE_SCALE,
    MATPOOL_PRICE_SCALE,
    MILLI,
    MILLICENT,
    PPIO_PRICE_SCALE,
    AmountError,
    MinorUnitField,
    checked_amount,
    from_minor_units,
    parse_minor_unit_field,
    plain_decimal,
)

__all__ = [
    "AUTODL_PRICE_SCALE",
    "CENTS",
    "KNOWN_MINOR_UNIT_FIELDS",
    "LAMBDA_PRICE_SCALE",
    "MATPOOL_PRICE_SCALE",
    "MILLI",
    "MILLICENT",
    "PPIO_PRICE_SCALE",
    "AmountError",
    "MinorUnitField",
    "ParsedPrice",
    "PriceParseError",
    "from_minor_units",
    "normalize_text",
    "parse_minor_unit_field",
    "parse_price",
    "parse_prices",
]

# When a text holds prices of several kinds, the one parse_price returns is the first kind
# present in this order: the pay-as-you-go list price is what an offer "costs".
_KIND_PREFERENCE = (PriceKind.ON_DEMAND, PriceKind.COMMITMENT, PriceKind.SPOT, PriceKind.MEMBER)


class PriceParseError(ValueError):
    """A price text that cannot be read without guessing; ``reason`` says why."""

    def __init__(self, text: str, reason: str) -> None:
        super().__init__(f"{reason}: {text!r}")
        self.text = text
        self.reason = reason


@dataclass(frozen=True, slots=True)
class ParsedPrice:
    """One price read from text."""

    amount: Decimal
    currency: str
    """ISO 4217 code: CNY, USD, EUR, GBP, HKD."""
    unit: BillingUnit
    basis: str | None
    """"gpu", "instance", "gb" (storage/traffic), "tb", or None when the text does not say."""
    kind: PriceKind = PriceKind.ON_DEMAND
    starting_at: bool = False
    """The text says this is a lowest price ("起", "from", "starting at", "低至")."""
    former: bool = False
    """A crossed-out price the text says no longer applies ("原价 ¥2.50 现价 ¥1.98", "was $1.09").
    Not set when the only other prices are member prices: then 原价 is the non-member price."""


@dataclass(slots=True)
class _Atom:
    """A number found in the text, with what is written right around it."""

    start: int
    end: int
    amount: Decimal
    currency: str | None = None
    unit: BillingUnit | None = None
    basis: str | None = None
    has_clause: bool = False
    starting_at: bool = False
    range_follows: bool = False
    context: str = ""
    problem: str | None = None
    """Why this number cannot be a price ("divided by zero", "malformed number '1..5'")."""
    ambiguous_group: bool = False
    written: str = ""
    """Written "1,234" or "1.234": a grouping or a decimal mark, depending on the currency."""

    @property
    def priced(self) -> bool:
        return self.currency is not None or self.has_clause


def normalize_text(text: str) -> str:
    """NFKC (full-width ￥１．９８／时 -> ¥1.98/时, NBSP -> space), trimmed."""
    return unicodedata.normalize("NFKC", text).strip()


def _to_decimal(raw: str) -> Decimal:
    """One of NUMBER_RE's spellings as a Decimal, keeping the written decimals (2.20 stays 2.20)."""
    for mark in " '’_":
        raw = raw.replace(mark, "")
    if "," in raw and "." in raw:
        # 1,234.56 (comma groups) or 1.234,56 (dot groups): the last mark is the decimal one.
        if raw.rfind(",") > raw.rfind("."):
            raw = raw.replace(".", "").replace(",", ".")
        else:
            raw = raw.replace(",", "")
    elif "," in raw:
        whole, _, frac = raw.rpartition(",")
        # Three digits after every comma is grouping ("4,999", "1,23,456"); one or two is a
        # decimal comma, and so is any comma after a lone 0 ("0,234": no group starts with 0).
        grouping = len(frac) == 3 and whole != "0"
        raw = raw.replace(",", "") if grouping else f"{whole.replace(',', '')}.{frac}"
    try:
        return Decimal(raw)
    except InvalidOperation:
        raise AmountError(f"not a number: {raw!r}") from None


def _read_currency(text: str, pre: str | None, pos: int) -> tuple[str | None, int, int]:
    """Currency from the prefix and/or suffix; returns (code, new pos, cents divisor)."""
    prefix = w.CURRENCY_PREFIXES[pre.lower()] if pre else None
    suffix: str | None = None
    divisor = 1
    match = w.SUFFIX_RE.match(text, pos)
    if match:
        if match["word"]:
            suffix = w.CURRENCY_SUFFIXES[match["word"].lower()]
        elif match["symbol"] == w.CENT_SUFFIX:
            suffix, divisor = "USD", 100
        else:
            suffix = w.SYMBOL_SUFFIXES[match["symbol"]]
        pos = match.end()
    if prefix and suffix and prefix != suffix:
        raise PriceParseError(text, f"two currencies on one price ({prefix} and {suffix})")
    return prefix or suffix, pos, divisor


def _read_clause(text: str, pos: int, atom: _Atom) -> int:
    """The unit clause after a number: "/GPU/hr", "per GB per month", "每卡每小时", "hourly"."""
    adverb = w.ADVERB_RE.match(text, pos)
    if adverb:
        atom.unit = w.ADVERB_UNITS[adverb["adv"].lower()]
        atom.has_clause = True
        return adverb.end()
    sep = w.FIRST_SEP_RE.match(text, pos)
    last_was_basis = False
    while sep:
        token = w.TOKEN_RE.match(text, sep.end())
        if token is None:
            break
        word = token["tok"].lower()
        if word in w.AMBIGUOUS_TIME_WORDS:
            raise PriceParseError(text, f"ambiguous unit {token['tok']!r} (minute or month?)")
        if word in w.BASIS_WORDS:
            if atom.basis is not None:
                break
            atom.basis = w.BASIS_WORDS[word]
            last_was_basis = True
        else:
            if atom.unit is not None:
                raise PriceParseError(text, "two time units on one price")
            atom.unit = w.TIME_WORDS[word]
            last_was_basis = False
        atom.has_clause = True
        pos = token.end()
        sep = (w.AFTER_BASIS_SEP_RE if last_was_basis else w.AFTER_TIME_SEP_RE).match(text, pos)
    return pos


def _check_currency_marks(text: str, start: int, end: int) -> None:
    """Refuse a number written beside a currency gpurent does not read ("₹1,23,456",
    "JPY 100/h"): taking the default currency for it would state a false price."""
    before = text[:start].rstrip()[-1:]
    after = text[end:].lstrip()[:1]
    for mark in (before, after):
        if mark and unicodedata.category(mark) == "Sc" and mark not in w.KNOWN_SYMBOLS:
            raise PriceParseError(text, f"currency symbol {mark!r} is not one gpurent reads")
    code = w.UNREAD_CODE_BEFORE_RE.search(text, 0, start) or w.UNREAD_CODE_AFTER_RE.match(text, end)
    if code:
        raise PriceParseError(text, f"currency {code.group().strip()} is not one gpurent reads")


def _read_amount(text: str, match: re.Match[str]) -> tuple[Decimal, int, str | None]:
    """The number of an ATOM_RE match with its multiplier: (amount, end, problem).

    A number that runs on ("1..5", "1.2.3", "1e400") gets a problem and amount 0: it is
    refused if used as a price, and never read as its first part."""
    tail = w.MALFORMED_TAIL_RE.match(text, match.end())
    if tail:
        written = text[match.start("num") : tail.end()]
        kind = "exponent notation" if "e" in written.lower() else "malformed number"
        return Decimal(0), tail.end(), f"{kind} {written!r}"
    amount = _to_decimal(match["num"])
    pos = match.end()
    mult = w.MULTIPLIER_RE.match(text, pos)
    if mult:
        amount = plain_decimal(amount * w.MULTIPLIERS[(mult["mult"] or mult["k"]).lower()])
        pos = mult.end()
    return amount, pos, None


def _denominator_problem(text: str, pos: int, atom: _Atom) -> int:
    """A count after "/" ("¥3/0h", "¥10/8卡/时"): noted as the atom's problem, skipped."""
    den = w.DENOMINATOR_RE.match(text, pos)
    if den is None:
        return pos
    try:
        zero = Decimal(den["den"].replace(",", "")) == 0
    except InvalidOperation:
        zero = False
    problem = "divided by zero" if zero else f"a price per {den['den']} units, not per unit"
    atom.problem = atom.problem or problem
    return den.end()


def _read_suffixes(text: str, pos: int, atom: _Atom) -> int:
    """Range, "起" and the unit clause after the number and its currency."""
    if w.RANGE_RE.match(text, pos):
        atom.range_follows = True
    starting = w.STARTING_SUFFIX_RE.match(text, pos)
    if starting:
        atom.starting_at = True
        pos = starting.end()
    pos = _read_clause(text, pos, atom)
    pos = _denominator_problem(text, pos, atom)
    if w.RANGE_RE.match(text, pos):
        atom.range_follows = True
    starting = w.STARTING_SUFFIX_RE.match(text, pos)
    if starting:
        atom.starting_at = True
        pos = starting.end()
    return pos


def _read_atom(text: str, match: re.Match[str]) -> _Atom:
    start = match.start()
    amount, pos, problem = _read_amount(text, match)
    _check_currency_marks(text, start, pos)
    currency, pos, divisor = _read_currency(text, match["pre"], pos)
    if divisor != 1 and problem is None:
        amount = from_minor_units(amount, divisor)
    atom = _Atom(start=start, end=pos, amount=amount, currency=currency, problem=problem)
    atom.written = match["num"]
    atom.ambiguous_group = bool(w.AMBIGUOUS_GROUP_RE.fullmatch(match["num"])) and not problem
    pos = _denominator_problem(text, pos, atom)
    atom.end = _read_suffixes(text, pos, atom)
    if atom.priced and w.NEGATIVE_BEFORE_RE.search(text, 0, start):
        raise PriceParseError(text, "negative price")
    return atom


def _find_atoms(text: str) -> list[_Atom]:
    atoms: list[_Atom] = []
    skip_to = 0
    for match in w.ATOM_RE.finditer(text):
        start = match.start()
        if start < skip_to:
            continue  # inside a number already read (or refused) whole
        if (
            match["pre"] is None
            and start > 0
            and text[start - 1].isascii()
            and text[start - 1].isalpha()
        ):
            # Part of a name: A100, H800, RTX4090, v1.2.3.
            tail = w.MALFORMED_TAIL_RE.match(text, match.end())
            skip_to = tail.end() if tail else match.end()
            continue
        atom = _read_atom(text, match)
        skip_to = atom.end
        atoms.append(atom)
    return atoms


def _split_gap(gap: str) -> tuple[str, str]:
    """Text between two prices -> (words about the left one, words about the right one)."""
    left = ""
    paren = w.LEADING_PAREN_RE.match(gap)
    if paren:
        left, gap = paren.group(0), gap[paren.end() :]
    cut = min((i for i in (gap.find(c) for c in w.GAP_SEPARATORS) if i >= 0), default=-1)
    if cut < 0:
        return left, gap
    return left + gap[:cut], gap[cut + 1 :]


def _attach_context(text: str, atoms: list[_Atom]) -> None:
    """Give each priced atom the words that describe it (labels before, notes after)."""
    if not atoms:
        return
    pre = text[: atoms[0].start]
    for left, right in zip(atoms, [*atoms[1:], None], strict=True):
        gap = text[left.end : right.start] if right else text[left.end :]
        post, next_pre = _split_gap(gap) if right else (gap, "")
        left.context = f"{pre} \n {post}"
        pre = next_pre


def _context_unit(context: str) -> BillingUnit | None:
    found: set[BillingUnit] = set()
    for pattern, table in w.CONTEXT_UNIT_RES:
        for match in pattern.finditer(context):
            word = next(g for g in match.groups() if g)
            found.add(table[word.lower()])
    return found.pop() if len(found) == 1 else None


def _context_basis(context: str) -> str | None:
    found = {basis for pattern, basis in w.CONTEXT_BASIS_RES if pattern.search(context)}
    return found.pop() if len(found) == 1 else None


def _kind(context: str) -> PriceKind:
    # A price marked both ways ("会员包月") is classed by the stronger condition:
    # interruptible beats prepaid beats membership.
    if w.SPOT_RE.search(context):
        return PriceKind.SPOT
    if w.COMMITMENT_RE.search(context):
        return PriceKind.COMMITMENT
    if w.MEMBER_RE.search(context):
        return PriceKind.MEMBER
    return PriceKind.ON_DEMAND


def _shared(values: list[str | None]) -> str | None:
    present = {v for v in values if v is not None}
    return present.pop() if len(present) == 1 else None


def _check_currency(code: str | None) -> str | None:
    if code is None:
        return None
    code = code.strip().upper()
    if not re.fullmatch(r"[A-Z]{3}", code):
        raise ValueError(f"default_currency must be an ISO 4217 code, got {code!r}")
    return code


def _priced_atoms(original: str, text: str) -> list[_Atom]:
    """The numbers of ``text`` that are prices, each checked; PriceParseError says why not."""
    try:
        all_atoms = _find_atoms(text)
    except (PriceParseError, AmountError) as exc:
        # Report the caller's text, not its NFKC form.
        raise PriceParseError(original, exc.reason) from None
    if not all_atoms:
        finite = w.NOT_FINITE_RE.search(text) is None
        raise PriceParseError(
            original, "no number in price text" if finite else "not a finite number"
        )
    for first, second in itertools.pairwise(all_atoms):
        if first.range_follows and (first.priced or second.priced):
            raise PriceParseError(original, "a price range, not one price")
    atoms = [a for a in all_atoms if a.priced]
    if not atoms:
        if len(all_atoms) == 1 and all_atoms[0].problem:
            raise PriceParseError(original, all_atoms[0].problem)
        plain = w.PLAIN_NUMBER_RE.match(text)
        if plain is None or len(all_atoms) != 1:
            raise PriceParseError(original, "no currency or unit next to any number")
        atoms = all_atoms
        atoms[0].starting_at = atoms[0].starting_at or bool(w.STARTING_RE.search(text))
    for atom in atoms:
        if atom.problem:
            raise PriceParseError(original, atom.problem)
    return atoms


def _amount(original: str, atom: _Atom, code: str) -> Decimal:
    """The atom's amount once its currency is known, within what a price can be."""
    if atom.ambiguous_group and code in w.DECIMAL_COMMA_CURRENCIES:
        raise PriceParseError(
            original, f"{atom.written!r} is a thousands group or a decimal in {code}: ambiguous"
        )
    try:
        return checked_amount(atom.amount)
    except AmountError as exc:
        raise PriceParseError(original, exc.reason) from None


@dataclass(frozen=True, slots=True)
class _Candidate:
    price: ParsedPrice
    current: bool


def _candidates(
    original: str, default_currency: str | None, default_unit: BillingUnit | None
) -> list[_Candidate]:
    if not original or not original.strip():
        raise PriceParseError(original, "empty price text")
    text = normalize_text(original)
    currency_default = _check_currency(default_currency)
    unit_default = BillingUnit(default_unit) if default_unit is not None else None

    try:
        field = parse_minor_unit_field(text)
    except AmountError as exc:
        raise PriceParseError(original, exc.reason) from None
    if field is not None:
        amount, meaning = field
        price = ParsedPrice(amount, meaning.currency, meaning.unit, meaning.basis)
        return [_Candidate(price, current=False)]

    atoms = _priced_atoms(original, text)
    _attach_context(text, atoms)

    for atom in atoms:
        if atom.unit is None:
            atom.unit = _context_unit(atom.context)
        if atom.basis is None:
            atom.basis = _context_basis(atom.context)
    # A price written without its currency or unit beside one written in full shares them:
    # "原价 ¥2.50 现价 ¥1.98/小时", "$0.79/hr (was 1.09)".
    currency = _shared([a.currency for a in atoms])
    unit = _shared([a.unit for a in atoms])
    basis = _shared([a.basis for a in atoms])

    candidates: list[_Candidate] = []
    for atom in atoms:
        code = atom.currency or currency or currency_default
        if code is None:
            raise PriceParseError(original, "no currency (and no default currency given)")
        billing = atom.unit or (BillingUnit(unit) if unit else None) or unit_default
        if billing is None:
            if atom.basis in ("gb", "tb"):
                raise PriceParseError(
                    original, "priced per volume with no time unit (a traffic fee?)"
                )
            raise PriceParseError(original, "no billing unit (and no default unit given)")
        price = ParsedPrice(
            amount=_amount(original, atom, code),
            currency=code,
            unit=billing,
            basis=atom.basis if atom.has_clause else (atom.basis or basis),
            kind=_kind(atom.context),
            starting_at=atom.starting_at or bool(w.STARTING_RE.search(atom.context)),
            former=bool(w.FORMER_RE.search(atom.context)),
        )
        candidates.append(_Candidate(price, current=bool(w.CURRENT_RE.search(atom.context))))

    # 原价 beside a member price is the non-member price, still valid: it only stops
    # applying when the text shows a lower price that everyone pays.
    standing = [c for c in candidates if not c.price.former]
    if standing and all(c.price.kind is PriceKind.MEMBER for c in standing):
        candidates = [_Candidate(replace(c.price, former=False), c.current) for c in candidates]
    return candidates


def parse_prices(
    text: str, *, default_currency: str | None = None, default_unit: BillingUnit | None = None
) -> list[ParsedPrice]:
    """Every price in ``text``, in reading order, each with its kind and ``former`` flag.

    Raises PriceParseError when there is none, or when one cannot be completed.
    """
    return [c.price for c in _candidates(text, default_currency, default_unit)]


def parse_price(
    text: str, *, default_currency: str | None = None, default_unit: BillingUnit | None = None
) -> ParsedPrice:
    """The price an offer costs, read from ``text``.

    Among several prices: crossed-out ones (``former``) are skipped, then the first kind
    present among on_demand, commitment, spot, member wins, so "¥1.98/时 会员¥1.88/时"
    gives 1.98 and "$0.79/hr (was $1.09)" gives 0.79. Two different prices of that kind
    raise, unless exactly one is marked current ("现价", "now", "sale").
    ``default_currency`` (ISO code) and ``default_unit`` fill what the text leaves out.
    """
    candidates = _candidates(text, default_currency, default_unit)
    standing = [c for c in candidates if not c.price.former] or candidates
    kind = next(k for k in _KIND_PREFERENCE if any(c.price.kind is k for c in standing))
    group = [c for c in standing if c.price.kind is kind]
    distinct = {(c.price.amount, c.price.currency, c.price.unit, c.price.basis) for c in group}
    if len(distinct) == 1:
        return group[0].price
    current = [c for c in group if c.current]
    if len(current) == 1:
        return current[0].price
    shown = ", ".join(f"{c.price.amount} {c.price.currency}/{c.price.unit.value}" for c in group)
    raise PriceParseError(text, f"several {kind.value} prices ({shown}); use parse_prices")
