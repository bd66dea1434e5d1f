"""The library API (``gpurent.api``): typed answers with Decimal money, the same ones the
command line prints, and refusals a program can catch."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from gpurent import api
from gpurent.api import views
from gpurent_core.model import AddonFee, BillingUnit, FeeBasis, FeeType, PriceBasis, StockStatus
from gpurent_core.terms import FeeTerms
from tests.cli_helpers import invoke_json
from tests.warehouse.wh_kit import FeedKit
from warehouse.db import writing
from warehouse.load import load_run

D = Decimal
STORAGE = AddonFee(
    fee_type=FeeType.DATA_DISK,
    amount=D("0.01"),
    currency="CNY",
    unit=BillingUnit.DAY,
    basis=FeeBasis.GB,
    included_quantity=D(20),
    mandatory=False,
    charged_while_stopped=True,
)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("api")
    kit = FeedKit(root)
    path = root / "gpurent.duckdb"
    with writing(path) as con:
        a = kit.run(1, provider="autodl")
        load_run(con, a, kit.write("a", [
            kit.offer(a, "4090-cheap", gpu_model="RTX 4090", gpu_vram_gb=24,
                      gpu_form_factor=None, raw_gpu_name="RTX 4090", price=D("1.98"),
                      currency="CNY", fees=(STORAGE,), plans=(), region=None),
            kit.offer(a, "4090-gone", gpu_model="RTX 4090", gpu_vram_gb=24,
                      gpu_form_factor=None, raw_gpu_name="RTX 4090", price=D("1.50"),
                      currency="CNY", status=StockStatus.SOLD_OUT, available_count=0,
                      fees=(), plans=(), region=None),
            kit.offer(a, "a6000x2", gpu_model="RTX A6000", gpu_vram_gb=48, gpu_count=2,
                      gpu_form_factor=None, raw_gpu_name="A6000 x2", price=D("3.0"),
                      currency="CNY", price_basis=PriceBasis.INSTANCE, available_count=2,
                      fees=(), plans=(), region=None),
        ]))  # fmt: skip
        lam = kit.run(1, provider="lambda")
        load_run(con, lam, kit.write("l", [
            kit.offer(lam, "gpu_1x_h100", price_basis=PriceBasis.INSTANCE, available_count=None,
                      fees=(), plans=()),
        ]))  # fmt: skip
    return path


def test_cheapest_gives_typed_offers_with_decimal_money(db: Path) -> None:
    found = api.cheapest(24, db=db, currency="CNY")
    assert [o.offer_key for o in found][:1] == ["4090-cheap"]
    assert "4090-gone" not in {o.offer_key for o in found}  # sold out is not rentable
    first = found[0]
    assert isinstance(first, api.Offer) and first.status is StockStatus.IN_STOCK
    for money in (first.price, first.true_hourly, first.true_monthly, first.price_per_gpu_hour):
        assert isinstance(money, Decimal)
    assert first.cost_currency == "CNY" and first.rentable
    # Typed fees, the feed's fields (plain terms: the answer is read without pydantic).
    assert first.fees == (FeeTerms(**STORAGE.model_dump()),)
    monthly = [o.true_monthly for o in found]
    assert monthly == sorted(monthly)


def test_the_cli_prints_the_api_answer(db: Path) -> None:
    rows = invoke_json("cheapest", "--min-vram", "24", "--currency", "CNY", "--db", str(db))
    ours = api.cheapest(24, db=db, currency="CNY")
    assert [r["offer_key"] for r in rows] == [o.offer_key for o in ours]
    assert [D(str(r["true_monthly"])) for r in rows] == [o.true_monthly for o in ours]
    assert rows[0]["fees"][0]["fee_type"] == "data_disk"


def test_usage_changes_the_cost_and_storage_is_counted(db: Path) -> None:
    small = api.offers(gpu="4090", provider="autodl", in_stock=True, db=db, currency="CNY",
                       usage=api.usage(storage_gb=20))  # fmt: skip
    large = api.offers(gpu="4090", provider="autodl", in_stock=True, db=db, currency="CNY",
                       usage=api.usage(storage_gb=500))  # fmt: skip
    assert small[0].offer_key == large[0].offer_key == "4090-cheap"
    # 480 GB beyond the 20 included, at 0.01 CNY per GB-day, for a 730-hour month
    extra = D(480) * D("0.01") * D(730) / D(24)
    assert large[0].true_monthly - small[0].true_monthly == pytest.approx(extra, abs=D("0.01"))


def test_offers_lists_sold_out_too_and_filters_by_names(db: Path) -> None:
    keys = {o.offer_key for o in api.offers(gpu="RTX 4090", db=db)}
    assert keys == {"4090-cheap", "4090-gone"}
    assert [o.offer_key for o in api.offers(provider="LAMBDA", db=db)] == ["gpu_1x_h100"]
    assert len(api.offers(db=db, limit=2)) == 2


def test_explain_shows_lines_that_add_up(db: Path) -> None:
    answer = api.explain("autodl", "4090-cheap", db=db, currency="CNY")
    assert answer.offer is not None and answer.offer.offer_key == "4090-cheap"
    assert answer.lines and answer.text().splitlines() == list(answer.lines)
    assert any("1.98" in line for line in answer.lines)


def test_multi_card_units_need_every_card_free(db: Path) -> None:
    two = api.cheapest(48, gpus=2, db=db)
    assert [o.offer_key for o in two] == ["a6000x2"] and two[0].gpu_count == 2


def test_refusals_are_typed_and_say_what_to_do(db: Path, tmp_path: Path) -> None:
    with pytest.raises(api.NoWarehouse, match="crawl"):
        api.cheapest(24, db=tmp_path / "none.duckdb")
    with pytest.raises(api.UnknownName, match="did you mean autodl"):
        api.offers(provider="autodll", db=db)
    with pytest.raises(api.UnknownName):
        api.offers(gpu="not a gpu at all", db=db)
    with pytest.raises(api.UnknownName, match="no exchange rate"):
        api.cheapest(24, currency="XYZ", db=db)
    with pytest.raises(api.NoSuchOffer):
        api.explain("autodl", "nope", db=db)
    with pytest.raises(api.BadUsage, match="hours_per_month"):
        api.usage(hours_per_month=800)
    with pytest.raises(api.BadUsage):
        api.usage(storage_gb=-1)
    # every refusal is a ValueError a caller can catch as one
    assert issubclass(api.ApiError, ValueError)


@pytest.mark.parametrize("limit", [0, -1, True, 2.5])
def test_a_limit_that_would_cut_rows_silently_is_refused(db: Path, limit: object) -> None:
    """Audit A2: limit=-1 answered all but the last row, limit=0 none, with no word."""
    for read in (
        lambda: api.cheapest(24, limit=limit, db=db),  # type: ignore[arg-type]
        lambda: api.offers(limit=limit, db=db),  # type: ignore[arg-type]
        lambda: views.quarantine(db, limit=limit),  # type: ignore[arg-type]
    ):
        with pytest.raises(api.BadUsage, match="limit must be"):
            read()
    assert len(api.cheapest(1, limit=None, db=db)) >= len(api.cheapest(1, limit=1, db=db)) == 1


def test_usage_defaults_are_the_profiles_own() -> None:
    from gpurent_core.cost.usage import UsageProfile

    assert api.usage() == UsageProfile()
    assert api.with_gpus(api.usage(), 4) == replace(UsageProfile(), gpus=4)


def test_size_ranks_offers_and_matches_the_cli(db: Path) -> None:
    answer = api.size("qwen2.5-7b", prompt_tokens=1000, gen_tokens=100, db=db, currency="CNY")
    assert answer.report["offers"], answer.report.get("offers_reason")
    assert all(isinstance(o, object) for o in answer.offers)
    printed = invoke_json(
        "size", "--model", "qwen2.5-7b", "--prompt-tokens", "1000", "--gen-tokens", "100",
        "--currency", "CNY", "--db", str(db), "--format", "json",
    )  # fmt: skip
    assert [o["offer_key"] for o in printed["offers"]] == [
        o["offer_key"] for o in answer.report["offers"]
    ]
    with pytest.raises(api.UnknownName):
        api.size("no-such-model", db=db)


def test_size_counts_the_storage_asked_for(db: Path) -> None:
    def cost(storage: int) -> Decimal:
        answer = api.size(
            "qwen2.5-7b", prompt_tokens=1000, gen_tokens=100, db=db, currency="CNY",
            usage=api.usage(storage_gb=storage),
        )  # fmt: skip
        row = next(o for o in answer.report["offers"] if o["offer_key"] == "4090-cheap")
        return D(str(row["true_monthly"]))

    assert cost(500) > cost(20)


def test_size_without_a_warehouse_is_the_estimate_alone(tmp_path: Path) -> None:
    answer = api.size("qwen2.5-7b", prompt_tokens=1000, gen_tokens=100, db=tmp_path / "x.duckdb")
    assert not answer.offers and "no warehouse" in answer.report["offers_reason"]


def test_index_points_are_typed(db: Path) -> None:
    points = api.index(db=db, currency="CNY")
    assert points and all(isinstance(p, api.IndexPoint) for p in points)
    assert all(isinstance(p.date, date) and p.currency == "CNY" for p in points)
    priced = [p for p in points if p.index_price is not None]
    assert all(isinstance(p.index_price, Decimal) for p in priced)


def test_providers_know_every_spider_and_the_last_runs(db: Path) -> None:
    states = {s.provider: s for s in api.providers(db=db)}
    assert {"autodl", "lambda", "vastai"} <= set(states)
    assert states["autodl"].last_status == "ok" and states["autodl"].last_offers == 3
    assert states["vastai"].last_status is None  # never run: unknown, not failed


def test_library_doc_example_runs(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The library example of docs/library.md, run as written against a real warehouse."""
    doc = Path(__file__).resolve().parents[2] / "docs" / "library.md"
    section = doc.read_text(encoding="utf-8").split("## A runnable example", 1)[1]
    code = section.split("```python", 1)[1].split("```", 1)[0]
    exec(compile(code.replace('"var/demo.duckdb"', repr(str(db))), str(doc), "exec"), {})
    out = capsys.readouterr().out
    assert "autodl" in out and "4090-cheap" in out
    json.dumps(out)  # printable text, nothing odd


def test_every_public_name_resolves_to_what_it_says() -> None:
    import importlib
    import pkgutil
    import types

    import gpurent.api as package

    for info in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"gpurent.api.{info.name}")  # as a program's imports would
    for name in package.__all__:
        value = getattr(package, name)
        is_module = isinstance(value, types.ModuleType)
        assert is_module == (name in {"names", "views"}), name
