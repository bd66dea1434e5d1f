"""Answers that hold up when a renter acts on them: unknown is never a yes, speed on the
cards an offer rents, one answer that agrees with its table, form factors, FP8 on Ampere,
and a precision read from the model's name."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sizing_kit import build_warehouse, cli_app, offer, run_for
from typer.testing import CliRunner

from gpurent_core.catalog import get_catalog
from gpurent_core.model import PriceBasis
from sizing.checks import SpeedTargets
from sizing.models import another_model, find_model, name_precision
from sizing.speed import Latency

runner = CliRunner()

# One user: its first token alone is also the worst one (the target reads the last of a
# batch's prompts sent at once: at 8 users, 8 x 327 ms even on eight H100s).
QWEN32_AWQ_TTFT = [
    "size", "--model", "qwen2.5-32b", "--precision", "awq", "--prompt-tokens", "16000",
    "--gen-tokens", "1000", "--batch", "1", "--ttft-ms", "1000", "--currency", "USD",
]  # fmt: skip


def invoke(args: list[str], db: Path, *extra: str) -> Any:
    return runner.invoke(cli_app(), [*args, "--db", str(db), *extra], env={"COLUMNS": "250"})


def size_json(args: list[str], db: Path, *extra: str) -> dict[str, Any]:
    result = invoke(args, db, "--format", "json", *extra)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert isinstance(data, dict)
    return data


def keys(rows: list[dict[str, Any]]) -> list[str]:
    return [r["offer_key"] for r in rows]


def by_key(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["offer_key"]: r for r in rows}


def row_references_hold(data: dict[str, Any]) -> None:
    """Every "row N, <offer>" the verdict names is that row of the table."""
    labels = [
        f"{o['provider']} {o['card']} x{o['gpu_count']}" for o in data["offers"]
    ]  # the same label the verdict uses
    for n, label in re.findall(r"row (\d+), ([^,]+?) x\d+", data["verdict"]):
        assert labels[int(n) - 1].startswith(label), (n, label, labels)


# --- 1. unknown is never a yes ------------------------------------------------------------


def test_an_unknown_latency_never_meets_a_target() -> None:
    targets = SpeedTargets(ttft_ms=1000)
    unknown = Latency(ttft_s=None, decode=None, batch=1, ttft_worst_s=None, gen_tokens=100)
    assert targets.unknown(unknown) and not targets.misses(unknown)
    assert not targets.meets(unknown)
    half = Latency(ttft_s=0.5, decode=None, batch=1, ttft_worst_s=0.5, gen_tokens=100)
    assert targets.meets(half)
    assert not SpeedTargets(tokens_per_s=10).meets(half)


@pytest.fixture
def untold(tmp_path: Path) -> Path:
    """A cheap card whose TFLOPS the catalog does not have (RTX 5090D: bandwidth known,
    compute not), beside H100s that can be told."""
    acme = run_for("acme")
    return build_warehouse(
        tmp_path / "untold.duckdb",
        {
            "acme": [
                offer(acme, "5090d", "RTX 5090D", 32, gpu_count=4, price=Decimal("2.00"),
                      price_basis=PriceBasis.INSTANCE),
                offer(acme, "h100", "H100", 80, gpu_form_factor="SXM", price=Decimal("2.50"),
                      available_count=8),
            ]
        },
    )  # fmt: skip


def test_a_card_with_no_tflops_is_not_ranked_as_meeting_a_first_token_target(
    untold: Path,
) -> None:
    # Before: 4 x RTX 4090D/5090D came first, "first token unknown ... It meets the targets".
    data = size_json(QWEN32_AWQ_TTFT, untold)
    assert "5090d" not in keys(data["offers"])
    assert keys(data["cannot_tell"]) == ["5090d"]
    assert "first-token latency unknown" in data["cannot_tell"][0]["note"]
    for row in data["offers"]:
        assert row["ttft_ms"] is not None and row["ttft_ms"] <= 1000
    assert "unknown" not in data["speed_verdict"]
    assert data["verdict"].startswith("Rent acme H100 80GB SXM x4 (row 1)")
    assert "Cannot tell, 1 offer set apart (not ranked): RTX 5090D 32GB x4" in data["verdict"]
    table = invoke(QWEN32_AWQ_TTFT, untold).stdout
    assert "cannot tell (1): not ranked" in table


def test_only_untold_offers_is_no_yes(untold: Path) -> None:
    data = size_json(QWEN32_AWQ_TTFT, untold, "--gpu", "RTX 5090D")
    assert data["offers"] == [] and keys(data["cannot_tell"]) == ["5090d"]
    assert "No offer in stock is known to meet the targets" in data["verdict"]
    assert "meets the targets" not in data["verdict"]
    assert "cannot be told" in data["offers_reason"]


# --- 2. speed on the cards the offer rents ------------------------------------------------


@pytest.fixture
def hopper_machines(tmp_path: Path) -> Path:
    acme, zeta = run_for("acme"), run_for("zeta")
    return build_warehouse(
        tmp_path / "machines.duckdb",
        {
            # a whole 8-card machine
            "acme": [
                offer(acme, "h100x8", "H100", 80, gpu_form_factor="SXM", gpu_count=8,
                      available_count=8, price=Decimal("20.00"),
                      price_basis=PriceBasis.INSTANCE),
            ],
            "zeta": [
                # per card, 8 free: 1, 2, 4 or 8 can be rented
                offer(zeta, "h100-card", "H100", 80, gpu_form_factor="SXM", available_count=8,
                      price=Decimal("2.50")),
                # per card, 1 free: one card only
                offer(zeta, "h100-one", "H100", 80, gpu_form_factor="SXM", available_count=1,
                      price=Decimal("2.20")),
            ],
        },
    )  # fmt: skip


def test_an_eight_card_machine_is_timed_on_its_eight_cards(hopper_machines: Path) -> None:
    # Before: left out at 2358 ms (timed on 1 card), while --gpus 8 gave it 327 ms.
    data = size_json(QWEN32_AWQ_TTFT, hopper_machines)
    rows = by_key(data["offers"])
    machine = rows["h100x8"]
    assert (machine["gpu_count"], machine["tensor_parallel"]) == (8, 8)
    assert machine["ttft_ms"] == pytest.approx(327, abs=5)
    fixed = size_json(QWEN32_AWQ_TTFT, hopper_machines, "--gpus", "8")
    assert by_key(fixed["offers"])["h100x8"]["ttft_ms"] == machine["ttft_ms"]


def test_more_cards_that_meet_a_target_are_said(hopper_machines: Path) -> None:
    data = size_json(QWEN32_AWQ_TTFT, hopper_machines)
    card = by_key(data["offers"])["h100-card"]
    assert (card["gpu_count"], card["tensor_parallel"]) == (4, 4)
    assert card["ttft_ms"] == pytest.approx(655, abs=5)
    assert card["note"] == "meets 1000 ms with 4 cards (2358 ms on 1)"
    assert "meets 1000 ms with 4 cards" in data["verdict"]
    [one] = [e for e in data["excluded"] if e["offer_key"] == "h100-one"]
    assert one["reason"] == (
        "first token 2358 ms > 1000 ms target; 4 cards of this kind would meet it (655 ms)"
    )


def test_a_machine_serves_copies_when_that_is_faster_per_token(tmp_path: Path) -> None:
    acme = run_for("acme")
    db = build_warehouse(
        tmp_path / "copies.duckdb",
        {"acme": [offer(acme, "4090x8", "RTX 4090", 24, gpu_count=8, available_count=None,
                        price=Decimal("8.00"), price_basis=PriceBasis.INSTANCE)]},
    )  # fmt: skip
    args = ["size", "--model", "llama-3.1-8b", "--prompt-tokens", "1000", "--gen-tokens", "500"]
    many = size_json([*args, "--batch", "64"], db)
    [row] = many["offers"]
    assert row["gpu_count"] == 8 and row["tensor_parallel"] * row["copies"] == 8
    # the machine's speed counts every card: more than one card's worth of tokens
    one_card = size_json([*args, "--batch", "8", "--gpus", "1"], db)["offers"][0]
    assert row["tokens_per_s"] > 4 * one_card["tokens_per_s"]


# --- 4. one answer, then the details ------------------------------------------------------


@pytest.fixture
def three_speeds(tmp_path: Path) -> Path:
    """A cheap slow card, a slightly faster dear one, and a much faster one that is the
    cheapest per token."""
    acme = run_for("acme")
    return build_warehouse(
        tmp_path / "speeds.duckdb",
        {
            "acme": [
                offer(acme, "3090", "RTX 3090", 24, price=Decimal("1.00")),
                offer(acme, "4090", "RTX 4090", 24, price=Decimal("2.00")),
                offer(acme, "h100", "H100", 80, gpu_form_factor="SXM", price=Decimal("2.50")),
            ]
        },
    )


LLAMA8 = [
    "size", "--model", "llama-3.1-8b", "--prompt-tokens", "2000", "--gen-tokens", "500",
    "--gpus", "1", "--currency", "USD",
]  # fmt: skip


def test_the_verdict_agrees_with_its_table(three_speeds: Path) -> None:
    data = size_json(LLAMA8, three_speeds)
    rows = data["offers"]
    assert keys(rows) == ["3090", "4090", "h100"]
    first = rows[0]
    better = [
        r
        for r in rows[1:]
        if r["tokens_per_s_per_user"] > first["tokens_per_s_per_user"]
        and Decimal(r["cost_per_million_tokens"]) < Decimal(first["cost_per_million_tokens"])
    ]
    assert [r["offer_key"] for r in better] == ["h100"]
    verdict = data["verdict"]
    # Before: "capacity-bound ... extra speed is only worth it if you need it", naming the
    # 4090 while the H100 was 3.6x faster and cheaper per token.
    assert verdict.startswith("Rent acme RTX 3090 24GB x1 (row 1)")
    assert "Runner-up: row 3, acme H100 80GB SXM x1" in verdict
    assert "bandwidth-bound" in verdict and "capacity-bound" not in verdict
    row_references_hold(data)


def test_one_offer_is_named_as_the_pick(tmp_path: Path) -> None:
    acme = run_for("acme")
    db = build_warehouse(
        tmp_path / "pick.duckdb",
        {
            "acme": [
                # cheapest by the month, but the catalog has no bandwidth for the A10G
                offer(acme, "a10g", "A10G", 24, gpu_form_factor="PCIe", price=Decimal("0.50")),
                offer(acme, "3090", "RTX 3090", 24, price=Decimal("1.00")),
                offer(acme, "h100", "H100", 80, gpu_form_factor="SXM", price=Decimal("2.50")),
            ]
        },
    )
    data = size_json(LLAMA8, db)
    verdict = data["verdict"]
    # Before: "Best by monthly: acme A10G" then "the cheapest fitting card, acme RTX 3090".
    assert verdict.count("Rent ") == 1 and "the cheapest fitting card" not in verdict
    assert verdict.startswith("Rent acme A10G 24GB x1 (row 1)")
    assert "its speed is unknown" in verdict
    row_references_hold(data)


def test_left_out_offers_are_grouped_with_counts(tmp_path: Path) -> None:
    acme, zeta = run_for("acme"), run_for("zeta")
    slow = [offer(acme, f"a800-{n}", "A800", 80, gpu_form_factor="PCIe", available_count=1)
            for n in range(6)]  # fmt: skip
    db = build_warehouse(
        tmp_path / "many.duckdb",
        {"acme": slow, "zeta": [offer(zeta, "a800", "A800", 80, gpu_form_factor="PCIe",
                                      available_count=1)]},
    )  # fmt: skip
    data = size_json(QWEN32_AWQ_TTFT, db)
    assert len(data["excluded"]) == 7  # every offer is still listed for programs
    [group] = data["left_out"]
    assert (group["step"], group["count"], group["providers"]) == ("speed", 7, ["acme", "zeta"])
    assert group["card"] == "A800 80GB PCIe x1"
    assert "Left out, 7 that miss a target: A800 80GB PCIe x1: first token" in data["verdict"]
    assert "(7 offers: acme, zeta)" in data["verdict"]
    table = invoke(QWEN32_AWQ_TTFT, db).stdout
    lines = [line for line in table.splitlines() if line.startswith("left out")]
    # Before: seven identical lines, one per offer.
    assert len(lines) == 1 and lines[0].startswith("left out (speed), 7 offers: A800 80GB PCIe")


# --- 5. form factor -----------------------------------------------------------------------


@pytest.fixture
def forms(tmp_path: Path) -> Path:
    acme = run_for("acme")
    return build_warehouse(
        tmp_path / "forms.duckdb",
        {
            "acme": [
                offer(acme, "pcie", "H100", 80, gpu_form_factor="PCIe", price=Decimal("2.00")),
                offer(acme, "sxm", "H100", 80, gpu_form_factor="SXM", price=Decimal("2.50")),
                offer(acme, "unsaid", "H100", 80, price=Decimal("2.20")),
            ]
        },
    )


def test_the_size_table_shows_the_form_factor(forms: Path) -> None:
    data = size_json(LLAMA8, forms)
    rows = by_key(data["offers"])
    assert [rows[k]["card"] for k in ("pcie", "sxm", "unsaid")] == [
        "H100 80GB PCIe",
        "H100 80GB SXM",
        "H100 80GB (form unsaid)",
    ]
    assert rows["sxm"]["gpu_form_factor"] == "SXM" and rows["unsaid"]["gpu_form_factor"] is None
    # An offer that does not say is timed as the slowest form it can be.
    assert rows["unsaid"]["figures_of"] == "H100 80GB PCIe"
    assert rows["sxm"]["tokens_per_s"] > rows["pcie"]["tokens_per_s"]
    table = invoke(LLAMA8, forms).stdout
    assert "H100 80GB SXM" in table and "H100 80GB PCIe" in table


def test_a_gpu_filter_tells_the_form_factors_apart(forms: Path) -> None:
    sxm = size_json(LLAMA8, forms, "--gpu", "H100 SXM")
    assert keys(sxm["offers"]) == ["sxm"] and sxm["gpu_filter"] == "H100 80GB SXM"
    assert set(keys(size_json(LLAMA8, forms, "--gpu", "H100")["offers"])) == {
        "pcie",
        "sxm",
        "unsaid",
    }
    none = size_json(LLAMA8, forms, "--gpu", "A100")
    assert none["offers"] == [] and "--gpu" in none["offers_reason"]
    bad = invoke(LLAMA8, forms, "--gpu", "H1OOx")
    assert bad.exit_code == 2


# --- 6. FP8 on Ampere ---------------------------------------------------------------------


def test_fp8_runs_weight_only_on_ampere(tmp_path: Path) -> None:
    acme = run_for("acme")
    db = build_warehouse(
        tmp_path / "fp8.duckdb",
        {
            "acme": [
                offer(acme, "a100", "A100", 80, gpu_form_factor="SXM", price=Decimal("1.50")),
                offer(acme, "h100", "H100", 80, gpu_form_factor="SXM", price=Decimal("2.50")),
                offer(acme, "v100", "V100", 32, gpu_form_factor="SXM", price=Decimal("0.40")),
            ]
        },
    )
    args = ["size", "--model", "llama-3.1-8b", "--prompt-tokens", "8000", "--gen-tokens", "500",
            "--gpus", "1"]  # fmt: skip
    fp8 = size_json([*args, "--precision", "fp8"], db)
    bf16 = size_json([*args, "--precision", "bf16"], db)
    rows, rows16 = by_key(fp8["offers"]), by_key(bf16["offers"])
    # Before: "A100: no FP8", left out.
    a100 = rows["a100"]
    assert "FP8 weight-only via Marlin" in a100["precision_note"]
    assert a100["need_gib_per_gpu"] < rows16["a100"]["need_gib_per_gpu"] - 5  # 1-byte weights
    assert a100["ttft_ms"] == pytest.approx(rows16["a100"]["ttft_ms"], rel=0.01)  # BF16 maths
    assert a100["tokens_per_s"] > rows16["a100"]["tokens_per_s"] * 1.5  # half the bytes read
    assert rows["h100"]["ttft_ms"] < rows16["h100"]["ttft_ms"] * 0.6  # FP8 tensor cores
    [v100] = fp8["excluded"]
    assert v100["reason"] == "V100: no FP8"
    assert "FP8 weight-only via Marlin" in fp8["verdict"]  # the A100 is the pick


# --- 7. the precision a model's name declares ---------------------------------------------


@pytest.mark.parametrize(
    ("name", "precision"),
    [
        ("Qwen/Qwen2.5-32B-Instruct-AWQ", "awq"),
        ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4", "gptq-int4"),
        ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8", "gptq-int8"),
        ("neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8", "fp8"),
        ("unsloth/Llama-3.1-8B-Instruct-bnb-4bit", "nf4"),
        ("Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", "q4_k_m"),
        ("bartowski/Qwen2.5-7B-Instruct-GGUF", "gguf-any"),
        ("Qwen/Qwen-7B-Chat-Int8", "int8-any"),
        ("Qwen/Qwen2.5-7B-Instruct", None),
    ],
)
def test_the_name_says_the_precision(name: str, precision: str | None) -> None:
    assert name_precision(name)[0] == precision
    assert find_model(name) is not None


def test_another_model_is_told_apart_from_another_spelling() -> None:
    llama = find_model("llama3.1-8b")
    assert llama is not None and llama.name == "Llama-3.1-8B"
    assert another_model("llama-3-8b", llama)
    for same in ("llama3.1-8b", "meta-llama/Meta-Llama-3.1-8B-Instruct", "Llama-3.1-8B-AWQ"):
        assert not another_model(same, llama), same


def test_a_quantised_model_id_is_sized_in_its_precision(tmp_path: Path) -> None:
    args = ["size", "--model", "Qwen/Qwen2.5-32B-Instruct-AWQ", "--prompt-tokens", "1000",
            "--gen-tokens", "100"]  # fmt: skip
    data = size_json(args, tmp_path / "none.duckdb")
    # Before: sized as bf16, 61 GiB of weights.
    assert data["precision"] == "awq"
    assert data["breakdown_gib"]["weights"] == pytest.approx(18.0, abs=0.1)
    assert "precision awq, read from Qwen/Qwen2.5-32B-Instruct-AWQ" in data["notes"]
    gguf = size_json(
        ["size", "--model", "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", "--engine", "llamacpp",
         "--prompt-tokens", "1000", "--gen-tokens", "100"],
        tmp_path / "none.duckdb",
    )  # fmt: skip
    assert gguf["precision"] == "q4_k_m"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "Qwen/Qwen2.5-32B-Instruct-AWQ", "--precision", "bf16"], "contradicts"),
        (["--model", "Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4", "--precision", "awq"], "contradicts"),
        (["--model", "bartowski/Qwen2.5-7B-Instruct-GGUF"], "pass --precision with its GGUF"),
        (["--model", "bartowski/Qwen2.5-7B-Instruct-GGUF", "--precision", "awq"], "contradicts"),
    ],
)
def test_a_precision_that_contradicts_the_checkpoint_is_refused(
    tmp_path: Path, args: list[str], message: str
) -> None:
    result = invoke(["size", *args, "--prompt-tokens", "100", "--gen-tokens", "10"],
                    tmp_path / "none.duckdb")  # fmt: skip
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert len([line for line in result.output.splitlines() if "contradicts" in line]) <= 1


def test_the_same_precision_as_the_name_is_fine(tmp_path: Path) -> None:
    for precision in ("awq", "AWQ"):
        args = ["size", "--model", "Qwen/Qwen2.5-32B-Instruct-AWQ", "--precision", precision,
                "--prompt-tokens", "100", "--gen-tokens", "10"]  # fmt: skip
        assert size_json(args, tmp_path / "none.duckdb")["precision"] == "awq"
    gguf = ["size", "--model", "bartowski/Qwen2.5-7B-Instruct-GGUF", "--precision", "q8_0",
            "--engine", "llamacpp", "--prompt-tokens", "100", "--gen-tokens", "10"]  # fmt: skip
    assert size_json(gguf, tmp_path / "none.duckdb")["precision"] == "q8_0"


def test_a_quantised_config_refuses_another_precision(tmp_path: Path) -> None:
    folder = tmp_path / "qwen-awq"
    folder.mkdir()
    config = {
        "model_type": "qwen2", "num_hidden_layers": 28, "hidden_size": 3584,
        "num_attention_heads": 28, "num_key_value_heads": 4, "intermediate_size": 18944,
        "vocab_size": 152064, "torch_dtype": "float16",
        "quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128},
    }  # fmt: skip
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    args = ["size", "--config", str(folder), "--prompt-tokens", "100", "--gen-tokens", "10"]
    assert size_json(args, tmp_path / "none.duckdb")["precision"] == "awq"
    refused = invoke([*args, "--precision", "fp8"], tmp_path / "none.duckdb")
    assert refused.exit_code == 2 and "contradicts" in refused.output
    # An unquantised checkpoint can be quantised on load: no contradiction.
    del config["quantization_config"]
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    assert size_json([*args, "--precision", "fp8"], tmp_path / "none.duckdb")["precision"] == "fp8"


def test_a_name_read_as_another_model_says_so(tmp_path: Path) -> None:
    args = ["size", "--model", "mixtral", "--prompt-tokens", "100", "--gen-tokens", "10"]
    data = size_json(args, tmp_path / "none.duckdb")
    assert data["model"]["name"] == "Mixtral-8x7B"
    assert data["notes"][0].startswith("'mixtral' is sized as Mixtral-8x7B")
    # The window checked is the entry's, and the note says so.
    assert "context window (32768 tokens)" in data["notes"][0]
    plain = size_json(["size", "--model", "llama3.1-8b", "--prompt-tokens", "100",
                       "--gen-tokens", "10"], tmp_path / "none.duckdb")  # fmt: skip
    assert not any("is sized as" in n for n in plain["notes"])


# --- the catalog cards the answers above lean on ------------------------------------------


def test_the_cards_used_here_have_the_figures_the_tests_assume() -> None:
    catalog = get_catalog()
    fifty = catalog.find("RTX 5090D", 32)
    assert fifty is not None and fifty.compute_tflops is None and fifty.mem_bandwidth_gbps
    a10g = catalog.find("A10G", 24)
    assert a10g is not None and a10g.mem_bandwidth_gbps is None
