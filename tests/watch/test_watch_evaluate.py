"""Evaluating watches over runs in a real warehouse: states, outbox rows, one transaction."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from gpurent_core.model import RunStatus, StockStatus
from tests.watch.watch_kit import T0, Market, outbox, states
from warehouse.watch import evaluate as evaluate_module
from warehouse.watch.criteria import PricePer, Watch
from warehouse.watch.evaluate import evaluate_watches
from warehouse.watch.store import add_watch, list_watches, remove_watch

HOOK = "json://127.0.0.1:9/hook"


def watch(con: duckdb.DuckDBPyConnection, **kw: object) -> Watch:
    fields: dict[str, object] = {"created_at": T0, "notify_urls": [HOOK], "gpu_model": "RTX 4090"}
    fields.update(kw)
    return add_watch(con, **fields)  # type: ignore[arg-type]


def evaluate(con: duckdb.DuckDBPyConnection, market: Market) -> list[str]:
    """Evaluate as of just after the market's last poll; the kinds of the alerts fired."""
    now = market.start + timedelta(minutes=market.n, seconds=30)
    return [a.kind.value for a in evaluate_watches(con, now=now).alerts]


def test_restock_fires_once_with_what_where_price_count_and_link(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    w = watch(con)
    sold = market.offer(status=StockStatus.SOLD_OUT, available_count=0)
    free = market.offer(available_count=2)
    market.poll([sold])
    assert evaluate(con, market) == []  # the baseline: armed
    market.poll([free])
    assert evaluate(con, market) == ["restock"]
    market.poll([free])
    assert evaluate(con, market) == []

    (row,) = outbox(con)
    assert row["status"] == "pending" and row["watch_id"] == w.watch_id
    assert row["idempotency_key"] == f"w{w.watch_id}/acme/h1/restock/acme-run-2"
    body = con.execute("SELECT body FROM outbox").fetchall()[0][0]
    assert "RTX 4090 24 GB freed up at acme (西北B区): 2 free card(s)" in body
    assert "CNY/hour" in body and "CNY/month" in body
    assert "1.98 CNY/hour per GPU" in body
    assert "https://example.test/market" in body
    assert "acme (西北B区)" in row["title"]


def test_the_watch_baseline_does_not_fire_for_what_was_already_in_stock(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    watch(con)
    free = market.offer(available_count=2)
    market.poll([free])
    market.poll([free])
    assert evaluate(con, market) == []
    assert states(con) == {(1, "acme", "h1"): "fired"}


def test_runs_from_before_the_watch_are_not_read(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    market.poll([market.offer(status=StockStatus.SOLD_OUT, available_count=0)])
    watch(con, created_at=T0 + timedelta(minutes=1, seconds=30))
    market.poll([market.offer(available_count=2)])
    assert evaluate(con, market) == []  # run 2 is the baseline, run 1 predates the watch


def test_without_a_free_count_two_good_polls_confirm(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    watch(con)
    market.poll([market.offer(status=StockStatus.SOLD_OUT, available_count=None)])
    market.poll([market.offer(available_count=None)])
    assert evaluate(con, market) == []
    market.poll([market.offer(available_count=None)])
    assert evaluate(con, market) == ["restock"]


def test_a_count_short_of_the_watch_needs_a_second_poll(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    watch(con, gpu_count=3)
    market.poll([market.offer(status=StockStatus.SOLD_OUT, available_count=0)])
    market.poll([market.offer(available_count=2)])  # 2 free: cannot supply 3 cards
    market.poll([market.offer(available_count=5)])  # covers 3: confirmed at once
    assert evaluate(con, market) == ["restock"]


@pytest.mark.parametrize(
    "bad", [RunStatus.FAILED, RunStatus.AUTH_REQUIRED, RunStatus.LAYOUT_CHANGED]
)
def test_runs_that_are_not_ok_never_fire_or_re_arm(
    con: duckdb.DuckDBPyConnection, market: Market, bad: RunStatus
) -> None:
    watch(con)
    sold = market.offer(status=StockStatus.SOLD_OUT, available_count=0)
    uncounted = market.offer(available_count=None)
    market.poll([sold])
    market.poll([uncounted])
    market.poll([uncounted], status=bad)  # would be the confirming poll if it counted
    assert evaluate(con, market) == []
    market.poll([uncounted])  # the second GOOD poll in stock
    assert evaluate(con, market) == ["restock"]
    # After the fire, bad runs with the offer gone (or sold out) do not re-arm it.
    market.poll([], status=bad)
    market.poll([sold], status=bad)
    market.poll([market.offer(available_count=2)])
    assert evaluate(con, market) == []
    assert len(outbox(con)) == 1


def test_absent_twice_re_arms_and_a_comeback_fires_again(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    watch(con)
    other = market.offer("other", gpu_model="H100", gpu_vram_gb=80)
    market.poll([other])
    market.poll([other, market.offer(available_count=2)])  # new offer: was absent
    assert evaluate(con, market) == ["restock"]
    market.poll([other])
    market.poll([other])
    market.poll([other, market.offer(available_count=1)])
    assert evaluate(con, market) == ["restock"]
    assert [r["run_id"] for r in outbox(con)] == ["acme-run-2", "acme-run-5"]
    # A pair back to "armed, absent" is forgotten (no row) rather than kept forever.
    market.poll([other])
    market.poll([other])
    evaluate(con, market)
    assert states(con) == {}


def test_flapping_free_counts_alert_once(con: duckdb.DuckDBPyConnection, market: Market) -> None:
    watch(con)
    sold = market.offer(status=StockStatus.SOLD_OUT, available_count=0)
    free = market.offer(available_count=2)
    for offers in ([sold], [free], [sold], [free], [sold], [free]):
        market.poll(offers)
    assert evaluate(con, market) == ["restock"]


def test_evaluating_again_changes_nothing(con: duckdb.DuckDBPyConnection, market: Market) -> None:
    watch(con)
    market.poll([market.offer(status=StockStatus.SOLD_OUT, available_count=0)])
    market.poll([market.offer(available_count=2)])
    assert evaluate(con, market) == ["restock"]
    before = (outbox(con), states(con))
    assert evaluate(con, market) == []
    assert (outbox(con), states(con)) == before


def test_a_crash_mid_evaluation_leaves_state_and_outbox_as_they_were(
    con: duckdb.DuckDBPyConnection, market: Market, monkeypatch: pytest.MonkeyPatch
) -> None:
    watch(con)
    market.poll([market.offer(status=StockStatus.SOLD_OUT, available_count=0)])
    market.poll([market.offer(available_count=2)])

    def boom(*args: object, **kwargs: object) -> int:
        raise RuntimeError("disk full")

    monkeypatch.setattr(evaluate_module, "enqueue", boom)
    with pytest.raises(RuntimeError, match="disk full"):
        evaluate(con, market)
    assert states(con) == {} and outbox(con) == []
    assert con.execute("SELECT count(*) FROM watch_cursors").fetchall()[0][0] == 0
    monkeypatch.undo()
    assert evaluate(con, market) == ["restock"]  # redone, exactly once
    assert len(outbox(con)) == 1


def test_price_drop_fires_and_re_arms_when_the_price_goes_back_up(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    watch(con, max_price=Decimal("2.5"), currency="CNY", price_per=PricePer.HOUR)
    dear = market.offer(price=Decimal("3.20"), available_count=2)
    cheap = market.offer(price=Decimal("1.80"), available_count=2)
    market.poll([dear])
    market.poll([cheap])
    assert evaluate(con, market) == ["price_drop"]
    market.poll([dear])
    market.poll([cheap])  # one poll over the cap is not a confirmed rise
    assert evaluate(con, market) == []
    market.poll([dear])
    market.poll([dear])
    market.poll([cheap])
    assert evaluate(con, market) == ["price_drop"]
    body = con.execute("SELECT body FROM outbox ORDER BY notification_id").fetchall()[0][0]
    assert "within your price" in body and "<= 2.5 CNY/card-hour" in body


def test_monthly_caps_compare_the_true_monthly_cost_in_the_watch_currency(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    # 1.98 CNY/h always on is about 1,445 CNY a month (plus the data disk over 50 GB: none).
    watch(con, max_price=Decimal("1500"), currency="CNY", price_per=PricePer.MONTH)
    market.poll([market.offer(status=StockStatus.SOLD_OUT, available_count=0)])
    market.poll([market.offer(available_count=2)])
    assert evaluate(con, market) == ["restock"]
    w2 = watch(con, max_price=Decimal("1400"), currency="CNY", price_per=PricePer.MONTH)
    market.poll([market.offer(available_count=2)])
    market.poll([market.offer(available_count=2)])
    evaluate(con, market)
    assert states(con)[(w2.watch_id, "acme", "h1")] == "armed"  # over its cap


def test_filters_on_provider_region_and_vram(
    con: duckdb.DuckDBPyConnection, market: Market, tmp_path: Path
) -> None:
    watch(con, providers=["elsewhere"])
    watch(con, regions=["华东"])
    watch(con, gpu_model=None, min_vram_gb=48)
    market.poll([market.offer(status=StockStatus.SOLD_OUT, available_count=0)])
    market.poll([market.offer(available_count=2)])
    assert evaluate(con, market) == []
    assert states(con) == {}


def test_a_watch_on_a_form_factor_alerts_only_on_offers_that_say_it(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    sxm = watch(con, gpu_model="H100", gpu_form_factor="SXM")
    assert list_watches(con)[0].gpu_form_factor == "SXM"  # stored and read back
    h100 = {"gpu_model": "H100", "gpu_vram_gb": 80, "raw_gpu_name": "H100 80GB"}
    forms = {"sxm": "SXM", "pcie": "PCIe", "unsaid": None}
    sold = [
        market.offer(key, **h100, gpu_form_factor=form, status=StockStatus.SOLD_OUT,
                     available_count=0)
        for key, form in forms.items()
    ]  # fmt: skip
    free = [
        market.offer(key, **h100, gpu_form_factor=form, available_count=2)
        for key, form in forms.items()
    ]
    market.poll(sold)
    assert evaluate(con, market) == []
    market.poll(free)
    # The PCIe offer is another card; the one that does not say may be either: no alert.
    assert evaluate(con, market) == ["restock"]
    assert states(con) == {(sxm.watch_id, "acme", "sxm"): "fired"}
    body = con.execute("SELECT body FROM outbox").fetchall()[0][0]
    assert "H100 SXM 80 GB freed up at acme" in body
    assert f"Watch #{sxm.watch_id}: H100 SXM x1." in body


def test_a_form_factor_needs_its_model() -> None:
    with pytest.raises(ValueError, match="form factor"):
        Watch(
            watch_id=1, created_at=T0, gpu_model=None, min_vram_gb=80, gpu_count=1,
            max_price=None, currency=None, price_per=None, providers=(), regions=(),
            notify_urls=(HOOK,), gpu_form_factor="SXM",
        )  # fmt: skip


def test_every_destination_gets_its_own_row(con: duckdb.DuckDBPyConnection, market: Market) -> None:
    watch(con, notify_urls=[HOOK, "json://127.0.0.1:10/other"])
    market.poll([market.offer(status=StockStatus.SOLD_OUT, available_count=0)])
    market.poll([market.offer(available_count=2)])
    evaluate(con, market)
    rows = outbox(con)
    assert [r["target_seq"] for r in rows] == [0, 1]
    assert len({r["idempotency_key"] for r in rows}) == 1


def test_stale_transitions_are_recorded_as_expired_not_sent(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    watch(con)
    market.poll([market.offer(status=StockStatus.SOLD_OUT, available_count=0)])
    market.poll([market.offer(available_count=2)])
    later = market.start + timedelta(hours=5)
    (alert,) = evaluate_watches(con, now=later).alerts
    assert alert.stale
    assert [r["status"] for r in outbox(con)] == ["expired"]


def test_removing_a_watch_cancels_its_pending_notifications(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    w = watch(con)
    market.poll([market.offer(status=StockStatus.SOLD_OUT, available_count=0)])
    market.poll([market.offer(available_count=2)])
    evaluate(con, market)
    assert remove_watch(con, w.watch_id) == 1
    assert [r["status"] for r in outbox(con)] == ["cancelled"]
    assert states(con) == {} and list_watches(con) == []


def test_unknown_stock_does_not_count(con: duckdb.DuckDBPyConnection, market: Market) -> None:
    watch(con)
    market.poll([market.offer(status=StockStatus.SOLD_OUT, available_count=0)])
    market.poll([market.offer(status=StockStatus.UNKNOWN, available_count=None)])
    market.poll([market.offer(available_count=None)])
    market.poll([market.offer(status=StockStatus.UNKNOWN, available_count=None)])
    market.poll([market.offer(available_count=None)])
    assert evaluate(con, market) == []


def test_two_providers_are_evaluated_independently(
    con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    watch(con)
    a = Market(con, tmp_path / "a", provider="acme")
    b = Market(con, tmp_path / "b", provider="bolt", start=T0 + timedelta(seconds=10))
    for m in (a, b):
        m.poll([m.offer(status=StockStatus.SOLD_OUT, available_count=0)])
    b.poll([b.offer(available_count=4)])
    assert [x.provider for x in evaluate_watches(con, now=T0 + timedelta(minutes=3)).alerts] == [
        "bolt"
    ]


def test_a_run_is_read_back_whole_with_fees_and_plans(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    from warehouse.watch.runs import offers_of_run

    run = market.poll([market.offer(available_count=2), market.offer("h2", available_count=0)])
    market.poll([market.offer(available_count=1)])
    seen = offers_of_run(con, "acme", run.run_id)
    assert [(o["offer_key"], o["available_count"]) for o in seen] == [("h1", 2), ("h2", 0)]
    assert seen[0]["fees"] and seen[0]["fees"][0]["fee_type"] == "data_disk"
    assert seen[0]["plans"] == []
