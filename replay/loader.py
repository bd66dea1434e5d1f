"""Read and check a recordings folder.

Layout::

    <root>/<scene>/scene.json                 {"description", "extends", "steps"}
    <root>/<scene>/<provider>/routes.json     [route, ...]
    <root>/<scene>/<provider>/<body files>

The bundled default scene is composed from the provider folders: each provider's answers
are its ``spiders/providers/<folder>/recordings/`` (``routes.json``, bodies, PROVENANCE),
found through the one list of providers (``gpurent_core.providers``) and read as if they
were ``<root>/default/<provider>/``. The other bundled scenes (``replay/recordings/<scene>/``)
extend it as before. A recordings folder of one's own (``root``) holds its own default
scene, unless ``providers`` names folders to compose into it.

Everything is read and checked up front: a recording mistake should fail the
server start (or `validate_recordings`) with the file named, not surface later as
a puzzling 404 in some spider test.
"""

from __future__ import annotations

import json
import mimetypes
import shutil
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from gpurent_core.providers import PROVIDERS
from replay.faults import Fault, fault_from_mapping
from replay.model import DEFAULT_SCENE, Recordings, Route, Scene

SCENE_FILE = "scene.json"
ROUTES_FILE = "routes.json"

# Keys a person may add for their own notes; everything else unknown is a typo.
_NOTE_KEYS = frozenset({"comment", "description", "note"})
_ROUTE_KEYS = frozenset(
    {
        "method",
        "path",
        "query",
        "json",
        "headers",
        "steps",
        "status",
        "content_type",
        "response_headers",
        "body",
        "body_text",
        "fault",
    }
)
_SCENE_KEYS = frozenset({"description", "extends", "steps"})

# Text types get an explicit charset: Scrapy and browsers would otherwise guess,
# and the Chinese providers' pages are UTF-8.
_TEXT_TYPES = ("text/", "application/json", "application/javascript", "application/xml")


class RecordingError(Exception):
    """The recordings folder is unusable; `problems` lists every issue, files named."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("bad recordings:\n  " + "\n  ".join(problems))


def default_root() -> Path:
    """The bundled recordings, beside this package's modules."""
    return Path(__file__).resolve().parent / "recordings"


def provider_recordings() -> dict[str, Path]:
    """Each provider's answers in the default scene: its folder's ``recordings/``."""
    return {info.name: info.recordings for info in PROVIDERS}


def copy_default_scene(root: Path) -> Path:
    """Write the bundled default scene, composed, as ``<root>/default/<provider>/`` (a
    recordings folder of one's own, to edit and serve with ``root=``); returns ``root``."""
    target = root / DEFAULT_SCENE
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy2(default_root() / DEFAULT_SCENE / SCENE_FILE, target / SCENE_FILE)
    for provider, folder in provider_recordings().items():
        shutil.copytree(folder, target / provider, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _providers_for(root: Path | None, providers: Mapping[str, Path] | None) -> dict[str, Path]:
    """The provider folders the default scene is composed from: given, or, for the bundled
    recordings, every registered provider's."""
    if providers is not None:
        return dict(providers)
    if root is None or root.resolve() == default_root().resolve():
        return provider_recordings()
    return {}


def load_recordings(
    root: Path | None = None, providers: Mapping[str, Path] | None = None
) -> Recordings:
    """Load every scene under `root` (the default scene composed with `providers`' folders,
    see the module docstring); raise RecordingError listing all problems."""
    loader = _Loader(root or default_root(), _providers_for(root, providers))
    recordings, problems = loader.load()
    if problems:
        raise RecordingError(problems)
    return recordings


def validate_recordings(
    root: Path | None = None, providers: Mapping[str, Path] | None = None
) -> list[str]:
    """Every problem found under `root` (empty list: the recordings are usable)."""
    return _Loader(root or default_root(), _providers_for(root, providers)).load()[1]


def _visible_dirs(folder: Path) -> list[Path]:
    # Hidden and underscore folders (.git, __pycache__, _drafts) are not scenes/providers.
    return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))


def _content_type_for(filename: str | None, body: bytes) -> str:
    """Default Content-Type: from the body file's extension; for inline `body_text`,
    JSON when it parses as a JSON object or list, else plain text."""
    if filename is None:
        ctype = "application/json" if _is_json_document(body) else "text/plain"
    elif filename.endswith(".js"):
        ctype = "application/javascript"  # some platforms map .js to text/javascript
    else:
        ctype = mimetypes.guess_type(filename)[0] or "application/octet-stream"
    return f"{ctype}; charset=utf-8" if ctype.startswith(_TEXT_TYPES) else ctype


def _is_json_document(body: bytes) -> bool:
    try:
        return isinstance(json.loads(body), dict | list)
    except ValueError:
        return False


