"""Does a request match a route, and if not, why not (for the 404 explanation)."""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from replay.model import Route

# How many near misses a 404 lists.
MAX_CANDIDATES = 5


@dataclass(frozen=True)
class IncomingRequest:
    """A request as the matcher sees it: provider segment already stripped."""

    method: str
    provider: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    """Lower-cased names."""
    body: bytes
    json_body: Any
    json_ok: bool
    """The body parsed as JSON (an empty body does not)."""

    @staticmethod
    def parse_json(body: bytes) -> tuple[Any, bool]:
        if not body.strip():
            return None, False
        try:
            return json.loads(body.decode("utf-8-sig")), True
        except (UnicodeDecodeError, json.JSONDecodeError):
            return None, False


def mismatches(route: Route, request: IncomingRequest, step: int | None = None) -> list[str]:
    """Reasons the route does not answer the request; empty means it matches.

    `step` is only given when explaining a 404, to say a route exists at another step.
    """
    reasons: list[str] = []
    if route.method != request.method and not (request.method == "HEAD" and route.method == "GET"):
        reasons.append(f"method: route wants {route.method}, got {request.method}")
    if route.path != request.path:
        reasons.append(f"path: route wants {route.path}, got {request.path}")
    if route.query is not None and route.query != request.query:
        wanted, got = _show_query(route.query), _show_query(request.query)
        reasons.append(f"query: route wants exactly {wanted}, got {got}")
    if route.has_json:
        if not request.json_ok:
            reasons.append("json: route wants a JSON body, the request has none (or not JSON)")
        else:
            diff = json_subset_diff(route.json, request.json_body)
            if diff is not None:
                reasons.append(f"json: {diff}")
    for name, wanted in (route.headers or {}).items():
        got = request.headers.get(name, "")
        if wanted == "*" and not got.strip():
            reasons.append(f"header {name}: route wants it present, it is absent or empty")
        elif wanted == "!" and got.strip():
            reasons.append(f"header {name}: route wants it absent, it is present")
        elif wanted not in ("*", "!") and got != wanted:
            reasons.append(f"header {name}: route wants {wanted!r}, got {got or None!r}")
    if step is not None and not route.active_at(step):
        active = sorted(route.steps or ())
        reasons.append(f"steps: route is active at {active}, current step {step}")
    return reasons


def _show_query(query: dict[str, list[str]]) -> str:
    return json.dumps({k: v[0] if len(v) == 1 else v for k, v in query.items()}, sort_keys=True)


def json_subset_diff(expected: Any, actual: Any, where: str = "$") -> str | None:
    """None when `expected` is a recursive subset of `actual`, else where they differ.

    Objects: every expected key must be present with a matching value (extra keys
    allowed). Lists and scalars must be equal; true is not 1 (JSON tells them apart).
    """
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"at {where} route wants an object, got {_short(actual)}"
        for key, value in expected.items():
            if key not in actual:
                return f"at {where} route wants key {key!r}, it is missing"
            diff = json_subset_diff(value, actual[key], f"{where}.{key}")
            if diff is not None:
                return diff
        return None
    if not json_equal(expected, actual):
        return f"at {where} route wants {_short(expected)}, got {_short(actual)}"
    return None


def json_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict):
        return (
            isinstance(b, dict)
            and a.keys() == b.keys()
            and all(json_equal(v, b[k]) for k, v in a.items())
        )
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(json_equal, a, b))
    if isinstance(b, dict | list):
        return False
    return bool(a == b)


def _short(value: Any, limit: int = 80) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def closest(routes: Iterable[Route], request: IncomingRequest, step: int) -> list[dict[str, Any]]:
    """The routes that came nearest, each with the reasons it did not match."""
    scored = []
    for route in routes:
        reasons = mismatches(route, request, step)
        path_off = route.path != request.path
        similarity = difflib.SequenceMatcher(None, route.path, request.path).ratio()
        scored.append(((path_off, len(reasons), -similarity), route, reasons))
    scored.sort(key=lambda item: item[0])
    return [
        {
            "route": route.source,
            "method": route.method,
            "path": route.path,
            "steps": sorted(route.steps) if route.steps is not None else None,
            "why_not": reasons,
        }
        for _, route, reasons in scored[:MAX_CANDIDATES]
    ]
