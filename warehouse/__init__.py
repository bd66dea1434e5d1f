"""The DuckDB warehouse: schema, migrations, idempotent loads of feeds, latest-state views.

Modules: ``db`` (connect), ``migrations``, ``feed`` (Polars validation of a feed), ``load``
(one transaction per provider run), ``history`` (offer versions: history that grows with
change, not with polls), ``queries`` (read side), ``snapshots`` (past states: what a run
saw, what was listed at a time), ``index`` and ``index_v2`` (the daily price index, methods
gpi-1, gpi-2 and gpi-3), ``trends`` (history per offer, day, poll and hour of week; rental heat),
``fx`` (dated FX rates).
Imports nothing from ``spiders`` or ``flows`` (ARCHITECTURE section 1).
"""
