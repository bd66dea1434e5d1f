"""The restock forecast (issue 33): sold-out spells from confirmed polls, the Kaplan-Meier
arithmetic and its thresholds, calibration against the base rate on synthetic histories,
and what `history`, `watch list`, the API and the dashboard show of it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from benchmarks.forecast import calibration
from gpurent import api
from gpurent_core.forecast import (
    MIN_SPELLS,
    Poll,
    PollState,
    RestockModel,
    Spell,
    kaplan_meier,
    spells_from_polls,
)
from gpurent_core.model import RunStatus, StockStatus
from tests import cli_helpers
from tests.warehouse.wh_kit import FeedKit
from warehouse.db import connect
from warehouse.forecast import card_polls
from warehouse.load import load_run

R, S, U = PollState.RENTABLE, PollState.SOLD_OUT, PollState.UNKNOWN
MONDAY = datetime(2026, 11, 2, tzinfo=UTC)


def polls(states: str, provider: str = "acme", start: datetime = MONDAY) -> list[Poll]:
    """One poll an hour: R rentable, S sold out, U unknown."""
    code = {"R": R, "S": S, "U": U}
    return [Poll(provider, start + timedelta(hours=k), code[c]) for k, c in enumerate(states)]


def spell(hours: float, ended: bool = True, provider: str = "acme", at: int = 0) -> Spell:
    return Spell(provider, MONDAY + timedelta(hours=at), hours, ended)


# ------------------------------------------------------------------ spells and the math


def test_spells_need_a_rentable_poll_before_and_end_at_the_next() -> None:
    got = spells_from_polls(polls("SSRSSSRRSRSUSSRSS"))
    # The leading sold-out polls start no spell (when it began is unknown); the unknown
    # poll at 11 cuts the spell begun at 10 (of no length: left out) and the sold-out polls
    # after it wait for a rentable one before a spell starts again.
    assert [(s.start.hour, s.hours, s.ended, s.open) for s in got] == [
        (3, 3.0, True, False),  # sold out at 3, 4 and 5; rentable again at 6
        (8, 1.0, True, False),
        (15, 1.0, False, True),  # still running at the last poll: censored, open
    ]


def test_an_unknown_poll_censors_the_spell_at_the_last_sold_out_poll() -> None:
    (cut,) = spells_from_polls(polls("RSSSUSR"))
    assert (cut.start.hour, cut.hours, cut.ended, cut.open) == (1, 2.0, False, False)
    (other,) = spells_from_polls(polls("RSSSUSRSR", provider="beta"))[1:]
    assert (other.start.hour, other.hours, other.ended) == (7, 1.0, True)


def test_kaplan_meier_counts_a_censored_spell_for_what_it_says() -> None:
    km = kaplan_meier([spell(1), spell(2, ended=False), spell(3), spell(4)])
    assert km.at(0.5) == 1.0
    assert km.at(1) == pytest.approx(3 / 4)
    assert km.at(2.5) == pytest.approx(3 / 4)  # the censored spell ends nothing
    assert km.at(3) == pytest.approx(3 / 4 * 1 / 2)  # 2 at risk at 3 h, one restocks
    assert km.at(10) == 0.0


def test_below_the_threshold_it_says_not_enough_history() -> None:
    few = RestockModel([spell(2, at=h) for h in range(MIN_SPELLS - 1)], prior=8)
    found = few.forecast("acme", MONDAY)
    assert not found.enough
    assert found.wait_text() == "not enough history (4 sold-out spells; a forecast needs 5)"
    assert [c.p for c in found.chances] == [None, None, None]
    assert found.median_wait_h is None


def test_each_chance_says_how_many_spells_back_it() -> None:
    # Five spells that restocked within 2 h, three seen sold out for 3 h and still going.
    spells = [spell(2, at=k) for k in range(5)] + [spell(3, False, at=k) for k in range(3)]
    found = RestockModel(spells, prior=1e9).forecast("acme", MONDAY)  # the pooled curve
    by_h = {c.hours: c for c in found.chances}
    assert (by_h[1].spells, by_h[6].spells, by_h[24].spells) == (8, 5, 5)
    # The three still going count as not restocked: 5 of 8 by 2 h, none since.
    assert by_h[1].p == 0.0 and by_h[6].p == pytest.approx(5 / 8) == by_h[24].p
    assert found.median_wait_h == 2.0
    assert found.wait_text() == "expected wait about 2 h, from 8 sold-out spells"
    assert found.chances_text() == "0% within 1 h, 62% within 6 h, 62% within 24 h"


def test_a_card_sold_out_for_a_while_is_forecast_from_now_on() -> None:
    spells = [spell(h, at=h) for h in (1, 1, 1, 5, 5, 5, 9, 9)]
    model = RestockModel(spells, prior=1e9)  # the pooled curve alone
    fresh = model.forecast("acme", MONDAY)
    assert fresh.within(1) == pytest.approx(3 / 8)
    later = model.forecast("acme", MONDAY, elapsed_h=2)  # the 1 h spells are behind it
    assert later.within(1) == 0.0 and later.within(6) == pytest.approx(3 / 5)
    assert later.median_wait_h == 3.0


def test_a_level_with_few_spells_leans_on_the_one_above() -> None:
    slow = [spell(10, provider="slow", at=k) for k in range(40)]
    fast = [spell(0.5, provider="fast")]  # one spell: too few to speak for itself
    model = RestockModel(slow + fast, prior=8)
    assert 0.1 < (model.forecast("fast", MONDAY).within(1) or 0) < 0.5
    assert (model.forecast("slow", MONDAY).within(1) or 0) < 0.05


# ------------------------------------------------------------------ calibration


def test_habits_in_the_history_beat_the_base_rate() -> None:
    found = calibration(patterned=True)
    assert found.forecast_brier is not None and found.base_brier is not None
    assert found.test_spells > 100 and found.scored > 300
    assert found.forecast_brier < found.base_brier - 0.02, found


def test_without_habits_the_forecast_is_no_worse_than_the_base_rate() -> None:
    found = calibration(patterned=False)
    assert found.forecast_brier is not None and found.base_brier is not None
    assert found.forecast_brier <= found.base_brier + 0.002, found


# ------------------------------------------------------------------ from the warehouse

ACME = "RSSRSSSRRSRSSRSRSSSRSR"  # spells of 2, 3, 1, 2, 1, 3, 1 polls; rentable at the end


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """acme's H100 polled hourly through seven sold-out spells; one partial run in the
    middle could not read it (stale); zeta lists its H100 with unknown stock only; a
    2-card machine at acme with one card free is never rentable; h1 (per card, 3 free) never
    for 4 cards."""
    root = tmp_path_factory.mktemp("forecast")
    kit = FeedKit(root)
    path = root / "gpurent.duckdb"
    con = connect(path)
    try:
        for n, c in enumerate(ACME, start=1):
            run = kit.run(n)
            status = StockStatus.IN_STOCK if c == "R" else StockStatus.SOLD_OUT
            load_run(con, run, kit.write(f"a{n}", [
                kit.offer(run, "h1", status=status),
                kit.offer(run, "h2", gpu_count=2, available_count=1, region="eu-west"),
            ]))  # fmt: skip
            zeta = kit.run(n, provider="zeta")
            load_run(con, zeta, kit.write(f"z{n}", [
                kit.offer(zeta, "z1", status=StockStatus.UNKNOWN, available_count=None),
            ]))  # fmt: skip
        stale = kit.failed_page(len(ACME) + 1)  # h1 kept, unread: stale
        load_run(con, stale, kit.write("stale", [
            kit.offer(stale, "h2", gpu_count=2, available_count=1, region="eu-west"),
        ]))  # fmt: skip
        last = kit.run(len(ACME) + 2)
        load_run(con, last, kit.write("last", [
            kit.offer(last, "h1", status=StockStatus.SOLD_OUT),
            kit.offer(last, "h2", gpu_count=2, available_count=1, region="eu-west"),
        ]))  # fmt: skip
    finally:
        con.close()
    return path


def test_polls_count_confirmed_offers_only(db: Path) -> None:
    con = connect(db, read_only=True)
    try:
        found = card_polls(con, gpu_model="H100")
        four_cards = card_polls(con, gpu_model="H100", providers=["acme"], gpus=4)
        in_region = card_polls(con, gpu_model="h100", regions=["EU"])
    finally:
        con.close()
    acme = [p.state for p in found if p.provider == "acme"]
    assert "".join(s.value[0].upper() for s in acme) == ACME + "US"  # stale: unknown
    assert {p.state for p in found if p.provider == "zeta"} == {U}  # unknown is not sold out
    assert {p.state for p in four_cards[: len(ACME)]} == {S}  # 3 free of h1, 1 of h2
    assert {p.provider for p in in_region} == {"acme"}
    assert {p.state for p in in_region[: len(ACME)]} == {S}  # h2 only: never rentable


def test_the_api_answers_with_the_spells_behind_it(db: Path) -> None:
    found = api.restock_forecast("H100", db=db, now=MONDAY)
    assert isinstance(found, api.RestockForecast)
    assert found.spells == 7 and found.enough_history
    assert found.state_now == "unknown"  # acme sold out, zeta cannot tell
    assert [(f.provider, f.state_now, f.provider_spells) for f in found.providers] == [
        ("acme", "sold_out", 7), ("zeta", "unknown", 0),
    ]  # fmt: skip
    assert found.within_24h == 1.0 and found.spells_24h == 7
    assert found.median_wait_h is not None and 1 <= found.median_wait_h <= 3
    assert found.summary.endswith("from 7 sold-out spells")
    acme = api.restock_forecast("H100 80G", provider="ACME", db=db, now=MONDAY)
    assert acme.provider == "acme" and acme.sold_out_h == 0.0 and acme.providers == ()
    thin = api.restock_forecast("H100", gpus=4, db=db)
    assert not thin.enough_history and thin.within_1h is None
    assert thin.summary == "not enough history (0 sold-out spells; a forecast needs 5)"
    with pytest.raises(api.UnknownName, match="did you mean acme"):
        api.restock_forecast("H100", provider="acmee", db=db)


def test_history_shows_the_forecast_in_a_table_and_as_json(db: Path) -> None:
    rows = cli_helpers.invoke_json("history", "--gpu", "H100", "--by", "forecast", "--db", str(db))
    assert [(r["provider"], r["spells"]) for r in rows] == [(None, 7), ("acme", 7), ("zeta", 7)]
    assert {"within_1h", "within_6h", "within_24h", "median_wait_h", "spells_1h"} <= set(rows[0])
    table = cli_helpers.invoke("history", "--gpu", "H100", "--by", "forecast", "--db", str(db))
    assert "all providers" in table.stdout and "7 of 7" in table.stdout
    last = " ".join(cli_helpers.invoke("history", "--gpu", "H100", "--db", str(db)).stdout.split())
    assert "Restock forecast for H100:" in last and "from 7 sold-out spells" in last
    thin = cli_helpers.invoke(
        "history", "--gpu", "H100", "--gpus", "4", "--region", "eu", "--db", str(db)
    )
    assert "not enough history (0 sold-out spells; a forecast needs 5)" in " ".join(
        thin.stdout.split()
    )


def test_watch_list_says_the_expected_wait(db: Path, tmp_path: Path) -> None:
    copy = tmp_path / "w.duckdb"
    copy.write_bytes(db.read_bytes())
    for extra in ([], ["--count", "4"]):
        cli_helpers.invoke(
            "watch", "add", "--gpu", "H100", *extra, "--notify", "json://127.0.0.1:9/x",
            "--db", str(copy),
        )  # fmt: skip
    listed = cli_helpers.invoke_json("watch", "list", "--db", str(copy))
    assert listed[0]["expected_wait"].startswith("expected wait about ")
    assert listed[0]["expected_wait"].endswith(", from 7 sold-out spells")
    assert listed[1]["expected_wait"].startswith("not enough history (0 sold-out spells")
    table = " ".join(cli_helpers.invoke("watch", "list", "--db", str(copy)).stdout.split())
    assert "from 7 sold-out" in table


def test_the_availability_page_shows_it_in_both_languages(db: Path) -> None:
    from dashboards import tables
    from dashboards.i18n import Lang

    found = api.restock_forecast("H100", vram_gb=80, db=db, now=MONDAY)
    en = tables.restock_sentence(found, Lang.EN)
    zh = tables.restock_sentence(found, Lang.ZH)
    assert en.startswith("All providers: ") and "from 7 sold-out spells" in en
    assert zh.startswith("所有平台：") and "基于 7 次售罄" in zh
    zeta = tables.restock_sentence(found.providers[1], Lang.EN)  # no spell of its own
    assert zeta.startswith("zeta: ") and "within 1 h" in zeta
    few = api.restock_forecast("H100", gpus=4, db=db)
    assert tables.restock_sentence(few, Lang.ZH).startswith("所有平台：历史不足（0 次售罄")


def test_the_page_rounds_a_wait_as_the_cli_does(db: Path) -> None:
    """Audit (surfaces): a 2-minute wait read "about 0 h" on the page, "about 2 min" in the
    CLI; both now say the CLI's figure, in the page's language."""
    from dataclasses import replace

    from dashboards import tables
    from dashboards.i18n import Lang

    found = api.restock_forecast("H100", vram_gb=80, db=db, now=MONDAY)
    for hours, cli_says in ((2 / 60, "2 min"), (15.1, "15 h"), (1.5, "1.5 h")):
        short = replace(found, median_wait_h=hours)
        assert f"about {cli_says}" in tables.restock_sentence(short, Lang.EN)
        number, unit = cli_says.split()
        zh_unit = {"min": "分钟", "h": "小时"}[unit]
        assert f"约 {number} {zh_unit}" in tables.restock_sentence(short, Lang.ZH)
    over = replace(found, median_wait_h=None, longest_h=0.5)
    assert "over 30 min" in tables.restock_sentence(over, Lang.EN)


def _availability_page(db: str) -> None:
    from pathlib import Path

    from dashboards import pages_availability
    from dashboards.i18n import Lang
    from dashboards.state import Ctx

    pages_availability.render(Ctx(db=Path(db), lang=Lang.EN, currency="CNY"))


def test_the_availability_page_draws_the_forecast(db: Path) -> None:
    from streamlit.testing.v1 import AppTest

    app = AppTest.from_function(_availability_page, args=(str(db),), default_timeout=120)
    app.run()
    assert not app.exception, app.exception
    assert "Restock forecast" in [str(s.value) for s in app.subheader]
    # Markdown-escaped: provider names come from the warehouse.
    lines = [str(x.value) for x in app.markdown if "within 24 h" in str(x.value)]
    assert len(lines) == 3 and lines[0].startswith("- All providers\\:"), lines
    assert all("from 7 sold\\-out spells" in line for line in lines)


def test_a_poll_that_quarantined_a_keyless_item_is_not_sold_out(tmp_path: Path) -> None:
    """The other offers were confirmed sold out, but the item it could not identify may have
    been the card, free: unknown, not a sold-out poll that would lengthen a spell."""
    kit = FeedKit(tmp_path)
    con = connect(tmp_path / "blind.duckdb")
    try:
        sold = kit.run(1)
        load_run(con, sold, kit.write("r1", [kit.offer(sold, "h1", status=StockStatus.SOLD_OUT)]))
        blind = kit.run(2, RunStatus.PARTIAL)
        load_run(con, blind, kit.write("r2", [
            kit.offer(blind, "h1", status=StockStatus.SOLD_OUT),
            kit.quarantine(blind).model_copy(update={"offer_key": None}),
        ]))  # fmt: skip
        states = [p.state for p in card_polls(con, gpu_model="H100")]
    finally:
        con.close()
    assert states == [PollState.SOLD_OUT, PollState.UNKNOWN]


def test_a_provider_forecast_says_how_many_spells_are_its_own() -> None:
    """Audit (CLI): "at vastai ... from 317 sold-out spells" when vastai had 17: the figure
    blends every provider's spells, and says how many are the one asked."""
    spells = [spell(2, at=k) for k in range(6)] + [
        spell(2, at=k, provider="other") for k in range(9)
    ]
    found = RestockModel(spells, prior=1e9).forecast("acme", MONDAY)
    assert found.wait_text().endswith("from 15 sold-out spells of every provider (6 at this one)")


def test_a_machine_too_small_for_the_cards_asked_is_no_sight_of_them() -> None:
    """Audit (CLI): `--gpus 100` read every provider as sold out; a 1-card offer, or a card
    price with no per-machine count, says nothing of 100 cards on one machine."""
    from gpurent_core.cost.stock import could_supply

    one = {"gpu_count": 1, "price_basis": "instance", "provider": "lambda"}
    eight = {"gpu_count": 8, "price_basis": "instance", "provider": "lambda"}
    card = {"gpu_count": 1, "price_basis": "gpu", "provider": "vastai"}
    machine_counted = {"gpu_count": 1, "price_basis": "gpu", "provider": "autodl"}
    assert could_supply(eight, 8) and not could_supply(one, 2)
    assert not could_supply(card, 2) and could_supply(card, 1)
    assert could_supply(machine_counted, 4), "its free count may show 4 on one machine"
