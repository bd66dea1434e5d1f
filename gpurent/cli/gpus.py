"""`gpurent gpus`: the GPU spec library (catalog), filtered, as a table, JSON or CSV."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from gpurent.cli.common import FormatOption
from gpurent.cli.output import OutputFormat, render
from gpurent_core.catalog import CSV_COLUMNS, Catalog, GpuSku, get_catalog, sku_as_dict

# Headline specs for people; JSON and CSV carry every catalog column.
TABLE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("vendor", "vendor"),
    ("model", "model"),
    ("vram_gb", "VRAM GB"),
    ("form_factor", "form"),
    ("memory_type", "memory"),
    ("mem_bandwidth_gbps", "GB/s"),
    ("bf16_dense_tflops", "BF16 TFLOPS"),
    ("fp8", "FP8"),
    ("tdp_w", "TDP W"),
    ("architecture", "architecture"),
)


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


def _table_row(sku: GpuSku) -> dict[str, Any]:
    data = sku_as_dict(sku)
    row = {header: data[column] for column, header in TABLE_COLUMNS}
    row["FP8"] = "yes" if sku.fp8 else ""
    if sku.modded:
        row["model"] = f"{sku.model} (modded)"
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
    """List the GPU spec library: VRAM, bandwidth, dense BF16 TFLOPS, FP8, TDP, sources."""
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
            title="GPU spec library (dense TFLOPS; empty = not published)",
            empty_message="no GPU in the catalog matches",
        )
    elif fmt is OutputFormat.CSV:
        render([_csv_row(sku) for sku in skus], fmt, columns=list(CSV_COLUMNS))
    else:
        render([sku_as_dict(sku) for sku in skus], fmt)


# The commands of this module; the console script (gpurent.cli.app) adds them to its app.
app = typer.Typer()

app.command("gpus")(gpus)
