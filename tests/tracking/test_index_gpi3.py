"""Method gpi-3 (the default): gpi-2 counting only offers rentable as listed, with one vote per
supplier (a marketplace's re-listing votes as the cloud it re-lists). Real warehouse files,
loaded as runs are; gpi-2 on the same data stays what it was before gpi-3 existed."""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
from datetime import date
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import duckdb
import pytest

from gpurent import api
from gpurent.api.market import index_rules
from gpurent_core.cost.stock import rentable
from gpurent_core.defaults import DEFAULT_INDEX_METHOD
from gpurent_core.enums import IndexMethod, PriceBasis, StockStatus
from gpurent_core.model import OfferRecord, ProviderRun
from gpurent_core.providers import BY_NAME, PER_MACHINE_FREE_COUNTS
from tests import cli_helpers
from tests.tracking.index_kit import build_market, day, run_of
from tests.warehouse.wh_kit import FeedKit
from warehouse.db import connect
from warehouse.index_v2 import (
    SUPPLIER_NAMES,
    WHOLE_UNIT_SQL,
    Market,
    OfferDay,
    Price,
    QuoteKind,
    compute_rows,
    supplier_of,
)
from warehouse.load import load_run

D = Decimal

# One day, international platforms, three rows (USD per GPU-hour):
# H100 SXM   verda 2.00, shadeform re-listing that verda (datacrunch) machine 2.10,
#            lambda 2.30, runpod 2.50;
# A100 SXM   verda 1.20, lambda 1.30, shadeform re-listing lambda (lambdalabs) 1.25;
# RTX 4090   lambda 0.40, runpod 0.44, vastai 0.49 (one card each), tensordock a 2-card
#            machine with 1 card free (status low) 0.30, cudo a 2-card offer with 4 cards
#            free in its pool 0.46.
H100: dict[str, Any] = {}
A100: dict[str, Any] = {"gpu_model": "A100", "gpu_vram_gb": 80, "raw_gpu_name": "A100 80GB SXM4"}
RTX: dict[str, Any] = {
    "gpu_model": "RTX 4090", "gpu_vram_gb": 24, "gpu_form_factor": None,
    "raw_gpu_name": "RTX 4090",
}  # fmt: skip
ONE_OF_TWO_FREE = {**RTX, "gpu_count": 2, "available_count": 1, "status": StockStatus.LOW}
SHADE: dict[str, Any] = {"price_basis": PriceBasis.INSTANCE, "available_count": None}
LISTINGS: dict[str, list[tuple[str, str, dict[str, Any]]]] = {
    "verda": [("h100", "2.00", H100), ("a100", "1.20", A100)],
    "shadeform": [
        ("datacrunch/H100_sxm5x1/FIN-01", "2.10", {**H100, **SHADE}),
        ("lambdalabs/A100_80G_sxm4x1/us-south-1", "1.25", {**A100, **SHADE}),
    ],
    "lambda": [("h100", "2.30", H100), ("a100", "1.30", A100), ("4090", "0.40", RTX)],
    "runpod": [("h100", "2.50", H100), ("4090", "0.44", RTX)],
    "vastai": [("4090", "0.49", RTX)],
    "tensordock": [("4090x2", "0.30", ONE_OF_TWO_FREE)],
    "cudo": [("4090x2", "0.46", {**RTX, "gpu_count": 2, "available_count": 4})],
}

HEADER = (
    "date,gpu_model,gpu_vram_gb,gpu_form_factor,price_kind,market,currency,index_price,p25,p75,"
    "n_offers,n_providers,in_stock_share,n_observed,method_version,withheld_reason\n"
)
# `gpurent index export --method gpi-2` of this market, written by the code before gpi-3
# existed (the tree gpi-3 was added to): gpi-2 must keep giving exactly these bytes.
GPI_2_BYTES = (
    HEADER
    + "2026-11-01,A100,80,SXM,on_demand,intl,USD,1.250000,1.225000,1.275000,3,3,1.0000,3,gpi-2,\n"
    "2026-11-01,H100,80,SXM,on_demand,intl,USD,2.200000,2.075000,2.350000,4,4,1.0000,4,gpi-2,\n"
    "2026-11-01,RTX 4090,24,,on_demand,intl,USD,0.440000,0.400000,0.460000,5,5,1.0000,5,gpi-2,\n"
).encode()
# The same export of tests/tracking/index_kit.py's two-day market (the figures
# test_index_v2_cli.py checks), by that same code.
GPI_2_KIT_SHA256 = "47c84ecacdf440bb322e59da6d014b25d9c5acd3e2a7fd5d5d0740ebddd28cb1"
WITHHELD = '"only 2 suppliers quote (lambda, verda); at least 3 needed"'
GPI_3_BYTES = (
    HEADER + f"2026-11-01,A100,80,SXM,on_demand,intl,USD,,,,3,2,1.0000,3,gpi-3,{WITHHELD}\n"
    "2026-11-01,H100,80,SXM,on_demand,intl,USD,2.300000,2.175000,2.400000,4,3,1.0000,4,gpi-3,\n"
    "2026-11-01,RTX 4090,24,,on_demand,intl,USD,0.450000,0.430000,0.467500,4,4,0.8000,5,gpi-3,\n"
).encode()


