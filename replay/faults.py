"""Faults: ways to spoil an answer (error status, Retry-After, delay, truncated body).

The same `Fault` type serves runtime faults (added by a test or the command line)
and the `fault` object of a recorded route, so both are applied by one code path.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, fields

# Path value of a runtime fault that matches every path of its provider.
ANY_PATH = "*"


@dataclass(frozen=True)
class Fault:
    """Spoil the answers to requests for `provider` + `path` (+ `method` when given).

    `path` is matched exactly against the request path after the provider segment
    (query string excluded); `"*"` matches every path of the provider.
    """

    provider: str
    path: str
    method: str | None = None
    status: int | None = None
    """Answer with this status (and a small JSON error body when >= 400)."""
    retry_after: int | None = None
    """Seconds to put in a Retry-After header."""
    delay_s: float | None = None
    """Sleep this long before answering, so clients can hit their timeouts."""
    truncate_at: int | None = None
    """Announce the full Content-Length but send only this many bytes, then close."""
    times: int | None = None
    """Apply only to the first N matching requests, then answer normally."""

    def __post_init__(self) -> None:
        # Fail when the fault is made (CLI, test, recording), not mid-request.
        if self.status is not None and not 100 <= self.status <= 599:
            raise ValueError(f"fault status must be 100..599, got {self.status}")
        for name in ("retry_after", "truncate_at"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ValueError(f"fault {name} must be >= 0, got {value}")
        if self.delay_s is not None and self.delay_s < 0:
            raise ValueError(f"fault delay_s must be >= 0, got {self.delay_s}")
        if self.times is not None and self.times < 1:
            raise ValueError(f"fault times must be >= 1, got {self.times}")

    def applies_to(self, provider: str, path: str, method: str) -> bool:
        return (
            self.provider == provider
            and self.path in (ANY_PATH, path)
            and (self.method is None or self.method.upper() == method.upper())
        )


# Option names accepted in the `key=value` part of a fault spec, with their types.
_SPEC_TYPES: dict[str, type] = {
    "method": str,
    "status": int,
    "retry_after": int,
    "delay_s": float,
    "truncate_at": int,
    "times": int,
}


def parse_fault_spec(spec: str) -> Fault:
    """Parse `PROVIDER:PATH:key=value,...` (the command-line form) into a Fault.

    Example: `vastai:/api/v0/bundles/:status=429,retry_after=5,times=1`.
    Keys: method, status, retry_after, delay_s, truncate_at, times.
    """
    parts = spec.split(":", 2)
    if len(parts) < 2 or not parts[0] or not parts[1]:
        raise ValueError(f"fault {spec!r}: expected PROVIDER:PATH[:key=value,...]")
    provider, path = parts[0], parts[1]
    if path != ANY_PATH and not path.startswith("/"):
        raise ValueError(f"fault {spec!r}: PATH must start with '/' or be '*'")
    options: dict[str, object] = {}
    if len(parts) == 3 and parts[2]:
        for item in parts[2].split(","):
            key, sep, raw = item.partition("=")
            key = key.strip()
            if not sep or key not in _SPEC_TYPES:
                known = ", ".join(_SPEC_TYPES)
                raise ValueError(f"fault {spec!r}: bad option {item!r} (known: {known})")
            try:
                options[key] = _SPEC_TYPES[key](raw.strip())
            except ValueError as exc:
                raise ValueError(f"fault {spec!r}: bad value for {key}: {raw!r}") from exc
    return Fault(provider, path, **options)  # type: ignore[arg-type]


def format_fault_spec(fault: Fault) -> str:
    """The command-line form of a fault (inverse of parse_fault_spec), for display."""
    options = ",".join(
        f"{name}={getattr(fault, name)}" for name in _SPEC_TYPES if getattr(fault, name) is not None
    )
    return f"{fault.provider}:{fault.path}" + (f":{options}" if options else "")


def fault_from_mapping(provider: str, path: str, data: dict[str, object]) -> Fault:
    """Build a Fault from a JSON object (a route's `fault`, or the control endpoint)."""
    allowed = {f.name for f in fields(Fault)} - {"provider", "path"}
    unknown = set(data) - allowed
    if unknown:
        raise ValueError(f"unknown fault keys {sorted(unknown)} (allowed: {sorted(allowed)})")
    for key, value in data.items():
        expected: tuple[type, ...] = {
            "method": (str,),
            "delay_s": (int, float),
        }.get(key, (int,))
        if value is not None and (isinstance(value, bool) or not isinstance(value, expected)):
            raise ValueError(f"fault {key} must be {'/'.join(t.__name__ for t in expected)}")
    return Fault(provider, path, **data)  # type: ignore[arg-type]


class FaultCounter:
    """Counts how often each fault fired, so `times` can run out. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fired: dict[object, int] = {}

    def take(self, key: object, fault: Fault) -> bool:
        """Return True (and count one use) if the fault keyed by `key` may still fire."""
        with self._lock:
            used = self._fired.get(key, 0)
            if fault.times is not None and used >= fault.times:
                return False
            self._fired[key] = used + 1
            return True

    def reset(self) -> None:
        with self._lock:
            self._fired.clear()
