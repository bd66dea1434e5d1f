"""Which providers a watch poll crawls: the ones the watches need, at most once per interval."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from flows.providers import ProviderInfo
from flows.watch import plan_poll, relevant_providers
from tests.watch.watch_kit import T0
from warehouse.watch.criteria import Watch


def info(name: str, interval: int = 300) -> ProviderInfo:
    return ProviderInfo(
        name=name,
        home="CN",
        needs_browser=False,
        auth_env=(),
        default_base_url=f"https://{name}.test",
        min_poll_interval_s=interval,
    )


INFOS = {"alpha": info("alpha"), "beta": info("beta", 900), "gamma": info("gamma")}


def watch(watch_id: int = 1, **kw: Any) -> Watch:
    fields: dict[str, Any] = {
        "watch_id": watch_id,
        "created_at": T0,
        "gpu_model": "RTX 4090",
        "min_vram_gb": None,
        "gpu_count": 1,
        "max_price": None,
        "currency": None,
        "price_per": None,
        "providers": (),
        "regions": (),
        "notify_urls": ("json://127.0.0.1:9/x",),
    }
    fields.update(kw)
    return Watch(**fields)


def listing(*models: str, region: str = "r1") -> list[dict[str, Any]]:
    return [
        {
            "provider": "?",
            "gpu_model": m,
            "gpu_vram_gb": 24 if "4090" in m else 80,
            "region": region,
        }
        for m in models
    ]


LISTED = {
    "alpha": [dict(o, provider="alpha") for o in listing("RTX 4090", "H100")],
    "beta": [dict(o, provider="beta") for o in listing("H100")],
}


def test_providers_that_list_the_card_or_were_never_crawled() -> None:
    why = relevant_providers([watch()], list(INFOS), LISTED)
    assert set(why) == {"alpha", "gamma"}  # beta lists no RTX 4090; gamma never had a good run
    assert "no good run" in why["gamma"]


def test_a_provider_filter_wins() -> None:
    assert set(relevant_providers([watch(providers=("beta",))], list(INFOS), LISTED)) == {"beta"}


def test_vram_and_region_watches() -> None:
    assert set(
        relevant_providers([watch(gpu_model=None, min_vram_gb=80)], ["alpha", "beta"], LISTED)
    ) == {
        "alpha",
        "beta",
    }
    assert relevant_providers([watch(regions=("elsewhere",))], ["alpha", "beta"], LISTED) == {}


def test_a_form_factor_watch_crawls_the_providers_that_may_list_it() -> None:
    h100_sxm = watch(gpu_model="H100", gpu_form_factor="SXM")
    # The planner reads each provider's latest offers with their form factor
    # (flows.watch.plan_task): a provider that lists only PCIe or unsaid H100s is not crawled.
    pcie_only = {"beta": [dict(o, gpu_form_factor="PCIe") for o in LISTED["beta"]]}
    assert relevant_providers([h100_sxm], ["beta"], pcie_only) == {}
    unsaid = {"beta": [dict(o, gpu_form_factor=None) for o in LISTED["beta"]]}
    assert relevant_providers([h100_sxm], ["beta"], unsaid) == {}
    sxm = {"beta": [dict(o, gpu_form_factor="SXM") for o in LISTED["beta"]]}
    assert set(relevant_providers([h100_sxm], ["beta"], sxm)) == {"beta"}


def test_no_watches_no_crawl() -> None:
    plan = plan_poll([], INFOS, LISTED, {}, now=T0)
    assert plan.crawl == [] and set(plan.skipped) == set(INFOS)


def test_the_minimum_interval_is_respected_and_can_be_overridden() -> None:
    last = {"alpha": T0 - timedelta(seconds=100), "gamma": T0 - timedelta(seconds=301)}
    plan = plan_poll([watch()], INFOS, LISTED, last, now=T0)
    assert plan.crawl == ["gamma"]
    assert "polled 100 s ago" in plan.skipped["alpha"]
    assert plan.skipped["beta"] == "no active watch needs it"
    assert plan_poll([watch()], INFOS, LISTED, last, now=T0, min_interval_s=0).crawl == [
        "alpha",
        "gamma",
    ]
