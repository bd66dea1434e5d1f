"""What the flows know about providers: read from the spider classes, never duplicated."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from scrapy.settings import Settings
from scrapy.spiderloader import SpiderLoader

SPIDER_MODULES = ["spiders.providers"]


@dataclass(frozen=True)
class ProviderInfo:
    name: str
    home: str
    """Country code of the platform ("CN" for the Chinese ones)."""
    needs_browser: bool
    auth_env: tuple[str, ...]
    """Environment variables holding this provider's credentials (empty: public)."""
    default_base_url: str
    min_poll_interval_s: int


@cache
def provider_infos() -> dict[str, ProviderInfo]:
    loader = SpiderLoader.from_settings(Settings({"SPIDER_MODULES": SPIDER_MODULES}))
    infos = {}
    for name in sorted(loader.list()):
        cls = loader.load(name)
        infos[name] = ProviderInfo(
            name=name,
            home=getattr(cls, "home", ""),
            needs_browser=bool(getattr(cls, "needs_browser", False)),
            auth_env=tuple(getattr(cls, "auth_env", ())),
            default_base_url=getattr(cls, "default_base_url", ""),
            min_poll_interval_s=int(getattr(cls, "min_poll_interval_s", 300)),
        )
    return infos


def provider_names() -> list[str]:
    return list(provider_infos())


def check_names(names: list[str]) -> list[str]:
    """Validate user-given provider names; raises ValueError naming the known ones."""
    known = provider_infos()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown provider(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return names
