"""End to end: real `watch_poll` flow runs crawl the replay server's scenes with real
`scrapy crawl` processes into a real DuckDB file, and alerts reach a JSON webhook on
127.0.0.1 through apprise.

Flow runs take seconds each, so each story uses as few polls as it needs, and the watches
that can name a provider do (only that provider is crawled).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flows.watch import watch_poll
from replay import Fault, ReplayServer
from tests.watch.watch_kit import Receiver, cli, cli_json, free_port, receiving
from warehouse.db import connect

pytestmark = pytest.mark.prefect


@pytest.fixture(scope="module")
def server(prefect_harness: None) -> Iterator[ReplayServer]:
    with ReplayServer(scene="restock", step=1) as replay:
        yield replay


@pytest.fixture
def hook() -> Iterator[Receiver]:
    with receiving() as receiver:
        yield receiver


def poll(server: ReplayServer, db: Path, scene: str, step: int, **kw: Any) -> dict[str, Any]:
    server.set_state(scene, step)
    result: dict[str, Any] = watch_poll(
        db_path=db, replay_url=server.url, min_interval_s=0, display_currency="CNY", **kw
    )
    return result


def statuses(result: dict[str, Any]) -> dict[str, str]:
    return {p["provider"]: p["status"] for p in result["providers"] if p["action"] == "polled"}


def test_a_restock_gives_exactly_one_notification(
    server: ReplayServer, hook: Receiver, tmp_path: Path
) -> None:
    db = tmp_path / "restock.duckdb"
    # Two providers with RTX 4090 offers sold out at step 1 (a full crawl of every provider
    # takes over a minute); the others are left out of the poll.
    cli("watch", "add", "--gpu", "RTX 4090", "--provider", "autodl", "--provider", "vastai",
        "--notify", hook.url, "--db", str(db))  # fmt: skip

    first = poll(server, db, "restock", 1)
    assert statuses(first) == {"autodl": "ok", "vastai": "ok"}
    assert {p["provider"] for p in first["providers"] if p["action"] == "skipped"} >= {"cudo"}
    assert first["alerts"] == []

    second = poll(server, db, "restock", 2)
    assert statuses(second) == {"autodl": "ok", "vastai": "ok"}
    assert [(a["provider"], a["kind"]) for a in second["alerts"]] == [("autodl", "restock")]
    assert second["delivery"]["sent"] == 1

    third = poll(server, db, "restock", 3)
    assert third["alerts"] == [] and third["delivery"]["sent"] == 0

    (post,) = hook.received()
    title, message = post["json"]["title"], post["json"]["message"]
    assert "RTX 4090" in title and "autodl" in title and "西北B区" in title
    assert "2 free card(s)" in message
    assert "CNY/hour" in message and "CNY/month" in message
    assert "https://" in message  # the offer's link
    (row,) = cli_json("watch", "outbox", "--db", str(db))
    assert row["status"] == "sent" and row["attempts"] == 1


def test_flapping_stock_gives_no_duplicates(
    server: ReplayServer, hook: Receiver, tmp_path: Path
) -> None:
    db = tmp_path / "flapping.duckdb"
    cli("watch", "add", "--gpu", "RTX 4090", "--provider", "autodl", "--notify", hook.url,
        "--db", str(db))  # fmt: skip
    alerts = []
    for step in (1, 2, 3, 4):  # 0 free, 2 free, 0 free, 2 free
        result = poll(server, db, "flapping", step)
        assert statuses(result) == {"autodl": "ok"}
        alerts += result["alerts"]
    assert [a["run_id"] for a in alerts] == [alerts[0]["run_id"]]
    assert len(hook.received()) == 1


def test_a_failed_fetch_gives_none(server: ReplayServer, hook: Receiver, tmp_path: Path) -> None:
    db = tmp_path / "failed.duckdb"
    cli("watch", "add", "--gpu", "RTX 4090", "--provider", "autodl", "--notify", hook.url,
        "--db", str(db))  # fmt: skip
    poll(server, db, "restock", 1)
    server.add_fault(Fault("autodl", "*", status=500))
    try:
        failed = poll(server, db, "restock", 2)
    finally:
        server.clear_faults()
    assert statuses(failed) == {"autodl": "failed"}
    assert failed["alerts"] == [] and hook.received() == []
    con = connect(db, read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM outbox").fetchall()[0][0] == 0
        phases = {p for (p,) in con.execute("SELECT phase FROM watch_offer_states").fetchall()}
    finally:
        con.close()
    assert phases == {"armed"}  # the failed poll changed nothing

    # The failed poll consumed nothing: the next good poll still sees the restock.
    again = poll(server, db, "restock", 2)
    assert len(again["alerts"]) == 1 and len(hook.received()) == 1


def test_a_receiver_that_is_down_gets_it_once_it_is_back_once(
    server: ReplayServer, tmp_path: Path
) -> None:
    db = tmp_path / "down.duckdb"
    port = free_port()
    cli("watch", "add", "--gpu", "RTX 4090", "--provider", "autodl", "--notify",
        f"json://127.0.0.1:{port}/hook", "--db", str(db))  # fmt: skip
    poll(server, db, "restock", 1)
    down = poll(server, db, "restock", 2, retry_base_s=0)
    assert len(down["alerts"]) == 1
    assert down["delivery"]["failed"] == 1 and down["delivery"]["sent"] == 0
    (row,) = cli_json("watch", "outbox", "--db", str(db))
    assert row["status"] == "pending" and row["attempts"] == 1 and "127.0.0.1" in row["last_error"]

    with receiving(port) as hook:
        back = poll(server, db, "restock", 3, retry_base_s=0)
        assert back["alerts"] == [] and back["delivery"]["sent"] == 1
        (report,) = cli_json("watch", "deliver", "--all", "--db", str(db))
        assert report["sent"] == 0
        (post,) = hook.received()
    assert "RTX 4090" in post["json"]["title"]
    (row,) = cli_json("watch", "outbox", "--db", str(db))
    assert row["status"] == "sent" and row["attempts"] == 2
