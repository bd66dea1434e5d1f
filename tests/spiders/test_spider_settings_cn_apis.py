"""GPUShare, Matpool, Featurize, PPIO, Compshare: JSON APIs of Chinese platforms, no browser."""

from __future__ import annotations

import pytest
from scrapy.settings import Settings

from flows.providers import provider_infos
from spiders.base import ProviderSpider
from spiders.providers.compshare.spider import CompshareSpider
from spiders.providers.featurize.spider import FeaturizeSpider
from spiders.providers.gpushare.spider import GpushareSpider
from spiders.providers.matpool.spider import MatpoolSpider
from spiders.providers.ppio.spider import PpioSpider

SPIDERS: dict[type[ProviderSpider], tuple[tuple[str, ...], bool]] = {
    GpushareSpider: (("GPUSHARE_TOKEN",), True),
    MatpoolSpider: (("MATPOOL_TOKEN",), False),  # optional: the market is public
    FeaturizeSpider: (("FEATURIZE_TOKEN",), True),
    PpioSpider: (("PPIO_API_KEY",), True),
    # Every UCloud call is signed: both keys or nothing.
    CompshareSpider: (("COMPSHARE_PUBLIC_KEY", "COMPSHARE_PRIVATE_KEY"), True),
}


@pytest.mark.parametrize("spider", list(SPIDERS), ids=lambda s: s.name)
def test_api_spider_keeps_scrapys_handler_and_skips_robots(spider: type[ProviderSpider]) -> None:
    settings = Settings()
    spider.update_settings(settings)
    assert not settings.getdict("DOWNLOAD_HANDLERS")
    assert settings.getbool("ROBOTSTXT_OBEY") is False


@pytest.mark.parametrize("spider", list(SPIDERS), ids=lambda s: s.name)
def test_provider_facts_reach_the_flows(spider: type[ProviderSpider]) -> None:
    env, needs_auth = SPIDERS[spider]
    info = provider_infos()[spider.name]
    assert (info.home, info.needs_browser, info.auth_env) == ("CN", False, env)
    assert spider.needs_auth is needs_auth
    assert info.default_base_url.startswith("https://")
