"""OpenRouter's model list: the real `scrapy crawl openrouter_prices` process against a replay
server of its own, run by `gpurent.api.refresh_api_prices` as `gpurent api-prices refresh`
runs it.

Three crawls, shared by the tests through a module fixture, of one scene in three steps: the
recorded list (the refresh writes the catalog's models beside the warehouse), then the list
with `data` renamed (a layout change), then an empty `data` list (a failed read): both
refused, the file written first kept byte for byte. The spider's answers are also read in
process (no crawl), each branch once.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from crawl_kit import answer, assert_api_spider, first_requests
from scrapy.settings import Settings
from scrapy.spiderloader import SpiderLoader
from scrapy.utils.test import get_crawler

from gpurent import api
from gpurent.api.token_prices import FREE_VARIANT, NOT_IN_CATALOG
from gpurent_core.providers import BY_NAME
from replay import ReplayServer, validate_recordings
from sizing.api_prices import read_refreshed
from spiders.api_prices.parser import MODELS_PATH
from spiders.api_prices.spider import OpenrouterPricesSpider

RECORDINGS = Path(__file__).resolve().parents[2] / "spiders/api_prices/recordings"
SEGMENT = "openrouter"
"""The replay server's provider segment for OpenRouter's answers."""
CATALOG_MODELS = {
    "meta-llama/llama-3.1-8b-instruct": "Llama-3.1-8B",
    # Llama 3 8B is an entry of its own (Llama 3.1's shape, an 8192-token window): its
    # price is kept for it, never for Llama 3.1 8B.
    "meta-llama/llama-3-8b-instruct": "Llama-3-8B",
    "meta-llama/llama-3.3-70b-instruct": "Llama-3.3-70B",
    "deepseek/deepseek-chat": "DeepSeek-V3",
    "qwen/qwq-32b": "QwQ-32B",
    "google/gemma-2-9b-it": "Gemma-2-9B",
}


def scene(root: Path) -> Path:
    """Recordings of one's own: step 1 the recorded list, step 2 `data` renamed, step 3 an
    empty `data` list."""
    folder = root / "default" / SEGMENT
    folder.mkdir(parents=True)
    (root / "default" / "scene.json").write_text(json.dumps({"steps": 3}), encoding="utf-8")
    shutil.copy2(RECORDINGS / "models.json", folder / "models.json")
    listed = json.loads((RECORDINGS / "models.json").read_text(encoding="utf-8"))
    renamed = {"models": listed["data"]}
    (folder / "renamed.json").write_text(json.dumps(renamed), encoding="utf-8")
    (folder / "empty.json").write_text(json.dumps({"data": []}), encoding="utf-8")
    routes = [
        {"method": "GET", "path": MODELS_PATH, "steps": [step], "body": body}
        for step, body in ((1, "models.json"), (2, "renamed.json"), (3, "empty.json"))
    ]
    (folder / "routes.json").write_text(json.dumps(routes), encoding="utf-8")
    return root


@dataclass(frozen=True)
class Refreshed:
    first: api.RefreshAnswer
    written: bytes
    """The refreshed list's bytes after the first crawl."""
    layout_changed: api.RefreshFailed
    empty: api.RefreshFailed
    kept: list[bytes]
    """The file's bytes after each refused crawl."""
    calls: list[Any]
    db: Path


@pytest.fixture(scope="module")
def refreshed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Refreshed]:
    tmp = tmp_path_factory.mktemp("openrouter")
    db = tmp / "warehouse" / "gpurent.duckdb"
    failures: list[api.RefreshFailed] = []
    kept: list[bytes] = []
    with ReplayServer(root=scene(tmp / "recordings")) as server:
        base = server.base_url(SEGMENT)
        first = api.refresh_api_prices(db, base_url=base)
        written = first.path.read_bytes()
        for step in (2, 3):
            server.set_state(step=step)
            with pytest.raises(api.RefreshFailed) as refused:
                api.refresh_api_prices(db, base_url=base)
            failures.append(refused.value)
            kept.append(first.path.read_bytes())
        calls = [r for r in server.requests if r.provider == SEGMENT]
    yield Refreshed(first, written, failures[0], failures[1], kept, calls, db)


def test_the_refresh_writes_the_catalogs_models_beside_the_warehouse(refreshed: Refreshed) -> None:
    first = refreshed.first
    assert first.path == refreshed.db.parent / "api_prices.json"
    assert {p.api_model: p.model for p in first.written} == CATALOG_MODELS
    on_file = read_refreshed(first.path)
    assert on_file == first.written
    today = datetime.now(UTC).date()
    for price in on_file:
        assert price.provider == "openrouter" and price.currency == "USD"
        assert price.as_of == first.fetched_at.date() and abs((today - price.as_of).days) <= 1
        assert price.source == first.source and price.source.endswith("/openrouter/models")
    llama = next(p for p in on_file if p.api_model == "meta-llama/llama-3.1-8b-instruct")
    assert (llama.input_per_million, llama.output_per_million) == (Decimal("0.02"), Decimal("0.05"))
    # A rate-limited free tier is no price a workload can be served at: never written.
    assert not any(p.api_model.endswith(":free") for p in on_file)
    doc = json.loads(refreshed.written)
    assert datetime.fromisoformat(doc["fetched_at"]) == first.fetched_at
    assert first.fetched_at.tzinfo is not None and first.fetched_at.utcoffset() == UTC.utcoffset(
        None
    )


