"""The GPU catalog: size, uniqueness, provenance and spot checks of datasheet figures."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from gpurent_core.catalog import (
    CSV_COLUMNS,
    FORM_FACTORS,
    SEGMENTS,
    CatalogError,
    GpuSku,
    get_catalog,
    load_catalog,
    parse_catalog,
)

CATALOG = get_catalog()
HEADER = ",".join(CSV_COLUMNS)


def _row(**cells: str) -> str:
    base = dict.fromkeys(CSV_COLUMNS, "")
    base.update(vendor="NVIDIA", model="X1", vram_gb="24", segment="consumer", source="test")
    base.update(cells)
    return ",".join(base[c] for c in CSV_COLUMNS)


def sku(model: str, vram_gb: int, form_factor: str | None = None) -> GpuSku:
    found = CATALOG.find(model, vram_gb, form_factor)
    assert found is not None, f"{model} {vram_gb} {form_factor} missing"
    return found


def test_catalog_is_large_enough() -> None:
    assert len(CATALOG) >= 80
    assert len(CATALOG.all()) == len(CATALOG)


def test_no_duplicate_sku() -> None:
    keys = [(s.model.casefold(), s.vram_gb, s.form_factor) for s in CATALOG.all()]
    assert len(keys) == len(set(keys))


def test_every_row_has_a_source_and_valid_enums() -> None:
    for s in CATALOG.all():
        assert s.source and all(part.strip() for part in s.source), s.label
        assert s.form_factor is None or s.form_factor in FORM_FACTORS, s.label
        assert s.segment in SEGMENTS, s.label
        assert s.architecture, s.label
        # Consumer cards carry no form factor: GeForce boards are all PCIe, saying so adds nothing.
        if s.segment == "consumer":
            assert s.form_factor is None, s.label


def test_model_names_carry_no_vendor_memory_or_form_factor() -> None:
    for s in CATALOG.all():
        words = s.model.lower().split()
        assert s.vendor.lower() not in words, s.model
        assert not {"geforce", "tesla", "instinct", "nvidia", "amd"} & set(words), s.model
        assert not any(w.endswith("gb") or w in ("sxm", "pcie", "nvl", "oam") for w in words), (
            s.model
        )


def test_numbers_are_sane() -> None:
    for s in CATALOG.all():
        assert 3 <= s.vram_gb <= 512, s.label  # GTX 1060 3 GB is the smallest card rented
        if s.mem_bandwidth_gbps is not None:
            assert Decimal(100) <= s.mem_bandwidth_gbps <= Decimal(10000), s.label
        for tflops in (s.bf16_dense_tflops, s.fp16_dense_tflops, s.fp8_dense_tflops):
            if tflops is not None:
                assert Decimal(10) <= tflops <= Decimal(10000), s.label
        if s.fp32_tflops is not None:  # CUDA-core FP32: a few TFLOPS to tens
            assert Decimal(1) <= s.fp32_tflops <= Decimal(100), s.label
        if s.fp8_dense_tflops is not None:  # FP8 never runs slower than 16-bit
            assert s.fp8 and s.bf16_dense_tflops is not None, s.label
            assert s.fp8_dense_tflops >= s.bf16_dense_tflops, s.label
        if s.tdp_w is not None:
            assert 40 <= s.tdp_w <= 1500, s.label
        for value in (
            s.mem_bandwidth_gbps,
            s.bf16_dense_tflops,
            s.fp16_dense_tflops,
            s.fp8_dense_tflops,
            s.fp32_tflops,
        ):
            assert value is None or isinstance(value, Decimal)


@pytest.mark.parametrize(
    ("model", "vram", "form", "bandwidth", "bf16", "tdp"),
    [
        ("H100", 80, "SXM", "3350", "989.5", 700),
        ("H100", 80, "PCIe", "2000", "756.5", 350),
        ("H100", 94, "NVL", "3900", "835.5", 400),
        ("A100", 80, "SXM", "2039", "312", 400),
        ("A100", 40, "PCIe", "1555", "312", 250),
        ("H200", 141, "SXM", "4800", "989.5", 700),
        ("L40S", 48, "PCIe", "864", "362.05", 350),
        ("RTX 4090", 24, None, "1008", "165.2", 450),
        ("RTX 3090", 24, None, "936", "71", 350),
        ("MI300X", 192, "OAM", "5300", "1307.4", 750),
        ("RTX 5090", 32, None, "1792", "209.5", 575),
        ("RTX 4090D", 24, None, "1008", "147.12", 425),
        ("RTX 6000 Ada", 48, "PCIe", "960", "364.25", 300),
        ("RTX PRO 6000", 96, "PCIe", "1792", "500", 600),
        ("RTX 3080 Ti", 12, None, "912", "68.2", 350),
        ("L20", 48, "PCIe", "864", "119.5", 275),
        ("H20", 96, "SXM", "4000", "148", 400),
    ],
)
def test_datasheet_figures(
    model: str, vram: int, form: str | None, bandwidth: str, bf16: str | None, tdp: int
) -> None:
    s = sku(model, vram, form)
    assert s.mem_bandwidth_gbps == Decimal(bandwidth)
    assert s.bf16_dense_tflops == (Decimal(bf16) if bf16 else None)
    assert s.tdp_w == tdp


def test_h100_sxm_is_roughly_989_dense_not_sparse() -> None:
    bf16 = sku("H100", 80, "SXM").bf16_dense_tflops
    assert bf16 is not None and Decimal(980) <= bf16 <= Decimal(1000)


@pytest.mark.parametrize(
    ("model", "vram", "form", "fp8"),
    [
        ("H100", 80, "SXM", "1979"),
        ("H100", 80, "PCIe", "1513"),
        ("H800", 80, "SXM", "1979"),
        ("H20", 96, "SXM", "296"),
        ("L40S", 48, "PCIe", "733"),
        ("RTX 4090", 24, None, "330.3"),
        ("RTX 5090", 32, None, "419"),
        ("MI300X", 192, "OAM", "2614.9"),
        ("Gaudi 3", 128, "OAM", "1835"),  # the BF16 rate: FP8 is not always twice it
    ],
)
def test_dense_fp8_figures(model: str, vram: int, form: str | None, fp8: str) -> None:
    assert sku(model, vram, form).fp8_dense_tflops == Decimal(fp8)


def test_cards_without_tensor_cores_compute_at_their_fp32_figure() -> None:
    gtx = sku("GTX 1070", 8)
    assert (gtx.bf16_dense_tflops, gtx.fp16_dense_tflops) == (None, None)
    assert gtx.compute_tflops == gtx.fp32_tflops == Decimal("6.46")
    assert gtx.compute_basis == "fp32"
    assert (sku("V100", 32, "SXM").compute_tflops, sku("V100", 32, "SXM").compute_basis) == (
        Decimal(125),
        "fp16",
    )
    assert sku("H100", 80, "SXM").compute_basis == "bf16"
    unknown = sku("Ascend 910B2", 64)
    assert unknown.compute_tflops is None and unknown.compute_basis is None


DEMO_CARDS: frozenset[tuple[str, int, str | None]] = frozenset(
    {
        ("A10", 24, "PCIe"), ("A100", 40, "PCIe"), ("A100", 40, None), ("A100", 80, "PCIe"),
        ("A100", 80, "SXM"), ("A100", 80, None), ("A40", 48, "PCIe"), ("A800", 80, None),
        ("Ascend 910B", 64, None), ("B200", 180, "SXM"), ("GH200", 96, None),
        ("GTX 1070", 8, None), ("GTX 1660 SUPER", 6, None), ("H100", 80, "PCIe"),
        ("H100", 80, "SXM"), ("H100", 80, None), ("H100", 94, "NVL"), ("H200", 141, "SXM"),
        ("H200", 141, None), ("H800", 80, None), ("L20", 48, "PCIe"), ("L4", 24, "PCIe"),
        ("L40", 48, "PCIe"), ("L40S", 48, "PCIe"), ("MI300X", 192, "OAM"),
        ("Quadro P5000", 16, "PCIe"), ("Quadro RTX 4000", 8, "PCIe"), ("RTX 3080", 10, None),
        ("RTX 3080 Ti", 12, None), ("RTX 3090", 24, None), ("RTX 4090", 24, None),
        ("RTX 4090D", 24, None), ("RTX 5090", 32, None), ("RTX 6000 Ada", 48, "PCIe"),
        ("RTX A4000", 16, "PCIe"), ("RTX A5000", 24, "PCIe"), ("RTX A6000", 48, "PCIe"),
        ("RTX PRO 6000", 96, "PCIe"), ("V100", 16, "PCIe"), ("V100", 16, None),
        ("V100", 32, "SXM"), ("V100", 32, None), ("V100S", 32, "PCIe"), ("T4", 16, "PCIe"),
        ("A800", 80, "SXM"),
        ("A16", 16, "PCIe"),
    }
)  # fmt: skip
"""Every (card, VRAM, form factor as listed) of the bundled recordings' crawl
(`gpurent crawl --replay`; offers of unknown VRAM aside). tests/tracking/test_demo_history.py
checks the demo still lists no other."""

PROVIDER_CARDS: frozenset[tuple[str, int, str | None]] = frozenset(
    {
        ("H20", 96, "SXM"), ("T4", 16, "PCIe"), ("H800", 80, "PCIe"), ("H800", 80, "SXM"),
        ("A800", 80, "PCIe"), ("A800", 80, "SXM"), ("A800", 40, "PCIe"), ("L40S", 48, None),
        ("RTX 4090", 48, None), ("RTX 4090D", 48, None), ("RTX 2080 Ti", 22, None),
        ("RTX 4080 SUPER", 32, None), ("H200", 141, "NVL"),
    }
)  # fmt: skip
"""Cards the Chinese and international hosts list beyond the demo's (their price pages)."""

