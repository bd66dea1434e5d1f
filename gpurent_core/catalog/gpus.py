"""The GPU spec library: one row per SKU in ``gpus.csv``, loaded into frozen dataclasses.

A SKU is (vendor, model, vram_gb, form_factor). Naming convention for ``model``:

* the product name without the vendor (NVIDIA, AMD, Huawei, Moore Threads, Intel) and
  without umbrella brands that add nothing (GeForce, Tesla, Instinct, Radeon);
* product-line words that are part of how people name the card stay: "RTX 4090",
  "RTX A6000", "TITAN RTX", "Ascend 910B2", "MTT S4000", "Gaudi 3";
* no memory size and no form factor in the name: those are their own columns, so
  "A100" has four SKUs (40/80 GB x PCIe/SXM);
* "Quadro" stays for Pascal/Turing Quadro cards, because NVIDIA reused "RTX 6000",
  "RTX 5000" and "RTX 4000" for Ada cards ("RTX 6000 Ada"); a bare "RTX 6000" is ambiguous;
* modded boards sold by Chinese hosts (RTX 4090 / 4090D 48 GB, RTX 4080 / 4080 SUPER 32 GB,
  RTX 3080 20 GB, RTX 2080 Ti 22 GB) are SKUs of the same model with another VRAM size and
  ``modded`` set: (model, vram_gb) names the modded board, so an offer needs no flag of its
  own. A modded SKU must have more memory than every vendor-made SKU of its model (it is
  the vendor's card with memory added), and its source says what kind of page documents
  it being sold or rented (trade press, retailer, reseller).

Spec figures are what the vendor publishes; an empty cell means "not known to us", never 0.
TFLOPS are dense (NVIDIA datasheets quote sparse figures with a footnote: we halve them),
tensor/matrix-core throughput with FP32 accumulate (GeForce datasheets also quote a twice
as high FP16-accumulate figure, which we do not use). Where a vendor page gives only the
sparse "AI TOPS" of a GeForce card, the dense figure is derived from it and the source says
how (Ada: BF16 = AI TOPS / 8, FP8 = AI TOPS / 4; Blackwell, whose AI TOPS are FP4: BF16 =
AI TOPS / 16, FP8 = AI TOPS / 8).

* ``fp8_dense_tflops`` is the FP8 tensor figure of a card with FP8 (``fp8``); it is not
  always twice the BF16 one (Gaudi 3 runs both at 1835), so it is never assumed.
* ``fp32_tflops`` is the FP32 vector (CUDA-core) figure of a card without tensor or matrix
  cores (Pascal, GTX 16xx): engines compute 16-bit models in FP32 there (GP104 runs FP16 at
  1/64 rate), so it is that card's compute figure. Left empty on cards with tensor cores.
  The one card without tensor cores that has an ``fp16_dense_tflops`` figure is the P100,
  whose GP100 runs FP16 natively at twice its FP32 rate (NVIDIA's datasheet figure).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import cache
from importlib import resources
from pathlib import Path

FORM_FACTORS: frozenset[str] = frozenset({"SXM", "PCIe", "NVL", "OAM"})
"""Allowed ``form_factor`` values; consumer cards and superchip modules have none."""

SEGMENTS: frozenset[str] = frozenset({"datacenter", "workstation", "consumer"})
"""Market segment of a SKU, used for display and filtering."""

CSV_COLUMNS: tuple[str, ...] = (
    "vendor",
    "model",
    "vram_gb",
    "form_factor",
    "segment",
    "architecture",
    "memory_type",
    "mem_bandwidth_gbps",
    "bf16_dense_tflops",
    "fp16_dense_tflops",
    "fp8_dense_tflops",
    "fp32_tflops",
    "fp8",
    "interconnect",
    "tdp_w",
    "modded",
    "aliases",
    "source",
    "notes",
)


class CatalogError(ValueError):
    """The catalog file is malformed (bad value, duplicate SKU, missing source)."""


@dataclass(frozen=True, slots=True)
class GpuSku:
    """One GPU SKU: a model at one memory size and form factor, with its published specs."""

    vendor: str
    model: str
    vram_gb: int
    form_factor: str | None
    """One of FORM_FACTORS, or None for consumer cards, superchips and unknown."""
    segment: str
    architecture: str
    memory_type: str | None
    mem_bandwidth_gbps: Decimal | None
    """Memory bandwidth in GB/s (decimal gigabytes, as vendors quote it)."""
    bf16_dense_tflops: Decimal | None
    fp16_dense_tflops: Decimal | None
    fp8_dense_tflops: Decimal | None
    """Dense FP8 tensor TFLOPS (cards with ``fp8`` only)."""
    fp32_tflops: Decimal | None
    """FP32 vector TFLOPS of a card without tensor/matrix cores (its compute figure)."""
    fp8: bool
    """True when the vendor documents FP8 tensor/matrix support."""
    interconnect: str | None
    tdp_w: int | None
    modded: bool
    """A board modified by third parties (more memory than any vendor SKU of the model)."""
    aliases: tuple[str, ...]
    """Extra spellings of the model (not of this SKU's VRAM or form factor)."""
    source: tuple[str, ...]
    notes: str | None

    @property
    def key(self) -> tuple[str, int, str | None]:
        """The identity of a SKU within the catalog."""
        return (self.model, self.vram_gb, self.form_factor)

    @property
    def compute_tflops(self) -> Decimal | None:
        """The card's dense throughput for a 16-bit model: the BF16 tensor figure, else the
        FP16 one (Volta, Turing), else the FP32 vector figure of a card without tensor cores.
        None when the catalog has none of them: unknown, never zero."""
        return self.bf16_dense_tflops or self.fp16_dense_tflops or self.fp32_tflops

    @property
    def compute_basis(self) -> str | None:
        """Which figure ``compute_tflops`` is: "bf16", "fp16", "fp32" or None (unknown)."""
        for basis, value in (
            ("bf16", self.bf16_dense_tflops),
            ("fp16", self.fp16_dense_tflops),
            ("fp32", self.fp32_tflops),
        ):
            if value is not None:
                return basis
        return None

    @property
    def label(self) -> str:
        """Human label, e.g. "A100 80GB SXM" or "RTX 4090 24GB"."""
        parts = [self.model, f"{self.vram_gb}GB"]
        if self.form_factor:
            parts.append(self.form_factor)
        return " ".join(parts)


class Catalog:
    """An immutable, indexed set of SKUs. Model lookups are case-insensitive."""

    def __init__(self, skus: Iterable[GpuSku]) -> None:
        ordered = tuple(skus)
        seen: set[tuple[str, int, str | None]] = set()
        by_model: dict[str, list[GpuSku]] = {}
        for sku in ordered:
            folded = (sku.model.casefold(), sku.vram_gb, sku.form_factor)
            if folded in seen:
                raise CatalogError(f"duplicate SKU {sku.label}")
            seen.add(folded)
            by_model.setdefault(sku.model.casefold(), []).append(sku)
        for group in by_model.values():
            _check_modded(group)
        self._skus = ordered
        self._by_model = {
            name: tuple(sorted(group, key=_variant_order)) for name, group in by_model.items()
        }

    def __len__(self) -> int:
        return len(self._skus)

    def all(self) -> tuple[GpuSku, ...]:
        """Every SKU, in file order."""
        return self._skus

    def models(self) -> list[str]:
        """Canonical model names, in file order, each once."""
        return list(dict.fromkeys(sku.model for sku in self._skus))

    def variants(self, model: str) -> list[GpuSku]:
        """All SKUs of a canonical model, ordered by VRAM then form factor; [] if unknown."""
        return list(self._by_model.get(model.casefold(), ()))

    def find(
        self, model: str, vram_gb: int | None = None, form_factor: str | None = None
    ) -> GpuSku | None:
        """The one SKU of ``model`` matching the given VRAM and form factor.

        ``None`` for an argument means "any". Returns None when nothing matches or when
        the arguments leave more than one SKU (``variants`` lists them).
        """
        matches = [
            sku
            for sku in self.variants(model)
            if (vram_gb is None or sku.vram_gb == vram_gb)
            and (
                form_factor is None or (sku.form_factor or "").casefold() == form_factor.casefold()
            )
        ]
        return matches[0] if len(matches) == 1 else None


def sku_as_dict(sku: GpuSku) -> dict[str, object]:
    """Every field of a SKU by CSV column name (Decimals stay Decimal, lists for aliases/source)."""
    return {
        column: list(value) if isinstance(value, tuple) else value
        for column, value in ((c, getattr(sku, c)) for c in CSV_COLUMNS)
    }


def _check_modded(group: list[GpuSku]) -> None:
    # A modded board is told apart from the vendor's card by its memory alone, so it must have
    # a vendor-made sibling and more memory than any of them: otherwise (model, vram) could
    # name a vendor card and a modded one at once.
    vendor_made = [sku.vram_gb for sku in group if not sku.modded]
    for sku in group:
        if sku.modded and (not vendor_made or sku.vram_gb <= max(vendor_made)):
            raise CatalogError(
                f"modded SKU {sku.label} needs more VRAM than every vendor-made {sku.model}"
            )


def _variant_order(sku: GpuSku) -> tuple[int, str]:
    return (sku.vram_gb, sku.form_factor or "")


def _opt(value: str) -> str | None:
    value = value.strip()
    return value or None


def _decimal(value: str, column: str, line: int) -> Decimal | None:
    text = value.strip()
    if not text:
        return None
    try:
        number = Decimal(text)
    except InvalidOperation as exc:
        raise CatalogError(f"line {line}: {column}={value!r} is not a number") from exc
    if not number.is_finite() or number <= 0:
        raise CatalogError(f"line {line}: {column}={value!r} must be a positive number")
    return number


def _int(value: str, column: str, line: int) -> int | None:
    number = _decimal(value, column, line)
    if number is None:
        return None
    if number != number.to_integral_value():
        raise CatalogError(f"line {line}: {column}={value!r} must be a whole number")
    return int(number)


def _bool(value: str, column: str, line: int) -> bool:
    text = value.strip().lower()
    if text in ("true", "yes", "1"):
        return True
    if text in ("", "false", "no", "0"):
        return False
    raise CatalogError(f"line {line}: {column}={value!r} is not a boolean")


def _split(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split("|") if part.strip())


def _row_to_sku(row: dict[str, str], line: int) -> GpuSku:
    # DictReader puts surplus cells under the key None and fills short rows with None.
    if None in row or any(value is None for value in row.values()):
        raise CatalogError(f"line {line}: expected {len(CSV_COLUMNS)} cells")
    vendor = row["vendor"].strip()
    model = row["model"].strip()
    if not vendor or not model:
        raise CatalogError(f"line {line}: vendor and model are required")
    vram = _int(row["vram_gb"], "vram_gb", line)
    if vram is None:
        raise CatalogError(f"line {line}: vram_gb is required")
    form_factor = _opt(row["form_factor"])
    if form_factor is not None and form_factor not in FORM_FACTORS:
        raise CatalogError(
            f"line {line}: form_factor {form_factor!r} not in {sorted(FORM_FACTORS)}"
        )
    segment = row["segment"].strip()
    if segment not in SEGMENTS:
        raise CatalogError(f"line {line}: segment {segment!r} not in {sorted(SEGMENTS)}")
    source = _split(row["source"])
    if not source:
        raise CatalogError(f"line {line}: {model} has no source")
    fp8 = _bool(row["fp8"], "fp8", line)
    fp8_tflops = _decimal(row["fp8_dense_tflops"], "fp8_dense_tflops", line)
    if fp8_tflops is not None and not fp8:
        raise CatalogError(f"line {line}: {model} has an FP8 figure but fp8 is false")
    return GpuSku(
        vendor=vendor,
        model=model,
        vram_gb=vram,
        form_factor=form_factor,
        segment=segment,
        architecture=row["architecture"].strip(),
        memory_type=_opt(row["memory_type"]),
        mem_bandwidth_gbps=_decimal(row["mem_bandwidth_gbps"], "mem_bandwidth_gbps", line),
        bf16_dense_tflops=_decimal(row["bf16_dense_tflops"], "bf16_dense_tflops", line),
        fp16_dense_tflops=_decimal(row["fp16_dense_tflops"], "fp16_dense_tflops", line),
        fp8_dense_tflops=fp8_tflops,
        fp32_tflops=_decimal(row["fp32_tflops"], "fp32_tflops", line),
        fp8=fp8,
        interconnect=_opt(row["interconnect"]),
        tdp_w=_int(row["tdp_w"], "tdp_w", line),
        modded=_bool(row["modded"], "modded", line),
        aliases=_split(row["aliases"]),
        source=source,
        notes=_opt(row["notes"]),
    )


def parse_catalog(text: str) -> Catalog:
    """Build a Catalog from CSV text with the columns in CSV_COLUMNS."""
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in CSV_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise CatalogError(f"catalog lacks columns {missing}")
    # DictReader's line_num counts physical lines; +1 for the header is already in it.
    return Catalog(_row_to_sku(row, reader.line_num) for row in reader)


def load_catalog(path: Path | None = None) -> Catalog:
    """Load a catalog file; the packaged ``gpus.csv`` when no path is given."""
    if path is None:
        text = resources.files("gpurent_core.catalog").joinpath("gpus.csv").read_text("utf-8")
    else:
        text = path.read_text("utf-8")
    return parse_catalog(text)


@cache
def get_catalog() -> Catalog:
    """The packaged catalog, parsed once per process."""
    return load_catalog()
