"""The spider loader (Scrapy's SPIDER_LOADER_CLASS): a provider's crawl imports that provider.

Scrapy's own loader imports every module under SPIDER_MODULES before it hands out one
spider. For gpurent that meant every crawl process imported all the providers' spiders
and parsers (~0.08 s of a ~0.9 s crawl start, per provider per poll), and one provider
whose module no longer imports stopped every other provider's crawl. Here a provider's
name leads, through its line in `gpurent_core.providers`, straight to its folder's
`spider` module; only a name that is no provider (the API-price spider, a test's spider),
`scrapy list` and `find_by_request` fall back to Scrapy's walk of SPIDER_MODULES.
"""

from __future__ import annotations

import builtins
import importlib
from typing import TYPE_CHECKING, Self

import scrapy
from scrapy.spiderloader import SpiderLoader
from scrapy.utils.spider import iter_spider_classes

from gpurent_core.providers import BY_NAME

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

PROVIDERS_PACKAGE = "spiders.providers"


class ProviderSpiderLoader:
    def __init__(self, settings: BaseSettings) -> None:
        self._settings = settings
        self._walked: SpiderLoader | None = None

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> Self:
        return cls(settings)

    def load(self, spider_name: str) -> type[scrapy.Spider]:
        info = BY_NAME.get(spider_name)
        if info is None:
            return self._walk().load(spider_name)
        module = importlib.import_module(f"{PROVIDERS_PACKAGE}.{info.folder}.spider")
        for spider in iter_spider_classes(module):
            if spider.name == spider_name:
                return spider
        raise KeyError(f"Spider not found: {spider_name} (not in {module.__name__})")

    def list(self) -> list[str]:
        return self._walk().list()

    def find_by_request(self, request: scrapy.Request) -> builtins.list[str]:
        return self._walk().find_by_request(request)

    def _walk(self) -> SpiderLoader:
        """Scrapy's loader, which imports every module of SPIDER_MODULES (made once, when
        asked for: a provider's crawl never needs it)."""
        if self._walked is None:
            self._walked = SpiderLoader.from_settings(self._settings)
        return self._walked
