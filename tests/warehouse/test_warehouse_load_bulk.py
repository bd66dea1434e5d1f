"""read_feed's bulk path (DuckDB, set-wise) gives exactly what the line-by-line path gives.

Each case is a feed read twice: as is, and with the bulk path switched off (every line
through the pydantic contract). The frames, quarantine rows and counts must be equal,
whatever the lines hold: canonical offers, coerced values the contract accepts, values it
refuses, lines the bulk path must not vouch for.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import polars as pl
import pytest
from feed_ways import assert_same, both_ways, exact_lines
from polars.testing import assert_frame_equal
from wh_kit import FeedKit

from warehouse import feed_file as feed_file_module
from warehouse.feed import read_feed


def patched(kit: FeedKit, key: str, **changes: Any) -> str:
    """An offer line with ``changes``, minified as the spiders write it (so the set-wise
    path sees it); a ``_RENAME`` value renames the key to the string it holds."""
    data = kit.offer(kit.run(1), key).model_dump(mode="json")
    for name, value in changes.items():
        if value is _DROP:
            data.pop(name)
        elif isinstance(value, _Rename):
            data = {value.to if k == name else k: v for k, v in data.items()}
        else:
            data[name] = value
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class _Rename:
    to: str


_DROP = object()
FEE = {
    "fee_type": "data_disk", "amount": "0.05", "currency": "USD", "unit": "hour",
    "basis": "gb", "quantity": None, "included_quantity": "20", "mandatory": True,
    "charged_while_stopped": False, "note": None,
}  # fmt: skip
VARIANTS: list[tuple[str, dict[str, Any]]] = [
    ("canonical", {}),
    ("no fees or plans", {"fees": [], "plans": []}),
    ("count as a string", {"gpu_count": "2"}),
    ("price as a JSON number", {"price": 1.5}),
    ("price with more decimals than the column", {"price": "0.123456785"}),
    ("price with an exponent", {"price": "1E+1"}),
    ("negative price", {"price": "-1"}),
    ("price out of range", {"price": "12345678901"}),
    ("price at the edge of range", {"price": "9999999999.99999999"}),
    ("time with an offset", {"observed_at": "2026-11-01T16:00:05+08:00"}),
    ("naive time", {"observed_at": "2026-11-01T08:00:05"}),
    ("kind missing", {"kind": _DROP}),
    ("price_kind missing", {"price_kind": _DROP}),
    ("vram missing", {"gpu_vram_gb": _DROP}),
    ("vram null", {"gpu_vram_gb": None}),
    ("vram zero", {"gpu_vram_gb": 0}),
    ("count negative", {"gpu_count": -1}),
    ("count huge", {"gpu_count": 2**40}),
    ("free count null", {"available_count": None}),
    ("boolean as a string", {"fees": [FEE | {"mandatory": "true"}]}),
    ("fee with an extra key", {"fees": [FEE | {"colour": "red"}]}),
    ("fee without basis", {"fees": [{k: v for k, v in FEE.items() if k != "basis"}]}),
    ("fee amount negative", {"fees": [FEE | {"amount": "-0.01"}]}),
    ("fee amount with many decimals", {"fees": [FEE | {"amount": "0.000136986301369863"}]}),
    ("fee null", {"fees": [None]}),
    ("fees null", {"fees": None}),
    (
        "plan of an unknown kind",
        {
            "plans": [
                {
                    "price": "9",
                    "currency": "USD",
                    "billing_unit": "day",
                    "price_basis": "gpu",
                    "price_kind": "gift",
                }
            ]
        },
    ),
    ("lower-case currency", {"currency": "usd"}),
    ("unknown status", {"status": "maybe"}),
    ("status as a number", {"status": 1}),
    ("extra key", {"colour": "green"}),
    ("other provider", {"provider": "zeta"}),
    ("other run", {"run_id": "run-9"}),
    ("non-ASCII text", {"raw_gpu_name": "英伟达 H100 80G", "region": "北京A区"}),
    ("empty offer key", {"offer_key": ""}),
    # The set-wise path proves a line holds nothing but the contract's keys by its length:
    # each of these must still read as the exact path reads it.
    ("key renamed, same length, null value", {"region": _Rename("regoin")}),
    ("free count renamed", {"available_count": _Rename("available_cnt")}),
    ("key order changed", {"kind": _DROP, "price": "2.5", "status": "low"}),
    ("name with an escaped quote", {"raw_gpu_name": 'H100 "SXM" 80GB'}),
    ("name with an escaped non-ASCII", {"raw_gpu_name": "H100 \u00e9"}),
    ("count as a string and price as a number", {"gpu_count": "2", "price": 1.5}),
    ("offer key as a number", {"offer_key": 12345}),
    ("offer key as a number, short name", {"offer_key": 123, "gpu_vendor": "nv"}),
    ("flag as a number", {"fees": [FEE | {"mandatory": 1}]}),
    ("note as an object", {"fees": [FEE | {"note": {"a": 1}}]}),
    ("region as a list", {"region": ["a"]}),
    ("count with an exponent", {"gpu_count": 1e1}),
    ("count as a float", {"gpu_count": 2.0}),
    ("vram as a boolean", {"gpu_vram_gb": True}),
    ("two fees, one with an extra key", {"fees": [FEE, FEE | {"x": 1}]}),
    (
        "plan with a key missing",
        {"plans": [{"price": "9", "currency": "USD", "billing_unit": "day", "price_basis": "gpu"}]},
    ),
    ("url with spaces and slashes", {"url": "https://example.com/a b/c"}),
]


@pytest.mark.parametrize(
    "changes", [case[1] for case in VARIANTS], ids=[case[0] for case in VARIANTS]
)
def test_bulk_and_exact_paths_agree_line_by_line(
    kit: FeedKit, monkeypatch: pytest.MonkeyPatch, changes: dict[str, Any]
) -> None:
    run = kit.run(1)
    lines = [kit.offer(run, "before"), patched(kit, "odd", **changes), kit.offer(run, "after")]
    bulk, exact = both_ways(kit.write("variant", lines), monkeypatch)
    assert_same(bulk, exact)
    assert {"before", "after"} <= set(bulk.offers["offer_key"])


RAW_LINES = [
    '{"kind": "offer", "provider": "acme", "offer_k',  # truncated
    "[1, 2, 3]",
    '"just a string"',
    '{"kind": "offer", "price": NaN}',
    "   ",
    "",
    '{"a": 1, "a": 2}',
]


def test_bulk_and_exact_paths_agree_on_broken_lines(
    kit: FeedKit, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = kit.run(1)
    dup = patched(kit, "dup")
    # The same key twice in one object: Python keeps the last value, so must the load.
    doubled = dup[:-1] + ', "status": "sold_out"}'
    lines: list[Any] = [kit.offer(run, "a"), *RAW_LINES, doubled, kit.quarantine(run)]
    lines += [kit.offer(run, "a"), kit.offer(run, "b")]  # a duplicate key, set aside
    path = kit.write("broken", lines)
    with path.open("ab") as handle:
        handle.write(
            b'{"kind": "offer", "bad": "\xff"}\r\n'
            + kit.offer(run, "c").model_dump_json().encode()
            + b"\r\n"
        )
    bulk, exact = both_ways(path, monkeypatch)
    assert_same(bulk, exact)
    assert bulk.offers["offer_key"].to_list() == ["a", "dup", "b", "c"]
    assert bulk.offers.filter(pl.col("offer_key") == "dup")["status"].to_list() == ["sold_out"]
    reasons = bulk.quarantine["reason"].to_list()
    assert any("duplicate offer_key" in r for r in reasons)
    assert any("not UTF-8" in r for r in reasons)


def _canonical_lines(kit: FeedKit, **dumps: Any) -> list[str]:
    run = kit.run(1)
    data = kit.offer(run, "x", raw_gpu_name="英伟达 H100 80GB", region="北京A区").model_dump(
        mode="json"
    )
    data["fees"][0]["amount"] = "0.0001369863"
    return [json.dumps(data | {"offer_key": f"k{i}"}, **dumps) for i in range(50)]


def test_canonical_lines_take_the_bulk_path(kit: FeedKit, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the spiders write (minified, UTF-8) is typed set-wise: no line of it goes
    through pydantic."""
    lines = _canonical_lines(kit, separators=(",", ":"), ensure_ascii=False)
    path = kit.write("canonical", lines)
    seen = exact_lines(monkeypatch)
    batch = read_feed(path, provider="acme", run_id="run-1")
    assert batch.offers.height == 50 and batch.fees.height == 100
    assert seen == []
    assert batch.offers.schema["price"] == pl.Decimal(18, 8)
    assert batch.offers["raw_gpu_name"].unique().to_list() == ["英伟达 H100 80GB"]


