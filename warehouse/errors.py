"""Errors the warehouse raises on purpose, so callers (CLI, flows) can say what went wrong."""

from __future__ import annotations


class WarehouseError(Exception):
    """Base class of the warehouse's own errors."""


class WarehouseMissing(WarehouseError):
    """A reader asked for a warehouse file that does not exist (or holds no gpurent schema)."""


class WarehouseLocked(WarehouseError):
    """Another process held the file lock for longer than the retries allowed."""


class MigrationError(WarehouseError):
    """A migration failed; it was rolled back and the schema stays at the previous version."""
