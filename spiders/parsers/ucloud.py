"""The UCloud API envelope (UCloud UHost and 优云智算 Compshare): signed parameters, RetCode.

Every call is one request to the API host carrying `Action`, the action's parameters,
`PublicKey` and `Signature` (UCloud docs, summary/signature.md):

1. sort the parameters (PublicKey included, Signature excluded) by name;
2. concatenate name and value of each, with no separator and no URL escaping;
3. append the private key;
4. `Signature` is the lower-case hex SHA1 of that string.

Values are written as the API reads them: booleans `true`/`false`, numbers without
exponent and without a zero fraction (42.0 is `42`). Nested parameters travel flat
(`Disks.0.IsBoot`), as the docs name them. The body we send holds exactly the strings we
signed, so the gateway cannot re-encode a value differently from the signature (a
Python `True` sent as "True" but signed as "true" is the classic RetCode 171).

Answers are `{"RetCode": 0, "Action": "<Action>Response", ...}`; a non-zero RetCode comes
with `Message`. The private key only ever enters `signature()`: never a log, never a body.

Both providers' instance-types answers (`AvailableInstanceTypes[]`: `Zone`, `Name`,
`Status`, `GraphicsMemory.Value`, `MachineSizes[]`, `Disks[]`) are read here the same way,
each type into the provider's own listing (`read_instance_types`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from functools import partial
from typing import Any, Generic, Protocol, TypeVar

from spiders.parsers.common import (
    INVALID_VALUE,
    FieldProblem,
    ParseContext,
    Record,
    require,
    to_int,
)
from spiders.parsers.contract import Contract, apply_check, check_items, contracted
from spiders.parsers.envelope import (
    ApiPage,
    EnvelopeProblem,
    is_code_in,
    message_of,
    shown_code,
)

ParamValue = str | int | bool | Decimal

SIGNATURE_ERROR = 171
"""RetCode 171 "Signature VerifyAC Error": wrong private key (or a badly signed request)."""
USER_NOT_EXISTS = 172
"""RetCode 172 "User Not Exists": the public key belongs to no account."""
AUTH_RETCODES = frozenset({SIGNATURE_ERROR, USER_NOT_EXISTS})


def encode_value(value: ParamValue) -> str:
    """A parameter value as UCloud signs it (and as we send it)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise ValueError(f"cannot sign a non-finite number: {value}")
        # 42.0 -> "42", 4.50 -> "4.5", never "4.2E+1".
        if value == value.to_integral_value():
            return str(int(value))
        return format(value.normalize(), "f")
    if isinstance(value, str):
        return value
    raise TypeError(f"cannot sign a {type(value).__name__} parameter")


def signature(params: Mapping[str, ParamValue], private_key: str) -> str:
    """UCloud's request signature: SHA1 hex of sorted name+value pairs, then the private key."""
    text = "".join(f"{name}{encode_value(params[name])}" for name in sorted(params))
    return hashlib.sha1((text + private_key).encode("utf-8")).hexdigest()


def signed_params(
    params: Mapping[str, ParamValue], *, public_key: str, private_key: str
) -> dict[str, str]:
    """The request body: every value as its signed string, plus PublicKey and Signature."""
    if "Signature" in params or "PublicKey" in params:
        raise ValueError("params must not carry PublicKey or Signature themselves")
    body = {name: encode_value(value) for name, value in params.items()}
    body["PublicKey"] = public_key
    body["Signature"] = signature(body, private_key)
    return body


@dataclass(frozen=True)
class Envelope:
    """What the UCloud envelope of an answer says, before the action's own fields."""

    ok: bool
    auth_rejected: bool = False
    error: str | None = None
    """Set for a non-zero RetCode, or for an answer that is not a UCloud envelope."""
    not_an_envelope: bool = False


def read_envelope(data: Any) -> Envelope:
    if not isinstance(data, dict) or "RetCode" not in data:
        return Envelope(ok=False, error="no RetCode in the answer", not_an_envelope=True)
    code = data.get("RetCode")
    if not isinstance(code, int) or isinstance(code, bool):
        # RetCode is a number; `[]`, `{}`, "0" or true say neither success nor error.
        error = f"RetCode is not a number: {shown_code(code)}"
        return Envelope(ok=False, error=error, not_an_envelope=True)
    if code == 0:
        return Envelope(ok=True)
    error = f"RetCode {code}: {message_of(data, 'Message')}"
    return Envelope(ok=False, auth_rejected=is_code_in(code, AUTH_RETCODES), error=error)


