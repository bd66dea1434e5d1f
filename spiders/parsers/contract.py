"""Response contracts: the fields a parser depends on, declared, and checked on every item.

Rule of truth 9 (never `ok` while blind). A parser reads a few fields of each item for the
offer's identity, its price and its stock. When a provider renames or drops one of them the
parser must not carry on as if the provider had said "nothing": a missing stock key read as
"not in stock" turns a rename into a sold-out market and then into false restock alerts.

So each response shape declares its `Contract`: the dotted paths of the fields read, by role.
Before an item is built the contract is checked:

* a key that is **gone** (the object is there, the key is not) is drift. The item is
  quarantined with `missing_field` and the path, and its last good state stays visible as
  stale in the warehouse; when no item of the page carries the path, the page says
  `layout_error` (the run ends `layout_changed`, or `partial` when other pages parsed);
* a key that is present with `null` is the provider speaking: the parser reads it with the
  provider's documented meaning (RunPod's null stock is "none free");
* a value of the wrong type is not checked here: the parser's readers refuse it as an
  `invalid_value` of that item.

A path may offer alternatives, `"securePrice|uninterruptablePrice"`: the contract holds when
one of them is present. A path whose parent object is null (or absent, with the parent itself
optional) is not checked further: `"lowestPrice.stockStatus"` holds when `lowestPrice` is
null, since then the provider said null one level up. Mark a parent optional with a `?`
(`"lowestPrice?.stockStatus"`) when the provider documents omitting it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from spiders.parsers.common import (
    MISSING_FIELD,
    PageResult,
    ParseContext,
    Record,
    guarded,
    make_quarantine,
    not_an_object,
)

ROLES = ("identity", "price", "stock")
_MEMO_ITEMS = 10_000
"""Answers `Contract.gone` keeps at most: more than one page of the largest listings."""


@dataclass(frozen=True)
class Contract:
    """The fields one response shape must carry in each item, by what they are read for."""

    noun: str
    """What one item is, for messages ("machine", "GPU type")."""
    identity: tuple[str, ...] = ()
    price: tuple[str, ...] = ()
    stock: tuple[str, ...] = ()

    @property
    def paths(self) -> tuple[str, ...]:
        return (*self.identity, *self.price, *self.stock)

    def gone(self, item: Mapping[str, Any]) -> list[str]:
        """The declared paths whose key is gone from `item` (drift), in declaration order.

        Each item is asked twice, once when it is built (`contracted`) and once for the
        page's verdict (`check_items`), so the answer is kept until that verdict: the memo
        holds the item itself, so its id cannot be reused while the entry lives. Each call
        gets its own list, so a caller may add to it."""
        memo = self._memo
        seen = memo.get(id(item))
        if seen is not None and seen[0] is item:
            return list(seen[1])
        found = self.gone_paths(item)
        if len(memo) >= _MEMO_ITEMS:  # a parser that never asks for the verdict
            memo.clear()
        memo[id(item)] = (item, tuple(found))
        return found

    def gone_paths(self, item: Mapping[str, Any]) -> list[str]:
        """What `gone` answers, worked out (not kept): a shape whose paths a dotted walk
        cannot express adds its own checks here, and they are kept with the rest."""
        return [
            path
            for path, alternatives in self._walks
            if not any(_present(item, parts) for parts in alternatives)
        ]

    def forget(self) -> None:
        """Drop the kept answers (the page's verdict is taken)."""
        self._memo.clear()

    @cached_property
    def _memo(self) -> dict[int, tuple[Mapping[str, Any], tuple[str, ...]]]:
        return {}

    @cached_property
    def _walks(self) -> tuple[tuple[str, tuple[tuple[tuple[str, bool], ...], ...]], ...]:
        # Each path split once (`a.b?|c` -> ((a, False), (b, True)), ((c, False),)), the
        # optional mark read once too: `gone` runs for every item of every page.
        return tuple(
            (path, tuple(tuple(_step(part) for part in alt.split(".")) for alt in path.split("|")))
            for path in self.paths
        )

    def role_of(self, path: str) -> str:
        for role in ROLES:
            if path in getattr(self, role):
                return role
        raise KeyError(path)


def _step(part: str) -> tuple[str, bool]:
    """One key of a dotted path and whether the provider may leave it out (`key?`)."""
    return part.rstrip("?"), part.endswith("?")


def _present(value: Any, steps: Sequence[tuple[str, bool]]) -> bool:
    """True unless a dict on the way lacks the next key (a null or non-object stops the
    walk: the provider said null there, or a retyped value the reader will refuse)."""
    for key, optional in steps:
        # `type is dict` first: decoded JSON is plain dicts, and the ABC check is slow.
        if type(value) is not dict and not isinstance(value, Mapping):
            return True
        if key not in value:
            return optional
        value = value[key]
    return True


@dataclass
class ContractCheck:
    """The verdict of a contract over one page's items."""

    layout_error: str | None = None
    missing_fields: list[str] = field(default_factory=list)
    """Paths gone from at least one item (all of them: the layout error names them)."""


def check_items(items: Iterable[Any], contract: Contract) -> ContractCheck:
    """The paths gone from every object item (a layout error) or from some (a partial page)."""
    dicts = [item for item in items if isinstance(item, Mapping)]
    if not dicts:
        return ContractCheck()
    gone_counts = {path: 0 for path in contract.paths}
    for item in dicts:
        for path in contract.gone(item):
            gone_counts[path] += 1
    contract.forget()
    missing = [path for path, n in gone_counts.items() if n]
    everywhere = [path for path, n in gone_counts.items() if n == len(dicts)]
    error = None
    if everywhere:
        named = ", ".join(f"{p} ({contract.role_of(p)})" for p in everywhere)
        error = f"no {contract.noun} carries {named}: field renamed or removed"
    return ContractCheck(layout_error=error, missing_fields=missing)


def drift_quarantine(
    ctx: ParseContext, item: Any, gone: Sequence[str], *, offer_key: str | None
) -> Record:
    """The quarantine line of an item whose declared fields are gone."""
    return make_quarantine(
        ctx,
        reason=f"{MISSING_FIELD}: key gone: {', '.join(gone)}",
        field=gone[0],
        raw=item,
        offer_key=offer_key,
    )


def contracted(
    ctx: ParseContext,
    item: Any,
    contract: Contract,
    *,
    offer_key: Callable[[Mapping[str, Any]], str | None] | str | None,
    build: Callable[[], list[Record]],
) -> list[Record]:
    """One item's records: quarantined when it is not an object or lost a declared field,
    else `build()` with every failure of that item isolated to it (`guarded`)."""
    if not isinstance(item, Mapping):
        return not_an_object(ctx, item)
    key = offer_key(item) if callable(offer_key) else offer_key
    gone = contract.gone(item)
    if gone:
        return [drift_quarantine(ctx, item, gone, offer_key=key)]
    return guarded(ctx, offer_key=key, raw=item, build=build)


def contract_page(
    items: Sequence[Any],
    contract: Contract,
    records: Callable[[Any], list[Record]],
    page: PageResult | None = None,
) -> PageResult:
    """`page` (a new PageResult by default) with the records of every item and the
    contract's verdict over them."""
    result = page if page is not None else PageResult()
    for item in items:
        result.records.extend(records(item))
    apply_check(result, check_items(items, contract))
    return result


def apply_check(page: PageResult, check: ContractCheck) -> None:
    """Merge a contract verdict into a page (a layout error already there is kept first)."""
    for path in check.missing_fields:
        if path not in page.missing_fields:
            page.missing_fields.append(path)
    if check.layout_error is not None:
        page.layout_error = (
            check.layout_error
            if page.layout_error is None
            else f"{page.layout_error}; {check.layout_error}"
        )
