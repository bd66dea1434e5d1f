"""What `watch add --max-price X --per UNIT` compares, and offers a watch cannot rent as listed.

The cap is compared with the offer's TRUE price (add-ons included) for the cards the watch
needs, in the watch's currency through the FX table; "card" units divide that by the
watch's --count. Before this, `--count 2 --max-price 2.5 --per hour` compared 2.5 with the
price of both cards, so the README's example never fired.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from gpurent_core.model import PriceBasis, StockStatus, utcnow
from tests.watch.watch_kit import T0, Market, cli, cli_json
from warehouse.db import connect
from warehouse.watch.criteria import CapUnit, PricePer
from warehouse.watch.evaluate import evaluate_watches
from warehouse.watch.store import add_watch

HOOK = "json://127.0.0.1:9/hook"
D = Decimal


def capped(
    con: duckdb.DuckDBPyConnection, value: str, unit: str, count: int = 1, **kw: object
) -> int:
    price, per = CapUnit.parse(unit).stored(D(value), count)
    fields: dict[str, object] = {
        "created_at": T0, "notify_urls": [HOOK], "gpu_model": "RTX 4090", "gpu_count": count,
        "max_price": price, "currency": "CNY", "price_per": per,
    }  # fmt: skip
    fields.update(kw)
    return add_watch(con, **fields).watch_id  # type: ignore[arg-type]


def restock(con: duckdb.DuckDBPyConnection, market: Market, *free_offers: dict) -> set[int]:
    """A sold-out poll, then one with these offers; the ids of the watches that fired."""
    sold = [o | {"status": StockStatus.SOLD_OUT, "available_count": 0} for o in free_offers]
    market.poll(sold)
    market.poll(free_offers)
    now = market.start + timedelta(minutes=market.n, seconds=30)
    return {a.watch_id for a in evaluate_watches(con, now=now).alerts}


@pytest.mark.parametrize(
    ("text", "unit", "per", "stored"),
    [
        ("card-hour", CapUnit.CARD_HOUR, PricePer.HOUR, D("5.0")),
        ("hour", CapUnit.CARD_HOUR, PricePer.HOUR, D("5.0")),  # as providers quote: per card
        ("offer-hour", CapUnit.OFFER_HOUR, PricePer.HOUR, D("2.5")),
        ("month", CapUnit.CARD_MONTH, PricePer.MONTH, D("5.0")),
        ("Offer_Month", CapUnit.OFFER_MONTH, PricePer.MONTH, D("2.5")),
    ],
)
def test_cap_units(text: str, unit: CapUnit, per: PricePer, stored: Decimal) -> None:
    assert CapUnit.parse(text) is unit
    assert unit.stored(D("2.5"), 2) == (stored, per)


def test_an_unknown_unit_is_refused() -> None:
    with pytest.raises(ValueError):
        CapUnit.parse("day")


def test_per_card_hour_compares_the_price_of_the_cards_needed_per_card(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    # 1.98 CNY per card-hour, 2 free: 2 cards cost 3.96 CNY/h, 1.98 per card.
    per_card = capped(con, "2.5", "card-hour", count=2)
    whole = capped(con, "2.5", "offer-hour", count=2)  # 3.96 > 2.5: too dear
    enough = capped(con, "4", "offer-hour", count=2)
    monthly = capped(con, "1500", "card-month", count=2)  # about 1,445 per card-month
    fired = restock(con, market, market.offer(available_count=2))
    assert fired == {per_card, enough, monthly} and whole not in fired


def test_the_cap_is_compared_in_the_watch_currency_through_fx(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    # 0.30 USD per card-hour x 7.10 (built-in USD/CNY) = 2.13 CNY.
    under = capped(con, "2.2", "card-hour")
    over = capped(con, "2.1", "card-hour")
    usd = market.offer(price=D("0.30"), currency="USD", fees=())
    fired = restock(con, market, usd)
    assert under in fired and over not in fired


def test_a_whole_machine_costs_the_whole_machine_per_card_needed(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    # 8 cards rented whole at 8 CNY/h; a watch for 2 cards pays 8/h: 4 per card it needs.
    cheap = capped(con, "3", "card-hour", count=2)
    fits = capped(con, "4.5", "card-hour", count=2)
    machine = market.offer(
        gpu_count=8, price=D("8"), price_basis=PriceBasis.INSTANCE, available_count=8, fees=()
    )
    fired = restock(con, market, machine)
    assert fits in fired and cheap not in fired


@pytest.mark.parametrize(
    ("offer", "fires"),
    [
        ({"gpu_count": 8, "price_basis": PriceBasis.INSTANCE, "available_count": 4}, False),
        ({"gpu_count": 8, "price_basis": PriceBasis.INSTANCE, "available_count": 8}, True),
        ({"gpu_count": 2, "price_basis": PriceBasis.GPU, "available_count": 1}, False),
        ({"gpu_count": 2, "price_basis": PriceBasis.GPU, "available_count": 2}, True),
        ({"gpu_count": 1, "available_count": 0}, False),  # "in stock" with nothing free
    ],
)
def test_an_offer_with_fewer_cards_free_than_it_rents_is_not_in_stock(
    con: duckdb.DuckDBPyConnection, market: Market, offer: dict, fires: bool
) -> None:
    wid = add_watch(con, created_at=T0, notify_urls=[HOOK], gpu_model="RTX 4090").watch_id
    shown = market.offer(**offer)
    assert shown["status"] is StockStatus.IN_STOCK
    # Two polls in stock, so a count that does not cover is not confirmed by the second one.
    market.poll([shown | {"status": StockStatus.SOLD_OUT, "available_count": 0}])
    market.poll([shown])
    market.poll([shown])
    now = market.start + timedelta(minutes=market.n, seconds=30)
    fired = {a.watch_id for a in evaluate_watches(con, now=now).alerts}
    assert (wid in fired) is fires


def test_watch_add_stores_a_per_card_cap_for_the_cards_and_says_both(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    (row,) = cli_json("watch", "add", "--gpu", "RTX 4090", "--count", "2", "--max-price", "2.5",
                      "--notify", HOOK, "--db", str(db))  # fmt: skip
    assert row["max_price"] == "2.5 CNY/card-hour (5 CNY/hour for 2 cards)"
    (row,) = cli_json("watch", "add", "--gpu", "RTX 4090", "--count", "3", "--max-price", "10",
                      "--per", "offer-month", "--notify", HOOK, "--db", str(db))  # fmt: skip
    assert row["max_price"] == "10 CNY/month for 3 cards"
    out = cli("watch", "add", "--gpu", "RTX 4090", "--max-price", "1", "--per", "day",
              "--notify", HOOK, "--db", str(db), code=2).output  # fmt: skip
    assert "card-hour" in out

    con = connect(db)
    market = Market(con, tmp_path / "feeds")
    created = con.execute("SELECT min(created_at) FROM watches").fetchall()[0][0]
    market.start = created - timedelta(seconds=50)
    market.poll([market.offer(status=StockStatus.SOLD_OUT, available_count=0)])
    market.poll([market.offer(available_count=2)])
    fired = [a.watch_id for a in evaluate_watches(con, now=utcnow()).alerts]
    con.close()
    assert fired == [1]  # 2 x 1.98 + disk = 3.96/h for 2 cards: 1.98 per card <= 2.5


def test_an_alert_says_when_its_true_price_leaves_storage_out(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    """Audit (surfaces): the alert said "50 GB storage, add-ons included" for an offer whose
    storage price is unknown (`cheapest` marks it `*`): now it says storage is not counted,
    and that the cap was checked without it."""
    capped(con, "5", "card-hour")
    free = market.offer("h1", fees=())  # no storage fee at all: its price is unknown
    sold = free | {"status": StockStatus.SOLD_OUT, "available_count": 0}
    market.poll([sold])
    market.poll([free])
    now = market.start + timedelta(minutes=market.n, seconds=30)
    (alert,) = evaluate_watches(con, now=now).alerts
    body = alert.body
    assert "storage NOT counted" in body and "cap was checked without it" in body
    assert "50 GB storage, add-ons included" not in body


def test_an_alert_says_when_its_month_is_a_twelfth_of_a_year_paid_up_front(
    con: duckdb.DuckDBPyConnection, market: Market
) -> None:
    """Audit (money): a 650 a month cap met by a year's package of 7300 (608.33 a month)
    alerted as if a month cost 608.33; the renter must pay the year. The alert says so, as
    `cheapest` marks such a month."""
    from gpurent_core.model import BillingUnit, PriceKind, PricePlan

    year = PricePlan(
        price=D("7300"), currency="CNY", billing_unit=BillingUnit.YEAR,
        price_basis=PriceBasis.GPU, price_kind=PriceKind.ON_DEMAND,
    )  # fmt: skip
    capped(con, "650", "month")
    free = market.offer("h1", price=D("1.28"), plans=(year,))
    market.poll([free | {"status": StockStatus.SOLD_OUT, "available_count": 0}])
    market.poll([free])
    now = market.start + timedelta(minutes=market.n, seconds=30)
    (alert,) = evaluate_watches(con, now=now).alerts
    assert "twelfth of a year's package, paid up front: 7,300.00 CNY for the year" in alert.body
