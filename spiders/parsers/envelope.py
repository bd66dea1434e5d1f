"""The wrapping around a provider's answer, read before its records.

Three things every JSON parser checks first, in the same words everywhere:

* the answer holds the list (or object) of records where the parser expects it; if not, the
  layout error shows what the answer has instead (`answer_keys`); `list_page` reads the
  plain case, an answer that is one list of records;
* an API that wraps every answer in a business code (`{"code": ..., "msg": ...}`) says
  success, a refused key or an error (`code_envelope`); a refused key or an API error is a
  failed request, never a layout change and never "sold out" (rules of truth 2 and 3); a
  code that is not a code at all (`[]`, `{}`, `true`) says none of these: a layout change;
* a page from such an API carries that verdict to the spider (`ApiPage`).
"""

from __future__ import annotations

from collections.abc import Callable, Container, Hashable
from dataclasses import dataclass
from typing import Any, Self

from spiders.parsers.common import PageResult, ParseContext, Record, renamed_fields
from spiders.parsers.contract import Contract, apply_check, check_items


def answer_keys(data: Any) -> list[Any] | str:
    """What a layout error shows of an unexpected answer: its first keys, or its type."""
    return sorted(data)[:8] if isinstance(data, dict) else type(data).__name__


def list_at(data: Any, key: str) -> list[Any] | None:
    """`data[key]` when the answer is an object holding a list there, else None."""
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, list) else None


def no_list(data: Any, key: str) -> str:
    """The layout error of an answer without its `key` list."""
    return f"no '{key}' list in the answer (got {answer_keys(data)})"


def list_page(
    data: Any,
    key: str,
    ctx: ParseContext,
    *,
    records: Callable[[Any, ParseContext], list[Record]],
    contract: Contract | None = None,
    core_keys: tuple[str, ...] = (),
    noun: str = "item",
) -> PageResult:
    """The page of an answer `{key: [item, ...]}`: the records of each item, and a layout
    error when the list is missing or no item carries a declared field (a renamed field).

    The fields are the `contract`'s (its verdict also names the paths gone from some
    items); `core_keys` is the older spelling of the same check, top-level keys only."""
    items = list_at(data, key)
    if items is None:
        return PageResult(layout_error=no_list(data, key))
    page = PageResult()
    for item in items:
        page.records.extend(records(item, ctx))
    if contract is not None:
        apply_check(page, check_items(items, contract))
    elif core_keys:
        page.layout_error = renamed_fields(items, core_keys, noun)
    return page


def listing_size(value: Any, *, least: int) -> int | None:
    """A page count or total of a paged listing (`data.max_page`, `data.total`): a whole
    number of at least `least`, else None (the spider then reads the first page only)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= least:
        return value
    return None


@dataclass(frozen=True)
class EnvelopeProblem:
    """Why an answer carries no data: not the expected envelope, a refused key, an API error."""

    layout_error: str | None = None
    auth_rejected: bool = False
    api_error: str | None = None


@dataclass
class ApiPage(PageResult):
    """A page of an API whose envelope may refuse the key or report an error instead of data."""

    auth_rejected: bool = False
    api_error: str | None = None
    """The API answered, but with an error (not a refused key): a failed request."""

    @classmethod
    def unanswered(cls, problem: EnvelopeProblem) -> Self:
        """The page of an answer whose envelope holds no data."""
        return cls(
            layout_error=problem.layout_error,
            auth_rejected=problem.auth_rejected,
            api_error=problem.api_error,
        )


def code_envelope(
    data: Any,
    *,
    code_key: str,
    ok: Any,
    message_key: str,
    auth_codes: Container[Any] = (),
) -> EnvelopeProblem | None:
    """A business-code envelope (`{"code": "Success", "msg": "", "data": ...}`): None when the
    code is `ok`; else a refused key (a code in `auth_codes`) or an API error with its message.
    """
    if not isinstance(data, dict) or code_key not in data:
        return EnvelopeProblem(layout_error=f"no '{code_key}' envelope in the answer")
    code = data.get(code_key)
    if not is_a_code(code):
        # `code: {}` says neither success nor error: the envelope changed shape.
        return EnvelopeProblem(
            layout_error=f"'{code_key}' of the envelope is not a code: {shown_code(code)}"
        )
    if is_code_in(code, auth_codes):
        return EnvelopeProblem(auth_rejected=True)
    if code != ok:
        return EnvelopeProblem(
            api_error=f"{code_key} {shown_code(code)}: {message_of(data, message_key)}"
        )
    return None


def is_a_code(code: Any) -> bool:
    """A business code is text or a whole number (never a bool, an object or a list)."""
    return isinstance(code, str | int) and not isinstance(code, bool)


def is_code_in(code: Any, codes: Container[Any]) -> bool:
    """`code in codes`, False for a value no set can hold (`[]`, `{}`): a retyped code is
    never an exception and never a refused key. A bool is never a numeric code (`True` is
    not the code 1)."""
    if isinstance(code, bool) or not isinstance(code, Hashable):
        return False
    try:
        return code in codes
    except TypeError:  # a hashable object whose own hash fails (a tuple holding a list)
        return False


def shown_code(code: Any) -> str:
    """A business code as a report shows it: its repr, cut short (a retyped code may be a
    whole object)."""
    text = repr(code)
    return text if len(text) <= 40 else f"{text[:37]}..."


def message_of(data: dict[str, Any], key: str) -> str:
    """The envelope's message, as text and cut short; a message that is not text is shown
    as its repr (it explains nothing, but says what came)."""
    message = data.get(key)
    if message is None:
        return ""
    text = message if isinstance(message, str) else repr(message)
    return text[:80]
