"""After every poll, gpurent's answers against the oracle's: each check counts its violations
and its opportunities (how many times the product could have got it wrong), so a result
reads "0 of 340", and keeps the first few violations, named by poll, provider and offer.

The five checks of the issue, then four that pin the same rules more closely:

* ``vanished_in_stock_cheapest`` / ``vanished_in_stock_offers``: an offer the market no
  longer lists is never ranked, and is listed in stock only while gpurent cannot know it is
  gone (stale, its source unread since it vanished).
* ``stale_ranked``: every row ``cheapest`` ranks was confirmed by its provider's latest poll.
* ``false_alerts``: every alert is one rule 7 calls for, at that poll.
* ``unannounced_restocks``: every alert rule 7 calls for was raised by the poll confirming it.
* ``dropped_while_unread``: an offer whose page or request failed (or whose own item was
  unreadable, its key readable) is still listed, stale.
* ``fresh_state``: an offer listed readably is listed, not stale, with the status, free
  count and price the provider's words mean.
* ``vanished_listed``: an offer absent from answers that came back whole is gone.
* ``skipped_counted`` / ``unreadable_quarantined``: the run report counts the listing's
  skipped item as skipped and its unreadable items as quarantined (rule 9).
* ``blind_ok``: a run that read an unreadable item is not ``ok`` (rule 9).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from benchmarks.market_sim.oracle import Cause, Pair, View, rentable

EXAMPLES = 8

CHECKS = (
    "vanished_in_stock_cheapest",
    "vanished_in_stock_offers",
    "stale_ranked",
    "false_alerts",
    "unannounced_restocks",
    "dropped_while_unread",
    "fresh_state",
    "vanished_listed",
    "skipped_counted",
    "unreadable_quarantined",
    "blind_ok",
)
ISSUE_CHECKS = CHECKS[:6]
"""The checks the issue names (vanished offers by both surfaces counted apart)."""


@dataclass
class Tally:
    violations: int = 0
    opportunities: int = 0
    examples: list[str] = field(default_factory=list)
    by: Counter[str] = field(default_factory=Counter)
    """Opportunities by kind, where a check has kinds (why an offer is stale)."""

    def chance(self, n: int = 1, kind: str | None = None) -> None:
        self.opportunities += n
        if kind is not None:
            self.by[kind] += n

    def violate(self, text: str) -> None:
        self.violations += 1
        if len(self.examples) < EXAMPLES:
            self.examples.append(text)

    def line(self) -> str:
        return f"{self.violations} of {self.opportunities}"


@dataclass(frozen=True)
class Row:
    """One offer row of an answer, reduced to what the checks read."""

    provider: str
    offer_key: str
    status: str
    available: int | None
    price: Decimal
    stale: bool

    @classmethod
    def of(cls, offer: Any) -> Row:
        return cls(
            provider=str(offer.provider),
            offer_key=str(offer.offer_key),
            status=str(getattr(offer.status, "value", offer.status)),
            available=offer.available_count,
            price=Decimal(offer.price),
            stale=bool(offer.stale),
        )

    @property
    def pair(self) -> tuple[str, str]:
        return self.provider, self.offer_key


@dataclass
class Answers:
    """What gpurent said after one poll."""

    offers: list[Row]
    """``offers``: every latest row (sold out, stale included)."""
    in_stock: list[Row]
    """``offers --in-stock``."""
    ranked: list[Row]
    """``cheapest --min-vram 1`` (every row, no limit)."""
    alerts: set[Pair]
    """(watch id, provider, offer key) of the alerts this poll's evaluation raised."""
    reports: dict[str, dict[str, Any] | None]
    """Each provider's run report."""
    statuses: dict[str, str]
    """Each provider's run status as loaded."""


