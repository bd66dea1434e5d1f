"""The market over time and by provider: ``index`` (the daily price index, by method) and
``providers`` (each provider gpurent knows, with how its last run went)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from gpurent.api.errors import BadFilter
from gpurent.api.names import resolve_currency, resolve_gpu
from gpurent.api.warehouse import open_warehouse, retried_read
from gpurent_core.enums import IndexMethod


@dataclass(frozen=True)
class IndexPoint:
    """One day's price index for one GPU in one currency, per GPU-hour, as the method of
    its ``method_version`` makes it (docs/price-index.md).

    ``index_price`` is None when it is withheld (``withheld_reason`` says why: too few
    providers quoting in stock, say). gpi-1 rows: ``screened_out`` names providers left
    out as outliers; the gpi-2 fields are None (gpi-1 does not split by them). gpi-2 and
    gpi-3 rows (one per GPU, form factor, price kind and market): ``gpu_form_factor``
    (None: the offers do not state it, a group of its own), ``price_kind`` (on_demand,
    spot, monthly), ``market`` (CN, intl), ``p25`` and ``p75`` (quartiles of the provider
    quotes; gpi-3: of the supplier quotes, and ``n_providers`` counts suppliers);
    ``screened_out`` is None.
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
    gpu_form_factor: str | None = None
    price_kind: str | None = None
    market: str | None = None
    p25: Decimal | None = None
    p75: Decimal | None = None

    def as_row(self) -> dict[str, Any]:
        """The row's columns, as its method lists them (``index_columns``)."""
        return {name: getattr(self, name) for name in index_columns(self.method_version)}


def read_method(method: str | None) -> IndexMethod:
    """The index method named (None: the default, gpurent_core.defaults), or BadFilter."""
    from gpurent_core.defaults import DEFAULT_INDEX_METHOD

    if method is None:
        return DEFAULT_INDEX_METHOD
    try:
        return IndexMethod(str(method).strip().lower())
    except ValueError:
        known = " or ".join(m.value for m in IndexMethod)
        raise BadFilter(f"unknown index method {method!r}: {known}", argument="method") from None


def index_columns(method: str | None = None) -> tuple[str, ...]:
    """The columns of the index rows of ``method`` (default: the default method), in the
    order the CSV export and ``IndexPoint.as_row`` give them."""
    if read_method(method) is IndexMethod.GPI_1:
        from warehouse.index import INDEX_COLUMNS

        return INDEX_COLUMNS
    from warehouse.index_v2 import COLUMNS

    return COLUMNS


@dataclass(frozen=True)
class IndexRules:
    """What withholds a row of a method: fewer than ``min_providers`` quoting (``voter``:
    what votes, "provider" or, gpi-3, "supplier"), or (gpi-2, gpi-3) p75 above
    ``max_spread`` times p25 (None: no such rule)."""

    method: str
    min_providers: int
    max_spread: Decimal | None
    voter: str = "provider"


def index_rules(method: str | None = None) -> IndexRules:
    """The withholding rules of ``method`` (default: the default method), for a reader to
    say why rows are missing."""
    chosen = read_method(method)
    if chosen is IndexMethod.GPI_1:
        from warehouse.index import MIN_PROVIDERS

        return IndexRules(chosen.value, MIN_PROVIDERS, None)
    from warehouse import index_v2

    voter = "supplier" if index_v2.RULES[chosen].by_supplier else "provider"
    return IndexRules(chosen.value, index_v2.MIN_PROVIDERS, index_v2.MAX_SPREAD, voter)


@retried_read
def index(
    *,
    gpu: str | None = None,
    currency: str | None = None,
    start: date | None = None,
    end: date | None = None,
    last_days: int | None = None,
    db: Path | str | None = None,
    method: str | None = None,
) -> list[IndexPoint]:
    """The daily price index by ``method`` (gpi-1, gpi-2 or gpi-3; default
    gpurent_core.defaults'), ordered by day, GPU (gpi-2, gpi-3: form factor, market, price
    kind) and currency; ``last_days``
    without ``start``: only that many days up to the end. ``gpu`` is read through the
    normaliser ('4090' is the RTX 4090).

    Without ``currency``, gpi-1 gives every currency it is kept in (CNY, USD), gpi-2 and
    gpi-3 each market in its own (CN in CNY, intl in USD)."""
    from warehouse.index import INDEX_CURRENCIES, history_days, price_index
    from warehouse.index_v2 import price_index_v2

    chosen = read_method(method)
    code = resolve_currency(currency)
    model = resolve_gpu(gpu)[0] if gpu is not None else None
    with open_warehouse(db) as con:
        if start is None and last_days is not None:
            span = history_days(con)
            if span is not None:
                start = (end or span[1]) - timedelta(days=last_days - 1)
        if chosen is not IndexMethod.GPI_1:
            rows = price_index_v2(
                con, start=start, end=end, currencies=[code] if code else None,
                gpu_model=model, method=chosen,
            )  # fmt: skip
            return [IndexPoint(**row, screened_out=None) for row in rows]
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
    """When the run the latest state comes from finished (the last good run)."""
    stale_offers: int
    """Offers still shown that the latest look did not confirm (kept by a partial run, or all
    of them after a failed one): shown, never ranked."""
    oldest_shown_at: datetime | None
    """When the oldest of those stale offers was last seen (None when none is stale): after a
    partial run it is older than ``good_data_from``."""
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
                stale_offers=st.get("stale_offers") or 0,
                oldest_shown_at=st.get("oldest_shown_at"),
                message=st.get("last_message"),
            )
        )
    return states
