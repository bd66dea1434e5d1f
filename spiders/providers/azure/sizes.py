"""Azure's GPU VM sizes as gpurent reads them: the fact table `vm_sizes.toml`, loaded once.

The Retail Prices API prices a VM size (`armSkuName`, "Standard_NC24ads_A100_v4") and says
nothing of its hardware. Which card a size rents and how many of them come from Microsoft's
VM size pages, written down in `vm_sizes.toml` with their sources; a size the table does not
hold is skipped by the parser, never guessed from its name.

Each series is also one question to the price list (`odata_filter`): the sizes whose
armSkuName contains all of its `match` fragments. A series' pages are a chain of their own,
so a page that fails leaves only that series' offers unread (`offer_prefixes`). The table is
checked when it is loaded: every size matches its own series' fragments and no other's, so no
size is asked for twice.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from gpurent_core.enums import Interconnect
from spiders.parsers.common import measure

TABLE_FILE = Path(__file__).with_name("vm_sizes.toml")

# Linux pay-as-you-go and spot meters of VMs; the series' fragments narrow it to one series.
BASE_FILTER = "serviceName eq 'Virtual Machines' and priceType eq 'Consumption'"


@dataclass(frozen=True)
class VmSize:
    """One VM size: the card it rents, how many (or which fraction of one), its CPU and RAM."""

    name: str
    series: str
    card: str
    gpus: int | None
    """Whole cards; None when the size rents a fraction of one."""
    gpu_fraction: str | None
    """The share of one card a vGPU size rents ("1/6"), as the size page writes it."""
    vcpus: int
    memory_gb: int
    interconnect: Interconnect | None

    def host(self) -> dict[str, Any]:
        """What the size page publishes of the host, per GPU (``gpurent_core.host``)."""
        assert self.gpus is not None
        return {
            "interconnect": self.interconnect,
            "vcpus_per_gpu": measure(self.vcpus, per=self.gpus),
            "ram_gb_per_gpu": measure(self.memory_gb, per=self.gpus),
        }


@dataclass(frozen=True)
class Series:
    """One VM series and the question that asks the price list for its sizes."""

    name: str
    match: tuple[str, ...]
    sizes: tuple[VmSize, ...]

    def matches(self, arm_sku_name: str) -> bool:
        return all(fragment in arm_sku_name for fragment in self.match)

    def odata_filter(self) -> str:
        """The `$filter` of the series' first page."""
        wanted = " and ".join(f"contains(armSkuName, '{f}')" for f in self.match)
        return f"{BASE_FILTER} and {wanted}"

    def offer_prefixes(self) -> list[str]:
        """Offer-key prefixes of every offer the series' pages can list."""
        return [f"{size.name}/" for size in self.sizes]


class SizeTableError(ValueError):
    """vm_sizes.toml breaks its own rules (a bug in the data, caught at load)."""


@cache
def series_table() -> tuple[Series, ...]:
    """Every series of `vm_sizes.toml`, in file order, checked."""
    raw = tomllib.loads(TABLE_FILE.read_text(encoding="utf-8"))
    table = tuple(_series(entry) for entry in raw["series"])
    _check_no_overlap(table)
    return table


@cache
def sizes_by_name() -> dict[str, VmSize]:
    return {size.name: size for series in series_table() for size in series.sizes}


def vm_size(arm_sku_name: str) -> VmSize | None:
    """The size of the table so named; None when the table does not hold it."""
    return sizes_by_name().get(arm_sku_name)


def _series(entry: dict[str, Any]) -> Series:
    name = str(entry["name"])
    match = tuple(str(f) for f in entry["match"])
    if not match or not entry.get("sources"):
        raise SizeTableError(f"{name}: a series needs match fragments and sources")
    interconnect = entry.get("interconnect")
    link = Interconnect(interconnect) if interconnect is not None else None
    sizes = tuple(_size(name, str(entry["card"]), link, raw) for raw in entry["sizes"])
    series = Series(name, match, sizes)
    strays = [size.name for size in sizes if not series.matches(size.name)]
    if strays:
        raise SizeTableError(f"{name}: {strays} do not contain {list(match)}")
    return series


def _size(series: str, card: str, link: Interconnect | None, raw: dict[str, Any]) -> VmSize:
    gpus, fraction = raw.get("gpus"), raw.get("gpu_fraction")
    if (gpus is None) == (fraction is None):
        raise SizeTableError(f"{raw.get('name')}: give gpus or gpu_fraction, not both")
    return VmSize(
        name=str(raw["name"]),
        series=series,
        card=card,
        gpus=int(gpus) if gpus is not None else None,
        gpu_fraction=str(fraction) if fraction is not None else None,
        vcpus=int(raw["vcpus"]),
        memory_gb=int(raw["memory_gb"]),
        interconnect=link,
    )


def _check_no_overlap(table: tuple[Series, ...]) -> None:
    for series in table:
        for size in series.sizes:
            others = [s.name for s in table if s is not series and s.matches(size.name)]
            if others:
                raise SizeTableError(f"{size.name} of {series.name} also matches {others}")
