"""Watches and FX rates on the DuckLake warehouse (warehouse/lake.py): `gpurent watch add`,
an evaluation that fires a restock alert, `watch remove`, and FX upserts leave the lake in
the state they leave the embedded DuckDB file in. These are the statements DuckLake refused
before (INSERT ... ON CONFLICT, INSERT ... RETURNING, DEFAULT nextval). Never skipped:
without PostgreSQL the tests fail and say why."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pytest
from pg import Postgres

from gpurent_core.model import StockStatus
from tests.watch.watch_kit import Market, cli, cli_json
from warehouse.db import connect
from warehouse.fx import fx_rate_on, upsert_fx_rate
from warehouse.lake import LakeConfig, connect_lake
from warehouse.watch.evaluate import evaluate_watches

HOOK = "json://127.0.0.1:9/hook"
_names = itertools.count()


@pytest.fixture
def lake(postgres: Postgres, tmp_path: Path) -> LakeConfig:
    dsn = postgres.create_database(f"lake_watch_{next(_names)}")
    return LakeConfig(catalog=dsn, data_path=tmp_path / "lake-data")


@pytest.fixture
def embedded_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GPURENT_LAKE_CATALOG", raising=False)
    monkeypatch.delenv("GPURENT_LAKE_DATA", raising=False)


def _use_lake(monkeypatch: pytest.MonkeyPatch, lake: LakeConfig) -> None:
    """Every command of this process on the lake (what GPURENT_LAKE_CATALOG chooses)."""
    monkeypatch.setenv("GPURENT_LAKE_CATALOG", lake.catalog)
    monkeypatch.setenv("GPURENT_LAKE_DATA", str(lake.data_path))


def _rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict[str, Any]]:
    result = con.execute(sql)
    names = [d[0] for d in result.description or ()]
    return [dict(zip(names, row, strict=True)) for row in result.fetchall()]


def _watch_story(
    db: Path, opener: Callable[[], duckdb.DuckDBPyConnection], feeds: Path, start: datetime
) -> dict[str, Any]:
    """`watch add`, three polls evaluated one by one (sold out, free, free), `watch remove`:
    what the warehouse holds after each step, and the alerts that fired."""
    added = cli_json(
        "watch", "add", "--gpu", "RTX 4090", "--count", "2", "--notify", HOOK, "--db", str(db)
    )
    second = cli_json("watch", "add", "--min-vram", "80", "--notify", HOOK, "--db", str(db))
    story: dict[str, Any] = {"ids": [added[0]["id"], second[0]["id"]]}
    con = opener()
    try:
        market = Market(con, feeds, start=start)
        sold = market.offer(status=StockStatus.SOLD_OUT, available_count=0)
        free = market.offer(available_count=4)
        fired = []
        for offers in ([sold], [free], [free]):
            market.poll(offers)
            now = start + timedelta(minutes=market.n, seconds=30)
            fired.append([a.kind.value for a in evaluate_watches(con, now=now).alerts])
        again = evaluate_watches(con, now=start + timedelta(hours=1))
        story |= {
            "fired": fired,
            "again": (again.runs, again.alerts),
            "states": _rows(con, "SELECT * FROM watch_offer_states ORDER BY ALL"),
            "cursors": _rows(con, "SELECT * FROM watch_cursors ORDER BY ALL"),
            "outbox": _rows(
                con,
                "SELECT * EXCLUDE (notification_id) FROM outbox ORDER BY idempotency_key",
            ),
        }
    finally:
        con.close()
    removed = cli("watch", "remove", str(story["ids"][0]), "--db", str(db)).stdout
    con = opener()
    try:
        story |= {
            "removed": removed.strip(),
            "left": _rows(con, "SELECT watch_id, gpu_model, min_vram_gb FROM watches"),
            "outbox_after": _rows(con, "SELECT status FROM outbox"),
            "states_after": _rows(con, "SELECT * FROM watch_offer_states"),
        }
    finally:
        con.close()
    return story


def test_watch_add_evaluate_and_remove_on_the_lake_as_on_the_file(
    lake: LakeConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embedded_env: None
) -> None:
    start = datetime.now(UTC).replace(microsecond=0) + timedelta(minutes=1)  # after `watch add`
    db = tmp_path / "embedded.duckdb"
    expected = _watch_story(db, lambda: connect(db), tmp_path / "feeds-file", start)

    _use_lake(monkeypatch, lake)
    unused = tmp_path / "not-used.duckdb"
    got = _watch_story(unused, lambda: connect_lake(lake), tmp_path / "feeds-lake", start)

    assert not unused.exists()  # the lake setting chose the lake, not the --db path
    assert got["ids"] == [1, 2]  # ids from the writer's sequence, across two connections
    assert got["fired"] == [[], ["restock"], []]  # baseline, confirmed restock, once
    assert got["again"] == (0, [])
    [alert] = got["outbox"]
    assert (alert["status"], alert["watch_id"], alert["kind"]) == ("pending", 1, "restock")
    assert alert["idempotency_key"] == "w1/acme/h1/restock/acme-run-2"
    assert [(s["phase"], s["run_id"]) for s in got["states"]] == [("fired", "acme-run-3")]
    assert got["states"][0]["fired_at"] == start + timedelta(minutes=2, seconds=20)
    assert [(c["watch_id"], c["run_id"]) for c in got["cursors"]] == [
        (1, "acme-run-3"),
        (2, "acme-run-3"),
    ]
    assert got["removed"] == "removed watch #1; 1 pending notification(s) cancelled"
    assert got["left"] == [{"watch_id": 2, "gpu_model": None, "min_vram_gb": 80}]
    assert got["outbox_after"] == [{"status": "cancelled"}] and got["states_after"] == []
    assert got == expected


def test_a_queued_notification_gets_an_id_on_the_lake(lake: LakeConfig, tmp_path: Path) -> None:
    start = datetime.now(UTC).replace(microsecond=0)
    con = connect_lake(lake)
    try:
        from warehouse.watch.store import add_watch

        add_watch(con, created_at=start, notify_urls=[HOOK], gpu_model="RTX 4090")
        market = Market(con, tmp_path / "feeds", start=start)
        market.poll([market.offer(status=StockStatus.SOLD_OUT, available_count=0)])
        market.poll([market.offer(available_count=2)])
        evaluate_watches(con, now=start + timedelta(minutes=3))
        ids = [r[0] for r in con.execute("SELECT notification_id FROM outbox").fetchall()]
    finally:
        con.close()
    assert ids == [1]


def _fx_story(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    upsert_fx_rate(con, date(2026, 11, 1), "USD", "CNY", Decimal("7.1234"), "first")
    upsert_fx_rate(con, date(2026, 11, 20), "USD", "CNY", Decimal("7.05"), "first")
    before = _rows(con, "SELECT rate_date, updated_at FROM fx_rates ORDER BY rate_date")
    upsert_fx_rate(con, date(2026, 11, 1), "USD", "CNY", Decimal("7.0999999949"), "fix")
    after = _rows(con, "SELECT rate_date, updated_at FROM fx_rates ORDER BY rate_date")
    return {
        "rows": _rows(
            con, "SELECT rate_date, base, quote, rate, source FROM fx_rates ORDER BY ALL"
        ),
        "on_nov_10": fx_rate_on(con, date(2026, 11, 10), "USD", "CNY"),
        "on_nov_25": fx_rate_on(con, date(2026, 11, 25), "USD", "CNY"),
        "touched": [b["updated_at"] < a["updated_at"] for b, a in zip(before, after, strict=True)],
    }


def test_fx_upserts_on_the_lake_as_on_the_file(
    lake: LakeConfig, tmp_path: Path, embedded_env: None
) -> None:
    con = connect(tmp_path / "embedded.duckdb")
    try:
        expected = _fx_story(con)
    finally:
        con.close()
    con = connect_lake(lake)
    try:
        got = _fx_story(con)
    finally:
        con.close()
    reader = connect_lake(LakeConfig(catalog=lake.catalog), read_only=True)
    try:
        seen = fx_rate_on(reader, date(2026, 11, 10), "USD", "CNY")
    finally:
        reader.close()
    assert got["rows"] == [
        {"rate_date": date(2026, 11, 1), "base": "USD", "quote": "CNY",
         "rate": Decimal("7.09999999"), "source": "fix"},
        {"rate_date": date(2026, 11, 20), "base": "USD", "quote": "CNY",
         "rate": Decimal("7.05000000"), "source": "first"},
    ]  # fmt: skip
    assert got["on_nov_10"] == seen == (Decimal("7.09999999"), date(2026, 11, 1))
    assert got["on_nov_25"] == (Decimal("7.05"), date(2026, 11, 20))
    assert got["touched"] == [True, False]  # the replaced row's updated_at moved on
    assert got == expected


# ---------------------------------------------------------------- two machines at once
# Watches written from two machines: every write takes the lake's write lease
# (warehouse.lake.take_write_lease), which also starts the ids again from its snapshot.


def _alert_pending(lake: LakeConfig, feeds: Path, urls: list[str]) -> datetime:
    """A watch with ``urls`` and one restock alert queued for each; the time it was queued."""
    from warehouse.watch.store import add_watch

    start = datetime.now(UTC).replace(microsecond=0)
    con = connect_lake(lake)
    try:
        add_watch(con, created_at=start, notify_urls=urls, gpu_model="RTX 4090")
        market = Market(con, feeds, start=start)
        market.poll([market.offer(status=StockStatus.SOLD_OUT, available_count=0)])
        market.poll([market.offer(available_count=2)])
        now = start + timedelta(minutes=3)
        assert evaluate_watches(con, now=now).queued == len(urls)
    finally:
        con.close()
    return now


def test_a_watch_added_beside_another_machine_takes_the_next_id(lake: LakeConfig) -> None:
    """The first machine opened the lake before the second added a watch: its own copy of
    the id sequence started then, yet its watch gets the next id, not the same one."""
    from warehouse.watch.store import add_watch

    at = datetime.now(UTC)
    first, second = connect_lake(lake), connect_lake(lake)
    try:
        on_second = add_watch(second, created_at=at, notify_urls=[HOOK], gpu_model="RTX 4090")
        on_first = add_watch(first, created_at=at, notify_urls=[HOOK], min_vram_gb=80)
    finally:
        first.close()
        second.close()
    assert (on_second.watch_id, on_first.watch_id) == (1, 2)


@pytest.mark.parametrize("write", ["evaluate", "claim"])
def test_watch_writes_conflict_with_another_writer_on_the_lake(
    lake: LakeConfig, tmp_path: Path, write: str
) -> None:
    """Another machine's write transaction is open; an evaluation of the watches (or a
    delivery's claim of a notification) commits first: the other's commit is refused,
    as two loads are. Without the lease the two would not meet, and two polls would both
    queue (or send) the same alert."""
    from warehouse.lake import is_write_conflict, take_write_lease
    from warehouse.watch.outbox import deliver_pending

    now = _alert_pending(lake, tmp_path / "feeds", [HOOK])
    other, con = connect_lake(lake), connect_lake(lake)
    try:
        other.execute("BEGIN TRANSACTION")
        take_write_lease(other)
        if write == "evaluate":
            evaluate_watches(con, now=now)
        else:
            assert len(deliver_pending(con, lambda *_: None, now=now).sent) == 1
        with pytest.raises(duckdb.Error) as refused:
            other.execute("COMMIT")
        assert is_write_conflict(refused.value), refused.value
    finally:
        other.close()
        con.close()


def test_two_deliveries_on_the_lake_send_each_alert_once(lake: LakeConfig, tmp_path: Path) -> None:
    """A second machine delivers while the first is sending its first notification."""
    from warehouse.watch.outbox import deliver_pending

    urls = ["json://127.0.0.1:9/a", "json://127.0.0.1:9/b"]
    now = _alert_pending(lake, tmp_path / "feeds", urls)
    first, second = connect_lake(lake), connect_lake(lake)
    sent: list[str] = []

    def on_second(url: str, title: str, body: str) -> None:
        sent.append(url)

    def on_first(url: str, title: str, body: str) -> None:
        sent.append(url)
        if len(sent) == 1:
            deliver_pending(second, on_second, now=now)

    try:
        report = deliver_pending(first, on_first, now=now)
        statuses = [r[0] for r in first.execute("SELECT status FROM outbox").fetchall()]
    finally:
        first.close()
        second.close()
    assert sorted(sent) == urls, "each destination once"
    assert len(report.sent) == 1 and len(report.claimed_elsewhere) == 1
    assert statuses == ["sent", "sent"]