def envelope_problem(data: Any) -> EnvelopeProblem | None:
    """None for a RetCode 0 answer; else why it holds no data (for the action's page)."""
    envelope = read_envelope(data)
    if envelope.not_an_envelope:
        return EnvelopeProblem(layout_error=f"no UCloud envelope in the answer: {envelope.error}")
    if envelope.auth_rejected:
        return EnvelopeProblem(auth_rejected=True)
    if not envelope.ok:
        return EnvelopeProblem(api_error=envelope.error)
    return None


def type_offer_key(item: Mapping[str, Any]) -> str | None:
    """The offer key of an instance type, ``<Zone>/<Name>`` from the stripped texts (as its
    listing spells it), so a line set aside for the type keeps that very offer; None when
    either is missing."""
    zone, name = item.get("Zone"), item.get("Name")
    if not (isinstance(zone, str) and isinstance(name, str) and zone.strip() and name.strip()):
        return None
    return f"{zone.strip()}/{name.strip()}"


# -- the instance types -------------------------------------------------------------------

MAX_VRAM_GB = 1024
"""No card has a terabyte of memory: a GraphicsMemory above is a bad cell."""
DEFAULT_BOOT_DISK_TYPE = "CLOUD_SSD"
"""The system disk class priced when a type lists none."""


class Listing(Protocol):
    """A GPU type on sale in one zone, as a provider's parser lists it."""

    @property
    def zone(self) -> str: ...

    @property
    def offer_key(self) -> str: ...


L = TypeVar("L", bound=Listing)


@dataclass
class TypesPage(ApiPage, Generic[L]):
    listings: list[L] = field(default_factory=list)

    def zones(self) -> list[str]:
        return list(dict.fromkeys(listing.zone for listing in self.listings))


def read_instance_types(
    data: Any,
    ctx: ParseContext,
    contract: Contract,
    listing: Callable[[dict[str, Any], TypesPage[L]], L | None],
) -> TypesPage[L]:
    """The listings of an instance-types answer, each type read by ``listing`` (None: not
    listed, with a note; `Skip` for no public GPU offer). A type that cannot be read is
    quarantined under its offer key and costs that type only."""
    problem = envelope_problem(data)
    if problem is not None:
        return TypesPage.unanswered(problem)
    items = data.get("AvailableInstanceTypes")
    if not isinstance(items, list):
        return TypesPage(layout_error="no 'AvailableInstanceTypes' list in a RetCode 0 answer")
    page: TypesPage[L] = TypesPage()

    def add(item: dict[str, Any]) -> list[Record]:
        found = listing(item, page)
        if found is None:
            return []
        if any(known.offer_key == found.offer_key for known in page.listings):
            page.notes.append(f"{found.offer_key}: listed twice, first kept")
        else:
            page.listings.append(found)
        return []

    for item in items:
        page.records.extend(
            contracted(ctx, item, contract, offer_key=type_offer_key, build=partial(add, item))
        )
    apply_check(page, check_items(items, contract))
    return page


def text_field(item: Mapping[str, Any], key: str) -> str:
    """`item[key]` as stripped text: missing when null or blank, refused when not text."""
    value = require(item, key)
    if not isinstance(value, str):
        raise FieldProblem(INVALID_VALUE, key, f"{key} is not text: {value!r}"[:120])
    return value.strip()


def graphics_memory_gb(item: Mapping[str, Any]) -> int | None:
    """GB per card (`GraphicsMemory.Value`); None when the type does not say."""
    memory = item.get("GraphicsMemory")
    if not isinstance(memory, dict) or memory.get("Value") is None:
        return None
    value = to_int(memory["Value"], "GraphicsMemory")
    if not 0 < value <= MAX_VRAM_GB:
        shown = value if value <= MAX_VRAM_GB else f"over {MAX_VRAM_GB}"
        raise FieldProblem(INVALID_VALUE, "GraphicsMemory", f"GraphicsMemory.Value is {shown}")
    return value


def boot_disk_type(item: Mapping[str, Any]) -> str:
    """The first boot disk class the type lists (`Disks[].BootDisk[].Name`)."""
    for disk_class in side_list(item.get("Disks")):
        if not isinstance(disk_class, dict):
            continue
        for boot in side_list(disk_class.get("BootDisk")):
            if isinstance(boot, dict) and isinstance(boot.get("Name"), str) and boot["Name"]:
                return str(boot["Name"])
    return DEFAULT_BOOT_DISK_TYPE


def side_list(value: Any) -> list[Any]:
    """A side list (sizes, disk classes): one that is not a list describes nothing."""
    return value if isinstance(value, list) else []
