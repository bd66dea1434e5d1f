"""A provider is one folder (issue 31.3): ``spiders/providers/<folder>/`` holds its spider,
parser, billing facts, recordings and fixture cases, and its line in
``gpurent_core/providers.py`` registers it. Nothing in the folder is left unregistered, and
the replay server's default scene is what the folders hold."""

from __future__ import annotations

import ast
import json
import urllib.request
from pathlib import Path
from urllib.parse import urlencode

import pytest

from gpurent_core.billing_facts import load_billing_facts, parse_billing_facts
from gpurent_core.providers import BILLING_FACTS_FILE, PROVIDERS, ProviderInfo, providers_root
from replay import ReplayServer, load_recordings, provider_recordings, validate_recordings
from replay.loader import default_root
from replay.model import DEFAULT_SCENE, Route

REPO = Path(__file__).resolve().parents[1]
FOLDER = REPO / "spiders" / "providers"
PARTS = ("__init__.py", "spider.py", "parser.py", BILLING_FACTS_FILE)


def test_the_registry_finds_the_folders_in_this_checkout() -> None:
    assert providers_root().resolve() == FOLDER.resolve()


@pytest.mark.parametrize("info", PROVIDERS, ids=lambda p: p.name)
def test_every_registered_provider_has_its_whole_folder(info: ProviderInfo) -> None:
    folder = info.path
    assert folder.is_dir(), f"{info.name}: no folder {folder}"
    for part in PARTS:
        assert (folder / part).is_file(), f"{info.name}: {part} missing"
    assert (info.recordings / "routes.json").is_file()
    assert (info.recordings / "PROVENANCE").is_file()
    cases = [d for d in info.fixtures.iterdir() if d.is_dir()] if info.fixtures.is_dir() else []
    assert cases, f"{info.name}: no fixture cases under {info.fixtures}"


@pytest.mark.parametrize("info", PROVIDERS, ids=lambda p: p.name)
def test_the_folder_spider_is_the_registered_one(info: ProviderInfo) -> None:
    # Read, not imported: the spider's `name` is the registry line's name.
    tree = ast.parse((info.path / "spider.py").read_text(encoding="utf-8"))
    names = {
        node.value.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "name" for t in node.targets)
        and isinstance(node.value, ast.Constant)
    }
    assert names == {info.name}


@pytest.mark.parametrize("info", PROVIDERS, ids=lambda p: p.name)
def test_the_folder_marker_imports_nothing(info: ProviderInfo) -> None:
    # The folder's data is read without Scrapy: its __init__ pulls nothing in.
    tree = ast.parse((info.path / "__init__.py").read_text(encoding="utf-8"))
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]


@pytest.mark.parametrize("info", PROVIDERS, ids=lambda p: p.name)
def test_the_billing_facts_in_the_folder_are_that_providers(info: ProviderInfo) -> None:
    text = (info.path / BILLING_FACTS_FILE).read_text(encoding="utf-8")
    facts = parse_billing_facts(text, info.name)
    assert facts == tuple(f for f in load_billing_facts() if f.provider == info.name)


def test_nothing_in_the_providers_folder_is_unregistered() -> None:
    registered = {p.folder for p in PROVIDERS}
    present = {d.name for d in FOLDER.iterdir() if d.is_dir() and not d.name.startswith(("_", "."))}
    assert present == registered
    stray = sorted(p.name for p in FOLDER.glob("*.py") if p.name != "__init__.py")
    assert not stray, f"modules outside a provider's folder: {stray}"


def test_only_the_scenes_that_extend_default_stay_in_replay() -> None:
    default = default_root() / DEFAULT_SCENE
    assert [p.name for p in default.iterdir()] == ["scene.json"]


def test_the_replay_default_scene_is_composed_from_the_folders() -> None:
    recordings = load_recordings()
    assert provider_recordings() == {p.name: p.recordings for p in PROVIDERS}
    default = recordings.scenes[DEFAULT_SCENE]
    assert sorted(default.routes) == sorted(p.name for p in PROVIDERS)
    for info in PROVIDERS:
        written = json.loads((info.recordings / "routes.json").read_text(encoding="utf-8"))
        assert len(default.routes[info.name]) == len(written), info.name
    # The other scenes still extend it: every provider answers in them too.
    for scene in recordings.scenes:
        assert recordings.providers(scene) == sorted(p.name for p in PROVIDERS)


def request_for(route: Route, base_url: str) -> urllib.request.Request:
    """A request the route answers: its method, path, query, headers and JSON body."""
    query = urlencode(route.query or {}, doseq=True)
    headers = {k: "x" if v == "*" else v for k, v in (route.headers or {}).items() if v != "!"}
    data = None
    if route.has_json:
        data = json.dumps(route.json).encode("utf-8")
        headers["content-type"] = "application/json"
    url = base_url + route.path + (f"?{query}" if query else "")
    return urllib.request.Request(url, data=data, headers=headers, method=route.method)


def test_the_replay_server_serves_each_folders_recorded_bodies() -> None:
    default = load_recordings().scenes[DEFAULT_SCENE]
    with ReplayServer() as server:
        for info in PROVIDERS:
            written = json.loads((info.recordings / "routes.json").read_text(encoding="utf-8"))
            loaded = default.routes[info.name]
            for route, raw in zip(loaded, written, strict=True):
                if "body" in raw:
                    assert route.body == (info.recordings / raw["body"]).read_bytes()
            route = next(
                r for r in loaded if r.fault is None and r.steps is None and r.status == 200
            )
            with urllib.request.urlopen(request_for(route, server.base_url(info.name))) as answer:
                assert answer.read() == route.body, info.name


def test_a_provider_recorded_both_in_its_folder_and_in_a_default_folder_is_refused(
    tmp_path: Path,
) -> None:
    (tmp_path / DEFAULT_SCENE / "lambda").mkdir(parents=True)
    (tmp_path / DEFAULT_SCENE / "lambda" / "routes.json").write_text("[]", encoding="utf-8")
    problems = validate_recordings(tmp_path, {"lambda": provider_recordings()["lambda"]})
    assert any("'lambda' is recorded twice" in p for p in problems), problems


def test_a_recordings_folder_of_ones_own_can_compose_the_provider_folders(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "scene.json").write_text('{"extends": "default"}', encoding="utf-8")
    alone = validate_recordings(tmp_path)
    assert any("extends missing scene 'default'" in p for p in alone), alone
    composed = load_recordings(tmp_path, provider_recordings())
    assert composed.providers("mine") == sorted(p.name for p in PROVIDERS)