NO_FIGURES: frozenset[str] = frozenset({"Ascend 910B"})
"""Cards whose vendor publishes no compute or bandwidth figure gpurent could cite: sizing
answers "cannot tell" for them, by design (Huawei publishes no per-variant datasheet)."""


def test_every_card_the_providers_list_has_compute_and_bandwidth() -> None:
    from sizing.recommend import offer_sku

    missing = []
    for model, vram, form in sorted(DEMO_CARDS | PROVIDER_CARDS, key=str):
        found = offer_sku({"gpu_model": model, "gpu_vram_gb": vram, "gpu_form_factor": form})
        has = found is not None and found.compute_tflops and found.mem_bandwidth_gbps
        if model in NO_FIGURES:
            assert not has, f"{model} has figures now: take it out of NO_FIGURES"
        elif not has:
            missing.append((model, vram, form))
    assert missing == []


def test_fp8_only_from_hopper_ada_blackwell_cdna3() -> None:
    assert sku("H100", 80, "SXM").fp8 and sku("L40S", 48).fp8 and sku("MI300X", 192).fp8
    assert not sku("A100", 80, "SXM").fp8 and not sku("RTX 3090", 24).fp8
    assert not sku("V100", 32, "SXM").fp8


MODDED = {
    "RTX 4090 48GB",
    "RTX 4090D 48GB",
    "RTX 4080 32GB",
    "RTX 4080 SUPER 32GB",
    "RTX 3080 20GB",
    "RTX 2080 Ti 22GB",
}


