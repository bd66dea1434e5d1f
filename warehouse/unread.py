"""Which offers a run's absence closes, and which it keeps (rules of truth 10 and 11).

A listing that arrived whole is the truth for what it no longer lists: an offer a good run
does not list is closed. Only offers whose source the run could not read keep their last
state, marked stale: those named by the run's unread keys and key prefixes (a failed page
or request, an item whose identity is known but the rest is not; ``""`` is every offer),
and the keys of the feed's own quarantine lines. Under a ``sold_out_unlisted`` prefix the
provider lists only what has capacity, so an offer it stopped listing there is sold out in
its own words: its version changes to ``sold_out`` instead of closing.

The weaves (warehouse.history, warehouse.history_late) stage the run's unread set once
(``stage``) and test offers against it with ``kept`` and ``sold_out``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import duckdb

from gpurent_core.model import ProviderRun

UNREAD_TABLE = "_gpurent_unread"


@dataclass(frozen=True)
class Unread:
    """What a run could not read, and where its absence means sold out."""

    keys: tuple[str, ...] = ()
    prefixes: tuple[str, ...] = ()
    sold_out_unlisted: tuple[str, ...] = ()

    @classmethod
    def of_run(cls, run: ProviderRun) -> Unread:
        return cls(run.unread_keys, run.unread_prefixes, run.sold_out_unlisted)

    def stage(self, con: duckdb.DuckDBPyConnection, quarantined: Iterable[str | None]) -> None:
        """Write the unread set (with the keys of ``quarantined`` feed lines) to
        UNREAD_TABLE: ``key`` (an offer key or a prefix), ``prefix``, ``sold_out``."""
        rows = {(k, False, False) for k in self.keys}
        rows |= {(k, False, False) for k in quarantined if k}
        rows |= {(p, True, False) for p in self.prefixes}
        rows |= {(p, True, True) for p in self.sold_out_unlisted}
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE {UNREAD_TABLE}"
            " (key VARCHAR NOT NULL, prefix BOOLEAN NOT NULL, sold_out BOOLEAN NOT NULL)"
        )
        if rows:
            con.executemany(f"INSERT INTO {UNREAD_TABLE} VALUES (?, ?, ?)", sorted(rows))


def _matching(alias: str, sold_out: bool) -> str:
    # Keys by equality (a hash join, however many), prefixes one by one (they are few).
    rows = f"FROM {UNREAD_TABLE} AS u WHERE u.sold_out = {str(sold_out).lower()}"
    return (
        f"({alias}.offer_key IN (SELECT u.key {rows} AND NOT u.prefix)"
        f" OR EXISTS (SELECT 1 {rows} AND u.prefix AND starts_with({alias}.offer_key, u.key)))"
    )


def kept(alias: str) -> str:
    """SQL: the offer ``alias`` (a row with ``offer_key``) was not read by the run: an
    absence keeps it, stale."""
    return _matching(alias, False)


def sold_out(alias: str) -> str:
    """SQL: the offer ``alias`` lies under a prefix where not listed means sold out."""
    return _matching(alias, True)


def drop_unread(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(f"DROP TABLE IF EXISTS {UNREAD_TABLE}")
