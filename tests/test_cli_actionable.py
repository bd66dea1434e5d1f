"""Answers a renter can act on: every row of `offers` and `cheapest` carries a short offer id
that `explain` takes and the provider's page; rows that read alike are told apart; the form
factor is shown and filtered; `cheapest --gpus N` says which per-card offers it left out.

A small warehouse built here, the commands run in-process through the real app."""

from __future__ import annotations

import csv
import io
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from gpurent import api
from gpurent.api import names
from gpurent_core.model import PriceBasis, StockStatus
from tests.cli_helpers import invoke, invoke_json
from tests.warehouse.wh_kit import FeedKit
from warehouse.db import connect
from warehouse.load import load_run

D = Decimal
ALIKE = ("32148", "32426", "35369")
"""Three GPUShare V100 32G offers that read the same in a table (price, free count, fees)."""


def v100(kit: FeedKit, run: Any, key: str) -> Any:
    return kit.offer(
        run, key, gpu_model="V100", gpu_vram_gb=32, gpu_form_factor=None, raw_gpu_name="V100 32G",
        price=D("2.08"), currency="CNY", available_count=2, fees=(), plans=(), region=None,
        url=f"https://www.gpushare.com/store/hire/create?id={key}",
    )  # fmt: skip


def card(kit: FeedKit, run: Any, key: str, free: int | None, **changes: Any) -> Any:
    fields: dict[str, Any] = {
        "gpu_model": "RTX 4090", "gpu_vram_gb": 24, "gpu_form_factor": None,
        "raw_gpu_name": "RTX 4090", "currency": "CNY", "price": D("1.98"),
        "available_count": free, "fees": (), "plans": (), "region": None,
    }  # fmt: skip
    return kit.offer(run, key, **(fields | changes))


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("actionable")
    kit = FeedKit(root)
    path = root / "gpurent.duckdb"
    con = connect(path)
    try:
        g = kit.run(1, provider="gpushare")
        load_run(con, g, kit.write("g", [v100(kit, g, key) for key in ALIKE]))
        # The same card name in two form factors, and one that does not say which.
        v = kit.run(1, provider="vastai")
        load_run(con, v, kit.write("v", [
            kit.offer(v, "h100-pcie", gpu_form_factor="PCIe", raw_gpu_name="H100 PCIe",
                      price=D("1.87"), plans=()),
            kit.offer(v, "h100-open", gpu_form_factor=None, raw_gpu_name="H100 80GB",
                      price=D("1.95"), plans=()),
        ]))  # fmt: skip
        lam = kit.run(1, provider="lambda")
        load_run(con, lam, kit.write("l", [
            kit.offer(lam, "gpu_1x_h100_sxm5", gpu_form_factor="SXM", price=D("2.49"),
                      url=None, plans=()),
        ]))  # fmt: skip
        # Per-card offers: a free count that shows 8 cards, one that shows 1, none at all;
        # and a whole machine of 8.
        a = kit.run(1, provider="autodl")
        load_run(con, a, kit.write("a", [
            card(kit, a, "4090-eight-free", 8),
            card(kit, a, "4090-one-free", 1),
            card(kit, a, "4090-no-count", None, status=StockStatus.IN_STOCK),
            card(kit, a, "4090-machine", None, gpu_count=8, price=D("15.0"),
                 price_basis=PriceBasis.INSTANCE),
            card(kit, a, "4090-gone", 0, status=StockStatus.SOLD_OUT),
        ]))  # fmt: skip
    finally:
        con.close()
    return path


def table(*args: str) -> str:
    return invoke(*args).stdout


def by_key(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["offer_key"]: r for r in rows}


# ------------------------------------------------------------------ offer ids


def test_every_row_carries_its_offer_id_and_page(db: Path) -> None:
    for command in (("offers",), ("cheapest", "--min-vram", "0", "--limit", "50")):
        rows = invoke_json(*command, "--db", str(db))
        assert rows
        for row in rows:
            assert row["offer_id"] == names.offer_id(row["provider"], row["offer_key"])
            assert re.fullmatch(rf"{row['provider'][:2]}-[a-z2-7]{{7}}", row["offer_id"])
        assert len({r["offer_id"] for r in rows}) == len(rows)
    rows = by_key(invoke_json("offers", "--db", str(db)))
    assert rows["32148"]["url"] == "https://www.gpushare.com/store/hire/create?id=32148"
    assert rows["gpu_1x_h100_sxm5"]["url"] is None  # no page: said as such, not invented
    out = invoke("offers", "--provider", "gpushare", "--format", "csv", "--db", str(db)).stdout
    csv_rows = list(csv.DictReader(io.StringIO(out)))
    assert {"offer_id", "url", "gpu_form_factor"} <= set(csv_rows[0])
    assert {r["offer_id"] for r in csv_rows} == {names.offer_id("gpushare", k) for k in ALIKE}


