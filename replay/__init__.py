"""replay: a local HTTP server that serves recorded provider responses.

Spiders and tests point at `ReplayServer(...).base_url(provider)` instead of the
internet; scenes script changes between polls, faults spoil answers on purpose.
"""

from __future__ import annotations

from replay.faults import Fault, format_fault_spec, parse_fault_spec
from replay.loader import (
    RecordingError,
    copy_default_scene,
    default_root,
    load_recordings,
    provider_recordings,
    validate_recordings,
)
from replay.server import RecordedRequest, ReplayServer

__all__ = [
    "Fault",
    "RecordedRequest",
    "RecordingError",
    "ReplayServer",
    "copy_default_scene",
    "default_root",
    "format_fault_spec",
    "load_recordings",
    "parse_fault_spec",
    "provider_recordings",
    "validate_recordings",
]
