"""The read side: latest state, provider health, quarantine, as Polars frames via Arrow.

Money comes back as Decimal (Polars Decimal columns, Python Decimal scalars), never float;
times are UTC. The latest state is "latest good run per provider" (views.sql, rule 4).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import duckdb

from gpurent_core.enums import PriceKind, StockStatus
from gpurent_core.host import HostFilter, version_tuple
from warehouse.db import query_frame
from warehouse.fx import fx_rate_on, upsert_fx_rate

if TYPE_CHECKING:
    # Polars loads with the first frame (warehouse.db.query_frame), not with this module:
    # `cheapest` reads rows through DuckDB alone and never pays for it.
    import polars as pl

__all__ = [
    "fx_rate_on",
    "known_providers",
    "latest_offer_conditions",
    "latest_offers",
    "problem_of",
    "provider_status",
    "quarantine_problems",
    "quarantine_rows",
    "recent_offer_counts",
    "upsert_fx_rate",
]

_RUN_ORDER = "started_at DESC, finished_at DESC, run_id DESC"
_RENTABLE = [status.value for status in StockStatus if status.rentable]


def frame(
    con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None
) -> pl.DataFrame:
    """Run a read query and hand its result to Polars through Arrow."""
    return query_frame(con, sql, params)


def provider_status(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """One row per provider ever run.

    Columns: provider; last_run_id, last_status, last_run_started_at, last_run_at (its
    finished_at), last_message, last_offers, last_quarantined, last_http_errors,
    last_skipped (JSON: items skipped by kind, NULL when none) (the last run, any status);
    last_good_run_id, last_good_at (finished_at), last_good_offers (the
    run the latest state comes from; null when the provider never had a good run);
    stale_offers, oldest_shown_at (of the offers still shown, how many the latest look did
    not confirm, and when the oldest of them was last seen: after a partial run the rows it
    kept are older than the run itself; 0 and null when none).
    """
    return frame(
        con,
        """
        SELECT
            l.provider,
            l.run_id      AS last_run_id,
            l.status      AS last_status,
            l.started_at  AS last_run_started_at,
            l.finished_at AS last_run_at,
            l.message     AS last_message,
            l.offers      AS last_offers,
            l.quarantined AS last_quarantined,
            l.http_errors AS last_http_errors,
            l.skipped     AS last_skipped,
            g.run_id      AS last_good_run_id,
            g.finished_at AS last_good_at,
            g.offers      AS last_good_offers,
            coalesce(s.stale_offers, 0) AS stale_offers,
            s.oldest_shown_at
        FROM last_runs AS l
        LEFT JOIN latest_runs AS g ON g.provider = l.provider
        LEFT JOIN (
            SELECT provider,
                   count(*) AS stale_offers,
                   min(coalesce(last_seen_at, run_observed_at)) AS oldest_shown_at
            FROM current_offer_rows
            WHERE stale
            GROUP BY provider
        ) AS s ON s.provider = l.provider
        ORDER BY l.provider
        """,
    )


def latest_offers(
    con: duckdb.DuckDBPyConnection,
    *,
    gpu_model: str | None = None,
    min_vram_gb: int | None = None,
    provider: str | None = None,
    in_stock_only: bool = False,
    gpu_vram_gb: int | None = None,
    confirmed_only: bool = False,
    gpu_form_factor: str | None = None,
    host: HostFilter | None = None,
    spot: bool | None = None,
) -> pl.DataFrame:
    """The offers of each provider's latest good run, with their fees and plans.

    Columns: run_id, provider, offer_key, observed_at (when the latest good run that saw
    the offer observed it), the offer's fields (as in the feed), ``run_finished_at``, ``age_s`` (seconds since
    observed_at), ``fees`` (list of structs: seq, fee_type, amount, currency, unit, basis,
    quantity, included_quantity, mandatory, charged_while_stopped, note; ordered by seq)
    and ``plans`` (list of structs: seq, price, currency, billing_unit, price_basis,
    price_kind), ``stale`` (true for an offer its provider's latest look did not confirm:
    the latest run, being partial, could not see it, or the latest run did not feed the state
    at all (failed, layout_changed...); its last good state, with observed_at / age_s of the
    run that last saw it; rule of truth 11, sql/0017_confirmed_offers.sql).
    Offers without fees or plans get empty lists. ``gpu_vram_gb`` is null when unknown;
    ``min_vram_gb`` never keeps those. ``gpu_model`` matches the
    canonical model case-insensitively; ``gpu_vram_gb`` keeps that exact VRAM (never
    unknown); ``gpu_form_factor`` that form factor (never unknown: an H100 that does not say
    SXM is no SXM answer); ``in_stock_only`` keeps in_stock and low offers (never unknown: unknown is not
    in stock either; ``gpurent_core.cost.stock.rentable`` then checks the free cards);
    ``confirmed_only`` leaves the stale rows out (what is ranked); ``host`` keeps the offers
    whose host attributes meet it (``gpurent_core.host.HostFilter``; an attribute not
    published never matches); ``spot`` False leaves spot (interruptible) headline prices
    out, True keeps only them (None: every kind). The host attributes (``gpurent_core.host.HOST_FIELDS``) are
    the last columns. Ordered by provider, gpu_model, offer_key.
    """
    condition, params = latest_offer_conditions(
        gpu_model=gpu_model,
        min_vram_gb=min_vram_gb,
        provider=provider,
        in_stock_only=in_stock_only,
        gpu_vram_gb=gpu_vram_gb,
        confirmed_only=confirmed_only,
        gpu_form_factor=gpu_form_factor,
        host=host,
        spot=spot,
    )
    # The view reads current_offers: the cost does not grow with history.
    return frame(
        con,
        f"SELECT * FROM latest_offers AS o {condition}"
        " ORDER BY o.provider, o.gpu_model, o.offer_key",
        params,
    )


def latest_offer_conditions(
    *,
    gpu_model: str | None = None,
    min_vram_gb: int | None = None,
    provider: str | None = None,
    in_stock_only: bool = False,
    gpu_vram_gb: int | None = None,
    confirmed_only: bool = False,
    gpu_form_factor: str | None = None,
    host: HostFilter | None = None,
    host_unpublished: bool = False,
    spot: bool | None = None,
) -> tuple[str, list[Any]]:
    """The ``WHERE`` clause (``''`` when there is no filter) and its ``?`` parameters of
    ``latest_offers``' filters, over the view aliased ``o`` (or ``current_offer_rows``, which
    has the same filtered columns): one definition for every reader that filters the latest
    state the same way (``warehouse.ranking``).

    ``host_unpublished`` turns the host filter round: the offers it leaves out only for not
    publishing a filtered attribute (each published one meets it, one at least is NULL)."""
    where: list[str] = []
    params: list[Any] = []
    if gpu_model is not None:
        where.append("lower(o.gpu_model) = lower(?)")
        params.append(gpu_model)
    if min_vram_gb is not None:
        # Unknown VRAM (NULL) never counts as fitting: the card may be the small variant.
        where.append("o.gpu_vram_gb IS NOT NULL AND o.gpu_vram_gb >= ?")
        params.append(min_vram_gb)
    if gpu_vram_gb is not None:
        where.append("o.gpu_vram_gb = ?")
        params.append(gpu_vram_gb)
    if gpu_form_factor is not None:
        # Unknown (NULL) never matches: it may be the other form factor.
        where.append("lower(o.gpu_form_factor) = lower(?)")
        params.append(gpu_form_factor)
    if provider is not None:
        where.append("o.provider = ?")
        params.append(provider)
    if in_stock_only:
        where.append("list_contains(?, o.status)")
        params.append(_RENTABLE)
    if confirmed_only:
        # Rule of truth 11: only what the provider's latest look confirmed is ranked.
        where.append("NOT o.stale")
    if spot is not None:
        where.append("o.price_kind = ?" if spot else "o.price_kind <> ?")
        params.append(PriceKind.SPOT.value)
    if host is not None and host.active:
        checks, host_params = host_conditions(host)
        if host_unpublished:
            where.extend(f"(o.{column} IS NULL OR {check})" for column, check in checks)
            where.append("(" + " OR ".join(f"o.{column} IS NULL" for column, _ in checks) + ")")
        else:
            where.extend(check for _, check in checks)
        params.extend(host_params)
    return (f"WHERE {' AND '.join(where)}" if where else ""), params


# A CUDA version as numbers, three parts (12.4 -> [12, 4, 0]): lists compare part by part.
def _cuda_parts(column: str) -> str:
    return f"list_resize(list_transform(string_split({column}, '.'), lambda x: x::INTEGER), 3, 0)"


def host_conditions(host: HostFilter) -> tuple[list[tuple[str, str]], list[Any]]:
    """(column, SQL condition over ``o``) per filtered host attribute (each false or NULL
    where the offer does not publish it), and their ``?`` parameters in order."""
    checks: list[tuple[str, str]] = []
    params: list[Any] = []
    if host.min_cuda is not None:
        checks.append(("cuda_version", f"{_cuda_parts('o.cuda_version')} >= ?::INTEGER[]"))
        params.append(list((*version_tuple(host.min_cuda), 0, 0)[:3]))
    if host.interconnect is not None:
        checks.append(("interconnect", "list_contains(?, o.interconnect)"))
        params.append(list(host.accepted_interconnects()))
    if host.min_reliability is not None:
        checks.append(("host_reliability", "o.host_reliability >= ?"))
        params.append(host.min_reliability)
    if host.hosting is not None:
        checks.append(("hosting", "list_contains(?, o.hosting)"))
        params.append(list(host.accepted_hosting()))
    if host.min_vcpus_per_gpu is not None:
        checks.append(("vcpus_per_gpu", "o.vcpus_per_gpu >= ?"))
        params.append(host.min_vcpus_per_gpu)
    if host.min_ram_gb_per_gpu is not None:
        checks.append(("ram_gb_per_gpu", "o.ram_gb_per_gpu >= ?"))
        params.append(host.min_ram_gb_per_gpu)
    return checks, params


def recent_offer_counts(con: duckdb.DuckDBPyConnection, provider: str, limit: int = 5) -> list[int]:
    """How many offers the provider's listing held at each of its last ``limit`` ok or
    partial runs with offers, newest first (parse health: "far fewer than usual").

    A run's listing is what it stored plus what it kept without reading (stale at its place
    in the history): a partial run that read 4 of 11 offers kept 11, so a row of partial
    runs never wears the usual count down to 4, and a listing cut short after them is still
    far fewer than usual. ``auth_required`` runs read another, public source (AutoDL's
    price table), not the listing: they do not count."""
    rows = con.execute(
        f"""
        SELECT r.offers + (
            SELECT count(DISTINCT sp.offer_key)
            FROM stale_spans AS sp
            WHERE sp.provider = r.provider
                AND sp.stale_from <= r.history_at
                AND coalesce(sp.stale_to, 'infinity'::TIMESTAMPTZ) > r.history_at
        )
        FROM good_runs AS r
        WHERE r.provider = ? AND r.status IN ('ok', 'partial')
        ORDER BY {_RUN_ORDER} LIMIT ?""",
        [provider, limit],
    ).fetchall()
    return [int(listed) for (listed,) in rows]


def quarantine_rows(
    con: duckdb.DuckDBPyConnection,
    *,
    provider: str | None = None,
    run_id: str | None = None,
    limit: int | None = 100,
) -> pl.DataFrame:
    """Quarantine rows, newest run first, then in feed order (``limit=None``: all).

    Columns: the ``quarantine`` columns plus run_status and run_started_at.
    """
    where: list[str] = []
    params: list[Any] = []
    if provider is not None:
        where.append("q.provider = ?")
        params.append(provider)
    if run_id is not None:
        where.append("q.run_id = ?")
        params.append(run_id)
    condition = f"WHERE {' AND '.join(where)}" if where else ""
    tail = ""
    if limit is not None:
        tail = "LIMIT ?"
        params.append(limit)
    return frame(
        con,
        f"""
        SELECT q.*, r.status AS run_status, r.started_at AS run_started_at
        FROM quarantine AS q
        JOIN crawl_runs AS r ON r.run_id = q.run_id AND r.provider = q.provider
        {condition}
        ORDER BY r.started_at DESC, q.run_id DESC, q.provider, q.seq
        {tail}
        """,
        params,
    )


def known_providers(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Providers the warehouse has any run of, sorted."""
    rows = con.execute("SELECT DISTINCT provider FROM crawl_runs ORDER BY provider").fetchall()
    return [str(name) for (name,) in rows]


