"""What the server sends back: built from a route, a 404 explanation, then spoiled by a fault."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from http import HTTPStatus
from typing import Any

from replay.faults import Fault
from replay.model import Route

JSON_TYPE = "application/json; charset=utf-8"


@dataclass(frozen=True)
class Answer:
    status: int
    content_type: str
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    truncate_at: int | None = None
    """Send only this many body bytes, under a Content-Length announcing them all."""
    route: str | None = None
    """`source` of the route that answered; None for a 404 or a control answer."""
    fault: bool = False


def json_answer(status: int, data: Any) -> Answer:
    body = json.dumps(data, ensure_ascii=False, indent=2, default=str).encode("utf-8")
    return Answer(status, JSON_TYPE, body + b"\n")


def from_route(route: Route) -> Answer:
    return Answer(
        route.status,
        route.content_type,
        route.body,
        dict(route.response_headers),
        route=route.source,
    )


def with_fault(answer: Answer, fault: Fault) -> Answer:
    headers = dict(answer.headers)
    if fault.retry_after is not None:
        headers["Retry-After"] = str(fault.retry_after)
    spoiled = replace(
        answer,
        headers=headers,
        delay_s=fault.delay_s or 0.0,
        truncate_at=fault.truncate_at,
        fault=True,
    )
    if fault.status is not None:
        spoiled = replace(spoiled, status=fault.status)
        # An error from a real server does not carry the normal page: a spider
        # that parsed it anyway would record fake offers.
        if fault.status >= 400:
            error = json_answer(
                fault.status,
                {"error": _phrase(fault.status), "status": fault.status, "replay_fault": True},
            )
            spoiled = replace(spoiled, content_type=error.content_type, body=error.body)
    return spoiled


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return f"HTTP {status}"
