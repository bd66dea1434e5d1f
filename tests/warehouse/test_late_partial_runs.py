"""A run loaded late, before partial runs already stored: load order changes nothing.

Rule of truth 10: an offer a run could not read keeps its last state, stale; only a run that
read its source and no longer lists it closes it. A run that arrives late (another machine,
a backfill) is woven in before runs already stored, and must meet each of them as that run
really looked: an offer the later run could not read (its unread keys, prefixes and
quarantined keys) is kept by it, stale, whatever state the late run gives it. So the same
runs loaded in any order give the same history: latest state, stale marks, what each run
saw, and versions (docs/history.md).
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wh_kit import FeedKit

from gpurent_core.model import OfferRecord, ProviderRun, QuarantineRecord, RunStatus, StockStatus
from warehouse.load import load_run
from warehouse.migrations import migrate
from warehouse.queries import latest_offers
from warehouse.snapshots import offers_at, offers_of_run

Line = OfferRecord | QuarantineRecord
Feeds = list[tuple[ProviderRun, list[Line]]]


def fresh() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    migrate(con)
    return con


def rows(frame: pl.DataFrame, columns: tuple[str, ...]) -> list[tuple[Any, ...]]:
    return sorted(frame.select(columns).rows())


STATE = ("run_id", "offer_key", "observed_at", "status", "price", "fees", "stale")


def history_of(con: duckdb.DuckDBPyConnection, feeds: Feeds) -> dict[str, Any]:
    """Everything the history says, in a form that does not depend on ids: the latest state,
    each run's snapshot and the state at its time, the versions and the stale stretches."""
    out: dict[str, Any] = {"latest": rows(latest_offers(con), STATE)}
    for run, _ in feeds:
        out[f"of {run.run_id}"] = rows(offers_of_run(con, run.provider, run.run_id), STATE)
        out[f"at {run.run_id}"] = rows(offers_at(con, run.started_at), STATE)
    out["versions"] = con.execute(
        """
        SELECT v.offer_key, v.valid_from, v.valid_to, v.status, v.price, f.fees
        FROM version_rows AS v LEFT JOIN fee_set_lists AS f ON f.fee_set_id = v.fee_set_id
        ORDER BY ALL
        """
    ).fetchall()
    out["stale_spans"] = con.execute("SELECT * FROM stale_spans ORDER BY ALL").fetchall()
    return out


def load_all(kit: FeedKit, feeds: Feeds) -> duckdb.DuckDBPyConnection:
    con = fresh()
    for run, lines in feeds:
        load_run(con, run, kit.write(f"{run.run_id}", lines))
    return con


def assert_order_free(kit: FeedKit, feeds: Feeds, order: Feeds) -> None:
    """Loading ``order`` (the runs of ``feeds`` in another order) gives the history that
    loading ``feeds`` in order gives."""
    in_order = load_all(kit, feeds)
    shuffled = load_all(kit, order)
    try:
        expected, got = history_of(in_order, feeds), history_of(shuffled, feeds)
        for part in expected:
            assert got[part] == expected[part], (part, [r.run_id for r, _ in order])
    finally:
        in_order.close()
        shuffled.close()


# ---------------------------------------------------------------- the audit's case (L4)


def test_an_ok_run_loaded_after_a_partial_one_keeps_what_the_partial_could_not_read(
    kit: FeedKit,
) -> None:
    """Run 1 is ok (3 offers); run 2 is partial, page 2 failed (prefix ``p2/``), and
    arrives first. Run 1's offers on page 2 stay listed, stale, with one open version,
    not closed at run 2 as no longer listed."""
    one = kit.run(1)
    two = kit.run(2, RunStatus.PARTIAL, unread_prefixes=("p2/",))
    feeds: Feeds = [
        (one, [kit.offer(one, "p1/a"), kit.offer(one, "p2/b"), kit.offer(one, "p2/c")]),
        (two, [kit.offer(two, "p1/a")]),
    ]
    con = load_all(kit, feeds[::-1])
    latest = {r["offer_key"]: r["stale"] for r in latest_offers(con).iter_rows(named=True)}
    assert latest == {"p1/a": False, "p2/b": True, "p2/c": True}
    open_versions = con.execute(
        "SELECT offer_key, valid_to FROM version_rows WHERE offer_key LIKE 'p2/%' ORDER BY 1"
    ).fetchall()
    assert open_versions == [("p2/b", None), ("p2/c", None)]
    con.close()
    assert_order_free(kit, feeds, feeds[::-1])


