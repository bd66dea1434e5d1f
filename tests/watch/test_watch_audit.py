"""Watches and history take only a confirmed look as evidence (audit W1, W2, W3, W4).

Every test loads real runs through the real load path into a real warehouse file:

* W3: a run that quarantined an item without a key closed that item's offer (rule of truth
  10, a storage rule) without knowing which offer it was: none of its absences is
  confirmed. It neither re-arms a watch nor counts as a poll that found the card not free.
* W1: an offer the watch never confirmed since it began (kept stale at its first poll,
  closed only by such runs) is at its baseline when first seen, not "new".
* W2: an alert expired unsent (the run was over an hour old) does not use up the
  transition: the next poll that confirms the card free announces it.
* W4: a watch leaves spot (interruptible) prices out unless it asks for them.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from pathlib import Path
from typing import Any

import duckdb

from gpurent_core.enums import PriceKind
from gpurent_core.model import OfferRecord, ProviderRun, QuarantineRecord, RunStatus, StockStatus
from tests.watch.watch_kit import T0, Market, cli_json, outbox, states
from warehouse.load import load_run
from warehouse.trends import daily_history, poll_availability
from warehouse.watch.evaluate import evaluate_watches
from warehouse.watch.store import add_watch, get_watch

HOOK = "json://127.0.0.1:9/hook"
SOLD = {"status": StockStatus.SOLD_OUT, "available_count": 0}


def blind_poll(market: Market, offers: Iterable[dict[str, Any]]) -> ProviderRun:
    """A partial run whose feed holds these offers and one item quarantined WITHOUT a key
    (its id unreadable): the load closes every offer it does not list (rule 10)."""
    market.n += 1
    started = market.start + timedelta(minutes=market.n)
    run = ProviderRun(
        run_id=f"{market.provider}-run-{market.n}",
        provider=market.provider,
        started_at=started,
        finished_at=started + timedelta(seconds=20),
        status=RunStatus.PARTIAL,
        quarantined=1,
    )
    seen = started + timedelta(seconds=5)
    lines: list[OfferRecord | QuarantineRecord] = [
        OfferRecord(provider=market.provider, run_id=run.run_id, observed_at=seen, **o)
        for o in offers
    ]
    lines.append(
        QuarantineRecord(
            provider=market.provider, run_id=run.run_id, observed_at=seen, offer_key=None,
            reason="missing_field: key gone: id", field="offer_key",
            raw={"id": "h1x", "gpu_name": "RTX 4090"},
        )
    )  # fmt: skip
    path = market.feeds / f"{run.run_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(r.model_dump_json() + "\n" for r in lines), encoding="utf-8")
    load_run(market.con, run, path)
    return run


def evaluate(con: duckdb.DuckDBPyConnection, market: Market, late: timedelta = timedelta()) -> Any:
    """Evaluate as of just after the market's last poll (``late``: that much later)."""
    now = market.start + timedelta(minutes=market.n, seconds=30) + late
    return evaluate_watches(con, now=now)


def kinds(con: duckdb.DuckDBPyConnection, market: Market) -> list[str]:
    return [a.kind.value for a in evaluate(con, market).alerts]


def other(market: Market) -> dict[str, Any]:
    return market.offer("other", gpu_model="H100", gpu_vram_gb=80)


# ------------------------------------------------------------------ W3


