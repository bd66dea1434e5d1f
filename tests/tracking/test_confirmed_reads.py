"""`rank` and `history` read only what a provider's latest look confirmed (rule of truth 11):
rental heat leaves stale rows out and says how many; availability counts a poll only where
that run saw the card with a known stock answer (audit F1 and F2)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner, Result

from gpurent.api import views
from gpurent.cli import tracking
from gpurent_core.model import OfferRecord, ProviderRun, RunStatus, StockStatus
from tests.warehouse.wh_kit import T0, FeedKit
from warehouse.db import connect
from warehouse.load import load_run
from warehouse.trends import (
    NOT_CONFIRMED,
    daily_history,
    offer_changes,
    poll_availability,
    rental_heat,
)

STALE_LINE = "not confirmed by their provider's latest run left out"


def cli(*args: str) -> Result:
    """The tracking commands alone, in-process; stdout and stderr apart."""
    app = typer.Typer()
    app.add_typer(tracking.app)
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result


class Warehouse:
    """A real warehouse file under tmp_path, loaded through the real load path."""

    def __init__(self, root: Path) -> None:
        self.kit = FeedKit(root)
        self.path = root / "gpurent.duckdb"
        self.con = connect(self.path)

    def load(self, run: ProviderRun, offers: list[OfferRecord] | None = None) -> None:
        feed = None if offers is None else self.kit.write(f"{run.provider}-{run.run_id}", offers)
        load_run(self.con, run, feed)

    def close(self) -> Path:
        self.con.close()
        return self.path


@pytest.fixture
def wh(tmp_path: Path) -> Iterator[Warehouse]:
    house = Warehouse(tmp_path)
    yield house
    house.con.close()


# ------------------------------------------------------------------ F1: rank


def failed_after_ok(wh: Warehouse) -> None:
    """acme lists an H100 (3 free) and an RTX 4090 (2 free), then its next run fails: both
    stay listed, stale. zeta's H100 is confirmed, sold out."""
    kit = wh.kit
    ok = kit.run(1)
    wh.load(ok, [
        kit.offer(ok, "h1"),
        kit.offer(ok, "g1", gpu_model="RTX 4090", gpu_vram_gb=24, gpu_form_factor=None,
                  available_count=2),
    ])  # fmt: skip
    zeta = kit.run(1, provider="zeta")
    wh.load(zeta, [kit.offer(zeta, "z1", status=StockStatus.SOLD_OUT, available_count=0)])
    wh.load(kit.run(2, RunStatus.FAILED))


def test_rank_leaves_out_what_a_failed_run_left_stale(wh: Warehouse) -> None:
    failed_after_ok(wh)
    path = wh.close()
    result = cli("rank", "--db", str(path), "--currency", "USD", "--format", "json")
    rows = {r["gpu_model"]: r for r in json.loads(result.stdout)}
    assert set(rows) == {"H100"}  # the RTX 4090 is only acme's, and not confirmed
    h100 = rows["H100"]
    assert (h100["offers"], h100["providers"], h100["providers_in_stock"]) == (1, 1, 0)
    assert (h100["in_stock_share"], h100["free_cards"]) == (0.0, None)
    assert h100["median_true_hourly"] is None  # nothing confirmed in stock to price
    assert h100["stale_left_out"] == 1
    # JSON keeps stdout to its rows: the count of every stale offer left out goes to stderr.
    assert f"2 offers {STALE_LINE}" in result.stderr


def test_rank_table_says_how_many_stale_offers_it_left_out(wh: Warehouse) -> None:
    failed_after_ok(wh)
    path = wh.close()
    out = cli("rank", "--db", str(path), "--currency", "USD").stdout
    assert "H100 SXM 80G" in out and "RTX 4090" not in out
    assert f"2 offers {STALE_LINE}" in out


def test_rank_with_nothing_confirmed_ranks_nothing(wh: Warehouse) -> None:
    kit = wh.kit
    ok = kit.run(1)
    wh.load(ok, [kit.offer(ok, "h1"), kit.offer(ok, "h2", price=Decimal("4.98"))])
    wh.load(kit.run(2, RunStatus.FAILED))
    path = wh.close()
    assert json.loads(cli("rank", "--db", str(path), "--format", "json").stdout) == []
    out = cli("rank", "--db", str(path)).stdout
    assert "100%" not in out and "No offer" in out
    assert f"2 offers {STALE_LINE}" in out