def test_a_late_change_or_closing_carries_through_the_partial_runs_that_kept_the_offer(
    kit: FeedKit,
) -> None:
    """Runs 3 and 4 could not read ``b`` or ``c`` and kept them stale; run 5 lists them again
    as run 1 had them. Late run 2 changes ``b`` and no longer lists ``c``: in order, runs 3
    and 4 keep 2's ``b`` (stale, last seen by run 2) and have no ``c``; run 5 reopens both."""
    runs = [kit.run(1), kit.run(2)]
    runs += [kit.run(n, RunStatus.PARTIAL, unread_keys=("b", "c")) for n in (3, 4)]
    runs.append(kit.run(5))
    feeds: Feeds = []
    for run in runs:
        lines: list[Line] = [kit.offer(run, "a")]
        if run.run_id in ("run-1", "run-5"):
            lines += [kit.offer(run, "b"), kit.offer(run, "c")]
        if run.run_id == "run-2":
            lines.append(kit.offer(run, "b", price=Decimal("1.99")))
        feeds.append((run, lines))
    order = [feeds[0], *feeds[2:], feeds[1]]  # run 2 last
    assert_order_free(kit, feeds, order)


def test_a_quarantined_key_of_a_later_run_keeps_the_late_runs_offer(kit: FeedKit) -> None:
    """A quarantined item whose key was read is unread too: run 2 quarantined ``b``, so
    late run 1's ``b`` stays, stale, through run 2."""
    one, two = kit.run(1), kit.run(2, RunStatus.PARTIAL)
    item = kit.quarantine(two).model_copy(update={"offer_key": "b"})
    feeds: Feeds = [
        (one, [kit.offer(one, "a"), kit.offer(one, "b")]),
        (two, [kit.offer(two, "a"), item]),
    ]
    assert_order_free(kit, feeds, feeds[::-1])


# ---------------------------------------------------------------- property: any order

KEYS = ("p1/a", "p1/b", "p2/c", "p2/d")
OFFER_STATES = st.tuples(
    st.sampled_from([StockStatus.IN_STOCK, StockStatus.SOLD_OUT]),
    st.sampled_from([Decimal("1.5"), Decimal("2")]),
)
# What a partial run could not read: keys, a page (a prefix), or every offer; and the keys
# of its quarantined items.
UNREAD = st.fixed_dictionaries(
    {},
    optional={
        "unread_keys": st.sets(st.sampled_from(KEYS)).map(lambda s: tuple(sorted(s))),
        "unread_prefixes": st.sampled_from([("",), ("p1/",), ("p2/",)]),
    },
)
RUNS = st.lists(
    st.tuples(
        st.sampled_from([RunStatus.OK, RunStatus.PARTIAL, RunStatus.PARTIAL, RunStatus.FAILED]),
        st.dictionaries(st.sampled_from(KEYS), OFFER_STATES, min_size=1, max_size=4),
        UNREAD,
        st.sets(st.sampled_from(KEYS), max_size=2),  # quarantined keys
    ),
    min_size=2,
    max_size=6,
)


def feeds_of(kit: FeedKit, runs: list[Any]) -> Feeds:
    feeds: Feeds = []
    for n, (status, offers, unread, quarantined) in enumerate(runs, start=1):
        partial = status is RunStatus.PARTIAL
        run = kit.run(n, status, **(unread if partial else {}))
        lines: list[Line] = [
            kit.offer(run, key, status=s, price=price) for key, (s, price) in sorted(offers.items())
        ]
        if partial:
            lines += [
                kit.quarantine(run).model_copy(update={"offer_key": key})
                for key in sorted(quarantined - offers.keys())
            ]
        feeds.append((run, lines))
    return feeds


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(runs=RUNS, order=st.randoms(use_true_random=False))
def test_runs_with_partial_ones_read_back_the_same_in_any_load_order(
    tmp_path: Path, runs: list[Any], order: Any
) -> None:
    kit = FeedKit(tmp_path)
    feeds = feeds_of(kit, runs)
    shuffled = feeds[:]
    order.shuffle(shuffled)
    assert_order_free(kit, feeds, shuffled)
