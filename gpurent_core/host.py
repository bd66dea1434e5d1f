"""What a host publishes about itself, and the filters renters ask of it.

The offer record's optional host attributes (``HOST_FIELDS``: CUDA and driver versions,
interconnect, NVLink bandwidth, reliability, hosting, the longest rental, vCPUs, RAM and
disk per GPU) are each None where the provider does not publish them, never guessed.
``HostFilter`` is what ``offers``, ``cheapest``, the library API and the dashboard narrow
on; an offer that does not publish a filtered attribute is left out (and counted).

No pydantic here: a command's ``--help`` reads the filters without loading the models.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from decimal import Decimal

from gpurent_core.enums import Hosting, Interconnect

__all__ = [
    "CUDA_VERSION_PATTERN",
    "HOST_FIELDS",
    "NVLINKED",
    "HostFilter",
    "cuda_version",
    "form_interconnect",
    "version_tuple",
]

HOST_FIELDS = (
    "cuda_version", "driver_version", "interconnect", "nvlink_gbps", "host_reliability",
    "hosting", "max_rental_hours", "vcpus_per_gpu", "ram_gb_per_gpu", "disk_gb_per_gpu",
)  # fmt: skip
"""The offer's optional host attributes, in record order (None: not published)."""

CUDA_VERSION_PATTERN = r"^[0-9]{1,3}(\.[0-9]{1,3}){0,2}$"
"""A CUDA version as records carry it: major[.minor[.patch]], digits only."""

NVLINKED = (Interconnect.NVLINK.value, Interconnect.SXM.value)
"""Interconnects whose cards talk over NVLink: a stated NVLink, or SXM modules (whose
socket carries it). ``--interconnect nvlink`` keeps both."""

_VERSION_IN_TEXT = re.compile(r"(?<![0-9.])([0-9]{1,3})\.([0-9]{1,3})(?:\.([0-9]{1,3}))?(?![0-9])")


def version_tuple(text: str) -> tuple[int, ...]:
    """A CUDA version's parts as numbers ("12.4" -> (12, 4)), compared part by part (so
    12.10 is above 12.9); raises ValueError for anything but major[.minor[.patch]]."""
    if not re.fullmatch(CUDA_VERSION_PATTERN, text.strip()):
        raise ValueError(f"{text!r} is no CUDA version (like 12.4)")
    return tuple(int(part) for part in text.strip().split("."))