class Checks:
    def __init__(self, watches: int) -> None:
        self.watches = watches
        self.tallies = {name: Tally() for name in CHECKS}

    def __getitem__(self, name: str) -> Tally:
        return self.tallies[name]

    def poll(
        self, poll: int, views: dict[str, View], fires: dict[Pair, Cause], got: Answers
    ) -> None:
        offers = {r.pair: r for r in got.offers}
        in_stock = {r.pair: r for r in got.in_stock}
        ranked = {r.pair: r for r in got.ranked}

        def at(provider: str, key: str, detail: str) -> str:
            return f"poll {poll} {provider} {key}: {detail}"

        for provider, view in views.items():
            for key in sorted(view.absent):
                pair = (provider, key)
                self["vanished_in_stock_cheapest"].chance()
                self["vanished_in_stock_offers"].chance()
                if pair in ranked:
                    self["vanished_in_stock_cheapest"].violate(
                        at(provider, key, f"gone from the market, ranked ({_show(ranked[pair])})")
                    )
                if pair in in_stock and key not in view.stale:
                    self["vanished_in_stock_offers"].violate(
                        at(
                            provider,
                            key,
                            f"gone, and known gone, listed in stock ({_show(in_stock[pair])})",
                        )
                    )
            for key in sorted(view.closed):
                pair = (provider, key)
                self["vanished_listed"].chance()
                if pair in offers:
                    self["vanished_listed"].violate(
                        at(
                            provider,
                            key,
                            f"absent from answers read whole, still listed ({_show(offers[pair])})",
                        )
                    )
            for key, (last, why) in sorted(view.stale.items()):
                pair = (provider, key)
                if rentable(last, 1):
                    self["stale_ranked"].chance(kind=why.value)
                self["dropped_while_unread"].chance(kind=why.value)
                row = offers.get(pair)
                if row is None:
                    self["dropped_while_unread"].violate(
                        at(provider, key, f"{why.value}: not listed")
                    )
                elif not row.stale:
                    self["dropped_while_unread"].violate(
                        at(provider, key, f"{why.value}: listed but not stale ({_show(row)})")
                    )
            for key, expect in sorted(view.fresh.items()):
                pair = (provider, key)
                self["fresh_state"].chance()
                row = offers.get(pair)
                problem = _mismatch(row, expect.status, expect.available, expect.price)
                if problem is not None:
                    self["fresh_state"].violate(at(provider, key, problem))
            self.run(poll, provider, view, got)
        for row in got.ranked:
            seen = views.get(row.provider)
            if seen is not None and row.offer_key not in seen.fresh:
                kept = seen.stale.get(row.offer_key)
                reason = kept[1].value if kept else "not held"
                detail = f"ranked, not confirmed by its provider's latest poll ({reason})"
                self["stale_ranked"].violate(
                    at(row.provider, row.offer_key, f"{detail}: {_show(row)}")
                )
        self["false_alerts"].chance(len(got.in_stock) * self.watches)
        for alert in sorted(got.alerts - set(fires)):
            self["false_alerts"].violate(at(alert[1], alert[2], f"watch {alert[0]} alerted"))
        for fire, cause in sorted(fires.items()):
            self["unannounced_restocks"].chance(kind=cause.value)
            if fire not in got.alerts:
                self["unannounced_restocks"].violate(
                    at(fire[1], fire[2], f"watch {fire[0]}: in stock {cause.value}, no alert")
                )

    def run(self, poll: int, provider: str, view: View, got: Answers) -> None:
        if not view.read_any:
            return
        report = got.reports.get(provider) or {}
        skipped = sum(int(n) for n in (report.get("skipped") or {}).values())
        quarantined = int(report.get("quarantined") or 0)
        status = got.statuses.get(provider, "?")
        where = f"poll {poll} {provider}"
        self["skipped_counted"].chance()
        if skipped != view.skipped:
            self["skipped_counted"].violate(
                f"{where}: {view.skipped} skipped item(s) read, report says {report.get('skipped')}"
            )
        self["unreadable_quarantined"].chance()
        if quarantined != view.unreadable:
            self["unreadable_quarantined"].violate(
                f"{where}: {view.unreadable} unreadable item(s) read, {quarantined} quarantined"
            )
        if view.unreadable:
            self["blind_ok"].chance()
            if status == "ok":
                self["blind_ok"].violate(f"{where}: ok with {view.unreadable} unreadable item(s)")

    def summary(self) -> dict[str, dict[str, Any]]:
        return {
            name: {
                "violations": t.violations,
                "opportunities": t.opportunities,
                **({"by": dict(t.by)} if t.by else {}),
                "examples": t.examples,
            }
            for name, t in self.tallies.items()
        }


def _mismatch(row: Row | None, status: str, available: int | None, price: Decimal) -> str | None:
    if row is None:
        return "listed readably by its provider, missing from offers"
    if row.stale:
        return f"confirmed this poll, listed stale ({_show(row)})"
    if row.status != status:
        return f"status {row.status}, the provider says {status}"
    if row.price != price:
        return f"price {row.price}, the provider says {price}"
    if available is not None and row.available != available:
        return f"{row.available} free, the provider says {available}"
    return None


def _show(row: Row) -> str:
    free = "" if row.available is None else f" {row.available} free"
    return f"{row.status}{free} {row.price}{' stale' if row.stale else ''}"