# The per-item value in a quarantine reason: a quoted text, or a bare value after the last
# colon (a number, {}, [], None, Decimal('1E+400')).
_QUOTED = re.compile(r"'[^']*'")
_LEADING_VALUE = re.compile(r"^'…':\s*")
_TRAILING_VALUE = re.compile(
    r":\s*(?:'…'|Decimal\('…'\)|-?\d[\d.,]*(?:E[+-]?\d+)?|\{\}|\[\]|None|True|False)$",
    re.IGNORECASE,
)


def problem_of(reason: str) -> str:
    """A quarantine reason without its per-item value, so that the same problem met by many
    items reads the same: ``price_unparsed: '面议': no number in price text`` ->
    ``price_unparsed: no number in price text``; ``invalid_value: free count cannot be
    negative: -1`` -> ``invalid_value: free count cannot be negative``."""
    code, sep, text = reason.partition(": ")
    if not sep:
        return reason
    text = _QUOTED.sub("'…'", text)
    text = _LEADING_VALUE.sub("", text)
    text = _TRAILING_VALUE.sub("", text)
    return f"{code}: {text}" if text else code


def quarantine_problems(
    con: duckdb.DuckDBPyConnection, *, provider: str | None = None
) -> list[dict[str, Any]]:
    """Each distinct quarantine problem once: provider, problem (``problem_of``), count
    (quarantined items, all runs), last_seen (the latest observation). Most recent first."""
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for row in quarantine_rows(con, provider=provider, limit=None).iter_rows(named=True):
        key = (row["provider"], problem_of(row["reason"]))
        seen = row["observed_at"] or row["run_started_at"]
        group = groups.setdefault(
            key, {"provider": key[0], "problem": key[1], "count": 0, "last_seen": seen}
        )
        group["count"] += 1
        if seen is not None and (group["last_seen"] is None or seen > group["last_seen"]):
            group["last_seen"] = seen
    return sorted(
        groups.values(),
        key=lambda g: (-(g["last_seen"].timestamp() if g["last_seen"] else 0), g["provider"]),
    )