def test_the_refresh_counts_what_it_did_not_write(refreshed: Refreshed) -> None:
    first = refreshed.first
    assert first.models_read == 8  # every model with a readable price
    assert first.skipped == {
        FREE_VARIANT: 1,
        "request_fee": 1,
        "unreadable_price": 1,
        "variable_price": 1,
    }
    misses = {u.api_model: (u.reason, u.catalog_model) for u in first.unmatched}
    # (A name that reaches only another entry: tests/api/test_api_prices.py.)
    assert misses == {"anthropic/claude-3.5-haiku": (NOT_IN_CATALOG, None)}
    assert first.unmatched_counts == {NOT_IN_CATALOG: 1}


def test_a_changed_layout_fails_loudly_and_keeps_the_old_list(refreshed: Refreshed) -> None:
    said = str(refreshed.layout_changed)
    assert "layout changed" in said and "'data'" in said and "kept as it was" in said
    assert refreshed.kept[0] == refreshed.written


def test_an_empty_list_is_a_failed_read_and_keeps_the_old_list(refreshed: Refreshed) -> None:
    said = str(refreshed.empty)
    assert "request failed" in said and "empty" in said and "kept as it was" in said
    assert refreshed.kept[1] == refreshed.written


def test_each_refresh_asked_once_without_a_key(refreshed: Refreshed) -> None:
    assert [(c.method, c.path, c.status) for c in refreshed.calls] == [
        ("GET", MODELS_PATH, 200)
    ] * 3
    for call in refreshed.calls:
        assert "authorization" not in call.headers
        assert call.headers.get("accept") == "application/json"


def test_the_list_shows_the_refreshed_prices_beside_the_shipped(refreshed: Refreshed) -> None:
    rows = api.api_prices("Llama-3.1-8B", db=refreshed.db)
    ours = [r for r in rows if r.price.provider == "openrouter"]
    assert [(r.price.api_model, r.origin, r.old) for r in ours] == [
        ("meta-llama/llama-3.1-8b-instruct", "refreshed", False)
    ]
    assert any(r.origin == "shipped" for r in rows)


def test_the_recordings_folder_is_a_replay_scene_of_its_own(tmp_path: Path) -> None:
    """spiders/api_prices/recordings/ served as `<root>/default/openrouter/` (its routes.json
    and the answer it names), as `gpurent replay serve` would."""
    shutil.copytree(RECORDINGS, tmp_path / "default" / SEGMENT)
    assert validate_recordings(tmp_path) == []
    routes = json.loads((RECORDINGS / "routes.json").read_text(encoding="utf-8"))
    assert [(r["path"], r["body"]) for r in routes] == [(MODELS_PATH, "models.json")]


# -- the spider in process ---------------------------------------------------------------


def make_spider() -> OpenrouterPricesSpider:
    crawler = get_crawler(OpenrouterPricesSpider, {"GPURENT_BASE_URL": "http://replay/openrouter"})
    spider: OpenrouterPricesSpider = OpenrouterPricesSpider.from_crawler(crawler)
    return spider


def test_the_spider_is_found_by_scrapy_but_is_no_provider() -> None:
    from spiders import settings

    loader = SpiderLoader.from_settings(Settings({"SPIDER_MODULES": settings.SPIDER_MODULES}))
    assert loader.load("openrouter_prices") is OpenrouterPricesSpider
    assert "openrouter_prices" not in BY_NAME and "openrouter" not in BY_NAME
    assert_api_spider(OpenrouterPricesSpider, home="", auth_env=(), needs_auth=False)
    assert OpenrouterPricesSpider.default_base_url == "https://openrouter.ai/api/v1"


def test_the_spider_asks_the_base_url_given_and_reads_the_answer() -> None:
    spider = make_spider()
    [request] = first_requests(spider)
    assert (request.method, request.url) == ("GET", "http://replay/openrouter/models")
    assert request.headers.get("Authorization") is None
    lines = list(spider.parse_models(answer(request, (RECORDINGS / "models.json").read_bytes())))
    assert len(lines) == 8 and {line["kind"] for line in lines} == {"api_price"}
    assert all(line["source"] == "http://replay/openrouter/models" for line in lines)
    assert spider.ledger.pages_parsed == 1 and spider.ledger.layout_errors == []
    assert dict(spider.ledger.skipped) == {
        "request_fee": 1,
        "unreadable_price": 1,
        "variable_price": 1,
    }
    assert any(note.startswith("skipped openrouter/auto") for note in spider.ledger.notes)


@pytest.mark.parametrize(
    ("body", "layout", "gave_up"),
    [
        (b'{"models": []}', True, 0),
        (b"<html>502 Bad Gateway</html>", True, 0),
        (b'{"data": []}', False, 1),
        (b'{"error": {"code": 429, "message": "slow down"}}', False, 1),
    ],
    ids=["renamed", "not-json", "empty", "error-body"],
)
def test_an_answer_without_prices_emits_nothing_and_says_why(
    body: bytes, layout: bool, gave_up: int
) -> None:
    spider = make_spider()
    [request] = first_requests(spider)
    assert list(spider.parse_models(answer(request, body))) == []
    assert bool(spider.ledger.layout_errors) is layout
    assert spider.ledger.requests_gave_up == gave_up
    assert spider.ledger.pages_parsed == 0
