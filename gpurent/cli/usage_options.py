"""The usage options (hours a month, storage, egress, sessions, boot time), declared once.

``@usage_options`` gives a command the five options and hands it one ``usage``
(``gpurent_core.costing.UsageProfile``) made by ``gpurent.api.profile``, the same path the
dashboard and programs take. The defaults are the profile's own. The command sets the card
count itself (``cheapest --gpus``; ``size`` per placement).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from decimal import Decimal
from typing import Annotated, Any, TypeVar

import typer

from gpurent.api.errors import BadUsage
from gpurent.api.profile import (
    DEFAULT_BOOT_MINUTES,
    DEFAULT_EGRESS_GB,
    DEFAULT_HOURS_PER_MONTH,
    DEFAULT_STORAGE_GB,
    usage,
)

F = TypeVar("F", bound=Callable[..., Any])

_OPTIONS: tuple[tuple[str, Any, Any], ...] = (
    (
        "hours_per_month",
        Annotated[
            Decimal,
            typer.Option(
                "--hours-per-month",
                min=0,
                help=f"Hours you run the card a month ({DEFAULT_HOURS_PER_MONTH} = always on).",
            ),
        ],
        DEFAULT_HOURS_PER_MONTH,
    ),
    (
        "storage_gb",
        Annotated[
            Decimal,
            typer.Option(
                "--storage-gb",
                min=0,
                help="Storage you keep, GB: paid on every provider, the cheapest way it sells "
                "storage beyond what it includes.",
            ),
        ],
        DEFAULT_STORAGE_GB,
    ),
    (
        "egress_gb",
        Annotated[
            Decimal, typer.Option("--egress-gb", min=0, help="Outbound traffic a month, GB.")
        ],
        DEFAULT_EGRESS_GB,
    ),
    (
        "session_hours",
        Annotated[
            Decimal | None,
            typer.Option(
                "--session-hours",
                min=0,
                help="Length of one session, start to stop, in hours. Each session is billed "
                "by the provider's rules: rounded up to its billing granularity, at least its "
                "minimum rental (see `gpurent providers --details`). Default: the month's "
                "hours in one go.",
                show_default=False,
            ),
        ],
        None,
    ),
    (
        "boot_minutes",
        Annotated[
            Decimal,
            typer.Option(
                "--boot-minutes",
                min=0,
                help="Minutes from power-on to ready, paid each session where billing starts "
                "at power-on.",
            ),
        ],
        DEFAULT_BOOT_MINUTES,
    ),
)
OPTION_NAMES = tuple(name for name, _, _ in _OPTIONS)


def usage_options(command: F) -> F:
    """Add the usage options to ``command``, which takes ``usage: UsageProfile`` instead."""
    signature = inspect.signature(command)
    # Typer reads the annotations; ``usage`` itself is never evaluated, so a command can
    # name UsageProfile under TYPE_CHECKING (the engine stays out of start-up).
    own = [
        p.replace(annotation=eval(p.annotation, command.__globals__))
        if isinstance(p.annotation, str)
        else p
        for p in signature.parameters.values()
        if p.name != "usage"
    ]
    added = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=kind, default=default)
        for name, kind, default in _OPTIONS
    ]

    @functools.wraps(command)
    def with_usage(*args: Any, **kwargs: Any) -> Any:
        numbers = {name: kwargs.pop(name) for name in OPTION_NAMES if name in kwargs}
        try:
            profile = usage(**numbers)
        except BadUsage as exc:
            raise typer.BadParameter(str(exc)) from exc
        return command(*args, **kwargs, usage=profile)

    parameters = [*own, *added]
    with_usage.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    # Typer also reads the annotations: the evaluated ones, without ``usage``.
    with_usage.__annotations__ = {p.name: p.annotation for p in parameters} | {
        "return": signature.return_annotation
    }
    return with_usage  # type: ignore[return-value]
