"""Answers a renter can act on (issue 12): what `offers`, `cheapest`, `explain` and `quarantine`
say on a small warehouse built here, through the real app, in-process."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from gpurent.cli.output import OutputFormat, render
from gpurent_core.csvsafe import neutralise_cell, neutralise_text
from gpurent_core.model import AddonFee, BillingUnit, FeeBasis, FeeType, PriceBasis, StockStatus
from tests.cli_helpers import invoke, invoke_json
from tests.warehouse.wh_kit import FeedKit
from warehouse.db import connect
from warehouse.load import load_run

D = Decimal
AUTODL_STORAGE = AddonFee(
    fee_type=FeeType.DATA_DISK,
    amount=D("0.01"),
    currency="CNY",
    unit=BillingUnit.DAY,
    basis=FeeBasis.GB,
    included_quantity=D(20),
    mandatory=False,  # as AutoDL's feed has it: an optional add-on
    charged_while_stopped=True,
)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("answers")
    kit = FeedKit(root)
    path = root / "gpurent.duckdb"
    machine = {
        "gpu_model": "RTX A6000",
        "gpu_vram_gb": 48,
        "gpu_form_factor": None,
        "gpu_count": 2,
        "raw_gpu_name": "A6000 x2",
        "currency": "CNY",
        "price_basis": PriceBasis.INSTANCE,
        "fees": (),
        "plans": (),
        "region": None,
    }
    con = connect(path)
    try:
        m = kit.run(1, provider="matpool")
        load_run(con, m, kit.write("m", [
            kit.offer(m, "2x-one-free", status=StockStatus.LOW, available_count=1,
                      price=D("2.9"), **machine),
            kit.offer(m, "2x-two-free", status=StockStatus.IN_STOCK, available_count=2,
                      price=D("3.0"), **machine),
        ]))  # fmt: skip
        a = kit.run(1, provider="autodl")
        load_run(con, a, kit.write("a", [
            kit.offer(a, "4090-a", gpu_model="RTX 4090", gpu_vram_gb=24, gpu_form_factor=None,
                      raw_gpu_name="RTX 4090", price=D("1.98"), currency="CNY",
                      fees=(AUTODL_STORAGE,), plans=(), region="=HYPERLINK(\"x\")"),
            kit.quarantine(a, "price_unparsed: '面议': no number in price text"),
            kit.quarantine(a, "price_unparsed: '询价': no number in price text"),
        ]))  # fmt: skip
        lam = kit.run(1, provider="lambda")
        load_run(con, lam, kit.write("l", [
            kit.offer(lam, "gpu_1x_h100", price_basis=PriceBasis.INSTANCE, available_count=None,
                      fees=(), plans=()),
        ]))  # fmt: skip
    finally:
        con.close()
    return path


def keys(rows: list[dict[str, Any]]) -> list[str]:
    return [r["offer_key"] for r in rows]


def fail(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    """Run the console script as a user does: a usage error is one line and exit 2."""
    proc = subprocess.run(
        [sys.executable, "-m", "gpurent", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
        env=env,
    )
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2, proc.stderr[-800:]
    assert len(lines) == 1, lines
    return lines[0]


# ------------------------------------------------------------------ unrentable units


def test_cheapest_never_ranks_a_machine_with_fewer_free_cards_than_it_rents(db: Path) -> None:
    two = invoke_json("cheapest", "--min-vram", "32", "--gpus", "2", "--db", str(db))
    assert "2x-one-free" not in keys(two)
    assert "2x-two-free" in keys(two)
    # for one card too: the machine is rented whole, and one of its cards is taken
    one = invoke_json("cheapest", "--min-vram", "32", "--db", str(db))
    assert "2x-one-free" not in keys(one)


def test_offers_lists_it_marked_and_in_stock_leaves_it_out(db: Path, monkeypatch: Any) -> None:
    rows = {r["offer_key"]: r for r in invoke_json("offers", "--db", str(db))}
    assert rows["2x-one-free"]["rentable"] is False
    assert rows["2x-two-free"]["rentable"] is True
    in_stock = invoke_json("offers", "--in-stock", "--db", str(db))
    assert "2x-one-free" not in keys(in_stock)
    monkeypatch.delenv("COLUMNS", raising=False)
    table = invoke("offers", "--provider", "matpool", "--db", str(db)).stdout
    assert "low 1/2 free" in table
    assert "in_stock 2 free" in table


# ------------------------------------------------------------------ storage


def test_storage_asked_for_raises_an_optional_storage_providers_cost(db: Path) -> None:
    def monthly(gb: str) -> Decimal:
        rows = invoke_json("offers", "--gpu", "4090", "--storage-gb", gb, "--db", str(db))
        return D(rows[0]["native_true_monthly"])

    # 1.98 x 730, plus 0.01/GB/day beyond 20 GB for all 730 h (kept while stopped)
    assert monthly("0") == D("1445.4")
    assert monthly("50") == D("1454.525")
    assert monthly("500") == D("1591.4")


def test_an_offer_without_a_storage_fee_is_marked_not_priced_as_free(
    db: Path, monkeypatch: Any
) -> None:
    rows = {r["offer_key"]: r for r in invoke_json("offers", "--db", str(db))}
    assert rows["gpu_1x_h100"]["storage_price_unknown"] is True
    assert rows["4090-a"]["storage_price_unknown"] is False
    monkeypatch.delenv("COLUMNS", raising=False)
    table = invoke("offers", "--provider", "lambda", "--db", str(db)).stdout
    assert "* storage price unknown" in table
    line = next(x for x in table.splitlines() if "H100 SXM 80G" in x)
    assert line.count(" *") == 2  # true/h and true/month
    explained = invoke("explain", "lambda", "gpu_1x_h100", "--db", str(db)).stdout
    assert "Storage price unknown" in explained


def test_traffic_with_no_known_price_is_marked_not_priced_as_free(
    db: Path, monkeypatch: Any
) -> None:
    # AutoDL's feed has no egress fee and its billing facts do not say what traffic costs;
    # Lambda's facts say none is charged, Matpool's that domestic traffic is free.
    asked = ("--egress-gb", "500", "--db", str(db))
    rows = {r["offer_key"]: r for r in invoke_json("offers", *asked)}
    assert rows["4090-a"]["egress_price_unknown"] is True
    assert rows["gpu_1x_h100"]["egress_price_unknown"] is False
    assert rows["2x-two-free"]["egress_price_unknown"] is False
    # No traffic asked for: nothing is unknown.
    plain = {r["offer_key"]: r for r in invoke_json("offers", "--db", str(db))}
    assert plain["4090-a"]["egress_price_unknown"] is False
    monkeypatch.delenv("COLUMNS", raising=False)
    table = invoke("offers", "--provider", "autodl", *asked).stdout
    assert "† traffic price unknown" in table
    line = next(x for x in table.splitlines() if "4090" in x)
    assert line.count(" †") == 2  # true/h and true/month
    explained = invoke("explain", "autodl", "4090-a", *asked).stdout
    assert "Egress price unknown" in explained and "500 GB a month" in explained


def test_explain_shows_where_the_storage_went(db: Path) -> None:
    text = invoke("explain", "autodl", "4090-a", "--storage-gb", "500", "--db", str(db)).stdout
    assert "data_disk 0.01 CNY/day x 480 gb (= max(0, 500 storage GB - 20 included))" in text
    assert "counted on the optional data_disk fee" in text


# ------------------------------------------------------------------ JSON recomputes


def test_json_rows_carry_every_fee_and_plan_field_with_decimals_as_strings(db: Path) -> None:
    row = invoke_json("offers", "--provider", "autodl", "--storage-gb", "50", "--db", str(db))[0]
    assert row["fees"] == [
        {
            "fee_type": "data_disk",
            "amount": "0.01",
            "currency": "CNY",
            "unit": "day",
            "basis": "gb",
            "quantity": None,
            "included_quantity": "20",
            "mandatory": False,
            "charged_while_stopped": True,
            "note": None,
        }
    ]
    assert row["plans"] == []
    # A reader recomputes the month from the row: price x 730 h + the storage beyond the
    # allowance, all 730 h, at amount per day.
    fee = row["fees"][0]
    billable = D(50) - D(fee["included_quantity"])
    recomputed = D(row["price"]) * 730 + D(fee["amount"]) * billable * D(730) / 24
    assert recomputed == D(row["native_true_monthly"])
    plans = invoke_json("offers", "--provider", "matpool", "--db", str(db))[0]["plans"]
    assert plans == []
    cheapest = invoke_json("cheapest", "--min-vram", "20", "--db", str(db))
    assert all("fees" in r and "plans" in r for r in cheapest)


def test_csv_keeps_fees_as_json_and_neutralises_formula_text(db: Path) -> None:
    out = invoke("offers", "--provider", "autodl", "--format", "csv", "--db", str(db)).stdout
    row = next(csv.DictReader(io.StringIO(out)))
    assert row["region"] == '\'=HYPERLINK("x")'
    assert json.loads(row["fees"])[0]["amount"] == "0.01"
    assert row["price"] == "1.98"


def test_csv_rule_touches_text_never_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    rows = [{"delta": D("-1.5"), "count": -2, "label": "-1.5", "name": "@sum", "ok": "plain"}]
    render(rows, OutputFormat.CSV)
    line = capsys.readouterr().out.splitlines()[1]
    assert line == "-1.5,-2,'-1.5,'@sum,plain"
    assert [neutralise_text(t) for t in ("=1+2", "+x", "-y", "@z", "\tt", "\rr", "a=b")] == [
        "'=1+2", "'+x", "'-y", "'@z", "'\tt", "'\rr", "a=b",
    ]  # fmt: skip
    assert neutralise_cell(D("-3")) == D("-3")


# ------------------------------------------------------------------ names and options


@pytest.mark.parametrize("name", ["4090", "RTX 4090", "rtx4090", "NVIDIA GeForce RTX 4090"])
def test_gpu_filter_reads_names_as_the_normaliser_does(db: Path, name: str) -> None:
    assert keys(invoke_json("offers", "--gpu", name, "--db", str(db))) == ["4090-a"]


def test_gpu_filter_with_a_size_keeps_that_size(db: Path) -> None:
    assert keys(invoke_json("offers", "--gpu", "A6000 48G", "--db", str(db))) == [
        "2x-one-free",
        "2x-two-free",
    ]


def test_unknown_names_are_refused_with_close_known_ones(db: Path) -> None:
    gpu = fail("offers", "--gpu", "H1000", "--db", str(db))
    assert "unknown GPU model" in gpu and "did you mean H100" in gpu
    provider = fail("offers", "--provider", "autodll", "--db", str(db))
    assert "unknown provider 'autodll'; did you mean autodl" in provider
    explained = fail("explain", "lambada", "x", "--db", str(db))
    assert "did you mean lambda" in explained


@pytest.mark.parametrize(
    "args",
    [
        ("offers", "--min-vram", "-1"),
        ("cheapest", "--min-vram", "-8"),
        ("offers", "--limit", "0"),
        ("cheapest", "--min-vram", "8", "--session-hours", "-2"),
    ],
)
def test_negative_numbers_are_refused_by_the_option_parser(db: Path, args: tuple[str, ...]) -> None:
    message = fail(*args, "--db", str(db))
    assert "Invalid value" in message


def test_offers_limit(db: Path) -> None:
    assert len(invoke_json("offers", "--db", str(db))) == 4
    assert len(invoke_json("offers", "--limit", "2", "--db", str(db))) == 2


def test_an_empty_answer_names_the_filters(db: Path) -> None:
    out = invoke("offers", "--gpu", "H200", "--db", str(db)).stdout
    assert "No latest offer matches --gpu H200" in " ".join(out.split())


def test_help_says_the_real_currency_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "300")  # the help box on one line per option
    text = " ".join(invoke("offers", "--help").stdout.split())
    assert "Default: $GPURENT_CURRENCY, else CNY" in text
    assert "each offer's own currency" not in text


def test_without_db_after_make_demo_it_points_at_the_demo(tmp_path: Path) -> None:
    (tmp_path / "var").mkdir()
    (tmp_path / "var" / "demo.duckdb").write_bytes(b"")
    env = {k: v for k, v in os.environ.items() if k != "GPURENT_DB"}
    env["XDG_DATA_HOME"] = str(tmp_path / "data")  # the default warehouse: not there
    message = fail("offers", cwd=tmp_path, env=env)
    assert "no warehouse at " in message
    assert "the demo's is at var/demo.duckdb: use --db var/demo.duckdb or GPURENT_DB" in message


# ------------------------------------------------------------------ output


def test_piped_tables_keep_each_row_on_one_line(db: Path, monkeypatch: Any) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    table = invoke("offers", "--db", str(db)).stdout
    lines = [x for x in table.splitlines() if "│" in x]
    assert len(lines) == 4  # one per offer: nothing wrapped, no word split
    assert any("matpool" in x and "RTX A6000 48G" in x and "low 1/2 free" in x for x in lines)


def test_quarantine_shows_each_problem_once_in_80_columns(db: Path, monkeypatch: Any) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    table = invoke("quarantine", "--db", str(db)).stdout
    assert max(len(x) for x in table.splitlines()) <= 80
    rows = [x for x in table.splitlines() if "autodl" in x]
    assert len(rows) == 1
    assert "price_unparsed: no number in price text" in rows[0]
    assert "│     2 │" in rows[0]
    assert "面议" not in table
    every = invoke("quarantine", "--all", "--db", str(db)).stdout
    assert "面议" in every and "询价" in every
    lines = invoke_json("quarantine", "--db", str(db))
    assert len(lines) == 2
    assert {r["problem"] for r in lines} == {"price_unparsed: no number in price text"}
    assert {r["reason"] for r in lines} == {
        "price_unparsed: '面议': no number in price text",
        "price_unparsed: '询价': no number in price text",
    }
    # Cut short by --limit, the list says so (a program took the first 50 for all of them).
    cut = invoke("quarantine", "--limit", "1", "--format", "json", "--db", str(db))
    assert len(json.loads(cut.stdout)) == 1 and "the newest 1 lines shown" in cut.stderr
    whole = invoke("quarantine", "--limit", "2", "--format", "json", "--db", str(db))
    assert len(json.loads(whole.stdout)) == 2 and whole.stderr == ""