def test_modded_boards_are_flagged() -> None:
    assert sku("RTX 4090", 48).modded and not sku("RTX 4090", 24).modded
    assert sku("RTX 2080 Ti", 22).modded and not sku("RTX 2080 Ti", 11).modded
    assert sku("RTX 4090D", 48).modded and not sku("RTX 4090D", 24).modded
    assert sku("RTX 3080", 20).modded and not sku("RTX 3080", 10).modded
    assert {s.label for s in CATALOG.all() if s.modded} == MODDED


def test_every_modded_board_is_sourced_and_outgrows_the_vendor_card() -> None:
    for board in (s for s in CATALOG.all() if s.modded):
        vendor_made = [v for v in CATALOG.variants(board.model) if not v.modded]
        assert vendor_made and board.vram_gb > max(v.vram_gb for v in vendor_made)
        assert board.segment == "consumer" and board.notes
        # A public page about the modded card, with what kind of source it is in brackets.
        assert any(src.startswith("https://") and "(" in src for src in board.source), board.label


def test_vram_variants_that_make_bare_names_ambiguous() -> None:
    assert {s.vram_gb for s in CATALOG.variants("H20")} == {96, 141}
    assert {s.vram_gb for s in CATALOG.variants("RTX 3060")} == {8, 12}
    assert {s.vram_gb for s in CATALOG.variants("RTX 2060")} == {6, 12}
    assert sku("RTX 3060", 8).mem_bandwidth_gbps == Decimal("240")
    assert sku("RTX 2060", 12).tdp_w == 185
    # NVIDIA publishes no datasheet for the 141 GB H20: its figures stay empty, not copied.
    h20 = sku("H20", 141, "SXM")
    assert h20.mem_bandwidth_gbps is None and h20.bf16_dense_tflops is None


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([_row(modded="true")], "needs more VRAM"),  # no vendor-made sibling
        ([_row(), _row(vram_gb="24", form_factor="PCIe", modded="true")], "needs more VRAM"),
        ([_row(), _row(vram_gb="16", modded="true")], "needs more VRAM"),
    ],
)
def test_parse_rejects_modded_rows_that_do_not_outgrow_the_vendor_card(
    rows: list[str], message: str
) -> None:
    with pytest.raises(CatalogError, match=message):
        parse_catalog(HEADER + "\n" + "\n".join(rows) + "\n")


