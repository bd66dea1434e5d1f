"""The simulated market as a replay recordings folder: one scene ``market`` with one step per
poll, every route active at its own step (``"steps": [n]``).

A lost page or request is a route answering 503 every time at its step (Scrapy spends its
retries, then gives up on it). A provider's outage is not written here: the poll adds a
runtime fault to the server (``ReplayServer.add_fault``: every route of the provider 503)
and clears it after the crawl. The folder lives in a temporary directory, never in the
repository.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.market_sim.adapters.base import Adapter, Answer
from benchmarks.market_sim.truth import FaultKind, ProviderPoll

SCENE = "market"
UNAVAILABLE = {"error": "Service Unavailable", "status": 503}


class SceneWriter:
    """Writes the scene poll by poll (bodies as files), then the routes and scene.json."""

    def __init__(self, root: Path, adapters: list[Adapter]) -> None:
        self.root = root
        self.adapters = {a.name: a for a in adapters}
        self.routes: dict[str, list[dict[str, Any]]] = {a.name: [] for a in adapters}
        self.steps = 0
        for name in self.adapters:
            (root / SCENE / name).mkdir(parents=True, exist_ok=True)

    def add(self, listing: ProviderPoll) -> None:
        """The routes of one provider at one poll."""
        adapter = self.adapters[listing.provider]
        answers = adapter.answers(listing.pages)
        lost = listing.fault.page if listing.fault is not None else None
        if listing.fault is not None and listing.fault.kind is FaultKind.OUTAGE:
            lost = None  # the runtime fault spoils every route
        for index, answer in enumerate(answers):
            self.route(listing, f"{index + 1}", answer, failed=index == lost)
        for index, answer in enumerate(adapter.extra(listing.items)):
            self.route(listing, f"x{index + 1}", answer, failed=False)
        self.steps = max(self.steps, listing.poll)

    def route(self, listing: ProviderPoll, label: str, answer: Answer, *, failed: bool) -> None:
        route: dict[str, Any] = {**answer.match, "steps": [listing.poll]}
        if failed:
            route.update(status=503, body_text=json.dumps(UNAVAILABLE))
        else:
            body = f"p{listing.poll:04d}-{label}.json"
            path = self.root / SCENE / listing.provider / body
            path.write_text(json.dumps(answer.body, ensure_ascii=False), encoding="utf-8")
            route.update(status=200, content_type="application/json", body=body)
        self.routes[listing.provider].append(route)

    def finish(self) -> Path:
        """Write the routes and the scene file; returns the recordings root."""
        scene = self.root / SCENE
        for name, routes in self.routes.items():
            (scene / name / "routes.json").write_text(json.dumps(routes), encoding="utf-8")
        meta = {
            "description": "a simulated market over time (benchmarks.market_sim)",
            "extends": None,
            "steps": max(self.steps, 1),
        }
        (scene / "scene.json").write_text(json.dumps(meta), encoding="utf-8")
        return self.root
