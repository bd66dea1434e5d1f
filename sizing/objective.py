"""How fitting offers are ranked: a plain enum of its own, so that `gpurent size --help`
can list the choices without loading the cost engine."""

from __future__ import annotations

from enum import StrEnum


class Objective(StrEnum):
    """How fitting offers are ranked."""

    MONTHLY = "monthly"
    """Cheapest true monthly cost (always-on deployments)."""
    HOURLY = "hourly"
    """Cheapest true hourly cost (short jobs)."""
    PER_TOKEN = "per-token"
    """Cheapest cost per million generated tokens (throughput work)."""
