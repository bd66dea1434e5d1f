"""The engine's own rules: the card counts it can start with (tensor-parallel splits), the
weight formats and KV-cache dtypes it can run, and the launch settings the answer assumes.

Each test here failed before these rules were modelled (sizing audit, findings 1, 3, 6): a
TP 4 split of Phi-4 was offered, llama.cpp "ran" AWQ, and no answer said --max-model-len.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sizing_kit import build_warehouse, cli_app, offer, run_for
from typer.testing import CliRunner

from gpurent_core.catalog import get_catalog
from gpurent_core.model import PriceBasis
from sizing.engines import ENGINE_FORMATS, Engine, Mode
from sizing.launch import launch_flags
from sizing.models import get_model
from sizing.placement import degree_notes, plan, valid_degrees
from sizing.quant import KV_DTYPE_BYTES, PRECISIONS, get_precision, with_group_size
from sizing.speed import Serving, serving_latency
from sizing.support import EngineCannotRun, engine_check
from sizing.workload import Workload

runner = CliRunner()
WL = Workload(prompt_tokens=1000, gen_tokens=100)


def invoke(args: list[str], db: Path) -> Any:
    return runner.invoke(cli_app(), [*args, "--db", str(db)], env={"COLUMNS": "250"})


def size_json(args: list[str], db: Path) -> dict[str, Any]:
    result = invoke([*args, "--format", "json"], db)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert isinstance(data, dict)
    return data


# --- finding 1: tensor-parallel splits the engine refuses ---------------------------------


def test_kv_heads_must_split_evenly_over_the_cards() -> None:
    # Phi-4: 40 heads (4 and 8 divide them) but 10 KV heads: vLLM needs divide(10, tp)
    # below 10 and divide(tp, 10) above, so neither TP 4 nor TP 8 can start.
    phi4 = get_model("Phi-4")
    assert (phi4.num_heads, phi4.num_kv_heads) == (40, 10)
    assert valid_degrees(phi4, WL, get_precision("bf16")) == [1, 2]
    with pytest.raises(ValueError, match="10 KV heads do not split evenly"):
        plan(phi4, get_precision("bf16"), WL, gpus=4)
    # Fewer KV heads than cards is fine: each is replicated (GLM-4-9B, 2 KV heads).
    assert valid_degrees(get_model("GLM-4-9B"), WL, get_precision("bf16")) == [1, 2, 4, 8]


@pytest.mark.parametrize(
    ("model", "precision", "degrees"),
    [
        ("Qwen2.5-72B", "awq", [1]),  # MLP 29568 = 231 groups of 128: odd
        ("Qwen2.5-14B", "awq", [1, 2, 4]),  # 13824 = 108 groups: not 8 ways
        ("Qwen2.5-3B", "gptq-int4", [1, 2]),  # 11008 = 86 groups: not 4 ways
        ("Qwen3-30B-A3B", "awq", [1, 2]),  # 768-wide experts = 6 groups: not 4 ways
        ("Qwen2.5-32B", "awq", [1, 2, 4, 8]),  # 27648 = 216 groups: every way
        ("Qwen2.5-14B", "bf16", [1, 2, 4, 8]),  # no groups: no group rule
        ("Qwen2.5-14B", "fp8", [1, 2, 4, 8]),
    ],
)
def test_group_quantised_widths_split_into_whole_groups(
    model: str, precision: str, degrees: list[int]
) -> None:
    assert valid_degrees(get_model(model), WL, get_precision(precision)) == degrees


def test_a_declared_group_size_moves_the_rule_and_the_bits() -> None:
    awq, qwen14 = get_precision("awq"), get_model("Qwen2.5-14B")
    g64 = with_group_size(awq, 64)  # 13824 / (8 x 64) = 27 groups per card
    assert g64.group_size == 64 and g64.bits == pytest.approx(4 + 20 / 64)
    assert valid_degrees(qwen14, WL, g64) == [1, 2, 4, 8]
    per_channel = with_group_size(awq, -1)  # one scale per column: no groups to split
    assert per_channel.group_size is None and per_channel.bits == 4
    assert valid_degrees(get_model("Qwen2.5-72B"), WL, per_channel) == [1, 2, 4, 8]
    assert with_group_size(get_precision("bf16"), 64) == get_precision("bf16")
    assert with_group_size(awq, None) is awq


def test_layer_split_and_training_have_no_tensor_parallel_rules() -> None:
    phi4, awq72 = get_model("Phi-4"), get_model("Qwen2.5-72B")
    for engine in (Engine.HF, Engine.LLAMACPP):
        layered = Workload(prompt_tokens=1000, gen_tokens=100, engine=engine)
        assert valid_degrees(phi4, layered, get_precision("bf16")) == [1, 2, 4, 8]
        assert valid_degrees(awq72, layered, get_precision("awq")) == [1, 2, 4, 8]
        assert degree_notes(phi4, get_precision("bf16"), layered) == []
    lora = Workload(prompt_tokens=1000, gen_tokens=0, mode=Mode.LORA)
    assert valid_degrees(phi4, lora, get_precision("bf16")) == [1, 2, 4, 8]


def test_the_answer_says_why_card_counts_are_left_out() -> None:
    notes = degree_notes(get_model("Phi-4"), get_precision("awq"), WL)
    assert notes == [
        "tensor parallel 4, 8 left out: its 10 KV heads do not split evenly (vLLM/SGLang "
        "need the tensor-parallel size to divide the KV heads, or the KV heads to divide it)"
    ]
    [note] = degree_notes(get_model("Qwen2.5-14B"), get_precision("awq"), WL)
    assert note.startswith("tensor parallel 8 left out: its MLP width of 13824 (108 groups")


def test_an_awq_config_whose_width_splits_into_odd_groups_stays_on_one_card(
    tmp_path: Path,
) -> None:
    # The audit's Qwen2.5-72B AWQ config (base intermediate_size 29568): TP 2, 4 and 8
    # were all offered; vLLM refuses every one.
    folder = tmp_path / "q72awq"
    folder.mkdir()
    config = {
        "model_type": "qwen2", "hidden_size": 8192, "intermediate_size": 29568,
        "num_hidden_layers": 80, "num_attention_heads": 64, "num_key_value_heads": 8,
        "vocab_size": 152064, "max_position_embeddings": 32768, "torch_dtype": "float16",
        "quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128},
    }  # fmt: skip
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    args = ["size", "--config", str(folder), "--prompt-tokens", "8000", "--gen-tokens", "1000"]
    data = size_json(args, tmp_path / "none.duckdb")
    assert [p["tensor_parallel"] for p in data["placements"]] == [1]
    assert any(n.startswith("tensor parallel 2, 4, 8 left out") for n in data["notes"])
    refused = invoke([*args, "--gpus", "8"], tmp_path / "none.duckdb")
    assert refused.exit_code == 2
    assert "8 GPUs cannot split" in refused.output and "29568" in refused.output


@pytest.fixture
def h100s(tmp_path: Path) -> Path:
    acme, zeta = run_for("acme"), run_for("zeta")
    return build_warehouse(
        tmp_path / "h100s.duckdb",
        {
            "acme": [offer(acme, "h100x8", "H100", 80, gpu_form_factor="SXM", gpu_count=8,
                           available_count=8, price=Decimal("20.00"),
                           price_basis=PriceBasis.INSTANCE)],
            "zeta": [offer(zeta, "h100-one", "H100", 80, gpu_form_factor="SXM",
                           available_count=1, price=Decimal("2.20"))],
        },
    )  # fmt: skip


def test_no_card_count_offered_or_hinted_breaks_the_rule(h100s: Path) -> None:
    # A first-token target that 4 H100s would meet and 2 would not: before, the 8-card
    # machine was picked at TP 8 or 4, and the single card hinted "4 cards of this kind
    # would meet it". vLLM cannot start Phi-4 on 4 or 8 cards.
    phi4, bf16 = get_model("Phi-4"), get_precision("bf16")
    wl = Workload(prompt_tokens=16000, gen_tokens=100)
    sku = get_catalog().find("H100", 80, "SXM")
    assert sku is not None

    def ttft_ms(cards: int) -> float:
        worst = serving_latency(phi4, bf16, wl, sku, Serving(cards, cards)).ttft_worst_s
        assert worst is not None
        return worst * 1000

    target = (ttft_ms(2) + ttft_ms(4)) / 2
    assert ttft_ms(4) < target < ttft_ms(2)
    args = ["size", "--model", "phi-4", "--prompt-tokens", "16000", "--gen-tokens", "100",
            "--ttft-ms", f"{target:.0f}", "--currency", "USD"]  # fmt: skip
    data = size_json(args, h100s)
    assert [p["tensor_parallel"] for p in data["placements"]] == [1, 2]
    assert all(o["tensor_parallel"] in (1, 2) for o in data["offers"] + data["cannot_tell"])
    assert not data["offers"]  # no split vLLM can start meets the target
    said = " ".join([data["verdict"], *(e["reason"] for e in data["excluded"])])
    assert "of this kind would meet it" not in said


# --- finding 3: engine x weight format x KV-cache dtype ------------------------------------


@pytest.mark.parametrize(
    ("engine", "precision", "kv", "says"),
    [
        (Engine.HF, "q4_k_m", "auto", "dequantises a GGUF file"),
        (Engine.LLAMACPP, "awq", "auto", "loads GGUF files only"),
        (Engine.LLAMACPP, "fp8", "auto", "loads GGUF files only"),
        (Engine.LLAMACPP, "gptq-int4", "auto", "loads GGUF files only"),
        (Engine.VLLM, "bf16", "q4_0", "--kv-cache-dtype takes auto"),
        (Engine.SGLANG, "bf16", "q8_0", "--kv-cache-dtype takes auto"),
        (Engine.LLAMACPP, "q4_k_m", "fp8", "no fp8 KV cache"),
        (Engine.HF, "bf16", "fp8", "caches K/V in the model's dtype"),
    ],
)
def test_a_format_the_engine_cannot_run_is_refused(
    engine: Engine, precision: str, kv: str, says: str
) -> None:
    wl = Workload(prompt_tokens=4000, gen_tokens=500, engine=engine, kv_dtype=kv)
    with pytest.raises(EngineCannotRun, match=says) as refused:
        engine_check(wl, get_precision(precision))
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize(
    ("engine", "precision", "kv"),
    [
        (Engine.LLAMACPP, "q4_k_m", "q8_0"),
        (Engine.LLAMACPP, "bf16", "q4_0"),
        (Engine.VLLM, "awq", "fp8"),
        (Engine.SGLANG, "fp8", "fp8_e5m2"),
        (Engine.HF, "nf4", "auto"),
        (Engine.HF, "gptq-int4", "bf16"),
    ],
)
def test_a_format_the_engine_runs_is_sized(engine: Engine, precision: str, kv: str) -> None:
    wl = Workload(prompt_tokens=4000, gen_tokens=500, engine=engine, kv_dtype=kv)
    assert engine_check(wl, get_precision(precision)) is None


def test_gguf_off_llamacpp_runs_with_a_caveat_and_training_is_not_checked() -> None:
    vllm = Workload(prompt_tokens=4000, gen_tokens=500)
    note = engine_check(vllm, get_precision("q4_k_m"))
    assert note is not None and "experimental" in note
    lora = Workload(prompt_tokens=4000, gen_tokens=0, engine=Engine.LLAMACPP, mode=Mode.LORA)
    assert engine_check(lora, get_precision("awq")) is None


def test_every_format_and_kv_dtype_runs_on_some_engine() -> None:
    # The table refuses combinations, never a format outright: a precision or KV dtype
    # gpurent sizes that no engine loads would be a gap in the table.
    families = {p.family for p in PRECISIONS.values()}
    assert families <= set().union(*(f.weights for f in ENGINE_FORMATS.values()))
    kv_names = {"auto", *KV_DTYPE_BYTES}
    assert kv_names <= set().union(*(f.kv for f in ENGINE_FORMATS.values()))
    assert set(ENGINE_FORMATS) == set(Engine)
    assert all(f.source for f in ENGINE_FORMATS.values())


@pytest.mark.parametrize(
    "extra",
    [
        ["--engine", "hf", "--precision", "q4_k_m"],
        ["--engine", "llamacpp", "--precision", "awq"],
        ["--engine", "vllm", "--kv-dtype", "q4_0"],
        ["--engine", "llamacpp", "--kv-dtype", "fp8"],
    ],
)
def test_the_command_line_refuses_in_one_line(tmp_path: Path, extra: list[str]) -> None:
    # Before: "Rent ... fits and runs q4_k_m" (HF), "fits and runs awq" (llama.cpp), and a
    # q4_0 cache sized under vLLM.
    args = ["size", "--model", "llama-3.1-8b", "--prompt-tokens", "4000", "--gen-tokens",
            "500", *extra]  # fmt: skip
    result = invoke(args, tmp_path / "none.duckdb")
    assert result.exit_code == 2, result.output
    assert "cannot run" in result.output or "cannot keep" in result.output
    assert "fits" not in result.output


# --- finding 6: the launch settings the estimate assumes -----------------------------------


def test_vllm_is_told_its_context_and_concurrency() -> None:
    wl = Workload(prompt_tokens=2000, gen_tokens=500, batch=8)
    assert launch_flags(wl, 131072, 1, 8) == ("--max-model-len", "2500", "--max-num-seqs", "8")
    # the model's whole window is vLLM's default: only concurrency, TP and the cache
    full = Workload(prompt_tokens=130000, gen_tokens=1072, batch=2, kv_dtype="fp8")
    assert launch_flags(full, 131072, 4, 2) == (
        "--tensor-parallel-size", "4", "--max-num-seqs", "2", "--kv-cache-dtype", "fp8",
    )  # fmt: skip
    assert "--max-model-len" in launch_flags(wl, None, 1, 8)  # window unknown: say it


def test_other_engines_are_told_theirs() -> None:
    sglang = Workload(prompt_tokens=2000, gen_tokens=500, batch=8, engine=Engine.SGLANG,
                      kv_dtype="fp8")  # fmt: skip
    assert launch_flags(sglang, 32768, 2, 8) == (
        "--tp", "2", "--context-length", "2500", "--max-running-requests", "8",
        "--kv-cache-dtype", "fp8_e4m3", "--mem-fraction-static", "0.88",
    )  # fmt: skip
    llama = Workload(prompt_tokens=2000, gen_tokens=500, batch=4, engine=Engine.LLAMACPP,
                     kv_dtype="q8_0")  # fmt: skip
    assert launch_flags(llama, 131072, 1, 4) == (
        "-c", "10000", "-np", "4", "-ngl", "999", "-ctk", "q8_0", "-ctv", "q8_0", "-fa", "on",
    )  # fmt: skip
    hf = Workload(prompt_tokens=2000, gen_tokens=500, engine=Engine.HF)
    assert launch_flags(hf, 131072, 2, 1) == ()


def test_the_answer_says_what_to_launch_with(tmp_path: Path) -> None:
    # Audit repro 09: Llama-3.1-8B, 2000 + 500 tokens, "Rent ... RTX 3090 x1" and nothing
    # said of vLLM's default max_model_len (131072, which that card's KV pool cannot hold).
    args = ["size", "--model", "llama-3.1-8b", "--prompt-tokens", "2000", "--gen-tokens",
            "500", "--batch", "8"]  # fmt: skip
    alone = size_json(args, tmp_path / "none.duckdb")
    line = "Launch vLLM (vllm serve) with --max-model-len 2500 --max-num-seqs 8 on 1 x "
    assert line in alone["verdict"]
    assert any(n.startswith(line) for n in alone["notes"])
    acme = run_for("acme")
    db = build_warehouse(
        tmp_path / "one.duckdb",
        {"acme": [offer(acme, "3090", "RTX 3090", 24, available_count=1)]},
    )
    ranked = size_json(args, db)
    assert ranked["offers"][0]["offer_key"] == "3090"
    told = "Launch vLLM (vllm serve) with --max-model-len 2500 --max-num-seqs 8 for row 1:"
    assert told in ranked["verdict"] and told in " ".join(ranked["notes"])


def test_copies_are_launched_each_with_their_share_of_users(tmp_path: Path) -> None:
    acme = run_for("acme")
    db = build_warehouse(
        tmp_path / "copies.duckdb",
        {"acme": [offer(acme, "4090x8", "RTX 4090", 24, gpu_count=8, available_count=None,
                        price=Decimal("8.00"), price_basis=PriceBasis.INSTANCE)]},
    )  # fmt: skip
    # Two cards per copy (--gpus 2): the 8-card machine serves 4 copies, 16 users each.
    args = ["size", "--model", "llama-3.1-8b", "--prompt-tokens", "1000", "--gen-tokens",
            "500", "--batch", "64", "--gpus", "2"]  # fmt: skip
    data = size_json(args, db)
    [row] = data["offers"]
    assert (row["tensor_parallel"], row["copies"]) == (2, 4)
    assert (
        "with --tensor-parallel-size 2 --max-model-len 1500 --max-num-seqs 16 for row 1, one "
        "server per 2 cards (4 copies)"
    ) in data["verdict"]


def test_fine_tuning_and_transformers_have_nothing_to_launch(tmp_path: Path) -> None:
    for extra in (["--engine", "hf"], ["--mode", "lora"]):
        args = ["size", "--model", "qwen2.5-7b", "--prompt-tokens", "1000", "--gen-tokens",
                "100", *extra]  # fmt: skip
        data = size_json(args, tmp_path / "none.duckdb")
        assert "Launch" not in data["verdict"]
        assert not any(n.startswith("Launch") for n in data["notes"])


def test_a_config_declaring_its_group_size_is_sized_with_it(tmp_path: Path) -> None:
    """The groups a checkpoint declares set its bits (one fp16 scale and one packed zero per
    group), not gpurent's 128 default."""
    import json

    from gpurent import api

    config = {
        "model_type": "qwen2", "num_hidden_layers": 28, "hidden_size": 3584,
        "num_attention_heads": 28, "num_key_value_heads": 4, "intermediate_size": 18944,
        "vocab_size": 152064, "torch_dtype": "float16",
        "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 32},
    }  # fmt: skip
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    grouped = api.size(config=tmp_path, prompt_tokens=100, gen_tokens=10, db=tmp_path / "no.db")
    config["quantization_config"]["group_size"] = 128  # type: ignore[index]
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    default = api.size(config=tmp_path, prompt_tokens=100, gen_tokens=10, db=tmp_path / "no.db")
    assert grouped.bits_per_weight == pytest.approx(4 + 20 / 32, abs=0.001)
    assert default.bits_per_weight == pytest.approx(4 + 20 / 128, abs=0.001)


