"""The providers gpurent knows: one line each, the only list there is.

Everything that names providers reads this list: the library API and the CLI (which names
are known, where a provider is based, which credentials it reads), the crawl and watch
flows, and the spiders themselves (`spiders.base.ProviderSpider` takes its class facts from
the line of its ``name``). It imports nothing beyond the standard library, so a program that
only reads a warehouse never loads Scrapy to learn the providers' names.

Adding a provider: its spider module under ``spiders/providers/`` and one line here
(CONTRIBUTING.md).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProviderInfo:
    name: str
    """The provider's name everywhere: spider name, ``provider`` column, CLI argument."""
    home: str
    """Country code of the platform ("CN" for the Chinese ones)."""
    needs_browser: bool
    """Some page is read through Playwright and Chromium."""
    auth_env: tuple[str, ...]
    """Environment variables holding this provider's credentials (empty: public data only)."""
    default_base_url: str
    """The provider's real base URL; GPURENT_BASE_URL replaces it (replay server)."""
    min_poll_interval_s: int = 300
    """Politeness: the watch poll never fetches this provider more often than this."""


PROVIDERS: tuple[ProviderInfo, ...] = (
    ProviderInfo("autodl", "CN", True, ("AUTODL_TOKEN",), "https://www.autodl.com"),
    ProviderInfo("compshare", "CN", False, ("COMPSHARE_PUBLIC_KEY", "COMPSHARE_PRIVATE_KEY"),
                 "https://api.ucloud.cn"),
    ProviderInfo("cudo", "GB", False, (), "https://rest.compute.cudo.org"),
    ProviderInfo("featurize", "CN", False, ("FEATURIZE_TOKEN",), "https://featurize.cn"),
    ProviderInfo("gongji", "CN", True, (), "https://www.gongjiyun.com"),
    ProviderInfo("gpushare", "CN", False, ("GPUSHARE_TOKEN",), "https://api.gpushare.com"),
    ProviderInfo("hyperstack", "GB", False, ("HYPERSTACK_API_KEY",),
                 "https://infrahub-api.nexgencloud.com/v1"),
    ProviderInfo("jarvislabs", "IN", False, ("JARVISLABS_API_KEY",),
                 "https://backendn.jarvislabs.net"),
    ProviderInfo("lambda", "US", False, ("LAMBDA_API_KEY",), "https://cloud.lambdalabs.com"),
    ProviderInfo("matpool", "CN", False, ("MATPOOL_TOKEN",), "https://matpool.com"),
    ProviderInfo("paperspace", "US", False, ("PAPERSPACE_API_KEY",), "https://api.paperspace.io"),
    ProviderInfo("ppio", "CN", False, ("PPIO_API_KEY",), "https://api.ppinfra.com"),
    ProviderInfo("runpod", "US", False, ("RUNPOD_API_KEY",), "https://api.runpod.io"),
    ProviderInfo("suanjia", "CN", True, (), "https://www.suanjiayun.com"),
    ProviderInfo("tensordock", "US", False, (), "https://marketplace.tensordock.com"),
    ProviderInfo("vastai", "US", False, (), "https://console.vast.ai"),
    ProviderInfo("verda", "FI", False, ("VERDA_CLIENT_ID", "VERDA_CLIENT_SECRET"),
                 "https://api.datacrunch.io"),
    ProviderInfo("xiangongyun", "CN", False, (), "https://www.xiangongyun.com"),
)  # fmt: skip

BY_NAME: dict[str, ProviderInfo] = {p.name: p for p in PROVIDERS}


def provider(name: str) -> ProviderInfo:
    """The line of ``name``; KeyError when gpurent has no such provider."""
    return BY_NAME[name]
