"""A card's polls and sold-out spells, read from the change history, for the restock
forecast (the method is in ``gpurent_core.forecast``).

Only what a look confirmed counts (rules of truth 1, 2 and 11). A poll is a good run of a
provider (failed runs have no place in the history: a failed fetch is not a state change).
At each poll an offer of the card is *confirmed* when its version held then and it was not
stale (``stale_spans``: kept by a run that could not read it). The poll is RENTABLE when a
confirmed offer could be rented for the cards asked (``gpurent_core.cost.stock.rentable``,
the one rule of ``cheapest`` and the watches), SOLD_OUT when every offer it held was
confirmed and none could, and UNKNOWN otherwise: an offer of unknown stock, a stale one,
none listed at all, or a run that quarantined an item without a key (it may have been the
card, free). Nothing is stored; the cost follows the card's changes and its
providers' polls.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

import duckdb

from gpurent_core.cost.stock import could_supply, rentable
from gpurent_core.enums import StockStatus
from gpurent_core.forecast import Poll, PollState, Spell, spells_from_polls
from warehouse.db import query_rows
from warehouse.watch.runs import BLIND_SQL


def card_polls(
    con: duckdb.DuckDBPyConnection,
    *,
    gpu_model: str | None,
    vram_gb: int | None = None,
    min_vram_gb: int | None = None,
    providers: Sequence[str] | None = None,
    regions: Sequence[str] = (),
    gpus: int = 1,
    keep: Callable[[Mapping[str, Any]], bool] | None = None,
) -> list[Poll]:
    """Every good poll of every provider that ever listed the card, with what it said.

    ``regions``: substrings of the region, any case (as watches read them); ``keep``: a
    further test of an offer's row (a watch's ``matches``)."""
    versions = query_rows(
        con,
        """
        SELECT provider, offer_key, valid_from, valid_to, gpu_model, gpu_vram_gb,
               gpu_form_factor, gpu_count, status, available_count, price_basis, region
        FROM version_rows
        WHERE ($gpu IS NULL OR lower(gpu_model) = lower($gpu))
          AND ($vram IS NULL OR gpu_vram_gb = $vram)
          AND ($min_vram IS NULL OR gpu_vram_gb >= $min_vram)
          AND ($providers IS NULL OR list_contains($providers, provider))
        """,
        {"gpu": gpu_model, "vram": vram_gb, "min_vram": min_vram_gb,
         "providers": list(providers) if providers else None},
    )  # fmt: skip
    wanted = [r.casefold() for r in regions]
    versions = [
        v
        for v in versions
        if (not wanted or any(r in str(v["region"] or "").casefold() for r in wanted))
        and (keep is None or keep(v))
    ]
    if not versions:
        return []
    listed = sorted({v["provider"] for v in versions})
    keys = {(v["provider"], v["offer_key"]) for v in versions}
    stale: dict[tuple[str, str], list[tuple[datetime, datetime | None]]] = {}
    for row in query_rows(
        con,
        "SELECT provider, offer_key, stale_from, stale_to FROM stale_spans"
        " WHERE list_contains($p, provider)",
        {"p": listed},
    ):
        key = (row["provider"], row["offer_key"])
        if key in keys:
            stale.setdefault(key, []).append((row["stale_from"], row["stale_to"]))
    runs = query_rows(
        con,
        f"SELECT r.provider, r.history_at, {BLIND_SQL} AS blind FROM crawl_runs AS r"
        " WHERE r.history_at IS NOT NULL AND list_contains($p, r.provider)"
        " ORDER BY r.provider, r.history_at",
        {"p": listed},
    )
    # Per provider, the count of offers in each state as it steps at version and stale
    # boundaries: +1 where a piece of an offer's history in that state begins, -1 where it
    # ends. An offer's piece is its version's state, or UNKNOWN while it was stale.
    steps: dict[str, list[tuple[datetime, PollState, int]]] = {p: [] for p in listed}
    by_offer: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for v in versions:
        by_offer.setdefault((v["provider"], v["offer_key"]), []).append(v)
    for key, mine in by_offer.items():
        for begin, end, state in _pieces(mine, stale.get(key, []), gpus):
            steps[key[0]].append((begin, state, 1))
            if end is not None:
                steps[key[0]].append((end, state, -1))
    polls: list[Poll] = []
    for provider in listed:
        events = sorted(steps[provider], key=lambda e: e[0])
        count = dict.fromkeys(PollState, 0)
        i = 0
        for run in (r for r in runs if r["provider"] == provider):
            at = run["history_at"]
            while i < len(events) and events[i][0] <= at:
                count[events[i][1]] += events[i][2]
                i += 1
            polls.append(Poll(provider, at, _state(count, blind=bool(run["blind"]))))
    return polls


def _state(count: Mapping[PollState, int], *, blind: bool = False) -> PollState:
    """The poll's state from its offers' states; ``blind``: the run quarantined an item
    without a key, which may have been the card free (``warehouse.watch.runs.BLIND_SQL``):
    then only a rentable offer it read tells, and sold out is not confirmed."""
    if count[PollState.RENTABLE] > 0:
        return PollState.RENTABLE
    if blind or count[PollState.UNKNOWN] > 0 or count[PollState.SOLD_OUT] == 0:
        return PollState.UNKNOWN  # unknown is not sold out; nothing listed says nothing
    return PollState.SOLD_OUT


def _pieces(
    versions: list[dict[str, Any]],
    stale: list[tuple[datetime, datetime | None]],
    gpus: int,
) -> list[tuple[datetime, datetime | None, PollState]]:
    """One offer's history as pieces [begin, end) of one state (end None: still holds)."""
    cuts = sorted(
        {v["valid_from"] for v in versions}
        | {v["valid_to"] for v in versions if v["valid_to"] is not None}
        | {a for a, _ in stale}
        | {b for _, b in stale if b is not None}
    )
    ordered = sorted(versions, key=lambda v: v["valid_from"])
    spans = sorted(stale, key=lambda s: s[0])
    out: list[tuple[datetime, datetime | None, PollState]] = []
    vi = si = 0  # versions of one offer never overlap, nor do its stale spans: walk both
    for n, begin in enumerate(cuts):
        end = cuts[n + 1] if n + 1 < len(cuts) else None
        while vi < len(ordered) and _ended(ordered[vi]["valid_to"], begin):
            vi += 1
        while si < len(spans) and _ended(spans[si][1], begin):
            si += 1
        if vi == len(ordered) or ordered[vi]["valid_from"] > begin:
            continue  # not listed between two versions
        if si < len(spans) and spans[si][0] <= begin:
            state = PollState.UNKNOWN
        else:
            state = _offer_state(ordered[vi], gpus)
        if out and out[-1][1] == begin and out[-1][2] is state:
            out[-1] = (out[-1][0], end, state)
        else:
            out.append((begin, end, state))
    return out


def _ended(until: datetime | None, at: datetime) -> bool:
    return until is not None and until <= at


def _offer_state(version: Mapping[str, Any], gpus: int) -> PollState:
    if version["status"] == StockStatus.UNKNOWN.value:
        return PollState.UNKNOWN
    if not could_supply(version, gpus):
        # A 1-card offer is no sight of 8 cards on one machine: not "sold out" for them
        # (`--gpus 100` read every provider as sold out).
        return PollState.UNKNOWN
    return PollState.RENTABLE if rentable(version, gpus) else PollState.SOLD_OUT


def card_spells(con: duckdb.DuckDBPyConnection, **card: Any) -> list[Spell]:
    """The card's sold-out spells (``card_polls``'s arguments)."""
    return spells_from_polls(card_polls(con, **card))


__all__ = ["card_polls", "card_spells"]
