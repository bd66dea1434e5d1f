"""Property: whatever a line holds, the set-wise path reads it as the exact path does.

The set-wise path (warehouse.feed_fast) vouches for a line by a proof (strict parse, each
leaf's JSON type and checks, the line's length) rather than by writing it back. Hypothesis
mutates canonical lines the ways a drifting producer or a damaged file would (keys renamed,
added, dropped or doubled, values of another JSON type, escapes, spaces, cut text) and
each feed is read both ways: the frames and quarantine rows must be equal.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from feed_ways import assert_same, both_ways
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from json_doc import parent_of, value_paths
from wh_kit import FeedKit

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6)
    | st.sampled_from(["1.98", "USD", "hour", "in_stock", "gb", "2026-11-01T08:00:05Z", "7"]),
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=4), inner, max_size=2)
    ),
    max_leaves=4,
)


@st.composite
def mutated_line(draw: st.DrawFn, base: dict[str, Any]) -> str:
    data = json.loads(json.dumps(base))
    for _ in range(draw(st.integers(1, 3))):
        paths = value_paths(data)
        path = draw(st.sampled_from(paths))
        parent = parent_of(data, path)
        key = path[-1]
        action = draw(st.sampled_from(["value", "rename", "drop", "add"]))
        if action == "value":
            parent[key] = draw(JSON_VALUES)
        elif isinstance(parent, dict) and action == "rename":
            # Same length as the key it replaces: the hardest case for a length proof.
            new = draw(st.text("abcdefghijklmnopqrstuvwxyz_", min_size=len(key), max_size=len(key)))
            items = [(new if k == key else k, v) for k, v in parent.items()]
            parent.clear()
            parent.update(items)
        elif isinstance(parent, dict) and action == "drop":
            parent.pop(key)
        elif isinstance(parent, dict):
            parent[draw(st.text("abcxyz", min_size=1, max_size=3))] = draw(JSON_VALUES)
    text = json.dumps(data, ensure_ascii=draw(st.booleans()), separators=(",", ":"))
    edit = draw(st.sampled_from(["none", "none", "space", "double", "cut", "escape"]))
    at = draw(st.integers(0, len(text)))
    if edit == "space":
        text = text[:at] + " " + text[at:]
    elif edit == "double" and text.startswith('{"kind":"offer",'):
        # A key doubled, textually (json.dumps cannot write one).
        text = text[:-1] + ',"status":"sold_out"}'
    elif edit == "cut":
        text = text[:at]
    elif edit == "escape":
        text = text.replace("H100", "H\\u0031\\u0030\\u0030", 1).replace("/", "\\/", 1)
    return text


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
