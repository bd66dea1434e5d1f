"""The replay server over real loopback HTTP, with recordings written into tmp_path."""

from __future__ import annotations

import http.client
import json
import os
import select
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import UTC
from email.message import Message
from pathlib import Path
from typing import Any

import pytest

from replay import (
    Fault,
    RecordingError,
    ReplayServer,
    format_fault_spec,
    load_recordings,
    parse_fault_spec,
    validate_recordings,
)

REPO = Path(__file__).resolve().parents[1]

# -- recordings -----------------------------------------------------------------


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


VASTAI_ROUTES: list[dict[str, Any]] = [
    {
        "method": "POST",
        "path": "/api/v0/bundles/",
        "json": {"rentable": {"eq": True}, "gpu_name": {"in": ["RTX 4090"]}},
        "body": "bundles.json",
    },
    {"method": "GET", "path": "/api/v0/bundles/", "query": {"page": "2"}, "body_text": "page 2"},
    {"method": "GET", "path": "/api/v0/bundles/", "body_text": "page 1"},
    {"path": "/tags", "query": {"tag": ["a", "b"]}, "body_text": "two tags"},
    {
        "path": "/api/v1/instance-types",
        "headers": {"authorization": "*"},
        "body_text": '{"data": {}}',
        "content_type": "application/json",
        "response_headers": {"X-Foo": "bar"},
    },
    {
        "path": "/api/v1/instance-types",
        "headers": {"Authorization": "!"},
        "status": 401,
        "body_text": '{"error": "unauthorized"}',
    },
    {"path": "/token-exact", "headers": {"X-Token": "abc"}, "body_text": "exact"},
    {"path": "/boom", "body_text": "fine", "fault": {"status": 500}},
    {
        "path": "/flaky",
        "body_text": "ok now",
        "fault": {"status": 429, "retry_after": 7, "times": 1},
    },
    {"path": "/slow", "body_text": "slow", "fault": {"delay_s": 0.2}},
    {"path": "/cut", "body_text": "x" * 200, "fault": {"truncate_at": 20}},
]

SOLD_OUT = {"code": "Success", "data": {"list": [{"gpu": "RTX 4090", "idle_gpu_num": 0}]}}
FREE = {"code": "Success", "data": {"list": [{"gpu": "RTX 4090", "idle_gpu_num": 3}]}}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """default (no scene.json) + freeup (extends default, 2 steps)."""
    rec = tmp_path / "recordings"
    write_json(rec / "default/vastai/routes.json", VASTAI_ROUTES)
    write_json(rec / "default/vastai/bundles.json", {"offers": [{"id": 1, "gpu_name": "RTX 4090"}]})
    write_json(
        rec / "default/autodl/routes.json",
        [
            {
                "method": "POST",
                "path": "/api/v1/user/machine/list",
                "headers": {"Authorization": "tok"},
                "body": "sold_out.json",
            }
        ],
    )
    write_json(rec / "default/autodl/sold_out.json", SOLD_OUT)
    write_json(
        rec / "freeup/scene.json",
        {"description": "a 4090 frees up", "extends": "default", "steps": 2},
    )
    write_json(
        rec / "freeup/autodl/routes.json",
        [
            {
                "method": "POST",
                "path": "/api/v1/user/machine/list",
                "steps": [2],
                "body": "free.json",
            },
        ],
    )
    write_json(rec / "freeup/autodl/free.json", FREE)
    write_json(
        rec / "freeup/vastai/routes.json",
        [{"method": "GET", "path": "/api/v0/bundles/", "body_text": "freeup page"}],
    )
    return rec


@pytest.fixture
def server(root: Path) -> Iterator[ReplayServer]:
    with ReplayServer(root) as srv:
        yield srv


# -- a tiny stdlib client ---------------------------------------------------------