def test_modded_row_above_the_vendor_card_parses() -> None:
    catalog = parse_catalog(f"{HEADER}\n{_row()}\n{_row(vram_gb='48', modded='true')}\n")
    assert [s.modded for s in catalog.variants("X1")] == [False, True]


def test_required_models_present() -> None:
    required = [
        "V100", "T4", "A10", "A16", "A30", "A40", "A100", "A800", "H100", "H800", "H200",
        "H20", "L4", "L20", "L40", "L40S", "B200", "GB200", "RTX A2000", "RTX A4000",
        "RTX A4500", "RTX A5000", "RTX A6000", "RTX 2000 Ada", "RTX 4000 Ada",
        "RTX 4500 Ada", "RTX 5000 Ada", "RTX 6000 Ada", "RTX PRO 6000", "RTX 2080 Ti",
        "RTX 3060", "RTX 3070", "RTX 3080", "RTX 3080 Ti", "RTX 3090", "RTX 3090 Ti",
        "RTX 4060 Ti", "RTX 4070", "RTX 4080", "RTX 4090", "RTX 4090D", "RTX 5060 Ti",
        "RTX 5070", "RTX 5080", "RTX 5090", "RTX 5090D", "RTX 2060", "RTX 4080 SUPER",
        "RTX PRO 6000", "B300", "GH200", "TITAN RTX", "MI100", "MI210", "MI250",
        "MI250X", "MI300X", "MI325X", "MI355X", "Ascend 910B1", "Ascend 910B2",
        "Ascend 910B3", "Ascend 910B4", "MTT S4000",
        # Pascal/Turing GeForce cards that Vast.ai, RunPod and TensorDock hosts rent out
        "GTX 1060", "GTX 1070", "GTX 1070 Ti", "GTX 1080", "GTX 1080 Ti", "GTX 1650",
        "GTX 1660", "GTX 1660 SUPER", "GTX 1660 Ti", "TITAN Xp", "TITAN V",
    ]  # fmt: skip
    missing = [m for m in required if not CATALOG.variants(m)]
    assert missing == []


