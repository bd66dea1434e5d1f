"""A market over time, as a test: ten providers on the replay server, polled for real, and
after every poll gpurent's answers held against the simulation's own truth
(``benchmarks.market_sim``; the long run is ``python -m benchmarks.market_over_time``).

The short run crawls every poll in one real Scrapy process over loopback HTTP, loads each
run with ``flows.nightly.load_and_track`` into a DuckDB file, evaluates the watches and asks
``gpurent.api`` what ``offers`` and ``cheapest`` say. It must break no rule of truth, and it
must have met every kind of event and fault it claims to test, so it cannot pass by having
nothing to check. The oracle and the checks are also tested alone below, on hand-made
polls, so a check that could never fail would be caught here too.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from benchmarks.market_sim.adapters import adapters
from benchmarks.market_sim.adapters.base import Adapter, SimOffer
from benchmarks.market_sim.checks import CHECKS, Answers, Checks, Row
from benchmarks.market_sim.oracle import Cause, Knowledge, View, WatchOracle, WatchSpec, Why
from benchmarks.market_sim.run import Config, Result, run
from benchmarks.market_sim.truth import Fault, FaultKind, ProviderPoll, listing_of

POLLS = 8
"""About a minute and a half on a busy two-core machine (~11 s a poll); the seed's market
meets every event by then, and every fault kind is forced from poll 3."""

EVENTS = ("appear", "vanish", "sell_out", "restock", "price_change", "reappear", "garble")
FAULTS = ("fault_page", "fault_request", "fault_outage")


@pytest.fixture(scope="module")
def market() -> Result:
    return run(Config(polls=POLLS))


@pytest.mark.slow  # the run crawls for real (tests/tiers.py)
def test_no_rule_of_truth_is_broken_over_the_run(market: Result) -> None:
    broken = {
        name: market.checks[name].examples for name in CHECKS if market.checks[name].violations
    }
    assert not broken, "\n".join(market.report())


@pytest.mark.slow  # the run crawls for real (tests/tiers.py)
def test_every_check_had_something_to_check(market: Result) -> None:
    assert market.polls == POLLS and len(market.providers) >= 10
    idle = [name for name, n in market.opportunities.items() if n == 0]
    assert not idle, idle


@pytest.mark.slow  # the run crawls for real (tests/tiers.py)
def test_every_kind_of_event_and_fault_happened(market: Result) -> None:
    missing = [kind for kind in (*EVENTS, *FAULTS) if market.events[kind] == 0]
    assert not missing, (missing, market.events)
    assert market.statuses["partial"] > 0 and market.statuses["failed"] > 0, market.statuses


@pytest.mark.slow  # the run crawls for real (tests/tiers.py)
def test_offers_went_stale_for_every_reason_and_alerts_were_due(market: Result) -> None:
    stale = market.checks["dropped_while_unread"].by
    assert all(stale[why.value] > 0 for why in Why), stale
    ranked_candidates = market.checks["stale_ranked"].by
    assert sum(ranked_candidates.values()) > 0, ranked_candidates
    due = market.checks["unannounced_restocks"].by  # after sold out, after absent, new
    assert all(due[cause.value] > 0 for cause in Cause), due


# -- the oracle and the checks alone (no crawl) ---------------------------------------


@pytest.fixture(scope="module")
def named() -> dict[str, Adapter]:
    return {a.name: a for a in adapters()}


def offer(sid: int, *, free: int = 3, variant: str = "", price: str = "1.50") -> SimOffer:
    return SimOffer(sid, 0, variant, Decimal(price), free)


def test_a_lost_page_keeps_every_offer_of_a_paged_listing_stale(
    named: dict[str, Adapter],
) -> None:
    autodl = named["autodl"]
    known = Knowledge(autodl)
    first = [offer(sid) for sid in range(10, 20)]
    view = known.advance(listing_of(autodl, 1, first))
    assert len(view.fresh) == 10 and not view.stale and view.skipped == 1
    # Poll 2: offer 11 is gone and the second page (of four) is lost.
    second = [o for o in first if o.sid != 11]
    lost = listing_of(autodl, 2, second, fault=Fault(FaultKind.PAGE, 1))
    view = known.advance(lost)
    on_lost_page = {autodl.offer_key(i.offer) for i in lost.pages[1]}
    gone = autodl.offer_key(first[1])
    assert set(view.stale) == on_lost_page | {gone}  # no page vouches for an absence
    assert {why for _, why in view.stale.values()} == {Why.PAGE}
    assert gone in view.absent and not view.closed
    # Poll 3, whole again: what it no longer lists is gone.
    view = known.advance(listing_of(autodl, 3, second))
    assert view.closed == {gone} and not view.stale


def test_a_lost_request_keeps_its_part_stale_and_the_catalog_closes_what_it_dropped(
    named: dict[str, Adapter],
) -> None:
    runpod = named["runpod"]
    known = Knowledge(runpod)
    secure = [offer(10, variant="secure"), offer(11, variant="secure")]
    community = [offer(12, variant="community"), offer(13, variant="community")]
    known.advance(listing_of(runpod, 1, [*secure, *community]))
    kept = [secure[0], community[0]]  # 11 and 13 are gone from the market
    view = known.advance(listing_of(runpod, 2, kept, fault=Fault(FaultKind.REQUEST, 0)))
    key = runpod.offer_key
    assert set(view.fresh) == {key(community[0])}
    assert view.stale == {key(secure[0]): (runpod.expect(secure[0]), Why.REQUEST)}
    assert view.closed == {key(secure[1]), key(community[1])}


def test_an_unreadable_item_with_a_readable_key_stays_stale(named: dict[str, Adapter]) -> None:
    ppio = named["ppio"]
    known = Knowledge(ppio)
    offers = [offer(10), offer(11)]
    known.advance(listing_of(ppio, 1, offers))
    view = known.advance(listing_of(ppio, 2, offers, garbled=11))
    assert view.stale == {ppio.offer_key(offers[1]): (ppio.expect(offers[1]), Why.ITEM)}
    assert view.unreadable == 2 and view.skipped == 1


def _fires(oracle: WatchOracle, known: Knowledge, poll: int, offers: list[SimOffer]) -> set[str]:
    view = known.advance(listing_of(known.adapter, poll, offers))
    return {f"w{w} {k} {cause.value}" for (w, _, k), cause in oracle.advance(view).items()}


def test_the_watch_oracle_fires_once_per_confirmed_transition(named: dict[str, Adapter]) -> None:
    autodl, featurize = named["autodl"], named["featurize"]
    oracle = WatchOracle([WatchSpec(1, 1), WatchSpec(2, 2)])
    counted, flagged = Knowledge(autodl), Knowledge(featurize)
    a, f = autodl.offer_key(offer(10)), featurize.offer_key(offer(10))
    # Poll 1, the baseline: in stock before the watch, no transition.
    assert _fires(oracle, counted, 1, [offer(10, free=1)]) == set()
    assert _fires(oracle, flagged, 1, [offer(20)]) == set()
    # Sold out once, back at once (a flap): no alert; sold out twice re-arms.
    assert _fires(oracle, counted, 2, [offer(10, free=0)]) == set()
    assert _fires(oracle, counted, 3, [offer(10, free=1)]) == set()
    assert _fires(oracle, counted, 4, [offer(10, free=0)]) == set()
    assert _fires(oracle, counted, 5, [offer(10, free=0)]) == set()
    # Two free cards: the count covers both watches, each fires at once.
    assert _fires(oracle, counted, 6, [offer(10, free=2)]) == {
        f"w1 {a} after sold out",
        f"w2 {a} after sold out",
    }
    # A new machine without a free count: confirmed by the next poll that sees it; never
    # rentable for two cards (a one-card machine is rented whole).
    assert _fires(oracle, flagged, 2, [offer(10), offer(20)]) == set()
    assert _fires(oracle, flagged, 3, [offer(10), offer(20)]) == {f"w1 {f} new offer"}


def test_the_checks_count_what_the_product_gets_wrong(named: dict[str, Adapter]) -> None:
    cudo = named["cudo"]
    key = cudo.offer_key
    one, two, three = offer(10), offer(11), offer(12)
    view = View(
        provider="cudo",
        poll=5,
        fresh={key(one): cudo.expect(one)},
        stale={key(two): (cudo.expect(two), Why.PAGE)},
        absent={key(three)},
        closed={key(three)},
        read_any=True,
        skipped=1,
        unreadable=1,
    )

    def row(o: SimOffer, *, stale: bool = False) -> Row:
        return Row("cudo", key(o), "in_stock", o.free, o.price, stale)

    got = Answers(
        offers=[row(one), row(three)],  # two dropped while unread, three still listed
        in_stock=[row(one), row(three)],
        ranked=[row(one), row(three)],  # three ranked though gone
        alerts={(1, "cudo", key(three))},  # not due
        reports={"cudo": {"skipped": {"outside_catalog": 1}, "quarantined": 1}},
        statuses={"cudo": "partial"},
    )
    checks = Checks(watches=2)
    checks.poll(5, {"cudo": view}, {(1, "cudo", key(one)): Cause.NEW}, got)
    wrong = {name for name in CHECKS if checks[name].violations}
    assert wrong == {
        "vanished_in_stock_cheapest",
        "vanished_in_stock_offers",
        "stale_ranked",
        "false_alerts",
        "unannounced_restocks",
        "dropped_while_unread",
        "vanished_listed",
    }
    assert all(checks[name].violations == 1 for name in wrong)
    assert checks["fresh_state"].opportunities == 1 and checks["skipped_counted"].opportunities == 1


def test_a_listing_carries_its_skipped_and_unreadable_items(named: dict[str, Adapter]) -> None:
    for adapter in named.values():
        market_offer = offer(10, variant=adapter.variants[-1])
        listing: ProviderPoll = listing_of(adapter, 1, [market_offer])
        answers = adapter.answers(listing.pages)
        assert len(answers) == len(listing.pages), adapter.name
        carried = [i.kind.value for a in answers for i in a.items]
        assert carried == ["skip", "offer", "unreadable"], adapter.name