class Reply:
    def __init__(self, status: int, headers: Message, body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8")


def call(
    url: str,
    method: str = "GET",
    data: Any = None,
    headers: dict[str, str] | None = None,
    timeout: float = 5,
) -> Reply:
    body = None if data is None else json.dumps(data).encode()
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    if body is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return Reply(resp.status, resp.headers, resp.read())
    except urllib.error.HTTPError as err:
        return Reply(err.code, err.headers, err.read())


AUTODL_BODY = {"charge_type": "payg", "page_index": 1}


# -- matching ---------------------------------------------------------------------


def test_url_and_providers(server: ReplayServer) -> None:
    assert server.url.startswith("http://127.0.0.1:")
    assert server.base_url("vastai") == server.url + "/vastai"
    assert server.providers() == ["autodl", "vastai"]
    reply = call(server.base_url("vastai") + "/api/v0/bundles/")
    assert (reply.status, reply.text) == (200, "page 1")
    assert reply.headers["Content-Type"] == "text/plain; charset=utf-8"
    head = call(server.base_url("vastai") + "/api/v0/bundles/", "HEAD")  # GET routes answer HEAD
    assert (head.status, head.body, head.headers["Content-Length"]) == (200, b"", "6")


def test_json_body_file_and_subset_match(server: ReplayServer) -> None:
    url = server.base_url("vastai") + "/api/v0/bundles/"
    wanted = {"rentable": {"eq": True}, "gpu_name": {"in": ["RTX 4090"]}, "limit": 64}
    reply = call(url, "POST", wanted)
    assert reply.status == 200
    assert reply.json() == {"offers": [{"id": 1, "gpu_name": "RTX 4090"}]}
    assert reply.headers["Content-Type"] == "application/json; charset=utf-8"
    # A differing leaf, a list that is not equal, and true vs 1 all miss.
    assert call(url, "POST", {**wanted, "rentable": {"eq": False}}).status == 404
    assert call(url, "POST", {**wanted, "gpu_name": {"in": ["RTX 4090", "A100"]}}).status == 404
    assert call(url, "POST", {**wanted, "rentable": {"eq": 1}}).status == 404
    # No body at all: the POST route needs JSON, and the GET routes want GET.
    assert call(url, "POST", None).status == 404


def test_query_must_equal_exactly(server: ReplayServer) -> None:
    base = server.base_url("vastai")
    assert call(base + "/api/v0/bundles/?page=2").text == "page 2"
    # An extra parameter no longer equals {"page": "2"}: falls through to the catch-all.
    assert call(base + "/api/v0/bundles/?page=2&limit=5").text == "page 1"
    assert call(base + "/tags?tag=a&tag=b").text == "two tags"
    assert call(base + "/tags?tag=a").status == 404
    assert call(base + "/tags?tag=b&tag=a").status == 404  # order of repeats matters


def test_method_must_match(server: ReplayServer) -> None:
    assert call(server.base_url("vastai") + "/api/v0/bundles/", "DELETE").status == 404


def test_header_conditions(server: ReplayServer) -> None:
    url = server.base_url("vastai") + "/api/v1/instance-types"
    ok = call(url, headers={"Authorization": "Bearer k"})
    assert (ok.status, ok.headers["X-Foo"], ok.headers["Content-Type"]) == (
        200,
        "bar",
        "application/json",
    )
    denied = call(url)
    assert denied.status == 401
    assert denied.headers["Content-Type"] == "application/json; charset=utf-8"
    assert call(url, headers={"Authorization": ""}).status == 401  # empty counts as absent
    exact = server.base_url("vastai") + "/token-exact"
    assert call(exact, headers={"x-token": "abc"}).text == "exact"  # names case-insensitive
    assert call(exact, headers={"X-Token": "abd"}).status == 404


def test_scene_routes_take_priority_over_extended(root: Path) -> None:
    with ReplayServer(root, scene="freeup") as srv:
        base = srv.base_url("vastai")
        assert call(base + "/api/v0/bundles/").text == "freeup page"
        # Not overridden: inherited from default.
        assert call(base + "/api/v0/bundles/?page=2").text == "freeup page"
        assert call(base + "/tags?tag=a&tag=b").text == "two tags"


def test_steps_change_the_answer(root: Path) -> None:
    with ReplayServer(root, scene="freeup", step=1) as srv:
        url = srv.base_url("autodl") + "/api/v1/user/machine/list"
        auth = {"Authorization": "tok"}
        assert call(url, "POST", AUTODL_BODY, auth).json() == SOLD_OUT
        srv.set_state(step=2)
        assert (srv.scene, srv.step) == ("freeup", 2)
        assert call(url, "POST", AUTODL_BODY, auth).json() == FREE
        srv.set_state(scene="default")  # a new scene starts at step 1
        assert (srv.scene, srv.step) == ("default", 1)
        assert call(url, "POST", AUTODL_BODY, auth).json() == SOLD_OUT


def test_set_state_validates(server: ReplayServer) -> None:
    with pytest.raises(ValueError, match="unknown scene 'nope'"):
        server.set_state(scene="nope")
    with pytest.raises(ValueError, match=r"steps 1\.\.1"):
        server.set_state(step=2)
    with pytest.raises(ValueError, match=r"steps 1\.\.2"):
        server.set_state(scene="freeup", step=3)
    assert (server.scene, server.step) == ("default", 1)
    with pytest.raises(ValueError, match="unknown scene"):
        ReplayServer(server.recordings.root, scene="nope")


# -- faults -----------------------------------------------------------------------


def test_route_fault_500_has_no_normal_body(server: ReplayServer) -> None:
    reply = call(server.base_url("vastai") + "/boom")
    assert reply.status == 500
    assert reply.json()["replay_fault"] is True
    assert "fine" not in reply.text


def test_route_fault_429_once_then_200(server: ReplayServer) -> None:
    url = server.base_url("vastai") + "/flaky"
    first = call(url)
    assert (first.status, first.headers["Retry-After"]) == (429, "7")
    second = call(url)
    assert (second.status, second.text, second.headers["Retry-After"]) == (200, "ok now", None)
    # set_state replays a scene afresh: the recorded fault fires again.
    server.set_state(step=1)
    assert call(url).status == 429


def test_runtime_fault_429_times_1(server: ReplayServer) -> None:
    url = server.base_url("vastai") + "/api/v0/bundles/"
    server.add_fault(Fault("vastai", "/api/v0/bundles/", status=429, retry_after=3, times=1))
    first = call(url)
    assert (first.status, first.headers["Retry-After"]) == (429, "3")
    assert call(url).text == "page 1"
    assert [r.status for r in server.requests] == [429, 200]
    assert [r.fault for r in server.requests] == [True, False]


def test_runtime_fault_401_method_filter_and_clear(server: ReplayServer) -> None:
    url = server.base_url("vastai") + "/api/v0/bundles/"
    server.add_fault(Fault("vastai", "/api/v0/bundles/", method="GET", status=401))
    assert call(url).status == 401
    assert call(url).status == 401  # no `times`: every request
    body = {"rentable": {"eq": True}, "gpu_name": {"in": ["RTX 4090"]}}
    assert call(url, "POST", body).status == 200  # method filter
    assert server.faults == [Fault("vastai", "/api/v0/bundles/", method="GET", status=401)]
    server.clear_faults()
    assert call(url).status == 200


def test_runtime_fault_any_path_and_unrouted_path(server: ReplayServer) -> None:
    server.add_fault(Fault("autodl", "*", status=503))
    assert call(server.base_url("autodl") + "/anything").status == 503
    assert call(server.base_url("vastai") + "/api/v0/bundles/").status == 200


def test_delay_lets_client_time_out(server: ReplayServer) -> None:
    url = server.base_url("vastai") + "/slow"
    with pytest.raises((TimeoutError, urllib.error.URLError)):
        call(url, timeout=0.05)
    started = time.monotonic()
    reply = call(url, timeout=5)
    assert reply.text == "slow"
    assert time.monotonic() - started >= 0.2


def test_truncated_body_is_incomplete(server: ReplayServer) -> None:
    url = server.base_url("vastai") + "/cut"
    with (
        pytest.raises(http.client.IncompleteRead) as info,
        urllib.request.urlopen(url, timeout=5) as resp,
    ):
        assert resp.headers["Content-Length"] == "200"
        resp.read()
    assert len(info.value.partial) == 20


def test_runtime_truncate_and_delay_from_constructor(root: Path) -> None:
    faults = [Fault("vastai", "/api/v0/bundles/", truncate_at=3, times=1)]
    with ReplayServer(root, faults=faults) as srv:
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
        conn.request("GET", "/vastai/api/v0/bundles/")
        resp = conn.getresponse()
        with pytest.raises(http.client.IncompleteRead):
            resp.read()
        conn.close()
        assert call(srv.base_url("vastai") + "/api/v0/bundles/").text == "page 1"


def test_fault_validation() -> None:
    with pytest.raises(ValueError, match="times"):
        Fault("p", "/x", times=0)
    with pytest.raises(ValueError, match="status"):
        Fault("p", "/x", status=700)
    assert parse_fault_spec("vastai:/api/v0/bundles/:status=429,retry_after=5,times=1") == Fault(
        "vastai", "/api/v0/bundles/", status=429, retry_after=5, times=1
    )
    assert parse_fault_spec("p:*:delay_s=0.1,method=post") == Fault("p", "*", "post", delay_s=0.1)
    spec = "vastai:/x:method=GET,status=500,retry_after=2,delay_s=0.1,truncate_at=3,times=2"
    assert format_fault_spec(parse_fault_spec(spec)) == spec
    with pytest.raises(ValueError, match="bad option"):
        parse_fault_spec("p:/x:colour=red")
    with pytest.raises(ValueError, match="PROVIDER:PATH"):
        parse_fault_spec("justprovider")


# -- 404s, requests log, control endpoints ----------------------------------------------


def test_404_explains_closest_candidates(
    server: ReplayServer, caplog: pytest.LogCaptureFixture
) -> None:
    url = server.base_url("vastai") + "/api/v0/bundles/"
    reply = call(url, "POST", {"rentable": {"eq": False}})
    assert reply.status == 404
    info = reply.json()
    assert (info["provider"], info["method"], info["path"]) == (
        "vastai",
        "POST",
        "/api/v0/bundles/",
    )
    best = info["candidates"][0]
    assert best["route"] == "default/vastai/routes.json#0"
    assert any("$.rentable.eq" in why for why in best["why_not"])
    assert "no route for POST vastai/api/v0/bundles/" in caplog.text


def test_404_mentions_inactive_step(root: Path) -> None:
    with ReplayServer(root, scene="freeup") as srv:
        url = srv.base_url("autodl") + "/api/v1/user/machine/list"
        info = call(url, "POST", AUTODL_BODY).json()  # no Authorization: default route misses
        reasons = {c["route"]: c["why_not"] for c in info["candidates"]}
        assert any("current step 1" in r for r in reasons["freeup/autodl/routes.json#0"])
        assert any("authorization" in r for r in reasons["default/autodl/routes.json#0"])


def test_unknown_provider_and_robots(server: ReplayServer) -> None:
    reply = call(server.url + "/nosuch/x")
    assert reply.status == 404
    assert reply.json()["providers"] == ["autodl", "vastai"]
    assert call(server.url + "/robots.txt").status == 404
    assert call(server.base_url("vastai") + "/robots.txt").status == 404


def test_requests_are_recorded(server: ReplayServer) -> None:
    url = server.base_url("autodl") + "/api/v1/user/machine/list?x=1&y=2&y=3"
    call(url, "POST", AUTODL_BODY, {"Authorization": "tok"})
    (req,) = server.requests
    assert (req.method, req.provider, req.path, req.status) == (
        "POST",
        "autodl",
        "/api/v1/user/machine/list",
        200,
    )
    assert req.query == {"x": "1", "y": ["2", "3"]}
    assert req.json == AUTODL_BODY
    assert req.headers["authorization"] == "tok"  # names lower-cased
    assert req.route == "default/autodl/routes.json#0"
    assert req.time.tzinfo is UTC
    server.clear_requests()
    assert server.requests == []


def test_control_endpoints(root: Path) -> None:
    with ReplayServer(root, scene="freeup") as srv:
        state = srv.url + "/__replay__/state"
        assert call(state).json() == {
            "scene": "freeup",
            "step": 1,
            "steps": 2,
            "scenes": ["default", "freeup"],
            "providers": ["autodl", "vastai"],
        }
        assert call(state, "POST", {"step": 2}).json()["step"] == 2
        url = srv.base_url("autodl") + "/api/v1/user/machine/list"
        assert call(url, "POST", AUTODL_BODY).json() == FREE
        bad = call(state, "POST", {"scene": "nope"})
        assert bad.status == 400 and "unknown scene" in bad.json()["error"]
        assert call(state, "POST", {"scene": "default"}).json()["step"] == 1

        logged = call(srv.url + "/__replay__/requests").json()
        assert [(r["provider"], r["path"], r["status"]) for r in logged] == [
            ("autodl", "/api/v1/user/machine/list", 200)
        ]  # control calls are not recorded

        faults = srv.url + "/__replay__/faults"
        added = call(faults, "POST", {"provider": "vastai", "path": "/tags", "status": 500})
        assert added.json()[0]["status"] == 500
        assert call(srv.base_url("vastai") + "/tags?tag=a&tag=b").status == 500
        assert call(faults, "POST", {"provider": "vastai", "colour": "red"}).status == 400
        call(faults, "DELETE")
        assert srv.faults == []
        assert call(srv.url + "/__replay__/nope").status == 404


# -- validation -------------------------------------------------------------------


def test_valid_recordings_load(root: Path) -> None:
    assert validate_recordings(root) == []
    recordings = load_recordings(root)
    assert recordings.scenes["default"].steps == 1  # no scene.json
    assert recordings.scenes["freeup"].extends == "default"


def test_extends_missing_scene(root: Path) -> None:
    write_json(root / "freeup/scene.json", {"extends": "ghost", "steps": 2})
    with pytest.raises(RecordingError) as info:
        ReplayServer(root)
    assert str(root / "freeup/scene.json") in str(info.value)
    assert "ghost" in str(info.value)


def test_missing_body_file(root: Path) -> None:
    (root / "freeup/autodl/free.json").unlink()
    problems = validate_recordings(root)
    assert len(problems) == 1
    assert str(root / "freeup/autodl/routes.json") + "#0" in problems[0]
    assert "free.json" in problems[0]


def test_bad_json_names_the_file(root: Path) -> None:
    (root / "default/vastai/routes.json").write_text('[{"path": "/x",}]', encoding="utf-8")
    with pytest.raises(RecordingError, match="bad JSON") as info:
        load_recordings(root)
    assert str(root / "default/vastai/routes.json") in info.value.problems[0]


def test_route_and_scene_mistakes_are_all_listed(root: Path) -> None:
    write_json(root / "broken/scene.json", {"extends": "broken2", "steps": 0})
    write_json(root / "broken2/scene.json", {"extends": "broken"})
    write_json(
        root / "broken/vastai/routes.json",
        [
            {"path": "no-slash"},
            {"path": "/a", "query": {"page": 2}},
            {"path": "/b", "body": "x.json", "body_text": "y"},
            {"path": "/c", "respone_headers": {}},
            {"path": "/d", "fault": {"status": 500, "when": "always"}},
            {"path": "/e", "steps": [0]},
            {"path": "/f", "comment": "notes are fine", "_todo": "so is this"},
        ],
    )
    (root / "nometa/vastai").mkdir(parents=True)
    problems = "\n".join(validate_recordings(root))
    for expected in (
        "'steps' must be an integer >= 1",
        "makes a cycle",
        "#0: 'path' must be a string starting with '/'",
        "#1: query 'page' must be a string",
        "#2: give 'body' (a file) or 'body_text', not both",
        "#3: unknown key 'respone_headers'",
        "#4: bad 'fault'",
        "#5: 'steps' must be a non-empty list",
        "nometa/scene.json: missing",
    ):
        assert expected in problems
    assert "#6" not in problems


def test_missing_root() -> None:
    problems = validate_recordings(Path("/nonexistent/recordings"))
    assert problems == ["/nonexistent/recordings: recordings folder does not exist"]


# -- command lines ------------------------------------------------------------------


def read_line(proc: subprocess.Popen[str], timeout: float = 15) -> str:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, "the replay CLI printed nothing"
    return proc.stdout.readline().strip()


def test_python_m_replay_serves_until_terminated(root: Path) -> None:
    cmd = [sys.executable, "-m", "replay", "--root", str(root), "--scene", "freeup", "--step", "2"]
    cmd += ["--fault", "vastai:/tags:status=503,times=1", "--quiet"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, text=True)
    try:
        url = read_line(proc)
        assert url.startswith("http://127.0.0.1:")
        # The SIGTERM handler is in place before the first line; waiting for the last line
        # of the announcement as well means the test never races the start-up, however
        # busy the machine (a condition waited on, not a sleep).
        # (readline, not select: the first read may have buffered the rest already; an
        # early exit ends the loop with "" at EOF.)
        assert proc.stdout is not None
        announced = [proc.stdout.readline().strip()]
        while announced[-1] not in ("Ctrl-C to stop", "") and len(announced) < 100:
            announced.append(proc.stdout.readline().strip())
        assert announced[-1] == "Ctrl-C to stop", announced
        reply = call(url + "/autodl/api/v1/user/machine/list", "POST", AUTODL_BODY)
        assert reply.json() == FREE
        assert call(url + "/vastai/tags?tag=a&tag=b").status == 503
        assert call(url + "/vastai/tags?tag=a&tag=b").text == "two tags"
    finally:
        proc.terminate()
        assert proc.wait(timeout=120) == 0  # SIGTERM is a clean stop


def test_python_m_replay_stops_cleanly_on_sigterm_sent_right_after_its_first_line(
    root: Path,
) -> None:
    # The handler is installed before anything is printed, so however early a caller
    # reacts to the URL, SIGTERM is a clean stop (exit 0), never the default kill (-15).
    cmd = [sys.executable, "-m", "replay", "--root", str(root), "--quiet"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("http://127.0.0.1:")
    finally:
        proc.terminate()
        assert proc.wait(timeout=120) == 0


def test_python_m_replay_rejects_unknown_scene(root: Path) -> None:
    cmd = [sys.executable, "-m", "replay", "--root", str(root), "--scene", "nope"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert "unknown scene 'nope'" in done.stderr


def test_gpurent_replay_check(root: Path) -> None:
    import typer
    from typer.testing import CliRunner

    from gpurent.cli import replay_cmd

    app = typer.Typer()
    app.add_typer(replay_cmd.app)
    runner = CliRunner()
    ok = runner.invoke(app, ["replay", "check", "--root", str(root)])
    assert ok.exit_code == 0, ok.output
    assert "freeup" in ok.output
    (root / "default/autodl/sold_out.json").unlink()
    bad = runner.invoke(app, ["replay", "check", "--root", str(root)], terminal_width=300)
    assert bad.exit_code == 1
    assert "sold_out.json" in bad.output
    assert runner.invoke(app, ["replay", "serve", "--help"]).exit_code == 0
