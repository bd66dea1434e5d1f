"""Property: whatever a line holds, the set-wise path reads it as the exact path does.

The set-wise path (warehouse.feed_fast) vouches for a line by a proof (strict parse, each
leaf's JSON type and checks, the line's length) rather than by writing it back. Hypothesis
mutates canonical lines the ways a drifting producer or a damaged file would (keys renamed,
added, dropped or doubled, values of another JSON type, escapes, spaces, cut text) and
each feed is read both ways: the frames and quarantine rows must be equal.
"""

from __future__ import annotations

import json

import pytest
from feed_ways import assert_same, both_ways
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from line_mutations import mutated_line
from wh_kit import FeedKit


@pytest.fixture(scope="module")
def module_kit(tmp_path_factory: pytest.TempPathFactory) -> FeedKit:
    return FeedKit(tmp_path_factory.mktemp("fast"))


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_set_wise_and_exact_reading_agree_on_mutated_lines(
    module_kit: FeedKit, monkeypatch: pytest.MonkeyPatch, data: st.DataObject
) -> None:
    kit = module_kit
    run = kit.run(1)
    base = kit.offer(run, "odd").model_dump(mode="json")
    lines = [data.draw(mutated_line(base)) for _ in range(3)]
    canonical = [json.dumps(base | {"offer_key": f"k{i}"}, separators=(",", ":")) for i in range(2)]
    path = kit.write("mutated", [canonical[0], *lines, canonical[1]])
    bulk, exact = both_ways(path, monkeypatch)
    assert_same(bulk, exact)
    assert {"k0", "k1"} <= set(bulk.offers["offer_key"])
