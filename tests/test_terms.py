"""Fees and plans as read back (gpurent_core.terms) stay the feed records' fields, and the
read commands answer without pydantic (issue 13's start-up figure)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import MISSING, asdict, fields
from decimal import Decimal
from pathlib import Path

import pytest
from pydantic import BaseModel

from gpurent_core.billing_facts import load_billing_facts, platform_fees
from gpurent_core.enums import BillingUnit, FeeBasis, FeeType, PriceBasis, PriceKind
from gpurent_core.model import AddonFee, PricePlan
from gpurent_core.terms import FeeTerms, PlanTerms
from tests.warehouse.wh_kit import FeedKit
from warehouse.db import writing
from warehouse.load import load_run


@pytest.mark.parametrize(("terms", "record"), [(FeeTerms, AddonFee), (PlanTerms, PricePlan)])
def test_terms_have_the_records_fields_in_order_with_their_defaults(
    terms: type, record: type[BaseModel]
) -> None:
    ours = [(f.name, None if f.default is MISSING else f.default) for f in fields(terms)]
    theirs = [
        (name, None if info.is_required() else info.default)
        for name, info in record.model_fields.items()
    ]
    assert ours == theirs
    required = [f.name for f in fields(terms) if f.default is MISSING]
    assert required == [n for n, info in record.model_fields.items() if info.is_required()]


def test_a_record_and_its_terms_give_the_same_fields() -> None:
    fee = AddonFee(
        fee_type=FeeType.DATA_DISK,
        amount=Decimal("0.0007"),
        currency="CNY",
        unit=BillingUnit.HOUR,
        basis=FeeBasis.GB,
        included_quantity=Decimal(20),
        mandatory=True,
        note="local disk",
    )
    assert asdict(FeeTerms(**fee.model_dump())) == fee.model_dump()
    plan = PricePlan(
        price=Decimal("1200"),
        currency="CNY",
        billing_unit=BillingUnit.MONTH,
        price_basis=PriceBasis.GPU,
        price_kind=PriceKind.COMMITMENT,
    )
    assert asdict(PlanTerms(**plan.model_dump())) == plan.model_dump()


def test_every_platform_fee_passes_the_records_checks() -> None:
    """The billing facts keep plain terms; the spiders get records, checked (currency,
    amount) when they are made."""
    providers = {fact.provider for fact in load_billing_facts() if fact.fees}
    assert providers
    for provider in sorted(providers):
        fees = platform_fees(provider)
        assert fees and all(isinstance(fee, AddonFee) for fee in fees)
        terms = [t for fact in load_billing_facts() if fact.provider == provider for t in fact.fees]
        assert [fee.model_dump() for fee in fees] == [asdict(t) for t in terms]


LOADED = (
    "import sys, json, atexit\n"
    "from gpurent.cli.app import main\n"
    "atexit.register(lambda: print(json.dumps(sorted(m for m in sys.modules "
    "if m.split('.')[0] in ('pydantic', 'pydantic_settings', 'asyncio', 'polars', 'pyarrow'))),"
    " file=sys.stderr))\n"
    "sys.argv = ['gpurent', *sys.argv[1:]]\n"
    "main()\n"
)


def _heavy_modules_loaded(*args: str) -> tuple[int, list[str], str]:
    done = subprocess.run(
        [sys.executable, "-c", LOADED, *args],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    *said, loaded = done.stderr.strip().splitlines()
    return done.returncode, json.loads(loaded), done.stdout + "\n".join(said)


def test_cheapest_answers_without_pydantic_asyncio_or_polars(tmp_path: Path) -> None:
    kit = FeedKit(tmp_path)
    run = kit.run(1)
    db = tmp_path / "g.duckdb"
    with writing(db) as con:
        load_run(con, run, kit.write("acme", [kit.offer(run, f"h100-{i}") for i in range(5)]))
    code, loaded, said = _heavy_modules_loaded(
        "cheapest", "--min-vram", "32", "--db", str(db), "--format", "json", "--currency", "USD"
    )
    assert code == 0, said
    answer = json.loads(said)
    assert len(answer) == 5 and {row["offer_key"] for row in answer} == {
        f"h100-{i}" for i in range(5)
    }
    assert answer[0]["fees"], "the fees are part of the answer, read without the records"
    assert loaded == [], loaded


def test_the_probe_sees_pydantic_where_it_is_used(tmp_path: Path) -> None:
    """The check above could not fail if the probe saw nothing: a command that validates
    feeds loads pydantic, and the probe says so."""
    feed = tmp_path / "bad.jsonl"
    feed.write_text('{"kind": "offer"}\n', encoding="utf-8")
    _code, loaded, _said = _heavy_modules_loaded("load", str(feed), "--db", str(tmp_path / "x"))
    assert "pydantic" in loaded