def test_an_fp8_checkpoint_with_weight_blocks_splits_in_whole_blocks(tmp_path: Path) -> None:
    """Qwen3-235B-A22B-FP8 declares 128x128 weight blocks: its 1536-wide experts give 192 per
    card at TP 8, not whole blocks, and vLLM refuses it; TP 4 (384) runs. Its bits stay 8."""
    import json

    from gpurent import api

    config = {
        "model_type": "qwen3_moe", "num_hidden_layers": 94, "hidden_size": 4096,
        "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 128,
        "intermediate_size": 12288, "vocab_size": 151936, "num_experts": 128,
        "num_experts_per_tok": 8, "moe_intermediate_size": 1536,
        "max_position_embeddings": 40960, "torch_dtype": "bfloat16",
        "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]},
    }  # fmt: skip
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    answer = api.size(config=tmp_path, prompt_tokens=1000, gen_tokens=100, db=tmp_path / "n.db")
    assert answer.precision == "fp8" and answer.bits_per_weight == pytest.approx(8, abs=0.01)
    degrees = {p.tensor_parallel for p in answer.placements}
    assert 8 not in degrees and 4 in degrees
    assert any("tensor parallel 8 left out" in n and "1536" in n for n in answer.notes)
    del config["quantization_config"]["weight_block_size"]  # type: ignore[attr-defined]
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    plain = api.size(config=tmp_path, prompt_tokens=1000, gen_tokens=100, db=tmp_path / "n.db")
    assert 8 in {p.tensor_parallel for p in plain.placements}
