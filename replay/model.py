"""In-memory form of the recordings: scenes, their routes, and the inheritance chain."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replay.faults import Fault

DEFAULT_SCENE = "default"


@dataclass(frozen=True, eq=False)
class Route:
    """One recorded answer and the conditions under which it is given."""

    source: str
    """`<scene>/<provider>/routes.json#<index>`: where to look when it misbehaves."""
    scene: str
    provider: str
    method: str
    path: str
    query: dict[str, list[str]] | None
    """When set, the parsed query must equal it exactly (single values as 1-lists)."""
    json: Any
    has_json: bool
    """`json` is only a condition when this is True (`null` is a legal subset)."""
    headers: dict[str, str] | None
    """Lower-cased header names to value, `*` (present) or `!` (absent or empty)."""
    steps: frozenset[int] | None
    status: int
    content_type: str
    response_headers: dict[str, str]
    body: bytes
    fault: Fault | None

    def active_at(self, step: int) -> bool:
        return self.steps is None or step in self.steps


@dataclass(frozen=True)
class Scene:
    name: str
    description: str
    extends: str | None
    steps: int
    routes: dict[str, tuple[Route, ...]] = field(default_factory=dict)
    """Provider name to its routes, in file order."""


@dataclass(frozen=True)
class Recordings:
    root: Path
    scenes: dict[str, Scene]

    def chain(self, scene: str) -> list[Scene]:
        """The scene, then the scene it extends, and so on (checked acyclic at load)."""
        out: list[Scene] = []
        name: str | None = scene
        while name is not None:
            current = self.scenes[name]
            out.append(current)
            name = current.extends
        return out

    def routes(self, scene: str, provider: str, step: int) -> Iterator[Route]:
        """Routes active at `step`, own scene first: the first match wins."""
        for current in self.chain(scene):
            for route in current.routes.get(provider, ()):
                if route.active_at(step):
                    yield route

    def all_routes(self, scene: str, provider: str) -> Iterator[Route]:
        """Every route of the provider along the chain, whatever the step (for 404 hints)."""
        for current in self.chain(scene):
            yield from current.routes.get(provider, ())

    def providers(self, scene: str) -> list[str]:
        names: set[str] = set()
        for current in self.chain(scene):
            names.update(p for p, routes in current.routes.items() if routes)
        return sorted(names)