def test_rental_heat_reads_only_what_a_partial_run_confirmed(wh: Warehouse) -> None:
    kit = wh.kit
    ok = kit.run(1)
    wh.load(ok, [kit.offer(ok, "h1"), kit.offer(ok, "h2", available_count=2)])
    partial = kit.run(2, RunStatus.PARTIAL, unread_keys=("h1",))  # h1's page failed
    wh.load(partial, [kit.offer(partial, "h2", status=StockStatus.SOLD_OUT, available_count=0)])
    moment = partial.started_at + timedelta(hours=1)
    (h100,) = rental_heat(wh.con, display_currency="USD", now=moment).rows
    assert (h100["offers"], h100["in_stock_share"], h100["free_cards"]) == (1, 0.0, None)
    assert (h100["providers_in_stock"], h100["median_true_hourly"]) == (0, None)
    assert h100["stale_left_out"] == 1


# ------------------------------------------------------------------ F2: history


def stale_for_eight_days(wh: Warehouse) -> None:
    """acme's H100 seen in stock once; then 32 partial runs, one every 6 hours, that read
    acme's RTX 4090 page but not the H100's (kept stale all along)."""
    kit = wh.kit
    first = kit.run(0)
    wh.load(first, [kit.offer(first, "h1"), kit.offer(first, "g1", gpu_model="RTX 4090",
                                                       gpu_vram_gb=24, gpu_form_factor=None)])  # fmt: skip
    for k in range(1, 33):
        run = kit.run(6 * k, RunStatus.PARTIAL, unread_keys=("h1",))
        wh.load(run, [kit.offer(run, "g1", gpu_model="RTX 4090", gpu_vram_gb=24,
                                gpu_form_factor=None)])  # fmt: skip


def test_a_poll_that_kept_the_card_stale_is_no_poll(wh: Warehouse) -> None:
    stale_for_eight_days(wh)
    polls = poll_availability(wh.con, gpu_model="H100")
    assert polls.rows() == [("acme", T0, 1, 1, 3)]  # only the run that saw it
    days = daily_history(wh.con, gpu_model="H100")
    assert [(d["date"], d["polls"], d["free_share"]) for d in days] == [(date(2026, 11, 1), 1, 1.0)]
    # The RTX 4090 was read at every poll: all 33 count.
    assert poll_availability(wh.con, gpu_model="RTX 4090").height == 33


def test_history_claims_no_hour_from_polls_that_never_saw_the_card(wh: Warehouse) -> None:
    stale_for_eight_days(wh)
    path = wh.close()
    pattern = json.loads(cli("history", "--gpu", "H100", "--by", "pattern", "--db", str(path),
                             "--format", "json").stdout)  # fmt: skip
    assert {(p["polls"], p["days"], p["enough_history"]) for p in pattern} == {(1, 1, False)}
    assert all(p["usually_free"] == "" for p in pattern)
    table = cli("history", "--gpu", "H100", "--db", str(path)).stdout
    assert "usually free" not in table and "not enough history (1 poll over 1 day" in table
    # The API (and the dashboard's availability page through it) reads the same polls.
    assert views.availability_polls(path, gpu_model="H100", vram_gb=80).height == 1


def test_a_poll_of_unknown_stock_is_no_evidence(wh: Warehouse) -> None:
    """ok (in stock), a refused token (public prices, stock unknown), ok (in stock)."""
    kit = wh.kit
    for n, status in ((1, RunStatus.OK), (2, RunStatus.AUTH_REQUIRED), (3, RunStatus.OK)):
        run = kit.run(n, status)
        stock: dict[str, Any] = (
            {"status": StockStatus.UNKNOWN, "available_count": None}
            if status is RunStatus.AUTH_REQUIRED
            else {}
        )
        wh.load(run, [kit.offer(run, "h1", **stock)])
    polls = poll_availability(wh.con, gpu_model="H100")
    assert [p.hour for p in polls["polled_at"]] == [9, 11]  # the refused poll is not one
    (day,) = daily_history(wh.con, gpu_model="H100")
    assert (day["polls"], day["free_share"]) == (2, 1.0)