def cuda_version(value: object) -> str | None:
    """A published CUDA version in the record's form ("12.4"), from a number (12.4), a text
    ("12.4", "CUDA 12.4", "cuda12.4") or None; None when it holds no version. A float is read
    at its shortest spelling (12.4, never 12.3999)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value) if 0 < value < 1000 else None
    if isinstance(value, float | Decimal):
        text = repr(value) if isinstance(value, float) else format(value, "f")
    elif isinstance(value, str):
        text = value
    else:
        return None
    found = _VERSION_IN_TEXT.search(text.replace("_", "."))
    if not found:
        bare = text.strip()
        return bare if re.fullmatch(r"[0-9]{1,3}", bare) and bare != "0" else None
    parts = [p for p in found.groups() if p is not None]
    return ".".join(str(int(p)) for p in parts)


def form_interconnect(form_factor: str | None) -> Interconnect | None:
    """The interconnect a card's form factor states: SXM modules, an NVL card (NVLink
    bridged pairs) or a PCIe card; None for any other (OAM) or none."""
    return {
        "sxm": Interconnect.SXM,
        "nvl": Interconnect.NVLINK,
        "pcie": Interconnect.PCIE,
    }.get((form_factor or "").strip().casefold())


@dataclass(frozen=True)
class HostFilter:
    """The host attributes an answer asks for; None: no filter on that one.

    ``min_cuda``: the host's CUDA version at least this (version order); ``interconnect``:
    ``nvlink`` (stated NVLink or SXM: ``NVLINKED``), ``sxm`` or ``pcie``;
    ``min_reliability``: the provider's score at least this (0..1); ``hosting``: secure,
    verified or community (``verified`` also keeps secure hosts: both are vetted);
    ``min_vcpus_per_gpu`` / ``min_ram_gb_per_gpu``: at least this many per card.
    An offer that does not publish a filtered attribute never matches it."""

    min_cuda: str | None = None
    interconnect: Interconnect | None = None
    min_reliability: Decimal | None = None
    hosting: Hosting | None = None
    min_vcpus_per_gpu: Decimal | None = None
    min_ram_gb_per_gpu: Decimal | None = None

    def __post_init__(self) -> None:
        if self.min_cuda is not None:
            version_tuple(self.min_cuda)  # refuses a text that is no version
        if self.interconnect is not None:
            object.__setattr__(self, "interconnect", Interconnect(self.interconnect))
        if self.hosting is not None:
            object.__setattr__(self, "hosting", Hosting(self.hosting))
        for name in ("min_reliability", "min_vcpus_per_gpu", "min_ram_gb_per_gpu"):
            value = getattr(self, name)
            if value is None:
                continue
            number = Decimal(str(value))
            if not number.is_finite() or number < 0:
                raise ValueError(f"{name} must be a number of at least 0, not {value!r}")
            if name == "min_reliability" and number > 1:
                raise ValueError(f"min_reliability is a score of 0..1, not {value!r}")
            object.__setattr__(self, name, number)

    @property
    def active(self) -> bool:
        return any(getattr(self, f.name) is not None for f in fields(self))

    def columns(self) -> tuple[str, ...]:
        """The offer columns the filter reads (those an offer must publish to match)."""
        read = {
            "min_cuda": "cuda_version",
            "interconnect": "interconnect",
            "min_reliability": "host_reliability",
            "hosting": "hosting",
            "min_vcpus_per_gpu": "vcpus_per_gpu",
            "min_ram_gb_per_gpu": "ram_gb_per_gpu",
        }
        return tuple(read[f.name] for f in fields(self) if getattr(self, f.name) is not None)

    def accepted_interconnects(self) -> tuple[str, ...]:
        if self.interconnect is None:
            return ()
        if self.interconnect is Interconnect.NVLINK:
            return NVLINKED
        return (self.interconnect.value,)

    def accepted_hosting(self) -> tuple[str, ...]:
        if self.hosting is None:
            return ()
        if self.hosting is Hosting.VERIFIED:
            return (Hosting.SECURE.value, Hosting.VERIFIED.value)
        return (self.hosting.value,)

    def describe(self) -> str:
        """The filter in words, for an answer's note ("CUDA >= 12.4, NVLink")."""
        parts: list[str] = []
        if self.min_cuda is not None:
            parts.append(f"CUDA >= {self.min_cuda}")
        if self.interconnect is not None:
            parts.append({"nvlink": "NVLink", "sxm": "SXM", "pcie": "PCIe"}[self.interconnect])
        if self.min_reliability is not None:
            parts.append(f"reliability >= {self.min_reliability}")
        if self.hosting is not None:
            parts.append(f"{self.hosting.value} hosting")
        if self.min_vcpus_per_gpu is not None:
            parts.append(f">= {self.min_vcpus_per_gpu} vCPUs/GPU")
        if self.min_ram_gb_per_gpu is not None:
            parts.append(f">= {self.min_ram_gb_per_gpu} GB RAM/GPU")
        return ", ".join(parts)

    def matches(self, row: dict[str, object]) -> bool:
        """The filter on one offer row (the warehouse's columns): what the SQL filter keeps."""
        if self.min_cuda is not None:
            cuda = row.get("cuda_version")
            if not isinstance(cuda, str) or version_tuple(cuda) < version_tuple(self.min_cuda):
                return False
        if self.interconnect is not None and row.get("interconnect") not in (
            self.accepted_interconnects()
        ):
            return False
        if self.hosting is not None and row.get("hosting") not in self.accepted_hosting():
            return False
        for name, column in (
            ("min_reliability", "host_reliability"),
            ("min_vcpus_per_gpu", "vcpus_per_gpu"),
            ("min_ram_gb_per_gpu", "ram_gb_per_gpu"),
        ):
            floor = getattr(self, name)
            value = row.get(column)
            if floor is not None and (value is None or Decimal(str(value)) < floor):
                return False
        return True
