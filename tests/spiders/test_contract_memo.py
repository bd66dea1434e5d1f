"""`Contract.gone` keeps each item's answer until the page's verdict: asking twice must give
the same answer, to the parser and to the verdict, whatever a caller does with the list."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from gpurent_core.providers import provider
from spiders.parsers.common import ParseContext
from spiders.parsers.contract import Contract, check_items
from spiders.providers.gpushare import parser as gpushare

CONTRACT = Contract(noun="machine", identity=("id",), price=("price",), stock=("free",))


class Extended(Contract):
    """A contract that adds to the inherited answer a path inside a list, which dotted paths
    do not enter (as GPUShare's does for its skuList)."""

    def gone(self, item: Mapping[str, Any]) -> list[str]:
        found = super().gone(item)
        if any("extra" not in entry for entry in item.get("opts", [])):
            found.append("opts.extra")
        return found


def test_asking_twice_gives_the_same_answer_even_when_the_first_list_was_changed() -> None:
    item = {"id": 1, "free": 2}
    first = CONTRACT.gone(item)
    assert first == ["price"]
    first.append("changed by a caller")
    assert CONTRACT.gone(item) == ["price"]


def test_a_subclass_adding_to_the_answer_does_not_add_twice() -> None:
    contract = Extended(noun="machine", identity=("id",), price=("price",), stock=("opts.extra",))
    items = [{"id": 1, "price": "1", "opts": [{}]}, {"id": 2, "price": "2", "opts": [{"extra": 1}]}]
    assert contract.gone(items[0]) == ["opts.extra"]
    assert contract.gone(items[0]) == ["opts.extra"]
    # One of two items lacks it: a partial page, not a layout error.
    check = check_items(items, contract)
    assert check.missing_fields == ["opts.extra"]
    assert check.layout_error is None


def test_the_verdict_forgets_the_page_so_a_changed_item_is_asked_again() -> None:
    item: dict[str, Any] = {"id": 1, "free": 0}
    assert check_items([item], CONTRACT).missing_fields == ["price"]
    item["price"] = "1.5"
    assert CONTRACT.gone(item) == []


def test_gpushare_one_machine_without_a_price_is_partial_not_a_layout_change() -> None:
    """The real case: GPUShare's contract adds the skuList paths to the inherited answer;
    the parser asks once per machine and the verdict again."""
    page_text = (provider("gpushare").recordings / "machine_list_page1.json").read_text(
        encoding="utf-8"
    )
    data = json.loads(page_text, parse_float=Decimal)
    machines = data["data"]["list"][:2]
    for sku in machines[0]["skuList"]:
        sku.pop("price", None)
    ctx = ParseContext(provider="gpushare", run_id="r1", observed_at=datetime.now(UTC))
    page = gpushare.parse_machine_list({"data": {"list": machines, "total": 2}}, ctx)
    assert page.layout_error is None
    assert gpushare.SKU_PRICE_PATH in page.missing_fields
    assert len(page.offers) == 1
