"""Change history: every good run's snapshot reads back exactly, while storage grows with change.

"What was loaded" is what read_feed validated from the run's feed; offers_of_run and
offers_at must give it back field for field, fees and plans included, for runs loaded in
order or late, around failed runs, and for offers that disappear and come back.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wh_kit import T0, FeedKit

from gpurent_core.host import HOST_FIELDS
from gpurent_core.model import (
    AddonFee,
    BillingUnit,
    FeeBasis,
    FeeType,
    OfferRecord,
    ProviderRun,
    RunStatus,
    StockStatus,
)
from warehouse import history, load
from warehouse.feed import read_feed
from warehouse.history import CONTENT_FIELDS
from warehouse.load import load_run
from warehouse.migrations import migrate
from warehouse.queries import latest_offers
from warehouse.snapshots import offers_at, offers_of_run

Snapshot = dict[str, dict[str, Any]]


def loaded(path: Path, run: ProviderRun) -> Snapshot:
    """What load_run stores for a good run: the validated offers with their fees and plans."""
    batch = read_feed(path, provider=run.provider, run_id=run.run_id)
    observed = batch.offers["observed_at"].min()
    fees = batch.fees.drop("run_id", "provider")
    plans = batch.plans.drop("run_id", "provider")
    out: Snapshot = {}
    for row in batch.offers.iter_rows(named=True):
        key = row["offer_key"]
        row["observed_at"] = observed  # a reconstructed row shows its run's time
        row["fees"] = fees.filter(pl.col("offer_key") == key).drop("offer_key").to_dicts()
        row["plans"] = plans.filter(pl.col("offer_key") == key).drop("offer_key").to_dicts()
        out[key] = row
    return out


def snapshot(frame: pl.DataFrame) -> Snapshot:
    columns = ["run_id", "provider", "offer_key", "observed_at", *CONTENT_FIELDS, "fees", "plans"]
    return {row["offer_key"]: row for row in frame.select(columns).iter_rows(named=True)}


def with_stale(frame: pl.DataFrame) -> Snapshot:
    columns = ["run_id", "offer_key", "observed_at", "status", "price", "stale"]
    return {row["offer_key"]: row for row in frame.select(columns).iter_rows(named=True)}


def rule_ten_states(
    feeds: list[tuple[ProviderRun, list[OfferRecord]]], expected: dict[str, Snapshot]
) -> list[tuple[ProviderRun, Snapshot]]:
    """The latest state after each good run, by rule 10: the run's listing, plus what it did
    not list but could not read either (its unread keys and prefixes), kept stale with its
    last-seen time; the rest it does not list is gone."""
    state: Snapshot = {}
    states: list[tuple[ProviderRun, Snapshot]] = []
    for run, _ in feeds:
        if run.run_id not in expected:
            continue
        fields = ("run_id", "offer_key", "observed_at", "status", "price")
        seen = {
            k: {f: row[f] for f in fields} | {"stale": False}
            for k, row in expected[run.run_id].items()
        }
        for key, row in state.items():
            unread = key in run.unread_keys or any(key.startswith(p) for p in run.unread_prefixes)
            if unread:
                seen.setdefault(key, row | {"run_id": run.run_id, "stale": True})
        state = seen
        states.append((run, state))
    return states


def versions(con: duckdb.DuckDBPyConnection) -> list[tuple[Any, ...]]:
    return con.execute(
        "SELECT offer_key, valid_from, valid_to, status, price FROM version_rows"
        " ORDER BY offer_key, valid_from"
    ).fetchall()


def at(n: int) -> datetime:
    """The history position of kit run n (its start)."""
    return T0 + timedelta(hours=n)


def test_a_sequence_of_runs_reads_back_run_by_run(
    con: duckdb.DuckDBPyConnection, kit: FeedKit
) -> None:
    r1, r2, r3, r4, r5, r6 = (kit.run(n) for n in range(1, 7))
    r3 = kit.run(3, RunStatus.FAILED, message="HTTP 503")
    r4 = kit.run(4, RunStatus.LAYOUT_CHANGED)
    feeds = {
        r1: [kit.offer(r1, "a"), kit.offer(r1, "b"), kit.offer(r1, "c", fees=(), plans=())],
        r2: [
            kit.offer(r2, "a"),
            kit.offer(r2, "b", price=Decimal("1.99"), status=StockStatus.LOW),
            kit.offer(r2, "c", fees=(), plans=()),
        ],
        # A failed and a broken run: whatever their feeds say, nothing changes.
        r3: [kit.offer(r3, k, status=StockStatus.SOLD_OUT) for k in "abc"],
        r4: [kit.offer(r4, "zzz")],
        r5: [kit.offer(r5, "a"), kit.offer(r5, "b", price=Decimal("1.99"), status=StockStatus.LOW)],
        # c comes back exactly as it was before it disappeared.
        r6: [
            kit.offer(r6, "a"),
            kit.offer(r6, "b", price=Decimal("1.99"), status=StockStatus.LOW),
            kit.offer(r6, "c", fees=(), plans=()),
        ],
    }
    expected: dict[str, Snapshot] = {}
    for run, lines in feeds.items():
        path = kit.write(run.run_id, lines)
        load_run(con, run, path)
        if run.status is RunStatus.OK:
            expected[run.run_id] = loaded(path, run)

    for run in feeds:
        got = snapshot(offers_of_run(con, "acme", run.run_id))
        assert got == expected.get(run.run_id, {}), run.run_id

    # The state at any moment is the latest good run's at that moment.
    assert offers_at(con, at(1) - timedelta(seconds=1)).is_empty()
    cases = [(1, "run-1"), (2, "run-2"), (3, "run-2"), (4, "run-2"), (5, "run-5"), (9, "run-6")]
    for hour, run_id in cases:
        assert snapshot(offers_at(con, at(hour) + timedelta(minutes=30))) == expected[run_id]
    assert snapshot(offers_at(con, at(5))) == expected["run-5"]  # a run counts from its start
    assert snapshot(latest_offers(con)) == expected["run-6"]

    # Six polls, eight offer sightings of b and c... five versions.
    assert versions(con) == [
        ("a", at(1), None, "in_stock", Decimal("2.49")),
        ("b", at(1), at(2), "in_stock", Decimal("2.49")),
        ("b", at(2), None, "low", Decimal("1.99")),
        ("c", at(1), at(5), "in_stock", Decimal("2.49")),
        ("c", at(6), None, "in_stock", Decimal("2.49")),
    ]
    identities = con.execute(
        "SELECT DISTINCT identity_id FROM version_rows WHERE offer_key = 'c'"
    ).fetchall()
    assert len(identities) == 1  # the same offer: its key, GPU, name and URL stored once


def test_unchanged_polls_add_no_versions(con: duckdb.DuckDBPyConnection, kit: FeedKit) -> None:
    for n in range(1, 21):
        run = kit.run(n)
        load_run(con, run, kit.write(f"r{n}", [kit.offer(run, k) for k in ("a", "b", "c")]))
    assert con.execute("SELECT count(*) FROM version_rows").fetchall() == [(3,)]
    assert con.execute("SELECT count(*) FROM observations").fetchall() == [(60,)]
    assert snapshot(offers_of_run(con, "acme", "run-7"))["b"]["run_id"] == "run-7"
    fee_sets = con.execute("SELECT count(DISTINCT fee_set_id) FROM addon_fee_sets").fetchall()
    assert fee_sets == [(1,)]  # the three offers share one fee list, stored once


def test_offers_of_run_reports_the_runs_earliest_observation(
    con: duckdb.DuckDBPyConnection, kit: FeedKit
) -> None:
    run = kit.run(1)
    early = run.started_at + timedelta(seconds=2)
    lines = [kit.offer(run, "a", observed_at=early), kit.offer(run, "b")]
    load_run(con, run, kit.write("r1", lines))
    times = offers_of_run(con, "acme", "run-1")["observed_at"].to_list()
    assert times == [early, early]
    assert latest_offers(con)["observed_at"].to_list() == [early, early]


def test_providers_keep_separate_histories(con: duckdb.DuckDBPyConnection, kit: FeedKit) -> None:
    a1, z1, a2 = kit.run(1), kit.run(1, provider="zeta"), kit.run(2)
    load_run(con, a1, kit.write("a1", [kit.offer(a1, "x")]))
    load_run(con, z1, kit.write("z1", [kit.offer(z1, "x", price=Decimal("9"))]))
    load_run(con, a2, kit.write("a2", [kit.offer(a2, "y")]))
    state = offers_at(con, at(3))
    assert sorted(state.select("provider", "offer_key", "run_id").rows()) == [
        ("acme", "y", "run-2"),
        ("zeta", "x", "run-1"),
    ]
    assert offers_at(con, at(3), provider="zeta")["price"].to_list() == [Decimal("9")]
    with pytest.raises(ValueError, match="timezone-aware"):
        offers_at(con, datetime(2026, 11, 1, 9, 0))


def test_a_past_state_after_a_failed_run_is_stale_as_the_latest_state_is(
    con: duckdb.DuckDBPyConnection, kit: FeedKit
) -> None:
    """Rule 11 in the past too: between a failed run and the next good one, the state shown
    is the last good run's, none of it confirmed by the provider's latest look then."""
    r1 = kit.run(1)
    load_run(con, r1, kit.write("r1", [kit.offer(r1, "a"), kit.offer(r1, "b")]))
    load_run(con, kit.run(2, RunStatus.FAILED), None)
    r3 = kit.run(3)
    load_run(con, r3, kit.write("r3", [kit.offer(r3, "a"), kit.offer(r3, "b")]))

    def stale_at(when: datetime) -> list[bool]:
        return offers_at(con, when)["stale"].to_list()

    assert stale_at(kit.run(1).started_at + timedelta(minutes=30)) == [False, False]
    assert stale_at(kit.run(2).started_at + timedelta(minutes=30)) == [True, True]
    assert stale_at(kit.run(3).started_at + timedelta(minutes=30)) == [False, False]
    # Another provider's failed run says nothing of acme's offers.
    load_run(con, kit.run(4, RunStatus.FAILED, provider="zeta"), None)
    assert stale_at(kit.run(4).started_at + timedelta(minutes=30)) == [False, False]


def test_a_late_run_is_woven_into_its_place(con: duckdb.DuckDBPyConnection, kit: FeedKit) -> None:
    r1, r2, r3, r0 = kit.run(1), kit.run(2), kit.run(3), kit.run(0)
    feeds = {
        r1: [kit.offer(r1, "a"), kit.offer(r1, "b")],
        r3: [kit.offer(r3, "a"), kit.offer(r3, "b")],
        # Loaded after r3: b changed in between, c appeared and a was missing.
        r2: [kit.offer(r2, "b", price=Decimal("5")), kit.offer(r2, "c")],
        # Loaded last, before everything.
        r0: [kit.offer(r0, "a", status=StockStatus.SOLD_OUT)],
    }
    expected = {}
    for run, lines in feeds.items():
        path = kit.write(run.run_id, lines)
        load_run(con, run, path)
        expected[run.run_id] = loaded(path, run)
    for run_id, snap in expected.items():
        assert snapshot(offers_of_run(con, "acme", run_id)) == snap, run_id
    assert snapshot(latest_offers(con)) == expected["run-3"]
    assert latest_offers(con)["run_id"].unique().to_list() == ["run-3"]
    # A later load of an in-order run continues from the woven history.
    r4 = kit.run(4)
    path = kit.write("r4", [kit.offer(r4, "a")])
    load_run(con, r4, path)
    assert snapshot(latest_offers(con)) == loaded(path, r4)
    assert snapshot(offers_of_run(con, "acme", "run-3")) == expected["run-3"]


def test_loading_a_good_run_twice_changes_no_history(
    con: duckdb.DuckDBPyConnection, kit: FeedKit
) -> None:
    one, two = kit.run(1), kit.run(2)
    load_run(con, one, kit.write("r1", [kit.offer(one, "a")]))
    feed = kit.write("r2", [kit.offer(two, "a", price=Decimal("3")), kit.offer(two, "b")])
    load_run(con, two, feed)
    before = (versions(con), con.execute("SELECT * FROM current_offers ORDER BY 1, 2").fetchall())
    again = load_run(con, two, feed)
    assert again.skipped_duplicate_run
    assert (again.offers, again.fees, again.plans) == (2, 4, 2)
    after = (versions(con), con.execute("SELECT * FROM current_offers ORDER BY 1, 2").fetchall())
    assert after == before


def test_a_failed_load_leaves_history_and_current_state_as_they_were(
    con: duckdb.DuckDBPyConnection, kit: FeedKit, monkeypatch: pytest.MonkeyPatch
) -> None:
    one = kit.run(1)
    load_run(con, one, kit.write("r1", [kit.offer(one, "a"), kit.offer(one, "b")]))

    def everything() -> list[Any]:
        return [
            con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall()
            for t in (
                "offer_versions",
                "offer_identities",
                "current_offers",
                "current_runs",
                "addon_fee_sets",
            )
        ]

    before = everything()
    real_store = history.store

    def fail_on_current(c: duckdb.DuckDBPyConnection, table: str, *args: Any, **kw: Any) -> None:
        if table == "current_offers":
            raise RuntimeError("power cut")
        real_store(c, table, *args, **kw)

    monkeypatch.setattr(history, "store", fail_on_current)
    two = kit.run(2)
    fee = AddonFee(fee_type=FeeType.PUBLIC_IP, amount=Decimal("0.01"), currency="USD",
                   unit=BillingUnit.HOUR, basis=FeeBasis.INSTANCE, mandatory=True)  # fmt: skip
    with pytest.raises(RuntimeError, match="power cut"):
        load_run(con, two, kit.write("r2", [kit.offer(two, "a", fees=(fee,)), kit.offer(two, "c")]))
    assert everything() == before  # b's closing, the new fee list and versions: all undone


# ---------------------------------------------------------------- property: any order


def fresh() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    migrate(con)
    return con


OFFER_STATES = st.tuples(
    st.sampled_from([StockStatus.IN_STOCK, StockStatus.SOLD_OUT, StockStatus.UNKNOWN]),
    st.sampled_from([Decimal("1.5"), Decimal("2")]),
    st.booleans(),  # with or without fees
)
# What a partial run could not read: nothing (its quarantined items had no key), some keys,
# or every offer (a failed page).
UNREAD = st.one_of(
    st.just({}),
    st.builds(lambda keys: {"unread_keys": tuple(sorted(keys))}, st.sets(st.sampled_from("abcd"))),
    st.just({"unread_prefixes": ("",)}),
)
RUNS = st.lists(
    st.tuples(
        st.sampled_from([RunStatus.OK, RunStatus.OK, RunStatus.PARTIAL, RunStatus.FAILED]),
        st.dictionaries(st.sampled_from("abcd"), OFFER_STATES, max_size=4),
        UNREAD,
    ),
    min_size=1,
    max_size=7,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(runs=RUNS, order=st.randoms(use_true_random=False), in_order=st.booleans())
def test_any_runs_in_any_load_order_read_back_exactly(
    kit: FeedKit,
    runs: list[tuple[RunStatus, dict[str, tuple[StockStatus, Decimal, bool]], dict[str, Any]]],
    order: Any,
    in_order: bool,
) -> None:
    con = fresh()
    feeds: list[tuple[ProviderRun, list[OfferRecord]]] = []
    for n, (status, offers, unread) in enumerate(runs, start=1):
        run = kit.run(n, status, **(unread if status is RunStatus.PARTIAL else {}))
        lines = [
            kit.offer(run, key, status=s, price=price, **({} if with_fees else {"fees": ()}))
            for key, (s, price, with_fees) in sorted(offers.items())
        ]
        feeds.append((run, lines))
    shuffled = feeds[:]
    if not in_order:
        order.shuffle(shuffled)
    expected: dict[str, Snapshot] = {}
    for run, lines in shuffled:
        path = kit.write(f"p-{run.run_id}", lines)
        load_run(con, run, path)
        if run.status in load.LOADING_STATUSES and lines:
            expected[run.run_id] = loaded(path, run)
    for run, _ in feeds:
        assert snapshot(offers_of_run(con, "acme", run.run_id)) == expected.get(run.run_id, {})
    model = rule_ten_states(feeds, expected)
    latest = with_stale(latest_offers(con))
    final = model[-1][1] if model else {}
    if model and feeds[-1][0] is not model[-1][0]:
        # Rule 11: the provider's latest run (failed, or stored no offers) did not feed the
        # state, so it confirmed nothing: the last good state stays, every row of it stale.
        final = {k: row | {"stale": True} for k, row in final.items()}
    # What the latest run saw reads back exactly in any load order, and so does what
    # partial runs kept, run after run: a run loaded late meets each later run as it
    # looked (tests/warehouse/test_late_partial_runs.py).
    assert latest == final
    for run, state in model:
        assert with_stale(offers_at(con, run.started_at)) == state, run.run_id
    # Versions of one offer never overlap, and at most one is open.
    overlaps = con.execute(
        """
        SELECT count(*) FROM version_rows AS a JOIN version_rows AS b
          ON a.offer_key = b.offer_key AND a.version_id < b.version_id
         AND a.valid_from < coalesce(b.valid_to, 'infinity'::TIMESTAMPTZ)
         AND b.valid_from < coalesce(a.valid_to, 'infinity'::TIMESTAMPTZ)
        """
    ).fetchall()
    assert overlaps == [(0,)]
    con.close()


# ---------------------------------------------------------------- migrating per-poll rows


def old_load(con: duckdb.DuckDBPyConnection, run: ProviderRun, path: Path) -> None:
    """What load_run did before migration 3: one row per offer, fee and plan per good run."""
    batch = read_feed(path, provider=run.provider, run_id=run.run_id)
    good = run.status in load.LOADING_STATUSES
    con.execute(
        "INSERT INTO crawl_runs (run_id, provider, started_at, finished_at, duration_s, status,"
        " offers) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [run.run_id, run.provider, run.started_at, run.finished_at, run.duration_s,
         run.status.value, batch.offers.height if good else 0],
    )  # fmt: skip
    if good:
        for table, frame in (
            # (The first schema had no host attributes: migration 20 added them.)
            ("observations", batch.offers.drop(HOST_FIELDS)),
            ("addon_fees", batch.fees),
            ("price_plans", batch.plans),
        ):
            load._insert_frame(con, table, frame)


def test_migration_turns_per_poll_rows_into_versions(
    kit: FeedKit, monkeypatch: pytest.MonkeyPatch
) -> None:
    from warehouse import migrations

    monkeypatch.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:2])
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    migrate(con)
    r1, r3, r4, r6 = kit.run(1), kit.run(3), kit.run(4), kit.run(6)
    r2, r5 = kit.run(2, RunStatus.FAILED), kit.run(5, RunStatus.LAYOUT_CHANGED)
    z1 = kit.run(1, provider="zeta")
    # The first schema stored "charged while stopped" as true or false: files that old
    # never hold an unknown one (migration 19 allows it).
    fees = tuple(
        f.model_copy(update={"charged_while_stopped": bool(f.charged_while_stopped)})
        for f in kit.offer(r1, "a").fees
    )

    def offer(run: ProviderRun, key: str, **kw: Any) -> OfferRecord:
        return kit.offer(run, key, **({"fees": fees} | kw))

    feeds = {
        r1: [offer(r1, "a"), offer(r1, "b"), offer(r1, "c", fees=(), plans=())],
        r2: [offer(r2, "a", status=StockStatus.SOLD_OUT)],
        r3: [offer(r3, "a"), offer(r3, "b", price=Decimal("3")),
             offer(r3, "c", fees=(), plans=())],
        r4: [offer(r4, "a"), offer(r4, "b", price=Decimal("3"))],
        r5: [offer(r5, "a")],
        r6: [offer(r6, "a"), offer(r6, "b", price=Decimal("3")),
             offer(r6, "c", fees=(), plans=())],
        z1: [offer(z1, "a", gpu_model="A100")],
    }  # fmt: skip
    expected: dict[tuple[str, str], Snapshot] = {}
    for run, lines in feeds.items():
        path = kit.write(f"{run.provider}-{run.run_id}", lines)
        old_load(con, run, path)
        expected[(run.provider, run.run_id)] = (
            loaded(path, run) if run.status is RunStatus.OK else {}
        )
    old_latest = set(
        con.execute(
            "SELECT provider, offer_key FROM observations"
            " WHERE (provider, run_id) IN (('acme', 'run-6'), ('zeta', 'run-1'))"
        ).fetchall()
    )

    monkeypatch.undo()
    assert 3 in migrate(con)
    for (provider, run_id), snap in expected.items():
        assert snapshot(offers_of_run(con, provider, run_id)) == snap, (provider, run_id)
    latest = latest_offers(con)
    assert set(latest.select("provider", "offer_key").rows()) == old_latest
    assert snapshot(latest.filter(pl.col("provider") == "acme")) == expected[("acme", "run-6")]
    assert versions(con) == [
        ("a", at(1), None, "in_stock", Decimal("2.49")),  # zeta's a
        ("a", at(1), None, "in_stock", Decimal("2.49")),
        ("b", at(1), at(3), "in_stock", Decimal("2.49")),
        ("b", at(3), None, "in_stock", Decimal("3")),
        ("c", at(1), at(4), "in_stock", Decimal("2.49")),
        ("c", at(6), None, "in_stock", Decimal("2.49")),
    ]
    assert con.execute("SELECT count(*) FROM addon_fee_sets").fetchall() == [(2,)]  # one list
    assert con.execute("SELECT count(*) FROM observations").fetchall() == [(12,)]

    # Hashes computed by the migration match the loader's: an unchanged run opens nothing.
    r7 = kit.run(7)
    same = [offer(r7, "a"), offer(r7, "b", price=Decimal("3")),
            offer(r7, "c", fees=(), plans=())]  # fmt: skip
    load_run(con, r7, kit.write("r7", same))
    assert len(versions(con)) == 6
    assert con.execute("SELECT count(*) FROM addon_fee_sets").fetchall() == [(2,)]
    assert latest_offers(con, provider="acme")["run_id"].unique().to_list() == ["run-7"]
    con.close()