def test_other_spellings_of_a_line_read_the_same_the_exact_way(
    kit: FeedKit, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Spaces after separators, non-ASCII escaped: the set-wise path does not vouch for
    them (its proof counts characters), so they go the exact way and read the same."""
    canonical = read_feed(
        kit.write("minified", _canonical_lines(kit, separators=(",", ":"), ensure_ascii=False)),
        provider="acme",
        run_id="run-1",
    )
    seen = exact_lines(monkeypatch)
    for name, dumps in (
        ("spaced", {"ensure_ascii": False}),
        ("escaped", {"separators": (",", ":")}),
    ):
        seen.clear()
        other = read_feed(
            kit.write(name, _canonical_lines(kit, **dumps)), provider="acme", run_id="run-1"
        )
        assert len(seen) == 50
        for frame in ("offers", "fees", "plans"):
            assert_frame_equal(getattr(other, frame), getattr(canonical, frame))


@pytest.mark.parametrize("block_bytes", [64, 700, 1 << 20])
def test_block_boundaries_change_nothing(
    kit: FeedKit, monkeypatch: pytest.MonkeyPatch, block_bytes: int
) -> None:
    """The file is read in blocks: lines cut across them, CR LF endings, a blank line and a
    last line without a newline read as in one piece."""
    run = kit.run(1)
    lines = [kit.offer(run, f"k{i}").model_dump_json() for i in range(6)]
    text = "\r\n".join(lines[:3]) + "\n\n" + "\n".join(lines[3:])  # no final newline
    path = kit.root / "blocks.jsonl"
    path.write_text(text, encoding="utf-8")
    whole = read_feed(path, provider="acme", run_id="run-1")
    monkeypatch.setattr(feed_file_module, "BLOCK_BYTES", block_bytes)
    bulk, exact = both_ways(path, monkeypatch)
    assert_same(bulk, exact)
    assert_same(bulk, whole)
    assert bulk.offers["offer_key"].to_list() == [f"k{i}" for i in range(6)]
    assert bulk.lines == 6
