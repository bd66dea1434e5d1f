"""The DuckDB warehouse: schema, migrations, idempotent loads of feeds, latest-state views.

Modules: ``db`` (connect), ``migrations``, ``feed`` (Polars validation of a feed), ``load``
(one transaction per provider run), ``queries`` (read side), ``fx`` (dated FX rates).
Imports nothing from ``spiders`` or ``flows`` (ARCHITECTURE section 1).
"""
