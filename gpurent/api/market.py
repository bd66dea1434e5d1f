"""The market over time and by provider: ``index`` (the daily price index) and
``providers`` (each provider gpurent knows, with how its last run went)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from gpurent.api.names import resolve_currency, resolve_gpu
from gpurent.api.warehouse import open_warehouse, retried_read


@dataclass(frozen=True)
class IndexPoint:
    """One day's price index for one GPU in one currency, per GPU-hour.

    ``index_price`` is None when it is withheld (``withheld_reason`` says why: too few
    providers quoting in stock, say); ``screened_out`` names providers left out as outliers.
    """

    date: date
    gpu_model: str
    gpu_vram_gb: int | None
    currency: str
    index_price: Decimal | None
    n_offers: int
    n_providers: int
    in_stock_share: Decimal | None
    method_version: str
    withheld_reason: str | None
    n_observed: int
    screened_out: str | None

    def as_row(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


@retried_read
def index(
    *,
    gpu: str | None = None,
    currency: str | None = None,
    start: date | None = None,
    end: date | None = None,
    last_days: int | None = None,
    db: Path | str | None = None,
) -> list[IndexPoint]:
    """The daily price index (every currency it is kept in, unless ``currency``), ordered by
    day, GPU and currency; ``last_days`` without ``start``: only that many days up to the end.
    ``gpu`` is read through the normaliser ('4090' is the RTX 4090)."""
    from warehouse.index import INDEX_CURRENCIES, history_days, price_index

    code = resolve_currency(currency)
    model = resolve_gpu(gpu)[0] if gpu is not None else None
    with open_warehouse(db) as con:
        if start is None and last_days is not None:
            span = history_days(con)
            if span is not None:
                start = (end or span[1]) - timedelta(days=last_days - 1)
        frame = price_index(
            con,
            start=start,
            end=end,
            currencies=[code] if code else list(INDEX_CURRENCIES),
            gpu_model=model,
        )
    return [IndexPoint(**row) for row in frame.to_dicts()]


@dataclass(frozen=True)
class ProviderState:
    """A provider gpurent can crawl, and how its last run went (None before any run)."""

    provider: str
    home: str
    needs_browser: bool
    auth_env: tuple[str, ...]
    min_poll_interval_s: int | None
    last_status: str | None
    """How the last run ended: ok, partial, failed, auth_required, layout_changed..."""
    last_offers: int | None
    last_quarantined: int | None
    last_skipped: dict[str, int]
    """Items of the last run that are no offer gpurent ranks, by kind (rule of truth 9)."""
    last_run_at: datetime | None
    good_data_from: datetime | None
    """When the data still shown was fetched (the last good run)."""
    message: str | None


@retried_read
def providers(*, db: Path | str | None = None) -> list[ProviderState]:
    """Every provider gpurent knows, with its last run from the warehouse (None before its
    first run). No warehouse at ``db`` is ``NoWarehouse``, as for every answer: a path with
    nothing there is a mistake to say, not a market where nothing ran yet."""
    from gpurent_core.providers import BY_NAME
    from warehouse.queries import provider_status

    with open_warehouse(db) as con:
        status = {r["provider"]: r for r in provider_status(con).iter_rows(named=True)}
    states = []
    for name, info in sorted(BY_NAME.items()):
        st = status.get(name, {})
        states.append(
            ProviderState(
                provider=name,
                home=info.home,
                needs_browser=info.needs_browser,
                auth_env=tuple(info.auth_env),
                min_poll_interval_s=info.min_poll_interval_s,
                last_status=st.get("last_status"),
                last_offers=st.get("last_offers"),
                last_quarantined=st.get("last_quarantined"),
                last_skipped=json.loads(st["last_skipped"]) if st.get("last_skipped") else {},
                last_run_at=st.get("last_run_at"),
                good_data_from=st.get("last_good_at"),
                message=st.get("last_message"),
            )
        )
    return states