def test_an_item_quarantined_without_a_key_neither_re_arms_nor_fires(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    add_watch(con, created_at=T0, notify_urls=[HOOK], gpu_model="RTX 4090")
    free = market.offer(available_count=1)
    market.poll([other(market), free])  # baseline: in stock before the watch
    assert kinds(con, market) == []
    for _ in range(2):  # h1's item is listed, its id unreadable: the load closes h1
        blind_poll(market, [other(market)])
        assert kinds(con, market) == []
        assert states(con) == {(1, "acme", "h1"): "fired"}  # no reading: not absent
    market.poll([other(market), free])  # readable again, unchanged: never left
    assert kinds(con, market) == []
    assert outbox(con) == []


def test_only_partial_runs_after_the_baseline_never_fire(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    add_watch(con, created_at=T0, notify_urls=[HOOK], gpu_model="RTX 4090")
    free = market.offer(available_count=1)
    market.poll([other(market), free])
    blind_poll(market, [other(market)])
    blind_poll(market, [other(market)])
    # Partial too (another item quarantined with its key), h1 read again.
    market.poll([other(market), free], status=RunStatus.PARTIAL, unread_keys=("x9",))
    assert kinds(con, market) == []


def test_a_watch_whose_first_poll_was_blind_does_not_take_the_card_for_new(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    free = market.offer(available_count=1)
    market.poll([other(market), free])  # before the watch
    add_watch(con, created_at=market.start + timedelta(minutes=1, seconds=30),
              notify_urls=[HOOK], gpu_model="RTX 4090")  # fmt: skip
    blind_poll(market, [other(market)])  # the watch's first poll: h1's item unreadable
    blind_poll(market, [other(market)])
    market.poll([other(market), free])
    assert kinds(con, market) == []
    assert states(con) == {(1, "acme", "h1"): "fired"}  # its baseline: in stock
    # From there it is watched as any other: two confirmed absences re-arm, then it fires.
    market.poll([other(market)])
    market.poll([other(market)])
    market.poll([other(market), free])
    assert kinds(con, market) == ["restock"]


def test_a_confirmed_absence_still_re_arms_and_a_new_offer_still_fires(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    """The control: a partial run with no unkeyed item read h1's listing whole."""
    add_watch(con, created_at=T0, notify_urls=[HOOK], gpu_model="RTX 4090")
    free = market.offer(available_count=1)
    market.poll([other(market), free])
    market.poll([other(market)], status=RunStatus.PARTIAL, unread_keys=("other-2",))
    market.poll([other(market)], status=RunStatus.PARTIAL, unread_keys=("other-2",))
    market.poll([other(market), free, market.offer("h2", available_count=1)])
    assert sorted(kinds(con, market)) == ["restock", "restock"]


def test_history_takes_a_blind_poll_for_no_evidence(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    free = market.offer(available_count=1)
    market.poll([other(market), free])
    blind_poll(market, [other(market)])
    blind_poll(market, [other(market)])
    market.poll([other(market), free])
    polls = poll_availability(con, gpu_model="RTX 4090")
    assert polls.select("listed", "free_offers").rows() == [(1, 1), (1, 1)]
    (day,) = daily_history(con, gpu_model="RTX 4090")
    assert (day["polls"], day["free_share"]) == (2, 1.0)
    # A blind poll that read a free card still says so; a listing read whole without the
    # card is still a poll that found it not free.
    blind_poll(market, [other(market), free])
    market.poll([other(market)])
    polls = poll_availability(con, gpu_model="RTX 4090")
    assert polls.select("listed", "free_offers").rows()[-2:] == [(1, 1), (0, 0)]


# ------------------------------------------------------------------ W1


def test_an_offer_kept_stale_at_the_first_poll_is_at_its_baseline(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    free = market.offer(available_count=1)
    market.poll([other(market), free])  # before the watch: in stock
    add_watch(con, created_at=market.start + timedelta(minutes=1, seconds=30),
              notify_urls=[HOOK], gpu_model="RTX 4090")  # fmt: skip
    # The watch's first poll is partial: h1's page failed, h1 kept stale.
    market.poll([other(market)], status=RunStatus.PARTIAL, unread_keys=("h1",))
    market.poll([other(market)], status=RunStatus.PARTIAL, unread_keys=("h1",))
    assert kinds(con, market) == []
    market.poll([other(market), free])  # read again: in stock all along
    assert kinds(con, market) == []
    assert states(con) == {(1, "acme", "h1"): "fired"}


def test_an_offer_first_listed_after_a_confirmed_absence_is_new(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    add_watch(con, created_at=T0, notify_urls=[HOOK], gpu_model="RTX 4090")
    market.poll([other(market)])  # baseline read whole: no RTX 4090
    market.poll([other(market)], status=RunStatus.PARTIAL, unread_keys=("other",))
    market.poll([other(market), market.offer(available_count=1)])
    assert kinds(con, market) == ["restock"]


# ------------------------------------------------------------------ W2


def test_an_expired_alert_leaves_the_card_to_the_next_fresh_poll(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    add_watch(con, created_at=T0, notify_urls=[HOOK], gpu_model="RTX 4090")
    free = market.offer(available_count=1)
    market.poll([other(market), market.offer(**SOLD)])  # baseline: armed
    market.poll([other(market), free])  # freed up ...
    market.poll([other(market), free])
    # ... while the poller was down: evaluated hours later, the alert expires, once.
    found = evaluate(con, market, late=timedelta(hours=3))
    assert [(a.kind.value, a.stale) for a in found.alerts] == [("restock", True)]
    assert [r["status"] for r in outbox(con)] == ["expired"]
    assert states(con) == {(1, "acme", "h1"): "arriving"}
    market.poll([other(market), free])  # the fresh poll confirms it free: announced
    found = evaluate(con, market)
    assert [(a.kind.value, a.stale) for a in found.alerts] == [("restock", False)]
    assert [r["status"] for r in outbox(con)] == ["expired", "pending"]
    market.poll([other(market), free])
    assert kinds(con, market) == []  # announced once


def test_an_expired_alert_for_a_card_gone_again_announces_nothing(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    add_watch(con, created_at=T0, notify_urls=[HOOK], gpu_model="RTX 4090")
    market.poll([other(market), market.offer(**SOLD)])
    market.poll([other(market), market.offer(available_count=1)])
    assert [a.stale for a in evaluate(con, market, late=timedelta(hours=3)).alerts] == [True]
    market.poll([other(market), market.offer(**SOLD)])
    assert kinds(con, market) == []
    assert [r["status"] for r in outbox(con)] == ["expired"]


# ------------------------------------------------------------------ W4


def test_a_watch_leaves_spot_prices_out_unless_it_asks(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    add_watch(con, created_at=T0, notify_urls=[HOOK], gpu_model="RTX 4090")
    spotty = add_watch(con, created_at=T0, notify_urls=[HOOK], gpu_model="RTX 4090",
                       include_spot=True)  # fmt: skip
    assert spotty.include_spot and get_watch(con, spotty.watch_id).include_spot
    assert not get_watch(con, 1).include_spot
    market.poll([other(market)])
    market.poll([other(market), market.offer("s1", available_count=1, price_kind=PriceKind.SPOT)])
    found = evaluate(con, market)
    assert [(a.watch_id, a.offer_key) for a in found.alerts] == [(spotty.watch_id, "s1")]
    assert "spot: interruptible" in found.alerts[0].title


def test_watch_add_stores_include_spot(tmp_path: Path) -> None:
    db = str(tmp_path / "cli.duckdb")
    (plain,) = cli_json("watch", "add", "--gpu", "RTX 4090", "--notify", HOOK, "--db", db)
    (spot,) = cli_json("watch", "add", "--gpu", "RTX 4090", "--include-spot", "--notify", HOOK,
                       "--db", db)  # fmt: skip
    assert (plain["include_spot"], spot["include_spot"]) == (False, True)
    listed = cli_json("watch", "list", "--db", db)
    assert [w["include_spot"] for w in listed] == [False, True]
