"""`gpurent gpus`: the GPU spec library (catalog), filtered, as a table, JSON or CSV."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from gpurent.cli.common import FormatOption
from gpurent.cli.output import OutputFormat, render
from gpurent_core.catalog import CSV_COLUMNS, Catalog, GpuSku, get_catalog, sku_as_dict

# Headline specs for people; JSON and CSV carry every catalog column (JSON adds the
# compute figure sizing uses, and which one it is).
TABLE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("vendor", "vendor"),
    ("model", "model"),
    ("vram_gb", "VRAM GB"),
    ("form_factor", "form"),
    ("memory_type", "memory"),
    ("mem_bandwidth_gbps", "GB/s"),
    ("compute_tflops", "16-bit TFLOPS"),
    ("fp8_dense_tflops", "FP8 TFLOPS"),
    ("tdp_w", "TDP W"),
    ("architecture", "architecture"),
)

UNKNOWN = "?"
"""A figure the catalog does not have: shown as unknown, never as empty or zero."""


def select_skus(
    catalog: Catalog, *, vendor: str | None = None, min_vram_gb: int | None = None
) -> list[GpuSku]:
    """SKUs of one vendor (case-insensitive) with at least min_vram_gb, in catalog order."""
    return [
        sku
        for sku in catalog.all()
        if (vendor is None or sku.vendor.casefold() == vendor.casefold())
        and (min_vram_gb is None or sku.vram_gb >= min_vram_gb)
    ]


def compute_cell(sku: GpuSku) -> str:
    """The 16-bit compute figure sizing uses: BF16 tensor, "(FP16)" on Volta/Turing, "(FP32)"
    on cards without tensor cores, "?" when the catalog has none."""
    value = sku.compute_tflops
    if value is None:
        return UNKNOWN
    basis = sku.compute_basis
    return f"{value}" + ("" if basis == "bf16" else f" ({str(basis).upper()})")


def fp8_cell(sku: GpuSku) -> str:
    """FP8 tensor TFLOPS; "no" without FP8; "yes, ?" when FP8 is there but unquoted."""
    if not sku.fp8:
        return "no"
    return f"{sku.fp8_dense_tflops}" if sku.fp8_dense_tflops is not None else f"yes, {UNKNOWN}"


def _table_row(sku: GpuSku) -> dict[str, Any]:
    data = sku_as_dict(sku)
    row = {
        header: data.get(column)
        for column, header in TABLE_COLUMNS
        if column not in ("compute_tflops", "fp8_dense_tflops")
    }
    row["GB/s"] = UNKNOWN if sku.mem_bandwidth_gbps is None else sku.mem_bandwidth_gbps
    row["16-bit TFLOPS"] = compute_cell(sku)
    row["FP8 TFLOPS"] = fp8_cell(sku)
    if sku.modded:
        row["model"] = f"{sku.model} (modded)"
    return {header: row[header] for _, header in TABLE_COLUMNS}


def _json_row(sku: GpuSku) -> dict[str, Any]:
    row = sku_as_dict(sku)
    row["compute_tflops"] = sku.compute_tflops
    row["compute_basis"] = sku.compute_basis
    return row


def _csv_row(sku: GpuSku) -> dict[str, Any]:
    data = sku_as_dict(sku)
    # Same convention as gpus.csv: several values in one cell are joined by "|".
    return {k: "|".join(v) if isinstance(v, list) else v for k, v in data.items()}


def gpus(
    vendor: Annotated[
        str | None,
        typer.Option(
            "--vendor", help="Only this vendor (NVIDIA, AMD, Huawei, ...).", show_default=False
        ),
    ] = None,
    min_vram: Annotated[
        int | None,
        typer.Option(
            "--min-vram",
            min=0,
            help="Only cards with at least this many GB of VRAM.",
            show_default=False,
        ),
    ] = None,
    fmt: FormatOption = OutputFormat.TABLE,
) -> None:
    """List the GPU spec library: VRAM, bandwidth, dense 16-bit and FP8 TFLOPS, TDP, sources.

    The 16-bit figure is the one `gpurent size` computes with: BF16 tensor, else FP16 tensor
    (Volta, Turing), else FP32 (cards without tensor cores); "?" where the catalog has none.
    """
    catalog = get_catalog()
    if vendor is not None:
        known = sorted({sku.vendor for sku in catalog.all()})
        if vendor.casefold() not in {v.casefold() for v in known}:
            raise typer.BadParameter(
                f"unknown vendor {vendor!r}; known: {', '.join(known)}", param_hint="--vendor"
            )
    skus = select_skus(catalog, vendor=vendor, min_vram_gb=min_vram)
    if fmt is OutputFormat.TABLE:
        render(
            [_table_row(sku) for sku in skus],
            fmt,
            columns=[header for _, header in TABLE_COLUMNS],
            title="GPU spec library (dense TFLOPS; ? = not known to the catalog)",
            empty_message="no GPU in the catalog matches",
        )
    elif fmt is OutputFormat.CSV:
        render([_csv_row(sku) for sku in skus], fmt, columns=list(CSV_COLUMNS))
    else:
        render([_json_row(sku) for sku in skus], fmt)


# The commands of this module; the console script (gpurent.cli.app) adds them to its app.
app = typer.Typer()

app.command("gpus")(gpus)
