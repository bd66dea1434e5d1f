"""ReplayServer: serves recorded provider responses over real HTTP on loopback.

A spider for provider P uses the base URL `http://127.0.0.1:<port>/P`; the first
path segment names the provider, the rest is matched against P's routes in the
current scene (then the scenes it extends), at the current step.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

from replay.answer import Answer, from_route, json_answer, with_fault
from replay.faults import Fault, FaultCounter, fault_from_mapping
from replay.handler import CONTROL_PREFIX, ReplayHandler
from replay.loader import load_recordings
from replay.matching import IncomingRequest, closest, mismatches
from replay.model import DEFAULT_SCENE, Route

log = logging.getLogger("replay")


@dataclass(frozen=True)
class RecordedRequest:
    """A request the server answered (control endpoints are not recorded)."""

    method: str
    provider: str
    """First path segment; "" for a request at the root such as /robots.txt."""
    path: str
    query: dict[str, str | list[str]]
    """Single values as str, repeated ones as lists (the route `query` form)."""
    json: Any
    """The body parsed as JSON, or None."""
    headers: dict[str, str]
    """Lower-cased names (repeated headers joined with ", ")."""
    status: int
    """The status answered (after faults)."""
    time: datetime
    """Arrival time, UTC."""
    body: bytes = b""
    route: str | None = None
    """The route that answered (`<scene>/<provider>/routes.json#<i>`), None on a 404."""
    fault: bool = False
    """True when a fault changed the answer."""

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "provider": self.provider,
            "path": self.path,
            "query": self.query,
            "json": self.json,
            "headers": self.headers,
            "status": self.status,
            "time": self.time.isoformat(),
            "route": self.route,
            "fault": self.fault,
        }


@dataclass
class _RuntimeFault:
    fault: Fault
    # Identity, not equality: two equal faults added twice each have their own `times`.
    token: object = field(default_factory=object)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True  # a client stuck in a delayed answer must not block stop()
    replay: ReplayServer


class ReplayServer:
    """Serve a recordings folder; see the module docstring for the URL scheme."""

    def __init__(
        self,
        root: Path | None = None,
        scene: str = DEFAULT_SCENE,
        step: int = 1,
        host: str = "127.0.0.1",
        port: int = 0,
        faults: Iterable[Fault] = (),
    ) -> None:
        self.recordings = load_recordings(root)  # raises RecordingError
        self.host = host
        self._port = port
        self._lock = threading.RLock()
        self._runtime_uses = FaultCounter()
        self._route_uses = FaultCounter()
        self._scene = DEFAULT_SCENE
        self._step = 1
        self.set_state(scene, step)
        self._faults = [_RuntimeFault(f) for f in faults]
        self._requests: list[RecordedRequest] = []
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.stopping = threading.Event()

    # -- lifecycle -----------------------------------------------------------

    def start(self) -> ReplayServer:
        if self._httpd is not None:
            raise RuntimeError("replay server already started")
        self.stopping.clear()
        httpd = _HTTPServer((self.host, self._port), ReplayHandler)
        httpd.replay = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True,
            name=f"replay-server-{self.port}",
        )  # fmt: skip
        self._thread.start()
        log.info("replay server at %s (scene %s, step %d)", self.url, self._scene, self._step)
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self.stopping.set()  # wakes answers sleeping on a delay fault
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> ReplayServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("replay server not started")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("", "0.0.0.0") else self.host
        return f"http://{host}:{self.port}"

    def base_url(self, provider: str) -> str:
        return f"{self.url}/{provider}"

    # -- state ---------------------------------------------------------------

    @property
    def scene(self) -> str:
        return self._scene

    @property
    def step(self) -> int:
        return self._step

    @property
    def steps(self) -> int:
        """Number of steps of the current scene."""
        return self.recordings.scenes[self._scene].steps

    def scenes(self) -> list[str]:
        return sorted(self.recordings.scenes)

    def set_state(self, scene: str | None = None, step: int | None = None) -> None:
        """Move to another scene and/or step; a new scene without a step starts at 1.

        Also resets the use counts of recorded route faults, so a scene replays
        its `times`-limited faults afresh (runtime faults keep their counts).
        """
        with self._lock:
            new_scene = self._scene if scene is None else scene
            if new_scene not in self.recordings.scenes:
                known = ", ".join(sorted(self.recordings.scenes)) or "none"
                raise ValueError(f"unknown scene {new_scene!r} (known: {known})")
            new_step = step if step is not None else (1 if scene is not None else self._step)
            steps = self.recordings.scenes[new_scene].steps
            if isinstance(new_step, bool) or not isinstance(new_step, int):
                raise ValueError(f"step must be an integer, got {new_step!r}")
            if not 1 <= new_step <= steps:
                raise ValueError(f"scene {new_scene!r} has steps 1..{steps}, got {new_step}")
            self._scene, self._step = new_scene, new_step
            self._route_uses.reset()

    def state(self) -> dict[str, Any]:
        with self._lock:
            return {
                "scene": self._scene,
                "step": self._step,
                "steps": self.steps,
                "scenes": self.scenes(),
                "providers": self.providers(),
            }

    def providers(self) -> list[str]:
        return self.recordings.providers(self._scene)

    # -- faults and requests -------------------------------------------------

    def add_fault(self, fault: Fault) -> None:
        with self._lock:
            self._faults.append(_RuntimeFault(fault))

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()
            self._runtime_uses.reset()

    @property
    def faults(self) -> list[Fault]:
        with self._lock:
            return [f.fault for f in self._faults]

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of the requests answered so far, oldest first."""
        with self._lock:
            return list(self._requests)

    def clear_requests(self) -> None:
        with self._lock:
            self._requests.clear()

    # -- answering -----------------------------------------------------------

    def answer(self, request: IncomingRequest) -> Answer:
        """Route the request, apply a fault if one is due, and record it."""
        time = datetime.now(UTC)
        with self._lock:
            scene, step = self._scene, self._step
        known = request.provider in self.recordings.providers(scene)
        route = self._find_route(scene, step, request) if known else None
        if route is not None:
            answer = from_route(route)
        else:
            answer = self._not_found(scene, step, request, known)
        fault = self._due_fault(request, route)
        if fault is not None:
            answer = with_fault(answer, fault)
        with self._lock:
            self._requests.append(
                RecordedRequest(
                    method=request.method,
                    provider=request.provider,
                    path=request.path,
                    query={k: v[0] if len(v) == 1 else list(v) for k, v in request.query.items()},
                    json=request.json_body,
                    headers=dict(request.headers),
                    status=answer.status,
                    time=time,
                    body=request.body,
                    route=answer.route,
                    fault=answer.fault,
                )
            )
        return answer

    def _find_route(self, scene: str, step: int, request: IncomingRequest) -> Route | None:
        for route in self.recordings.routes(scene, request.provider, step):
            if not mismatches(route, request):
                return route
        return None

    def _due_fault(self, request: IncomingRequest, route: Route | None) -> Fault | None:
        with self._lock:
            runtime = list(self._faults)
        for item in runtime:
            # take() counts a use, so it must only run for faults that apply.
            applies = item.fault.applies_to(request.provider, request.path, request.method)
            if applies and self._runtime_uses.take(item.token, item.fault):
                return item.fault
        if (
            route is not None
            and route.fault is not None
            and self._route_uses.take(route.source, route.fault)
        ):
            return route.fault
        return None

    def _not_found(
        self, scene: str, step: int, request: IncomingRequest, known_provider: bool
    ) -> Answer:
        if request.path == "/robots.txt":
            # Scrapy reads a 404 robots.txt as "allow all"; not worth a warning.
            return Answer(404, "text/plain; charset=utf-8", b"no robots.txt recorded\n")
        if not known_provider:
            log.warning(
                "no provider %r in scene %r: %s %s", request.provider, scene,
                request.method, request.path,
            )  # fmt: skip
            return json_answer(
                404,
                {
                    "error": f"no provider {request.provider!r} in scene {scene!r}",
                    "hint": "URLs are <server>/<provider>/<path as at the provider>",
                    "providers": self.recordings.providers(scene),
                },
            )
        candidates = closest(self.recordings.all_routes(scene, request.provider), request, step)
        log.warning(
            "no route for %s %s/%s (scene %s, step %d); nearest: %s",
            request.method, request.provider, request.path.lstrip("/"), scene, step,
            "; ".join(f"{c['route']}: {', '.join(c['why_not'])}" for c in candidates[:2]),
        )  # fmt: skip
        return json_answer(
            404,
            {
                "error": "no recorded route matches this request",
                "scene": scene,
                "step": step,
                "provider": request.provider,
                "method": request.method,
                "path": request.path,
                "query": {k: v[0] if len(v) == 1 else v for k, v in request.query.items()},
                "json": request.json_body,
                "candidates": candidates,
            },
        )

    def control(self, method: str, action: str, body: bytes) -> Answer:
        """The /__replay__/ endpoints: state, requests, faults."""
        data, ok = IncomingRequest.parse_json(body)
        try:
            if action == "state" and method == "GET":
                return json_answer(200, self.state())
            if action == "state" and method == "POST":
                if not ok or not isinstance(data, dict):
                    raise ValueError('send a JSON object such as {"scene": "x", "step": 2}')
                self.set_state(data.get("scene"), data.get("step"))
                return json_answer(200, self.state())
            if action == "requests" and method == "GET":
                return json_answer(200, [r.to_json() for r in self.requests])
            if action == "requests" and method == "DELETE":
                self.clear_requests()
                return json_answer(200, [])
            if action == "faults" and method == "GET":
                return json_answer(200, [vars(f) for f in self.faults])
            if action == "faults" and method == "POST":
                if not ok or not isinstance(data, dict) or "provider" not in data:
                    raise ValueError('send {"provider": "p", "path": "/x", "status": 500, ...}')
                options = {k: v for k, v in data.items() if k not in ("provider", "path")}
                self.add_fault(fault_from_mapping(data["provider"], data.get("path", "*"), options))
                return json_answer(200, [vars(f) for f in self.faults])
            if action == "faults" and method == "DELETE":
                self.clear_faults()
                return json_answer(200, [])
        except (TypeError, ValueError) as exc:
            return json_answer(400, {"error": str(exc)})
        return json_answer(
            404,
            {
                "error": f"no control endpoint {method} /{CONTROL_PREFIX}/{action}",
                "endpoints": [
                    "GET|POST /__replay__/state",
                    "GET|DELETE /__replay__/requests",
                    "GET|POST|DELETE /__replay__/faults",
                ],
            },
        )
