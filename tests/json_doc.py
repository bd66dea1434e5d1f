"""Paths into parsed JSON documents, for tests that mutate them (provider responses, feed
lines). A module with a unique name, importable from every test folder (tests/ is on
sys.path)."""

from __future__ import annotations

from typing import Any

Path = tuple[str | int, ...]


def key_paths(doc: Any, prefix: Path = ()) -> list[Path]:
    """The path of every dict key in the document."""
    found: list[Path] = []
    if isinstance(doc, dict):
        for key, value in doc.items():
            found.append((*prefix, key))
            found.extend(key_paths(value, (*prefix, key)))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            found.extend(key_paths(value, (*prefix, index)))
    return found


def value_paths(doc: Any, prefix: Path = ()) -> list[Path]:
    """The path of every value below the top: dict keys and list positions."""
    found: list[Path] = []
    children = (
        doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    )
    for step, value in children:
        found.append((*prefix, step))
        found.extend(value_paths(value, (*prefix, step)))
    return found


def parent_of(doc: Any, path: Path) -> Any:
    """The dict or list holding the value at ``path``."""
    node = doc
    for part in path[:-1]:
        node = node[part]
    return node
