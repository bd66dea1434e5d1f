"""The host filters of `offers` and `cheapest`, declared once, and how an answer shows them.

What a host publishes about itself (``gpurent_core.host``): the CUDA version, how its cards
are joined, the provider's reliability score, who hosts it, vCPUs and RAM per card. An
offer that does not publish a filtered attribute is left out; the line under the answer
says how many.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any

import typer

from gpurent.cli.usage_options import NUMBER
from gpurent_core.enums import Hosting, Interconnect

__all__ = [
    "HOST_OPTION_OF",
    "HostingOption",
    "InterconnectOption",
    "MinCudaOption",
    "MinRamPerGpuOption",
    "MinReliabilityOption",
    "MinVcpusPerGpuOption",
    "WideOption",
    "host_cell",
    "host_words",
    "unpublished_note",
]

_LEFT_OUT = " Offers that do not publish it are left out (and counted under the answer)."

MinCudaOption = Annotated[
    str | None,
    typer.Option(
        "--min-cuda",
        metavar="<version>",
        help="Only hosts whose driver supports at least this CUDA version (12.4; compared as "
        "version numbers, so 12.10 > 12.9)." + _LEFT_OUT,
        show_default=False,
    ),
]
InterconnectOption = Annotated[
    Interconnect | None,
    typer.Option(
        "--interconnect",
        case_sensitive=False,
        help="How the cards are joined: nvlink (NVLink stated, or SXM modules, joined by "
        "NVLink on their board), sxm, or pcie (PCIe cards, no NVLink stated)." + _LEFT_OUT,
        show_default=False,
    ),
]
MinReliabilityOption = Annotated[
    Decimal | None,
    typer.Option(
        "--min-reliability",
        click_type=NUMBER,
        help="Only hosts the provider scores at least this reliable, 0..1 (Vast.ai's "
        "reliability: 0.99)." + _LEFT_OUT,
        show_default=False,
    ),
]
HostingOption = Annotated[
    Hosting | None,
    typer.Option(
        "--hosting",
        case_sensitive=False,
        metavar="<kind>",
        help="Who runs the host: secure (data center / Secure Cloud), verified (a verified "
        "marketplace host, or secure), community (any marketplace host the provider has not "
        "verified)." + _LEFT_OUT,
        show_default=False,
    ),
]
MinVcpusPerGpuOption = Annotated[
    Decimal | None,
    typer.Option(
        "--min-vcpus-per-gpu",
        click_type=NUMBER,
        help="Only offers with at least this many vCPUs per card." + _LEFT_OUT,
        show_default=False,
    ),
]
MinRamPerGpuOption = Annotated[
    Decimal | None,
    typer.Option(
        "--min-ram-per-gpu",
        click_type=NUMBER,
        help="Only offers with at least this much system RAM per card, GB." + _LEFT_OUT,
        show_default=False,
    ),
]

WideOption = Annotated[
    bool,
    typer.Option(
        "--wide",
        help="Add a host column with everything the offer's host publishes: CUDA and driver "
        "version, interconnect, reliability, hosting, vCPUs, RAM and disk per GPU, the "
        "longest rental (empty where the provider publishes nothing). Wider than 80 columns.",
    ),
]

HOST_OPTION_OF = {
    "min_cuda": "--min-cuda",
    "interconnect": "--interconnect",
    "min_reliability": "--min-reliability",
    "hosting": "--hosting",
    "min_vcpus_per_gpu": "--min-vcpus-per-gpu",
    "min_ram_gb_per_gpu": "--min-ram-per-gpu",
}


def host_words(asked: dict[str, Any]) -> list[str]:
    """The host options asked, as typed (for an empty answer's message)."""
    words = []
    for name, option in HOST_OPTION_OF.items():
        value = asked.get(name)
        if value is not None:
            words.append(f"{option} {getattr(value, 'value', value)}")
    return words


def _number(value: Any) -> str:
    return format(Decimal(str(value)).normalize(), "f")


def host_cell(row: dict[str, Any], asked: dict[str, Any], *, every: bool = False) -> str:
    """The table's host cell: the attributes the answer filtered on (``every``: all of
    them, for --wide), as the offer publishes them ("CUDA 12.4, nvlink 600 GB/s, 99.7%")."""

    def shown(option: str, field: str) -> bool:
        return (every or asked.get(option) is not None) and row.get(field) not in (None, "")

    parts: list[str] = []
    if shown("min_cuda", "cuda_version"):
        parts.append(f"CUDA {row['cuda_version']}")
    if every and row.get("driver_version"):
        parts.append(f"driver {row['driver_version']}")
    if shown("interconnect", "interconnect"):
        bandwidth = row.get("nvlink_gbps")
        gbps = f" {_number(bandwidth)} GB/s" if bandwidth else ""
        parts.append(f"{row['interconnect']}{gbps}")
    if shown("min_reliability", "host_reliability"):
        parts.append(f"{Decimal(str(row['host_reliability'])) * 100:.1f}%")
    if shown("hosting", "hosting"):
        parts.append(str(row["hosting"]))
    if shown("min_vcpus_per_gpu", "vcpus_per_gpu"):
        parts.append(f"{_number(row['vcpus_per_gpu'])} vCPU/gpu")
    if shown("min_ram_gb_per_gpu", "ram_gb_per_gpu"):
        parts.append(f"{_number(row['ram_gb_per_gpu'])} GB/gpu")
    if every and row.get("disk_gb_per_gpu") is not None:
        parts.append(f"{_number(row['disk_gb_per_gpu'])} GB disk/gpu")
    if every and row.get("max_rental_hours") is not None:
        parts.append(f"max {_number(row['max_rental_hours'])} h")
    return ", ".join(parts)


def unpublished_note(left_out: int, asked: dict[str, Any]) -> str | None:
    """The line under an answer that left offers out for not publishing a filtered host
    attribute (None when it left none)."""
    if left_out <= 0:
        return None
    offers = "offer" if left_out == 1 else "offers"
    options = ", ".join(o for n, o in HOST_OPTION_OF.items() if asked.get(n) is not None)
    return f"{left_out} {offers} left out: their provider does not publish what {options} asks"
