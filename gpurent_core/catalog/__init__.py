"""The GPU catalog: reference specs for every GPU SKU gpurent knows (``gpus.csv``).

Every layer that needs GPU facts (canonical names, VRAM, bandwidth, form factor)
imports them from here, so there is one table to correct.
"""

from __future__ import annotations

from gpurent_core.catalog.gpus import (
    CSV_COLUMNS,
    FORM_FACTORS,
    SEGMENTS,
    Catalog,
    CatalogError,
    GpuSku,
    get_catalog,
    load_catalog,
    parse_catalog,
    sku_as_dict,
)

__all__ = [
    "CSV_COLUMNS",
    "FORM_FACTORS",
    "SEGMENTS",
    "Catalog",
    "CatalogError",
    "GpuSku",
    "get_catalog",
    "load_catalog",
    "parse_catalog",
    "sku_as_dict",
]