def test_a_poll_counts_as_free_or_not_only_when_it_can_tell(wh: Warehouse) -> None:
    """Per poll: free when an offer it saw was; not free when it saw every offer listed, of
    known stock, and none was free, or when the listing it read no longer names the card (a
    marketplace drops a rented card: rule of truth 10)."""
    kit = wh.kit
    sold = {"status": StockStatus.SOLD_OUT, "available_count": 0}
    unknown = {"status": StockStatus.UNKNOWN, "available_count": None}
    r1 = kit.run(1)
    wh.load(r1, [kit.offer(r1, "h1"), kit.offer(r1, "h2", **sold)])
    r2 = kit.run(2, RunStatus.PARTIAL, unread_keys=("h2",))  # h2 unread, h1 free: free
    wh.load(r2, [kit.offer(r2, "h1")])
    r3 = kit.run(3)  # h1 sold out, h2 of unknown stock: it might be free, cannot tell
    wh.load(r3, [kit.offer(r3, "h1", **sold), kit.offer(r3, "h2", **unknown)])
    r4 = kit.run(4)  # both read, both sold out: not free
    wh.load(r4, [kit.offer(r4, "h1", **sold), kit.offer(r4, "h2", **sold)])
    r5 = kit.run(5)  # a listing read whole that names no H100 any more: none free there
    wh.load(r5, [kit.offer(r5, "g1", gpu_model="RTX 4090", gpu_vram_gb=24, gpu_form_factor=None)])
    polls = poll_availability(wh.con, gpu_model="H100")
    assert [(p.hour, listed, free) for _, p, listed, free, _ in polls.rows()] == [
        (9, 2, 1),
        (10, 1, 1),
        (12, 2, 0),
        (13, 0, 0),
    ]
    (day,) = daily_history(wh.con, gpu_model="H100")
    assert (day["polls"], day["free_share"]) == (4, 0.5)


# ------------------------------------------------------------------ H1: history --by offer


def test_offer_changes_cut_what_no_poll_confirmed(wh: Warehouse) -> None:
    """The version stored from the first poll is still open, but only that poll saw it: the
    rest of its span is a stretch of its own, not confirmed (as `--by day` counts it)."""
    stale_for_eight_days(wh)
    changes = offer_changes(wh.con, gpu_model="H100")
    first_stale = T0 + timedelta(hours=6)
    assert changes.select("offer_key", "valid_from", "valid_to", "status", "confirmed").rows() == [
        ("h1", T0, first_stale, "in_stock", True),
        ("h1", first_stale, None, NOT_CONFIRMED, False),
    ]
    assert changes["available_count"].to_list() == [3, None]
    # The RTX 4090 was read at every poll: one confirmed state, as stored.
    g1 = offer_changes(wh.con, gpu_model="RTX 4090")
    assert g1.select("valid_from", "valid_to", "confirmed").rows() == [(T0, None, True)]


def test_offer_changes_confirm_again_when_the_offer_is_read_again(wh: Warehouse) -> None:
    kit = wh.kit
    for n in range(1, 5):  # h1's page unread at runs 2 and 3, the RTX 4090's read
        run = kit.run(n, RunStatus.PARTIAL, unread_keys=("h1",)) if n in (2, 3) else kit.run(n)
        g1 = kit.offer(run, "g1", gpu_model="RTX 4090", gpu_vram_gb=24, gpu_form_factor=None)
        wh.load(run, [g1] if n in (2, 3) else [g1, kit.offer(run, "h1")])
    pieces = offer_changes(wh.con, gpu_model="H100").select(
        "valid_from", "valid_to", "status", "confirmed"
    )
    hour = timedelta(hours=1)
    assert pieces.rows() == [
        (T0 + hour, T0 + 2 * hour, "in_stock", True),
        (T0 + 2 * hour, T0 + 4 * hour, NOT_CONFIRMED, False),
        (T0 + 4 * hour, None, "in_stock", True),
    ]


def test_history_by_offer_shows_the_stale_stretch_as_not_confirmed(wh: Warehouse) -> None:
    stale_for_eight_days(wh)
    path = wh.close()
    rows = json.loads(cli("history", "--gpu", "H100", "--by", "offer", "--db", str(path),
                          "--format", "json").stdout)  # fmt: skip
    assert [(r["status"], r["confirmed"], r["valid_to"] is None) for r in rows] == [
        ("in_stock", True, False),
        (NOT_CONFIRMED, False, True),
    ]
    # The dashboard's timeline reads the same rows through the API.
    assert views.offer_changes(path, gpu_model="H100", vram_gb=80)["confirmed"].to_list() == [
        True,
        False,
    ]
