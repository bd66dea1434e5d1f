"""``restock_forecast``: from the availability history, the chance a card is rentable again
within 1, 6 and 24 hours and the median wait, each with the sold-out spells behind it (the
method in ``gpurent_core.forecast``, the reading of the history in ``warehouse.forecast``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpurent.api.warehouse import open_warehouse, retried_read

if TYPE_CHECKING:
    from gpurent_core.forecast import Forecast, Poll, RestockModel, Spell


@dataclass(frozen=True)
class RestockForecast:
    """The restock forecast of one card at one provider (``provider`` None: every provider's
    spells pooled, the wait at a typical provider, not the first of them to restock).

    Each chance is None below ``min_spells`` spells behind it ("not enough history");
    ``spells_*`` say how many spells' outcome at that horizon is known."""

    gpu_model: str
    gpu_vram_gb: int | None
    provider: str | None
    region: str | None
    gpus: int
    at: datetime
    """When the forecast is for (its hour of week conditions it)."""
    state_now: str
    """rentable, sold_out or unknown, at the latest good poll (any provider: rentable when
    one confirmed it; sold_out when every one confirmed it sold out)."""
    sold_out_h: float | None
    """How long it has been seen sold out at the provider (the chances are from now on)."""
    within_1h: float | None
    within_6h: float | None
    within_24h: float | None
    spells_1h: int
    spells_6h: int
    spells_24h: int
    median_wait_h: float | None
    """Half the spells like this one restocked by then (None: not within the longest seen,
    ``longest_h``, or not enough history)."""
    longest_h: float
    spells: int
    """Every sold-out spell behind the figures (all providers of the card)."""
    provider_spells: int | None
    hour_spells: int
    """Of them (at the provider asked, if any) begun within an hour of this hour of week."""
    enough_history: bool
    min_spells: int
    summary: str
    """ "expected wait about 3 h, from 41 sold-out spells" or "not enough history (...)"."""
    chances: str
    """ "35% within 1 h, 70% within 6 h, 95% within 24 h"."""
    providers: tuple[RestockForecast, ...] = ()
    """Without a provider asked: each provider's own forecast, by name."""

    def as_row(self) -> dict[str, Any]:
        return {
            name: getattr(self, name) for name in self.__dataclass_fields__ if name != "providers"
        }


@retried_read
def restock_forecast(
    gpu: str,
    *,
    vram_gb: int | None = None,
    provider: str | None = None,
    region: str | None = None,
    gpus: int = 1,
    db: Path | str | None = None,
    now: datetime | None = None,
) -> RestockForecast:
    """The restock forecast of ``gpu`` (read as ``offers`` reads it: 'A100 80G' picks that
    size), optionally at one ``provider``, in a ``region`` (a substring, any case) and for
    ``gpus`` cards (an offer counts as rentable only when it can supply them all)."""
    from gpurent.api.names import read_gpu, resolve_provider
    from gpurent_core.forecast import spells_from_polls
    from warehouse.forecast import card_polls

    name = read_gpu(gpu)
    vram = vram_gb if vram_gb is not None else name.vram_gb
    if gpus < 1:
        from gpurent.api.errors import BadUsage

        raise BadUsage(f"gpus must be at least 1, got {gpus}")
    with open_warehouse(db) as con:
        asked = resolve_provider(con, provider) if provider is not None else None
        polls = card_polls(
            con,
            gpu_model=name.model,
            vram_gb=vram,
            regions=(region,) if region else (),
            gpus=gpus,
            keep=_form_factor(name.form_factor),
        )
    spells = spells_from_polls(polls)
    return forecast_from(
        polls, spells, gpu_model=name.model, vram_gb=vram, provider=asked, region=region,
        gpus=gpus, at=now or datetime.now(UTC),
    )  # fmt: skip


def _form_factor(form: str | None) -> Any:
    if form is None:
        return None
    return lambda row: str(row["gpu_form_factor"] or "").casefold() == form.casefold()


def forecast_from(
    polls: list[Poll],
    spells: list[Spell],
    *,
    gpu_model: str,
    vram_gb: int | None,
    provider: str | None,
    region: str | None,
    gpus: int,
    at: datetime,
    model: RestockModel | None = None,
) -> RestockForecast:
    """The forecast from polls and spells already read (``watch list`` reads them per watch)."""
    from gpurent_core.forecast import RestockModel

    model = model or RestockModel(spells)
    latest: dict[str, Poll] = {}
    for p in polls:
        if p.provider not in latest or p.at > latest[p.provider].at:
            latest[p.provider] = p
    elapsed = 0.0
    if provider is not None:
        last = latest.get(provider)
        state = last.state.value if last is not None else "unknown"
        running = [s for s in spells if s.provider == provider and s.open]
        if state == "sold_out" and running:
            elapsed = running[-1].hours
    else:
        states = {p.state.value for p in latest.values()}
        state = (
            "rentable"
            if "rentable" in states
            else "sold_out"
            if states == {"sold_out"}
            else "unknown"
        )
    found = model.forecast(provider, at, elapsed_h=elapsed)
    others: tuple[RestockForecast, ...] = ()
    if provider is None:
        others = tuple(
            forecast_from(
                polls, spells, gpu_model=gpu_model, vram_gb=vram_gb, provider=name,
                region=region, gpus=gpus, at=at, model=model,
            )
            for name in sorted(latest)
        )  # fmt: skip
    return _typed(
        found, gpu_model=gpu_model, vram_gb=vram_gb, provider=provider, region=region,
        gpus=gpus, at=at, state=state,
        elapsed=elapsed if state == "sold_out" and provider is not None else None,
        others=others,
    )  # fmt: skip


def _typed(
    found: Forecast,
    *,
    gpu_model: str,
    vram_gb: int | None,
    provider: str | None,
    region: str | None,
    gpus: int,
    at: datetime,
    state: str,
    elapsed: float | None,
    others: tuple[RestockForecast, ...],
) -> RestockForecast:
    from gpurent_core.forecast import MIN_SPELLS

    by_h = {c.hours: c for c in found.chances}
    return RestockForecast(
        gpu_model=gpu_model,
        gpu_vram_gb=vram_gb,
        provider=provider,
        region=region,
        gpus=gpus,
        at=at,
        state_now=state,
        sold_out_h=None if elapsed is None else round(elapsed, 2),
        within_1h=_p(by_h[1].p),
        within_6h=_p(by_h[6].p),
        within_24h=_p(by_h[24].p),
        spells_1h=by_h[1].spells,
        spells_6h=by_h[6].spells,
        spells_24h=by_h[24].spells,
        median_wait_h=None if found.median_wait_h is None else round(found.median_wait_h, 2),
        longest_h=round(found.longest_h, 2),
        spells=found.spells,
        provider_spells=found.provider_spells,
        hour_spells=found.hour_spells,
        enough_history=found.enough,
        min_spells=MIN_SPELLS,
        summary=found.wait_text(),
        chances=found.chances_text(),
        providers=others,
    )


def _p(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
