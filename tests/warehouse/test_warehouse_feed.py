"""read_feed: every line is validated; bad ones become quarantine rows with their reason."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from wh_kit import FeedKit

from gpurent_core.model import StockStatus
from warehouse.feed import DUPLICATE_REASON, FeedBatch, read_feed


def offer_line(kit: FeedKit, **changes: Any) -> str:
    """An offer line as JSON text with raw JSON values patched in (bypassing the model)."""
    data = kit.offer(kit.run(1)).model_dump(mode="json")
    data.update(changes)
    return json.dumps(data)


def test_a_clean_feed_becomes_typed_frames(kit: FeedKit) -> None:
    run = kit.run(1)
    path = kit.write("clean", [kit.offer(run, "a"), kit.offer(run, "b", fees=(), plans=())])
    batch = read_feed(path, provider="acme", run_id="run-1")
    assert batch.offers["offer_key"].to_list() == ["a", "b"]
    assert batch.offers.schema["price"] == pl.Decimal(18, 8)
    assert batch.offers.schema["observed_at"] == pl.Datetime("us", "UTC")
    assert batch.fees.schema["amount"] == pl.Decimal(18, 10)
    assert batch.fees.select("offer_key", "seq").rows() == [("a", 0), ("a", 1)]
    assert batch.plans.select("offer_key", "seq").rows() == [("a", 0)]
    assert batch.fees["amount"].to_list() == [Decimal("0.0001369863"), Decimal("0.05")]
    assert batch.quarantine.is_empty()
    assert batch.lines == 2
    assert batch.sha256 is not None and len(batch.sha256) == 64


BAD_LINES: list[tuple[str, Any, str, str | None]] = [
    # (case, line or patch, reason fragment, field)
    ("truncated", '{"kind": "offer", "provider": "acme", "offer_k', "invalid JSON", None),
    ("not an object", "[1, 2, 3]", "not a JSON object", None),
    ("NaN", '{"kind": "offer", "price": NaN}', "invalid JSON", None),
    ("negative price", {"price": "-0.01"}, "greater than or equal to 0", "price"),
    ("unparseable price", {"price": "¥1.2/时"}, "price", "price"),
    ("unknown status", {"status": "maybe"}, "in_stock", "status"),
    ("unknown billing unit", {"billing_unit": "fortnight"}, "billing_unit", "billing_unit"),
    ("missing gpu_model", {"gpu_model": None}, "gpu_model", "gpu_model"),
    ("naive time", {"observed_at": "2026-11-01T08:00:00"}, "timezone-aware", "observed_at"),
    ("extra field", {"colour": "green"}, "colour", "colour"),
    ("price too large", {"price": "12345678901"}, "out of range for DECIMAL(18,8)", "price"),
    ("vram overflow", {"gpu_vram_gb": 2**40}, "out of range", "gpu_vram_gb"),
]


@pytest.mark.parametrize(
    ("line", "fragment", "field"),
    [case[1:] for case in BAD_LINES],
    ids=[case[0] for case in BAD_LINES],
)
def test_a_bad_line_is_quarantined_and_the_rest_loads(
    kit: FeedKit, line: Any, fragment: str, field: str | None
) -> None:
    run = kit.run(1)
    bad = line if isinstance(line, str) else offer_line(kit, offer_key="bad", **line)
    path = kit.write("mixed", [kit.offer(run, "before"), bad, kit.offer(run, "after")])
    batch = read_feed(path, provider="acme", run_id="run-1")
    assert batch.offers["offer_key"].to_list() == ["before", "after"]
    assert set(batch.fees["offer_key"]) == {"before", "after"}
    row = batch.quarantine.row(0, named=True)
    assert batch.quarantine.height == 1
    assert fragment in row["reason"]
    assert row["field"] == field
    assert row["seq"] == 2  # the line number in the feed
    assert row["raw"] == bad  # the line as the spider wrote it
    assert (row["run_id"], row["provider"]) == ("run-1", "acme")


def test_a_rejected_offer_keeps_its_key_and_time_when_readable(kit: FeedKit) -> None:
    path = kit.write("one", [offer_line(kit, offer_key="x9", price="-3")])
    row = read_feed(path).quarantine.row(0, named=True)
    assert row["offer_key"] == "x9"
    assert row["observed_at"] == kit.offer(kit.run(1)).observed_at


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"plans": [{"price": "-1", "currency": "USD", "billing_unit": "day",
                     "price_basis": "gpu", "price_kind": "commitment"}]}, "plans.0.price"),
        ({"fees": [{"fee_type": "egress", "amount": "-0.01", "currency": "USD",
                    "basis": "gb"}]}, "fees.0.amount"),
        ({"fees": [{"fee_type": "egress", "amount": "100000000", "currency": "USD",
                    "basis": "gb"}]}, "fees.0.amount"),
    ],
    ids=["negative plan price", "negative fee", "fee too large"],
)  # fmt: skip
def test_money_the_columns_cannot_hold_is_quarantined(
    kit: FeedKit, patch: dict[str, Any], field: str
) -> None:
    path = kit.write("money", [offer_line(kit, **patch)])
    batch = read_feed(path)
    assert batch.offers.is_empty() and batch.fees.is_empty() and batch.plans.is_empty()
    assert batch.quarantine["field"].to_list() == [field]


def test_duplicate_offer_keys_keep_the_first(kit: FeedKit) -> None:
    run = kit.run(1)
    first = kit.offer(run, "dup", price=Decimal("1.00"))
    second = kit.offer(run, "dup", price=Decimal("9.99"), fees=(), plans=())
    path = kit.write("dups", [first, kit.offer(run, "other"), second])
    batch = read_feed(path, provider="acme", run_id="run-1")
    assert batch.offers.select("offer_key", "price").rows() == [
        ("dup", Decimal("1.00")),
        ("other", Decimal("2.49")),
    ]
    assert batch.fees.filter(pl.col("offer_key") == "dup").height == 2  # the first's fees
    row = batch.quarantine.row(0, named=True)
    assert (row["seq"], row["reason"], row["offer_key"]) == (3, DUPLICATE_REASON, "dup")
    assert row["observed_at"] == second.observed_at


def test_offers_of_another_run_are_quarantined(kit: FeedKit) -> None:
    path = kit.write("stray", [kit.offer(kit.run(1)), kit.offer(kit.run(2), "late")])
    batch = read_feed(path, provider="acme", run_id="run-1")
    assert batch.offers["offer_key"].to_list() == ["h100-1"]
    assert batch.quarantine["field"].to_list() == ["run_id"]
    other = read_feed(path, provider="zeta", run_id="run-1")
    assert other.offers.is_empty()
    assert other.quarantine["field"].to_list() == ["provider", "provider"]


def test_quarantine_records_pass_through(kit: FeedKit) -> None:
    run = kit.run(1)
    path = kit.write("q", [kit.quarantine(run), kit.offer(run)])
    batch = read_feed(path)
    row = batch.quarantine.row(0, named=True)
    assert row["reason"] == "unknown GPU name"
    assert row["field"] == "raw_gpu_name"
    assert json.loads(row["raw"]) == {"name": "RTX 9999 Ti", "price": "1.20"}
    assert batch.offers.height == 1


def test_a_price_written_as_a_json_number_keeps_its_digits(kit: FeedKit) -> None:
    # As a float, 1234567890.12345678 would come back as ...1234567; Decimal parsing keeps it.
    line = offer_line(kit).replace('"price": "2.49"', '"price": 1234567890.12345678')
    batch = read_feed(kit.write("number", [line]))
    assert batch.offers["price"].to_list() == [Decimal("1234567890.12345678")]


def test_blank_lines_are_skipped_and_bytes_that_are_not_utf8_quarantined(
    kit: FeedKit, tmp_path: Path
) -> None:
    good = kit.offer(kit.run(1)).model_dump_json().encode()
    path = tmp_path / "bytes.jsonl"
    path.write_bytes(b"\n" + good + b"\n\n" + b'{"price": "\xff"}\n')
    batch = read_feed(path)
    assert batch.lines == 2
    assert batch.offers.height == 1
    assert batch.quarantine.select("seq", "reason").rows() == [(4, "line is not UTF-8")]


def test_an_empty_batch_has_the_table_schemas() -> None:
    batch = FeedBatch.empty()
    assert batch.offers.is_empty() and batch.offers.schema["price"] == pl.Decimal(18, 8)
    assert batch.sha256 is None


def test_sold_out_offers_are_ordinary_rows_here(kit: FeedKit) -> None:
    # read_feed validates only; which statuses may store offers is load_run's decision.
    path = kit.write("so", [kit.offer(kit.run(1), status=StockStatus.SOLD_OUT)])
    assert read_feed(path).offers["status"].to_list() == ["sold_out"]