@pytest.mark.parametrize(
    ("model", "vram", "memory", "bandwidth", "tdp"),
    [
        ("GTX 1060", 3, "GDDR5", "192", 120),
        ("GTX 1060", 6, "GDDR5", "192", 120),
        ("GTX 1070", 8, "GDDR5", "256", 150),
        ("GTX 1070 Ti", 8, "GDDR5", "256", 180),
        ("GTX 1080", 8, "GDDR5X", "320", 180),
        ("GTX 1660", 6, "GDDR5", "192", 120),
        ("GTX 1660 SUPER", 6, "GDDR6", "336", 125),
        ("GTX 1660 Ti", 6, "GDDR6", "288", 120),
        ("GTX 1650 SUPER", 4, "GDDR6", "192", 100),
    ],
)
def test_pascal_and_turing_geforce_figures(
    model: str, vram: int, memory: str, bandwidth: str, tdp: int
) -> None:
    s = sku(model, vram)
    assert (s.memory_type, s.mem_bandwidth_gbps, s.tdp_w) == (memory, Decimal(bandwidth), tdp)
    assert s.segment == "consumer" and s.architecture in ("Pascal", "Turing")
    assert s.bf16_dense_tflops is None and not s.fp8 and not s.modded
    assert s.compute_basis == "fp32"  # no tensor cores: the CUDA-core figure


def test_gtx_1060_comes_in_3_and_6_gb_and_the_gtx_1650_memory_is_left_open() -> None:
    assert [s.vram_gb for s in CATALOG.variants("GTX 1060")] == [3, 6]
    assert CATALOG.find("GTX 1060") is None  # a bare name does not say which
    gtx1650 = sku("GTX 1650", 4)  # GDDR5 (128 GB/s) and GDDR6 (192 GB/s) boards share the name
    assert (gtx1650.memory_type, gtx1650.mem_bandwidth_gbps) == (None, None)
    assert gtx1650.notes is not None and "GDDR6" in gtx1650.notes


def test_a100_has_four_variants_in_order() -> None:
    assert [s.label for s in CATALOG.variants("a100")] == [
        "A100 40GB PCIe",
        "A100 40GB SXM",
        "A100 80GB PCIe",
        "A100 80GB SXM",
    ]


def test_find_returns_none_when_ambiguous_or_missing() -> None:
    assert CATALOG.find("A100") is None  # four variants
    assert CATALOG.find("A100", 80) is None  # PCIe and SXM
    assert CATALOG.find("A100", 80, "sxm") == sku("A100", 80, "SXM")
    assert CATALOG.find("RTX 4090", 40) is None
    assert CATALOG.find("No Such GPU") is None
    assert CATALOG.find("l40s") == sku("L40S", 48, "PCIe")
    assert CATALOG.variants("No Such GPU") == []


def test_get_catalog_is_cached_and_load_reads_a_path(tmp_path: Path) -> None:
    assert get_catalog() is get_catalog()
    path = tmp_path / "gpus.csv"
    path.write_text(f"{HEADER}\n{_row()}\n", encoding="utf-8")
    loaded = load_catalog(path)
    assert [s.label for s in loaded.all()] == ["X1 24GB"]


def test_sku_label_and_key() -> None:
    s = sku("H100", 94, "NVL")
    assert s.label == "H100 94GB NVL"
    assert s.key == ("H100", 94, "NVL")


@pytest.mark.parametrize(
    ("cells", "message"),
    [
        ({"vram_gb": ""}, "vram_gb is required"),
        ({"vram_gb": "24.5"}, "whole number"),
        ({"form_factor": "MXM"}, "form_factor"),
        ({"segment": "gaming"}, "segment"),
        ({"source": ""}, "no source"),
        ({"mem_bandwidth_gbps": "fast"}, "not a number"),
        ({"mem_bandwidth_gbps": "-5"}, "positive"),
        ({"fp8": "maybe"}, "boolean"),
        ({"fp8_dense_tflops": "100"}, "fp8 is false"),
        ({"fp32_tflops": "0"}, "positive"),
    ],
)
def test_parse_rejects_bad_rows(cells: dict[str, str], message: str) -> None:
    with pytest.raises(CatalogError, match=message):
        parse_catalog(f"{HEADER}\n{_row(**cells)}\n")


def test_parse_rejects_duplicates_and_short_rows_and_missing_columns() -> None:
    with pytest.raises(CatalogError, match="duplicate"):
        parse_catalog(f"{HEADER}\n{_row()}\n{_row(model='x1')}\n")
    with pytest.raises(CatalogError, match="cells"):
        parse_catalog(f"{HEADER}\nNVIDIA,X1,24\n")
    with pytest.raises(CatalogError, match="lacks columns"):
        parse_catalog("vendor,model\nNVIDIA,X1\n")