def listed(kit: FeedKit, run: ProviderRun) -> list[OfferRecord]:
    return [
        kit.offer(run, key, price=D(price), fees=(), plans=(), **changes)
        for key, price, changes in LISTINGS[run.provider]
    ]


def load_market(path: Path, root: Path) -> Path:
    """Every provider's run of day 1 loaded into the warehouse at ``path``."""
    kit = FeedKit(root)
    con = connect(path)
    try:
        for provider in LISTINGS:
            run = run_of(kit, 1, provider)
            load_run(con, run, kit.write(provider, listed(kit, run)))
    finally:
        con.close()
    return path


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("gpi3")
    return load_market(root / "gpurent.duckdb", root)


@pytest.fixture(autouse=True)
def _no_fx_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GPURENT_FX", raising=False)


def export(db: Path, out: Path, *args: str) -> bytes:
    cli_helpers.invoke("index", "export", "--out", str(out), "--db", str(db), *args)
    return out.read_bytes()


def rows(db: Path, method: str, gpu: str) -> dict[str, Any]:
    (row,) = cli_helpers.invoke_json("index", "show", "--db", str(db), "--gpu", gpu,
                                     "--method", method)  # fmt: skip
    assert row["method_version"] == method
    return row


def figures(row: dict[str, Any]) -> tuple[Any, ...]:
    return (row["index_price"], row["p25"], row["p75"], row["n_offers"], row["n_providers"])


# ---------------------------------------------------------------- one vote per supplier


def test_a_reseller_copy_of_a_verda_machine_is_verdas_one_vote(db: Path) -> None:
    # gpi-2: verda 2.00 and shadeform 2.10 are two votes among 4 providers.
    assert figures(rows(db, "gpi-2", "H100")) == ("2.200000", "2.075000", "2.350000", 4, 4)
    # gpi-3: shadeform's datacrunch machine is verda's: verda's quote is the median of its
    # two offers (2.05), beside lambda 2.30 and runpod 2.50; 4 offers, 3 suppliers.
    assert figures(rows(db, "gpi-3", "H100")) == ("2.300000", "2.175000", "2.400000", 4, 3)


def test_two_suppliers_and_a_reseller_copy_are_withheld(db: Path) -> None:
    gpi2 = rows(db, "gpi-2", "A100")
    assert figures(gpi2) == ("1.250000", "1.225000", "1.275000", 3, 3)
    assert gpi2["withheld_reason"] is None
    gpi3 = rows(db, "gpi-3", "A100")
    assert figures(gpi3) == (None, None, None, 3, 2)
    assert gpi3["withheld_reason"] == "only 2 suppliers quote (lambda, verda); at least 3 needed"


def test_the_supplier_table() -> None:
    assert supplier_of("shadeform", "datacrunch/H100_sxm5x8/FIN-01") == "verda"
    assert supplier_of("shadeform", "lambdalabs/H100_sxm5x8/us-south-1") == "lambda"
    assert supplier_of("shadeform", "DataCrunch/H100_sxm5x8/FIN-01") == "verda"
    assert supplier_of("primeintellect", "runpod/US-TX-3/NVIDIA H100/8/secure_cloud") == "runpod"
    assert supplier_of("primeintellect", "datacrunch/FIN-02/x1/1/secure_cloud") == "verda"
    # A cloud gpurent does not track still votes, under its own name.
    assert supplier_of("primeintellect", "massedcompute/US-MO-2/y/1/secure_cloud") == (
        "massedcompute"
    )
    assert supplier_of("shadeform", "crusoe/H100_sxm5x8/us-east1") == "crusoe"
    # Any other provider supplies its own offers, whatever its keys look like.
    assert supplier_of("vastai", "datacrunch/1") == "vastai"
    assert set(SUPPLIER_NAMES.values()) <= set(BY_NAME)


def offer_day(provider: str, key: str, price: str) -> OfferDay:
    return OfferDay(
        day=day(1), provider=provider, offer_key=key, gpu_model="H100", gpu_vram_gb=80,
        gpu_form_factor="SXM", in_stock=True, listed=frozenset({QuoteKind.ON_DEMAND}),
        prices=(Price(QuoteKind.ON_DEMAND, D(price), "USD"),),
    )  # fmt: skip


def test_a_relisted_supplier_is_in_its_own_market() -> None:
    def rate(base: str, quote: str, when: date) -> Fraction | None:
        return Fraction(1)

    def home(name: str) -> Market:  # verda made a CN platform for the test
        return Market.CN if name == "verda" else Market.INTL

    offers = [offer_day("shadeform", "datacrunch/H100_sxm5x1/FIN-01", "2.10")]
    (gpi2,) = compute_rows(offers, rate=rate, currencies=["USD"], market=home)
    (gpi3,) = compute_rows(
        offers, rate=rate, currencies=["USD"], market=home, method=IndexMethod.GPI_3
    )
    assert (gpi2["market"], gpi2["method_version"]) == ("intl", "gpi-2")
    assert (gpi3["market"], gpi3["method_version"]) == ("CN", "gpi-3")
    assert gpi3["withheld_reason"] == "only 1 supplier quotes (verda); at least 3 needed"


