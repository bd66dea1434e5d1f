"""Property tests: every parser on mutated copies of its fixture inputs (rules of truth 1, 6, 9).

`parser_registry.parse(case)` turns a fixture case into a page, as its provider's entry says;
here the case's input is first mutated the way a provider's answer drifts: a key removed or
renamed (in one object, or everywhere), a value retyped, huge, negative or empty, the whole
answer replaced. Whatever the mutation:

* no exception escapes the parser, and every record is a valid feed line;
* a key removed or renamed never changes the stock of an offer that is still there: drift
  costs the item (quarantined) or the page (layout error), never a state (rule 9);
* a retyped value changes an offer's stock only to `unknown`, and says why on a quarantine
  line of that offer (rule 1: unreadable is unknown, never a state);
* an offer that vanished is accounted for: the page says layout_error, or a quarantine line
  more than before stands in for it (rule 6: never dropped silently).

HTML pages get the text-level analogue: a number replaced by garbage, a table cell removed.
"""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from json_doc import Path, key_paths, parent_of
from parser_registry import parse
from spider_fixture_cases import FIXTURE_PROVIDERS, RUN_ID, Case, cases

from gpurent_core.model import OfferRecord, QuarantineRecord, SkipRecord, parse_parser_record
from spiders.parsers.common import feed_dicts, load_json

PROVIDERS = sorted(FIXTURE_PROVIDERS)

HUGE = object()
"""Stands for the JSON number 1e400 (no Python float can hold it)."""
BAD_VALUES: tuple[Any, ...] = (
    {},
    [],
    "abc",
    "",
    True,
    None,
    -1,
    10**30,
    HUGE,
    "1e400",
    "-1",
    "NaN",
    Decimal("-0.5"),
)


@dataclass(frozen=True)
class MutatedCase(Case):
    """A fixture case whose input is `body` instead of the file (args and folder kept)."""

    body: bytes = b""

    def input_bytes(self) -> bytes:
        return self.body


# -- JSON documents -----------------------------------------------------------------


