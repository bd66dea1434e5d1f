"""The providers gpurent knows: one line each, the only list there is.

Everything that names providers reads this list: the library API and the CLI (which names
are known, where a provider is based, which credentials it reads), the crawl and watch
flows, and the spiders themselves (`spiders.base.ProviderSpider` takes its class facts from
the line of its ``name``). It imports nothing beyond the standard library, so a program that
only reads a warehouse never loads Scrapy to learn the providers' names.

A provider is one folder, ``spiders/providers/<folder>/`` (the folder is the name, except
where the name is a Python keyword: lambda's is ``lambdalabs``)::

    __init__.py          what the provider is, in words (no Scrapy: data can be read without it)
    spider.py            the spider (Scrapy finds it: SPIDER_MODULES walks subpackages)
    parser.py            pure functions, answer -> records, with the answers' contracts
    billing_facts.toml   its billing facts, each with a source and a date
    recordings/          the default replay scene's answers (routes.json, bodies, PROVENANCE)
    fixtures/            its parser fixture cases (<case>/input.*, output.json, page.json)

Adding a provider: that folder and one line here (CONTRIBUTING.md). `provider_folder` finds
the folder by path, without importing ``spiders`` (this module imports nothing beyond the
standard library): the billing facts and the replay server read their files from there.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from functools import cache
from pathlib import Path


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
    free_count_per_machine: bool = False
    """Its free count (``available_count``) counts the cards free on one machine, so a
    per-card offer can be rented at that many cards at once. False where it counts a pool
    (a region, a data center, the platform): cards free across machines are no machine of
    that many, so no more cards than an offer lists are ever rented from it."""
    folder: str = ""
    """Its folder under ``spiders/providers/`` and Python package name there (default: the
    name; a name that is a Python keyword cannot be a package name)."""

    def __post_init__(self) -> None:
        if not self.folder:
            object.__setattr__(self, "folder", self.name)

    @property
    def path(self) -> Path:
        """The provider's folder (``spiders/providers/<folder>``)."""
        return providers_root() / self.folder

    @property
    def recordings(self) -> Path:
        """Its answers in the default replay scene (``routes.json``, bodies, PROVENANCE)."""
        return self.path / "recordings"

    @property
    def fixtures(self) -> Path:
        """Its parser fixture cases (``<case>/`` folders)."""
        return self.path / "fixtures"


PROVIDERS: tuple[ProviderInfo, ...] = (
    ProviderInfo("autodl", "CN", True, ("AUTODL_TOKEN",), "https://www.autodl.com",
                 free_count_per_machine=True),
    ProviderInfo("azure", "US", False, (), "https://prices.azure.com"),
    ProviderInfo("chenyu", "CN", False, ("CHENYU_API_KEY",), "https://www.chenyu.cn"),
    ProviderInfo("cloudrift", "US", False, (), "https://api.cloudrift.ai"),
    ProviderInfo("compshare", "CN", False, ("COMPSHARE_PUBLIC_KEY", "COMPSHARE_PRIVATE_KEY"),
                 "https://api.ucloud.cn"),
    ProviderInfo("cudo", "GB", False, (), "https://rest.compute.cudo.org"),
    ProviderInfo("digitalocean", "US", False, ("DIGITALOCEAN_TOKEN",),
                 "https://api.digitalocean.com"),
    ProviderInfo("featurize", "CN", False, ("FEATURIZE_TOKEN",), "https://featurize.cn"),
    ProviderInfo("gongji", "CN", True, (), "https://www.gongjiyun.com"),
    ProviderInfo("gpuez", "CN", False, ("GPUEZ_API_KEY",), "https://api.gpuez.com"),
    ProviderInfo("gpushare", "CN", False, ("GPUSHARE_TOKEN",), "https://api.gpushare.com",
                 free_count_per_machine=True),
    ProviderInfo("hyperstack", "GB", False, ("HYPERSTACK_API_KEY",),
                 "https://infrahub-api.nexgencloud.com/v1"),
    ProviderInfo("jarvislabs", "IN", False, ("JARVISLABS_API_KEY",),
                 "https://backendn.jarvislabs.net"),
    ProviderInfo("lambda", "US", False, ("LAMBDA_API_KEY",), "https://cloud.lambdalabs.com",
                 folder="lambdalabs"),
    ProviderInfo("lanyun", "CN", False, ("LANYUN_TOKEN",), "https://cloud.lanyun.net",
                 free_count_per_machine=True),
    ProviderInfo("matpool", "CN", False, ("MATPOOL_TOKEN",), "https://matpool.com"),
    ProviderInfo("novita", "US", False, ("NOVITA_API_KEY",), "https://api.novita.ai"),
    ProviderInfo("paperspace", "US", False, ("PAPERSPACE_API_KEY",), "https://api.paperspace.io"),
    ProviderInfo("ppio", "CN", False, ("PPIO_API_KEY",), "https://api.ppinfra.com"),
    ProviderInfo("primeintellect", "US", False, ("PRIME_API_KEY",),
                 "https://api.primeintellect.ai"),
    ProviderInfo("runpod", "US", False, ("RUNPOD_API_KEY",), "https://api.runpod.io"),
    ProviderInfo("shadeform", "US", False, ("SHADEFORM_API_KEY",), "https://api.shadeform.ai/v1"),
    ProviderInfo("suanjia", "CN", True, (), "https://www.suanjiayun.com"),
    ProviderInfo("tencentcloud", "CN", False, ("TENCENTCLOUD_SECRET_ID", "TENCENTCLOUD_SECRET_KEY"),
                 "https://cvm.tencentcloudapi.com"),
    ProviderInfo("tensordock", "US", False, (), "https://marketplace.tensordock.com",
                 free_count_per_machine=True),
    ProviderInfo("ucloud", "CN", False, ("UCLOUD_PUBLIC_KEY", "UCLOUD_PRIVATE_KEY"),
                 "https://api.ucloud.cn"),
    ProviderInfo("vastai", "US", False, (), "https://console.vast.ai"),
    ProviderInfo("verda", "FI", False, ("VERDA_CLIENT_ID", "VERDA_CLIENT_SECRET"),
                 "https://api.datacrunch.io"),
    ProviderInfo("vultr", "US", False, (), "https://api.vultr.com"),
    ProviderInfo("xiangongyun", "CN", False, (), "https://www.xiangongyun.com"),
)  # fmt: skip

BY_NAME: dict[str, ProviderInfo] = {p.name: p for p in PROVIDERS}

PER_MACHINE_FREE_COUNTS: frozenset[str] = frozenset(
    p.name for p in PROVIDERS if p.free_count_per_machine
)
"""The providers whose free count is per machine (``ProviderInfo.free_count_per_machine``)."""

BILLING_FACTS_FILE = "billing_facts.toml"
"""Each provider folder's billing facts (read by ``gpurent_core.billing_facts``)."""


@cache
def providers_root() -> Path:
    """``spiders/providers``, found by path: where the ``spiders`` package lies, read without
    importing it (in a checkout, an editable install or a wheel alike)."""
    spec = importlib.util.find_spec("spiders")  # a top-level name: finds, imports nothing
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations))) / "providers"
    return Path(__file__).resolve().parents[1] / "spiders" / "providers"


def provider(name: str) -> ProviderInfo:
    """The line of ``name``; KeyError when gpurent has no such provider."""
    return BY_NAME[name]
