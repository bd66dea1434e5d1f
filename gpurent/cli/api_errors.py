"""The library API's refusals as the command line's usage errors, naming its own options."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import typer

from gpurent.api.errors import ApiError, NoWarehouse, WarehouseBusy
from gpurent.cli.errors import refuse

# The API's argument names -> this command line's option or argument names.
OPTION_OF = {
    "gpu": "--gpu",
    "provider": "--provider",
    "currency": "--currency",
    "offer_key": "OFFER_KEY",
}


@contextmanager
def as_usage_errors(**renamed: str) -> Iterator[None]:
    """Raise the API's refusals as ``typer.BadParameter`` (one line, exit 2); ``renamed``
    overrides a hint (``provider="PROVIDER"`` where the provider is an argument)."""
    try:
        yield
    except NoWarehouse as exc:
        refuse(str(exc))
    except WarehouseBusy:
        raise  # not a usage error: said in one line by the front door (gpurent.cli.errors)
    except ApiError as exc:
        hint = renamed.get(exc.argument or "") or OPTION_OF.get(exc.argument or "")
        raise typer.BadParameter(str(exc), param_hint=hint) from exc
