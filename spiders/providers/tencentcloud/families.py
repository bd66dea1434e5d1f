"""Which card each Tencent Cloud GPU instance family carries: a fact table, not an answer.

`DescribeZoneInstanceConfigInfos` names an instance's family (`InstanceFamily`) and its card
count (`GpuCount`) but never the card. The card of each family is written in Tencent's
public GPU instance documentation, and this table copies it, family by family, as those
pages say it (the card's name in their words, its NVLink when they state one). A family
that is not here is skipped as a card we do not know (`SkipKind.OUTSIDE_CATALOG`), never
guessed from its name.

Sources (read 2026-12-04):

* `COMPUTING_SOURCE`: "GPU Computing Instances" (PNV4, GT4, GN10Xp, GN7, GI3X, GN10X, GN8,
  GN6/GN6S; GN7vi in a later version of the same page);
* `RENDERING_SOURCE`: "GPU Rendering Instances" (GNV4v, GNV4, GN7vw, GI1).

Both pages also list vGPU sizes (1/4 or 1/2 of a card: GN7.LARGE20, GNV4v.XLARGE24,
GN7vw.LARGE16, ...): their card count (`GpuCount` below 1) says so, and they are skipped as
slices, whatever the family.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from gpurent_core.enums import Interconnect

COMPUTING_SOURCE = (
    "https://intl.cloud.tencent.com/document/product/560/19701 (GPU Computing Instances; "
    "text as stored in github.com/tencentyun/intlcloud-documents, yehe_doc/计算和容器/"
    "GPU 云服务器/实例类型/计算型实例_intl_en.md)"
)
RENDERING_SOURCE = (
    "https://intl.cloud.tencent.com/document/product/560/19700 (GPU Rendering Instances; "
    "text as stored in github.com/tencentyun/intlcloud-documents, yehe_doc/计算和容器/"
    "GPU 云服务器/实例类型/渲染型实例_intl_en.md)"
)
AS_OF = "2026-12-04"


@dataclass(frozen=True)
class FamilyCard:
    """The card of one instance family, in the documentation's words."""

    card: str
    """The card as the page names it (read by the catalog's normaliser)."""
    source: str
    interconnect: Interconnect | None = None
    """Stated by the page ("V100 NVLink 32GB"); None: the card's form factor decides."""
    nvlink_gbps: Decimal | None = None
    """The NVLink bandwidth the page states ("300 GB/s NVLink")."""


_V100_NVLINK = FamilyCard(
    "NVIDIA Tesla V100 NVLink 32GB", COMPUTING_SOURCE, Interconnect.NVLINK, Decimal(300)
)
_T4 = FamilyCard("NVIDIA Tesla T4", COMPUTING_SOURCE)
_A10_RENDERING = FamilyCard("NVIDIA A10", RENDERING_SOURCE)

FAMILY_CARDS: dict[str, FamilyCard] = {
    "PNV4": FamilyCard("NVIDIA A10", COMPUTING_SOURCE),
    "GT4": FamilyCard(
        "NVIDIA A100 NVLink 40GB", COMPUTING_SOURCE, Interconnect.NVLINK, Decimal(600)
    ),
    "GN10Xp": _V100_NVLINK,
    "GN10X": _V100_NVLINK,
    "GN7": _T4,
    "GN7vi": _T4,  # "GN7 instances configured with Tencent's MPS technology"
    "GI3X": _T4,
    "GN8": FamilyCard("NVIDIA Tesla P40", COMPUTING_SOURCE),
    "GNV4v": _A10_RENDERING,
    "GNV4": _A10_RENDERING,
    "GN7vw": FamilyCard("NVIDIA Tesla T4", RENDERING_SOURCE),
}
"""Family (as `InstanceFamily` spells it) to its card; the spider asks for these families."""

FAMILIES_OUTSIDE_CATALOG: dict[str, str] = {
    "GN6": "NVIDIA Tesla P4",
    "GN6S": "NVIDIA Tesla P4",
    "GI1": "Intel SG1 (H3C XG310)",
}
"""Families the pages document whose card gpurent's catalog does not rank: skipped, named."""
