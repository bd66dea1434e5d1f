"""The usage options (hours a month, storage, egress, sessions, boot time), declared once.

``@usage_options`` gives a command the five options and hands it one ``usage``
(``gpurent_core.cost.usage.UsageProfile``) made by ``gpurent.api.profile``, the same path the
dashboard and programs take. The defaults are the profile's own. The command sets the card
count itself (``cheapest --gpus``; ``size`` per placement).

Beside them, what every ranked answer shares: ``--include-stale`` (``IncludeStaleOption``) and
``--include-spot`` (``IncludeSpotOption``), and the lines saying how many stale or spot offers
an answer left out (``stale_note``, ``spot_note``).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any, TypeVar

import typer

# Typer carries its own copy of Click: its ParamType is the one Typer's options accept.
from typer import _click as click
from typer._click.types import ParamType

from gpurent.api.errors import BadUsage
from gpurent.api.profile import (
    DEFAULT_BOOT_MINUTES,
    DEFAULT_EGRESS_GB,
    DEFAULT_HOURS_PER_MONTH,
    DEFAULT_STORAGE_GB,
    usage,
)

F = TypeVar("F", bound=Callable[..., Any])


class NonNegativeDecimal(ParamType):
    """Hours, GB or minutes, read exactly (Decimal, never a float) and at least 0.

    Typer before 0.29 has no Decimal options; 0.29 has them through pydantic, at ~80 ms of
    imports in every command's start-up, so the options bring their own Click type."""

    name = "number"
    min = 0
    """The bound, where Click's own range types keep theirs (tests read it there)."""

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> Decimal:
        if isinstance(value, Decimal):
            number = value
        else:
            try:
                number = Decimal(str(value).strip())
            except InvalidOperation:
                self.fail(f"{value!r} is not a number", param, ctx)
        if not number.is_finite() or number < self.min:
            self.fail(f"{value} is not a number >= {self.min}", param, ctx)
        return number


NUMBER = NonNegativeDecimal()

_OPTIONS: tuple[tuple[str, Any, Any], ...] = (
    (
        "hours_per_month",
        Annotated[
            Decimal,
            typer.Option(
                "--hours-per-month",
                click_type=NUMBER,
                help=f"Hours you run the card a month, at most {DEFAULT_HOURS_PER_MONTH} (always on).",
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
                click_type=NUMBER,
                help="Storage you keep, GB: paid on every provider, the cheapest way it sells "
                "storage beyond what it includes.",
            ),
        ],
        DEFAULT_STORAGE_GB,
    ),
    (
        "egress_gb",
        Annotated[
            Decimal,
            typer.Option("--egress-gb", click_type=NUMBER, help="Outbound traffic a month, GB."),
        ],
        DEFAULT_EGRESS_GB,
    ),
    (
        "session_hours",
        Annotated[
            Decimal | None,
            typer.Option(
                "--session-hours",
                click_type=NUMBER,
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
                click_type=NUMBER,
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


# Rule of truth 11: only what the provider's latest run confirmed is ranked, unless asked.
IncludeStaleOption = Annotated[
    bool,
    typer.Option(
        "--include-stale",
        help="Also rank offers their provider's latest run did not confirm (its last good "
        "state, marked stale with its age).",
    ),
]


def stale_note(left_out: int, *, switch: str = "--include-stale") -> str | None:
    """The line under an answer that left stale offers out (None when it left none)."""
    if left_out <= 0:
        return None
    offers = "offer" if left_out == 1 else "offers"
    return (
        f"{left_out} {offers} not confirmed by their provider's latest run left out "
        f"({switch} to add them)"
    )


IncludeSpotOption = Annotated[
    bool,
    typer.Option(
        "--include-spot",
        help="Also rank spot (interruptible, preemptible) offers, their price marked spot.",
    ),
]


def spot_note(left_out: int) -> str | None:
    """The line under a ranking that left spot offers out (None when it left none)."""
    if left_out <= 0:
        return None
    offers = "offer" if left_out == 1 else "offers"
    return f"{left_out} spot {offers} left out: interruptible (--include-spot adds them, marked)"