class _Loader:
    def __init__(self, root: Path, providers: Mapping[str, Path] | None = None) -> None:
        self.root = root
        self.providers = dict(providers or {})
        """Provider name -> a folder of its default-scene answers, outside `root`."""
        self.problems: list[str] = []

    def problem(self, where: Path, message: str) -> None:
        text = f"{where}: {message}"
        if text not in self.problems:  # a broken parent is met from every child scene
            self.problems.append(text)

    def read_json(self, path: Path) -> Any:
        try:
            return json.loads(path.read_text(encoding="utf-8-sig"))
        except json.JSONDecodeError as exc:
            self.problem(path, f"bad JSON: {exc}")
        except (OSError, UnicodeDecodeError) as exc:
            self.problem(path, f"cannot read: {exc}")
        return None

    def load(self) -> tuple[Recordings, list[str]]:
        scenes: dict[str, Scene] = {}
        if not self.root.is_dir():
            self.problem(self.root, "recordings folder does not exist")
            return Recordings(self.root, scenes), self.problems
        for folder in _visible_dirs(self.root):
            scene = self.load_scene(folder)
            if scene is not None:
                scenes[scene.name] = scene
        if self.providers and DEFAULT_SCENE not in scenes:
            scenes[DEFAULT_SCENE] = Scene(DEFAULT_SCENE, "", None, 1, self.provider_routes({}))
        if not scenes:
            self.problem(self.root, "no scenes found")
        self.check_extends(scenes)
        return Recordings(self.root, scenes), self.problems

    def load_scene(self, folder: Path) -> Scene | None:
        meta_path = folder / SCENE_FILE
        meta: dict[str, Any] = {}
        if meta_path.is_file():
            raw = self.read_json(meta_path)
            if raw is None:
                return None
            if not isinstance(raw, dict):
                self.problem(meta_path, "must be a JSON object")
                return None
            meta = raw
        elif folder.name != DEFAULT_SCENE:
            self.problem(meta_path, "missing (only the 'default' scene may omit scene.json)")
            return None
        self.check_keys(meta_path, meta, _SCENE_KEYS)
        steps = meta.get("steps", 1)
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
            self.problem(meta_path, f"'steps' must be an integer >= 1, got {steps!r}")
            steps = 1
        extends = meta.get("extends")
        if extends is not None and not isinstance(extends, str):
            self.problem(meta_path, f"'extends' must be a scene name or null, got {extends!r}")
            extends = None
        if folder.name == DEFAULT_SCENE and extends is not None:
            self.problem(meta_path, "the 'default' scene cannot extend another scene")
            extends = None
        description = meta.get("description", "")
        routes = {
            provider.name: self.load_routes(folder.name, provider)
            for provider in _visible_dirs(folder)
        }
        if folder.name == DEFAULT_SCENE:
            routes = self.provider_routes(routes)
        return Scene(folder.name, str(description), extends, steps, routes)

    def provider_routes(self, own: dict[str, tuple[Route, ...]]) -> dict[str, tuple[Route, ...]]:
        """The default scene's routes: its own folders' and the provider folders'."""
        routes = dict(own)
        for provider, folder in self.providers.items():
            if provider in routes:
                where = self.root / DEFAULT_SCENE / provider
                self.problem(where, f"{provider!r} is recorded twice (also in {folder})")
                continue
            routes[provider] = self.load_routes(DEFAULT_SCENE, folder, provider)
        return dict(sorted(routes.items()))

    def check_extends(self, scenes: dict[str, Scene]) -> None:
        broken: list[str] = []
        for scene in scenes.values():
            seen = [scene.name]
            current = scene
            while current.extends is not None:
                meta_path = self.root / current.name / SCENE_FILE
                parent = scenes.get(current.extends)
                if parent is None:
                    self.problem(meta_path, f"extends missing scene {current.extends!r}")
                elif parent.name in seen:
                    cycle = " -> ".join([*seen, parent.name])
                    self.problem(meta_path, f"'extends' makes a cycle: {cycle}")
                else:
                    seen.append(parent.name)
                    current = parent
                    continue
                broken.append(scene.name)
                break
        # Cut broken chains so Recordings.chain can neither fail nor loop.
        for name in broken:
            scenes[name] = replace(scenes[name], extends=None)

    def check_keys(self, where: Path, data: dict[str, Any], allowed: frozenset[str]) -> None:
        for key in data:
            if key not in allowed and key not in _NOTE_KEYS and not key.startswith("_"):
                self.problem(where, f"unknown key {key!r} (allowed: {', '.join(sorted(allowed))})")

    def load_routes(
        self, scene: str, folder: Path, provider: str | None = None
    ) -> tuple[Route, ...]:
        """The routes of `folder` (named `provider`; by default the folder's name)."""
        path = folder / ROUTES_FILE
        if not path.is_file():
            self.problem(path, "missing (every provider folder needs a routes.json)")
            return ()
        raw = self.read_json(path)
        if raw is None:
            return ()
        if not isinstance(raw, list):
            self.problem(path, "must be a JSON list of route objects")
            return ()
        routes: list[Route] = []
        for index, item in enumerate(raw):
            route = self.parse_route(scene, provider or folder.name, path, index, item)
            if route is not None:
                routes.append(route)
        return tuple(routes)

    def parse_route(
        self, scene: str, provider: str, path: Path, index: int, item: Any
    ) -> Route | None:
        where = Path(f"{path}#{index}")
        before = len(self.problems)
        if not isinstance(item, dict):
            self.problem(where, "a route must be a JSON object")
            return None
        self.check_keys(where, item, _ROUTE_KEYS)

        method = item.get("method", "GET")
        if not isinstance(method, str) or not method:
            self.problem(where, f"'method' must be a string, got {method!r}")
            method = "GET"
        route_path = item.get("path")
        if not isinstance(route_path, str) or not route_path.startswith("/"):
            self.problem(where, f"'path' must be a string starting with '/', got {route_path!r}")
            route_path = "/"
        query = self.parse_query(where, item.get("query"))
        headers = self.parse_str_map(where, "headers", item.get("headers"))
        steps = self.parse_steps(where, item.get("steps"))
        status = item.get("status", 200)
        if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
            self.problem(where, f"'status' must be an integer 100..599, got {status!r}")
            status = 200
        body, body_name = self.parse_body(where, path.parent, item)
        content_type = item.get("content_type")
        if content_type is not None and not isinstance(content_type, str):
            self.problem(where, f"'content_type' must be a string, got {content_type!r}")
            content_type = None
        response_headers = self.parse_str_map(
            where, "response_headers", item.get("response_headers")
        )
        fault: Fault | None = None
        if "fault" in item:
            if not isinstance(item["fault"], dict):
                self.problem(where, "'fault' must be a JSON object")
            else:
                try:
                    fault = fault_from_mapping(provider, route_path, item["fault"])
                except (TypeError, ValueError) as exc:
                    self.problem(where, f"bad 'fault': {exc}")

        if len(self.problems) > before:
            return None
        return Route(
            source=f"{scene}/{provider}/{ROUTES_FILE}#{index}",
            scene=scene,
            provider=provider,
            method=method.upper(),
            path=route_path,
            query=query,
            json=item.get("json"),
            has_json="json" in item,
            headers={k.lower(): v for k, v in headers.items()} if headers is not None else None,
            steps=steps,
            status=status,
            content_type=content_type or _content_type_for(body_name, body),
            response_headers=response_headers or {},
            body=body,
            fault=fault,
        )

    def parse_query(self, where: Path, raw: Any) -> dict[str, list[str]] | None:
        if raw is None:
            return None
        if not isinstance(raw, dict):
            self.problem(where, "'query' must be an object of name to string or list of strings")
            return None
        query: dict[str, list[str]] = {}
        for name, value in raw.items():
            if isinstance(value, str):
                query[name] = [value]
            elif isinstance(value, list) and value and all(isinstance(v, str) for v in value):
                query[name] = list(value)
            else:
                # Numbers are the usual slip ({"page": 2}): query values are always text.
                self.problem(where, f"query {name!r} must be a string or list of strings")
        return query

    def parse_str_map(self, where: Path, key: str, raw: Any) -> dict[str, str] | None:
        if raw is None:
            return None
        if not isinstance(raw, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in raw.items()
        ):
            self.problem(where, f"{key!r} must be an object of string to string")
            return None
        return dict(raw)

    def parse_steps(self, where: Path, raw: Any) -> frozenset[int] | None:
        if raw is None:
            return None
        if (
            not isinstance(raw, list)
            or not raw
            or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 1 for s in raw)
        ):
            self.problem(where, f"'steps' must be a non-empty list of integers >= 1, got {raw!r}")
            return None
        return frozenset(raw)

    def parse_body(
        self, where: Path, folder: Path, item: dict[str, Any]
    ) -> tuple[bytes, str | None]:
        if "body" in item and "body_text" in item:
            self.problem(where, "give 'body' (a file) or 'body_text', not both")
            return b"", None
        if "body_text" in item:
            text = item["body_text"]
            if not isinstance(text, str):
                self.problem(where, "'body_text' must be a string")
                return b"", None
            return text.encode("utf-8"), None
        name = item.get("body")
        if name is None:
            return b"", None
        if not isinstance(name, str) or not name:
            self.problem(where, f"'body' must be a file name, got {name!r}")
            return b"", None
        file = (folder / name).resolve()
        # Inside the recordings: the root, or the provider folder the routes come from.
        inside = self.root if folder.resolve().is_relative_to(self.root.resolve()) else folder
        if not file.is_relative_to(inside.resolve()):
            self.problem(where, f"body file {name!r} is outside the recordings folder")
            return b"", None
        if not file.is_file():
            self.problem(where, f"body file {name!r} not found (looked for {file})")
            return b"", None
        return file.read_bytes(), name
