"""What the flows know about providers: the registry in gpurent_core.providers."""

from __future__ import annotations

from gpurent_core.providers import BY_NAME, ProviderInfo

__all__ = ["ProviderInfo", "check_names", "provider_infos", "provider_names"]


def provider_infos() -> dict[str, ProviderInfo]:
    """Every provider by name, sorted (gpurent_core.providers: the one list)."""
    return dict(sorted(BY_NAME.items()))


def provider_names() -> list[str]:
    return list(provider_infos())


def check_names(names: list[str]) -> list[str]:
    """Validate user-given provider names; raises ValueError naming the known ones."""
    known = provider_infos()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown provider(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return names
