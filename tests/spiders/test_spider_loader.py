"""The spider loader (spiders.loader): a provider's crawl imports that provider alone, finds
the same spider Scrapy's walk finds, and is not stopped by another provider's broken module."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from scrapy.settings import Settings
from scrapy.spiderloader import SpiderLoader
from spider_fixture_cases import REPO_ROOT

from gpurent_core.providers import BY_NAME
from spiders.loader import ProviderSpiderLoader


def _settings() -> Settings:
    settings = Settings()
    settings.setmodule("spiders.settings")
    return settings


def test_the_crawl_settings_name_this_loader() -> None:
    assert _settings()["SPIDER_LOADER_CLASS"] == "spiders.loader.ProviderSpiderLoader"


def test_every_provider_loads_the_spider_scrapys_walk_finds() -> None:
    ours = ProviderSpiderLoader.from_settings(_settings())
    walked = SpiderLoader.from_settings(_settings())
    for name in BY_NAME:
        assert ours.load(name) is walked.load(name), name
    assert sorted(ours.list()) == sorted(walked.list())
    assert set(BY_NAME) < set(ours.list())  # and the spiders that read no GPU provider


def test_a_spider_that_is_no_provider_loads_through_the_walk() -> None:
    ours = ProviderSpiderLoader.from_settings(_settings())
    assert ours.load("openrouter_prices").name == "openrouter_prices"
    with pytest.raises(KeyError):
        ours.load("no-such-spider")


def _fresh_python(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


PRELUDE = """
    import sys
    from scrapy.settings import Settings
    from spiders.loader import ProviderSpiderLoader
    settings = Settings()
    settings.setmodule("spiders.settings")
"""


def test_a_crawl_imports_its_own_provider_only() -> None:
    out = _fresh_python(
        PRELUDE
        + """
    ProviderSpiderLoader.from_settings(settings).load("vastai")
    print(sorted(m for m in sys.modules if m.startswith("spiders.providers.") and m.endswith(".spider")))
    """
    )
    assert out == "['spiders.providers.vastai.spider']"


def test_another_providers_broken_module_stops_nothing() -> None:
    # `None` in sys.modules makes `import` of that name fail, as a module that no longer
    # imports would: Scrapy's walk then stops every crawl, this loader only Lambda's.
    out = _fresh_python(
        PRELUDE
        + """
    sys.modules["spiders.providers.lambdalabs.spider"] = None
    print(ProviderSpiderLoader.from_settings(settings).load("vastai").name)
    from scrapy.spiderloader import SpiderLoader
    try:
        SpiderLoader.from_settings(settings)
    except ImportError:
        print("the walk fails")
    """
    )
    assert out.splitlines() == ["vastai", "the walk fails"]
