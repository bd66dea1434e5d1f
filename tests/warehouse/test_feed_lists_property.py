"""Property: a load through the SQL reading (warehouse.feed_sql) stores exactly what the
exact path stores, whatever the lines hold.

Hypothesis mutates lines (inside the fee and plan lists too) and each feed is loaded twice
into fresh warehouses, once as it is and once with the SQL reading off: the latest state,
the stored sets and the quarantine must be equal, after a provider's first run and after a
later one (compared by hashes).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest
from feed_ways import exact_only
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from line_mutations import mutated_line
from wh_kit import FeedKit

from warehouse.db import connect
from warehouse.load import load_run

# Each set id as its set's hash: ids only identify.
_FEE_SET = "(SELECT any_value(set_hash) FROM addon_fee_sets AS s WHERE s.fee_set_id = t.fee_set_id)"
_PLAN_SET = (
    "(SELECT any_value(set_hash) FROM price_plan_sets AS s WHERE s.plan_set_id = t.plan_set_id)"
)
_BY_HASH = f"* EXCLUDE (fee_set_id, plan_set_id), {_FEE_SET} AS fee_set, {_PLAN_SET} AS plan_set"
# What a load leaves, each table ordered so two warehouses compare row by row.
_STATE = {
    "current_offers": (
        f"SELECT {_BY_HASH.replace('* EXCLUDE (', '* EXCLUDE (last_seen_at, ')}"
        " FROM current_offers AS t ORDER BY offer_key"
    ),
    "addon_fee_sets": "SELECT * EXCLUDE (fee_set_id) FROM addon_fee_sets ORDER BY ALL",
    "price_plan_sets": "SELECT * EXCLUDE (plan_set_id) FROM price_plan_sets ORDER BY ALL",
    "fee_set_lists": f"SELECT {_FEE_SET}, fees FROM fee_set_lists AS t ORDER BY ALL",
    "plan_set_lists": f"SELECT {_PLAN_SET}, plans FROM plan_set_lists AS t ORDER BY ALL",
    "offer_versions": f"SELECT {_BY_HASH} FROM offer_versions AS t ORDER BY ALL",
    "quarantine": "SELECT * FROM quarantine ORDER BY ALL",
}


def _state(con: duckdb.DuckDBPyConnection) -> dict[str, list[tuple[Any, ...]]]:
    return {name: con.execute(sql).fetchall() for name, sql in _STATE.items()}


def _canonical(base: dict[str, Any], key: str, **changes: Any) -> str:
    return json.dumps(base | {"offer_key": key} | changes, separators=(",", ":"))


@pytest.fixture(scope="module")
def module_kit(tmp_path_factory: pytest.TempPathFactory) -> FeedKit:
    return FeedKit(tmp_path_factory.mktemp("lists"))


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_lists_settled_once_per_text_store_what_the_exact_path_stores(
    module_kit: FeedKit,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path_factory: pytest.TempPathFactory,
    data: st.DataObject,
) -> None:
    kit = module_kit
    runs = [kit.run(1), kit.run(2)]
    feeds: list[Path] = []
    for run in runs:
        base = kit.offer(run, "odd").model_dump(mode="json")
        mutated = [data.draw(mutated_line(base)) for _ in range(3)]
        # Canonical offers around them, some sharing the base's lists, one with lists of
        # its own: a list text carried by several offers is settled once for all.
        canonical = [
            _canonical(base, "k0"),
            _canonical(base, "k1", price="3.10"),
            _canonical(base, "k2", fees=base["fees"][:1], plans=[]),
        ]
        feeds.append(kit.write(f"lists-{run.run_id}", [canonical[0], *mutated, *canonical[1:]]))
    root = tmp_path_factory.mktemp("wh")
    states = []
    for way in ("as it is", "exact only"):
        con = connect(root / f"{way.replace(' ', '-')}.duckdb")
        try:
            with monkeypatch.context() as patch:
                if way == "exact only":
                    exact_only(patch)
                for run, feed in zip(runs, feeds, strict=True):
                    load_run(con, run, feed)
                    states.append(_state(con))
        finally:
            con.close()
    as_it_is, exact = states[:2], states[2:]
    for after_run in range(2):
        for table in _STATE:
            assert as_it_is[after_run][table] == exact[after_run][table], (after_run, table)
    offers = {row[1] for row in as_it_is[1]["current_offers"]}
    assert {"k0", "k1", "k2"} <= offers