def test_the_id_is_the_same_in_every_run(db: Path, tmp_path: Path) -> None:
    # Derived from provider and key only: another warehouse, another run, the same id.
    kit = FeedKit(tmp_path)
    other = tmp_path / "other.duckdb"
    con = connect(other)
    try:
        run = kit.run(7, provider="gpushare")
        load_run(con, run, kit.write("g7", [v100(kit, run, ALIKE[0])]))
    finally:
        con.close()
    first = by_key(invoke_json("offers", "--db", str(db)))[ALIKE[0]]["offer_id"]
    again = invoke_json("offers", "--db", str(other))[0]["offer_id"]
    assert first == again == api.offer_id("gpushare", ALIKE[0])


def test_rows_that_read_alike_are_told_apart_in_the_table(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    out = table("offers", "--provider", "gpushare", "--db", str(db))
    lines = [x for x in out.splitlines() if "gpushare" in x and "│" in x]
    assert len(lines) == 3
    ids = {names.offer_id("gpushare", key) for key in ALIKE}
    found = {i for line in lines for i in ids if i in line}
    assert found == ids  # one id a row, all different
    rest = {re.sub(r"gp-[a-z2-7]{7}", "", line) for line in lines}
    assert len(rest) == 1  # without the id, the three rows read the same


def test_explain_takes_the_id(db: Path) -> None:
    offer_id = names.offer_id("gpushare", "32426")
    by_id = table("explain", offer_id, "--db", str(db))
    by_key_text = table("explain", "gpushare", "32426", "--db", str(db))
    assert by_id == by_key_text
    assert by_id.splitlines()[0] == f"gpushare 32426 (id {offer_id}): V100 32G"
    assert "Listed at: https://www.gpushare.com/store/hire/create?id=32426" in by_id
    row = invoke_json("explain", offer_id.upper(), "--db", str(db))[0]  # case forgiven
    assert (row["provider"], row["offer_key"], row["offer_id"]) == ("gpushare", "32426", offer_id)


def test_explain_refuses_an_unknown_or_malformed_id(db: Path) -> None:
    from typer.testing import CliRunner

    from gpurent.cli.app import build_app

    def refused(*args: str) -> str:
        result = CliRunner().invoke(build_app(), [*args, "--db", str(db)], env={"COLUMNS": "400"})
        assert result.exit_code == 2, result.output
        return " ".join(re.sub(r"[│╭╮╰╯─]", " ", result.stderr).split())

    assert "no latest offer has the id 'gp-aaaaaaa'" in refused("explain", "gp-aaaaaaa")
    assert "no latest offer has the id 'zz-aaaaaaa'" in refused("explain", "zz-aaaaaaa")
    for typo in ("32148", "gpushare-aaaaaaa", "gp-aaaaaa1"):
        assert "is not an offer id" in refused("explain", typo)


def test_providers_that_share_a_code_are_told_apart_by_the_hash(tmp_path: Path) -> None:
    # "gpushare" and a "gpuhub" both start "gp": the id says which offer, and which provider.
    kit = FeedKit(tmp_path)
    db = tmp_path / "two.duckdb"
    con = connect(db)
    try:
        for provider in ("gpushare", "gpuhub"):
            run = kit.run(1, provider=provider)
            load_run(con, run, kit.write(provider, [v100(kit, run, ALIKE[0])]))
    finally:
        con.close()
    ids = {p: names.offer_id(p, ALIKE[0]) for p in ("gpushare", "gpuhub")}
    assert ids["gpushare"][:3] == ids["gpuhub"][:3] == "gp-" and len(set(ids.values())) == 2
    for provider, offer_id in ids.items():
        answer = api.explain(offer_id, db=db)
        assert (answer.provider, answer.offer_key) == (provider, ALIKE[0])


def test_an_id_two_offers_share_is_refused_naming_both(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A collision of the 35-bit hash, made certain: every key hashes alike.
    monkeypatch.setattr(names, "offer_id", lambda provider, key: f"{provider[:2]}-aaaaaaa")
    with pytest.raises(api.AmbiguousOfferId) as info:
        api.explain("gp-aaaaaaa", db=db)
    message = str(info.value)
    assert all(f"gpushare {key!r}" in message for key in ALIKE)
    assert "gpurent explain PROVIDER OFFER_KEY" in message
    assert isinstance(info.value, api.NoSuchOffer)  # a program's NoSuchOffer handler holds


# ------------------------------------------------------------------ form factor


def test_form_factor_is_shown_and_filters(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sxm = by_key(invoke_json("offers", "--gpu", "H100 SXM", "--db", str(db)))
    pcie = by_key(invoke_json("offers", "--gpu", "H100 PCIe", "--db", str(db)))
    assert set(sxm) == {"gpu_1x_h100_sxm5"} and sxm["gpu_1x_h100_sxm5"]["gpu_form_factor"] == "SXM"
    assert set(pcie) == {"h100-pcie"}
    # A form factor the offer does not state never matches a filter that names one...
    assert "h100-open" not in sxm and "h100-open" not in pcie
    # ...and any H100 is still every H100.
    every = by_key(invoke_json("offers", "--gpu", "H100", "--db", str(db)))
    assert set(every) == {"gpu_1x_h100_sxm5", "h100-pcie", "h100-open"}
    assert every["h100-open"]["gpu_form_factor"] is None
    monkeypatch.delenv("COLUMNS", raising=False)
    out = table("offers", "--gpu", "H100", "--db", str(db))
    labels = {key: line for line in out.splitlines() for key in every if names.offer_id(
        every[key]["provider"], key) in line}  # fmt: skip
    assert "H100 SXM 80G" in labels["gpu_1x_h100_sxm5"]
    assert "H100 PCIe 80G" in labels["h100-pcie"]
    assert "H100 80G" in labels["h100-open"]
    # cheapest narrows the same way
    cheapest = invoke_json("cheapest", "--min-vram", "0", "--gpu", "H100 PCIe", "--db", str(db))
    assert [r["offer_key"] for r in cheapest] == ["h100-pcie"]
    empty = " ".join(table("offers", "--gpu", "A100 SXM", "--db", str(db)).split())
    assert "No latest offer matches --gpu A100 SXM" in empty


def test_the_library_filters_by_form_factor(db: Path) -> None:
    assert {o.offer_key for o in api.offers(gpu="H100 SXM", db=db)} == {"gpu_1x_h100_sxm5"}
    assert {o.offer_key for o in api.offers(form_factor="PCIe", db=db)} == {"h100-pcie"}
    found = api.cheapest(0, gpu="H100", db=db)
    assert {o.gpu_form_factor for o in found} == {"SXM", "PCIe", None}
    with pytest.raises(api.UnknownName, match="names SXM"):
        api.offers(gpu="H100 SXM", form_factor="PCIe", db=db)


def test_a_name_without_a_form_factor_word_keeps_every_form() -> None:
    assert names.read_gpu("H100 SXM").form_factor == "SXM"
    assert names.read_gpu("h100 pcie").form_factor == "PCIe"
    assert names.read_gpu("H100 80GB").form_factor is None
    # One form factor in the catalog at that size: naming it narrows nothing.
    assert names.read_gpu("L40S PCIe").form_factor is None
    assert names.read_gpu("RTX 4090 PCIe").form_factor is None
    assert names.gpu_label("L40S", 48, "PCIe") == "L40S 48G"
    assert names.gpu_label("A100", 80, "SXM") == "A100 SXM 80G"


# ------------------------------------------------------------------ --gpus N left-outs


def test_cheapest_for_n_cards_says_which_per_card_offers_it_left_out(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    four = ("cheapest", "--min-vram", "24", "--gpu", "4090", "--gpus", "4", "--db", str(db))
    rows = invoke_json(*four)
    # The free count shows 8: 4 of them rented; the whole machine of 8 too.
    assert {r["offer_key"] for r in rows} == {"4090-eight-free", "4090-machine"}
    # One free, and no free count at all: nothing shows 4 cards on one machine. (Sold out is
    # not counted: it is left out for its stock, as at one card.)
    assert api.cheapest(24, gpu="4090", gpus=4, db=db).cards_left_out == 2
    # Every per-card card of one listed: the 4090s, the H100s (3 free) and the V100s (2 free).
    assert api.cheapest(24, gpus=4, db=db).cards_left_out == 2 + 3 + 3
    assert api.cheapest(24, gpus=1, db=db).cards_left_out == 0
    monkeypatch.delenv("COLUMNS", raising=False)
    line = "2 per-card offers left out: no free count shows 4 cards on one machine"
    assert line in table(*four)
    result = invoke(*four, "-f", "json")
    assert line in result.stderr and line not in result.stdout
    none = table("cheapest", "--min-vram", "24", "--gpus", "16", "--db", str(db))
    assert "9 per-card offers left out: no free count shows 16 cards on one machine" in none