# ---------------------------------------------------------------- rentable as listed


def test_a_two_card_machine_with_one_card_free_quotes_only_in_gpi_2(db: Path) -> None:
    gpi2 = rows(db, "gpi-2", "4090")  # tensordock's 0.30 is a quote: 5 providers
    assert figures(gpi2) == ("0.440000", "0.400000", "0.460000", 5, 5)
    assert (gpi2["in_stock_share"], gpi2["n_observed"]) == ("1.0000", 5)
    gpi3 = rows(db, "gpi-3", "4090")  # not rentable as listed: lambda, runpod, cudo, vastai
    assert figures(gpi3) == ("0.450000", "0.430000", "0.467500", 4, 4)
    assert (gpi3["in_stock_share"], gpi3["n_observed"]) == ("0.8000", 5)


def test_the_stock_rule_is_rentables() -> None:
    """WHOLE_UNIT_SQL with the status test is ``rentable(offer, 1)`` on every combination
    of status, basis, card count and free count, for per-machine and pooled free counts."""
    assert "tensordock" in PER_MACHINE_FREE_COUNTS and "cudo" not in PER_MACHINE_FREE_COUNTS
    cases = list(
        itertools.product(
            ("tensordock", "cudo", "lambda"),
            [s.value for s in StockStatus],
            [b.value for b in PriceBasis],
            (1, 2, 8),
            (None, 0, 1, 2, 7, 8, 9),
        )
    )
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE o (provider TEXT, status TEXT, price_basis TEXT, gpu_count INTEGER,"
        " available_count INTEGER)"
    )
    con.executemany("INSERT INTO o VALUES (?, ?, ?, ?, ?)", cases)
    in_stock = [s.value for s in StockStatus if s.rentable]
    got = con.execute(
        "SELECT provider, status, price_basis, gpu_count, available_count,"
        f" list_contains(?, status) AND {WHOLE_UNIT_SQL} FROM o",
        [in_stock],
    ).fetchall()
    names = ("provider", "status", "price_basis", "gpu_count", "available_count")
    wrong = [r for r in got if r[5] != rentable(dict(zip(names, r[:5], strict=True)), 1)]
    assert len(got) == len(cases) and not wrong
    # Both answers occur for pooled counts in stock: the test can tell the rules apart.
    pooled = {r[5] for r in got if r[0] == "cudo" and r[1] == "in_stock" and r[4] is not None}
    assert pooled == {True, False}


# ---------------------------------------------------------------- gpi-2 kept, gpi-3 fixed


def test_gpi_2_gives_the_bytes_it_gave_before_gpi_3(db: Path, tmp_path: Path) -> None:
    assert export(db, tmp_path / "v2.csv", "--method", "gpi-2") == GPI_2_BYTES
    kit = build_market(tmp_path / "kit")
    data = export(kit, tmp_path / "kit.csv", "--method", "gpi-2")
    assert hashlib.sha256(data).hexdigest() == GPI_2_KIT_SHA256


def test_gpi_3_is_reproduced_byte_for_byte(db: Path, tmp_path: Path) -> None:
    first = export(db, tmp_path / "a.csv")
    assert first == GPI_3_BYTES
    assert export(db, tmp_path / "b.csv", "--method", "gpi-3") == first
    # The same runs loaded again (idempotent), and loaded into a new warehouse: same bytes.
    load_market(db, tmp_path / "again")
    assert export(db, tmp_path / "c.csv") == first
    fresh = load_market(tmp_path / "fresh.duckdb", tmp_path / "fresh")
    assert export(fresh, tmp_path / "d.csv") == first
    # The shape of every row is gpi-2's: only the version and the figures differ.
    table = list(csv.DictReader(io.StringIO(first.decode())))
    assert {r["method_version"] for r in table} == {"gpi-3"} and len(table) == 3


# ---------------------------------------------------------------- the default


def test_gpi_3_is_the_default_everywhere(db: Path) -> None:
    assert DEFAULT_INDEX_METHOD is IndexMethod.GPI_3
    shown = cli_helpers.invoke_json("index", "show", "--db", str(db))
    assert {r["method_version"] for r in shown} == {"gpi-3"}
    table = cli_helpers.invoke("index", "show", "--db", str(db)).stdout
    assert "GPU price index gpi-3" in table
    assert {p.method_version for p in api.index(db=db)} == {"gpi-3"}
    rules = index_rules()
    assert (rules.method, rules.min_providers, rules.voter) == ("gpi-3", 3, "supplier")
    assert index_rules("gpi-2").voter == "provider"
    assert "[default: gpi-3]" in cli_helpers.invoke("index", "export", "--help").stdout
