"""Hypothesis strategies that mutate a canonical feed line as a drifting producer or a
damaged file would: keys renamed, added, dropped or doubled, values of another JSON type,
escapes, spaces, cut text. Shared by the property tests of the set-wise feed reading.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st
from json_doc import parent_of, value_paths

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