def to_json(value: Any) -> str:
    """JSON text with Decimals exact and HUGE as 1e400 (json.dumps knows neither)."""
    if value is HUGE:
        return "1e400"
    if isinstance(value, Decimal):
        return format(value, "f") if value.is_finite() else '"NaN"'
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(str(k))}:{to_json(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(to_json(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def is_map_entry(doc: Any, name: str) -> bool:
    """True when `name` is one entry of a map keyed by id (one place, holding an object or a
    list): renaming it is a changed listing, not a renamed field."""
    places = [path for path in key_paths(doc) if str(path[-1]) == name]
    return len(places) == 1 and isinstance(parent_of(doc, places[0])[places[0][-1]], dict | list)


def key_names(doc: Any) -> list[str]:
    return sorted({str(path[-1]) for path in key_paths(doc)})


def removed(doc: Any, path: Path) -> Any:
    out = copy.deepcopy(doc)
    del parent_of(out, path)[path[-1]]
    return out


def renamed(doc: Any, path: Path) -> Any:
    out = copy.deepcopy(doc)
    parent = parent_of(out, path)
    parent[f"{path[-1]}_renamed"] = parent.pop(path[-1])
    return out


def renamed_everywhere(doc: Any, name: str) -> Any:
    if isinstance(doc, dict):
        return {
            (f"{k}_renamed" if k == name else k): renamed_everywhere(v, name)
            for k, v in doc.items()
        }
    if isinstance(doc, list):
        return [renamed_everywhere(v, name) for v in doc]
    return doc


def replaced(doc: Any, path: Path, value: Any) -> Any:
    out = copy.deepcopy(doc)
    parent_of(out, path)[path[-1]] = value
    return out


# -- what a page says ------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    offers: dict[str, OfferRecord]
    quarantined_keys: list[str | None]
    layout_error: str | None
    refused: bool = False
    """The page is an API error or a refused key: a failed request, nothing to account for."""
    skipped_keys: tuple[str | None, ...] = ()
    """Items the page read and skipped (no offer gpurent ranks: a CPU-only count, say)."""

    @property
    def quarantined(self) -> int:
        return len(self.quarantined_keys)


def outcome(page: Any) -> Outcome:
    records = list(getattr(page, "records", []) or [])
    for line in feed_dicts(records):
        assert line["run_id"] == RUN_ID
        parse_parser_record(line)  # every record is a valid feed line, or a skip
    offers: dict[str, OfferRecord] = {}
    quarantined: list[str | None] = []
    skipped: list[str | None] = []
    for record in records:
        if isinstance(record, OfferRecord):
            offers[record.offer_key] = record
        elif isinstance(record, SkipRecord):
            skipped.append(record.offer_key)  # read, and no offer gpurent ranks
        else:
            assert isinstance(record, QuarantineRecord)
            quarantined.append(record.offer_key)
    refused = bool(getattr(page, "api_error", None) or getattr(page, "auth_rejected", False))
    return Outcome(
        offers, quarantined, getattr(page, "layout_error", None), refused, tuple(skipped)
    )


def stock(offer: OfferRecord) -> tuple[str, int | None]:
    return (offer.status.value, offer.available_count)


def assert_lost_offers_accounted(base: Outcome, mutated: Outcome, what: str) -> None:
    """Every offer of the original page that is gone now is named by a quarantine line, or the
    page says layout_error, or the mutation renamed it (as many offers as before)."""
    lost = [key for key in base.offers if key not in mutated.offers]
    if not lost or mutated.layout_error or mutated.refused:
        return
    if len(mutated.offers) >= len(base.offers):
        return
    # A quarantine line names an offer it could not read; a skip an item read as no offer
    # (a card count mutated to 0 is a CPU-only type: gone, in the provider's own words).
    named = {key for key in (*mutated.quarantined_keys, *mutated.skipped_keys) if key is not None}
    unnamed = [key for key in lost if not _named(key, named)]
    # A line the original page did not have (no key, or another key: the key itself was the
    # damage) stands for one lost offer.
    new_lines = Counter((*mutated.quarantined_keys, *mutated.skipped_keys)) - Counter(
        (*base.quarantined_keys, *base.skipped_keys)
    )
    assert len(unnamed) <= new_lines.total(), (
        f"{what}: offers {unnamed[:3]} vanished with no quarantine line"
    )


def _named(offer_key: str, quarantined: set[str]) -> bool:
    """The offer, or the item it came from (a machine whose key prefixes it), is quarantined."""
    return offer_key in quarantined or any(offer_key.startswith(f"{q}/") for q in quarantined)


def assert_drift_changes_no_state(
    base: Outcome, mutated: Outcome, what: str, *, whole_entry: bool = False
) -> None:
    """`whole_entry`: the key removed held a whole object or list at one place (an entry of
    a map keyed by id, say): what it held may go as a retired listing would, unaccounted."""
    for key, offer in mutated.offers.items():
        before = base.offers.get(key)
        if before is not None:
            assert stock(offer) == stock(before), (
                f"{what}: {key} stock {stock(before)} -> {stock(offer)} from a missing key"
            )
    if not whole_entry:
        assert_lost_offers_accounted(base, mutated, what)


def assert_retype_is_unknown_or_quarantined(base: Outcome, mutated: Outcome, what: str) -> None:
    for key, offer in mutated.offers.items():
        before = base.offers.get(key)
        if before is None or stock(offer) == stock(before):
            continue
        assert offer.status.value == "unknown", (
            f"{what}: {key} stock {stock(before)} -> {stock(offer)} from a retyped value"
        )
        assert key in mutated.quarantined_keys, f"{what}: {key} went unknown without a reason"
    assert_lost_offers_accounted(base, mutated, what)


# -- the cases ---------------------------------------------------------------------


def json_cases(provider: str) -> list[Case]:
    return [c for c in cases(provider) if c.source.suffix == ".json"]


def html_cases(provider: str) -> list[Case]:
    return [c for c in cases(provider) if c.is_html]


@cache
def baseline(case: Case) -> Outcome:
    return outcome(parse(case))


def mutated_case(case: Case, body: str) -> MutatedCase:
    return MutatedCase(case.provider, case.name, case.folder, body=body.encode("utf-8"))


def parse_mutated(case: Case, doc: Any) -> Outcome:
    return outcome(parse(mutated_case(case, to_json(doc))))


@st.composite
def json_mutation(draw: st.DrawFn, provider: str) -> tuple[Case, str, Any, str]:
    """(case, kind, mutated document, description); kind "entry" is a drift that removed or
    renamed one key holding a whole object or list."""
    case = draw(st.sampled_from(json_cases(provider)))
    doc = load_json(case.input_bytes())
    paths = key_paths(doc)
    kinds = ["root"] + (["remove", "rename", "rename_all", "retype"] * 3 if paths else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "root":
        value = draw(st.sampled_from([[], {}, "x", None, 0, [doc]]))
        return case, "retype", value, f"{case.name}: answer replaced by {value!r:.20}"
    if kind == "rename_all":
        name = draw(st.sampled_from(key_names(doc)))
        drift = "entry" if is_map_entry(doc, name) else "drift"
        return case, drift, renamed_everywhere(doc, name), f"{case.name}: '{name}' renamed"
    path = draw(st.sampled_from(paths))
    where = ".".join(str(p) for p in path)
    held = parent_of(doc, path)[path[-1]]
    drift = "entry" if isinstance(held, dict | list) else "drift"
    if kind == "remove":
        return case, drift, removed(doc, path), f"{case.name}: {where} removed"
    if kind == "rename":
        return case, drift, renamed(doc, path), f"{case.name}: {where} renamed"
    value = draw(st.sampled_from(BAD_VALUES))
    shown = "1e400" if value is HUGE else repr(value)
    # null is the provider speaking (its documented meaning may be a state: RunPod's sold out)
    kind = "null" if value is None else "retype"
    return case, kind, replaced(doc, path, value), f"{case.name}: {where} = {shown}"


MUTATION_SETTINGS = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,  # the same mutations on every machine and every run
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.mark.parametrize("provider", [p for p in PROVIDERS if json_cases(p)])
def test_json_parsers_survive_mutations(provider: str) -> None:
    @MUTATION_SETTINGS
    @given(json_mutation(provider))
    def check(mutation: tuple[Case, str, Any, str]) -> None:
        case, kind, doc, what = mutation
        base = baseline(case)
        result = parse_mutated(case, doc)
        if kind in ("drift", "entry"):
            assert_drift_changes_no_state(base, result, what, whole_entry=kind == "entry")
        elif kind == "null":
            assert_lost_offers_accounted(base, result, what)
        else:
            assert_retype_is_unknown_or_quarantined(base, result, what)

    check()


@pytest.mark.parametrize("provider", [p for p in PROVIDERS if json_cases(p)])
def test_every_key_renamed_everywhere_changes_no_state(provider: str) -> None:
    """Exhaustive over key names: the rename of any one field, in every object that has it."""
    for case in json_cases(provider):
        doc = load_json(case.input_bytes())
        base = baseline(case)
        for name in key_names(doc):
            what = f"{case.name}: '{name}' renamed everywhere"
            whole_entry = is_map_entry(doc, name)
            result = parse_mutated(case, renamed_everywhere(doc, name))
            assert_drift_changes_no_state(base, result, what, whole_entry=whole_entry)


# -- HTML pages ------------------------------------------------------------------

_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_CELL = re.compile(r"<(td|li|span|div)\b[^>]*>[^<]*</\1>", re.IGNORECASE)
HTML_BAD_TOKENS = ("-1", "1e400", "abc", "", "1..5", "０", "999999999999999999999")


@st.composite
def html_mutation(draw: st.DrawFn, provider: str) -> tuple[Case, str, str]:
    case = draw(st.sampled_from(html_cases(provider)))
    text = case.input_bytes().decode("utf-8")
    numbers = list(_NUMBER.finditer(text))
    cells = list(_CELL.finditer(text))
    kinds = [k for k, pool in (("number", numbers), ("cell", cells)) if pool] or ["truncate"]
    kind = draw(st.sampled_from(kinds))
    if kind == "number":
        match = draw(st.sampled_from(numbers))
        token = draw(st.sampled_from(HTML_BAD_TOKENS))
        body = text[: match.start()] + token + text[match.end() :]
        return case, body, f"{case.name}: {match.group()!r} at {match.start()} -> {token!r}"
    if kind == "cell":
        match = draw(st.sampled_from(cells))
        return case, text[: match.start()] + text[match.end() :], f"{case.name}: cell removed"
    cut = draw(st.integers(min_value=0, max_value=len(text)))
    return case, text[:cut], f"{case.name}: truncated at {cut}"


@pytest.mark.parametrize("provider", [p for p in PROVIDERS if html_cases(p)])
def test_html_parsers_survive_mutations(provider: str) -> None:
    @MUTATION_SETTINGS
    @given(html_mutation(provider))
    def check(mutation: tuple[Case, str, str]) -> None:
        case, body, what = mutation
        result = outcome(parse(mutated_case(case, body)))
        assert_lost_offers_accounted(baseline(case), result, what)

    check()
