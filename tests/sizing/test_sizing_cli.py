"""`gpurent size` and `gpurent models` through the CLI: before any crawl and on a warehouse."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sizing_kit import build_warehouse, cli_app, offer, run_for
from typer.testing import CliRunner

from gpurent_core.model import PriceBasis, StockStatus

runner = CliRunner()

QWEN32_AWQ = [
    "size",
    "--model",
    "qwen2.5-32b",
    "--precision",
    "awq",
    "--prompt-tokens",
    "16000",
    "--gen-tokens",
    "1000",
    "--batch",
    "8",
]


def size_json(args: list[str], db: Path, *extra: str) -> dict[str, Any]:
    result = runner.invoke(cli_app(), [*args, "--db", str(db), "--format", "json", *extra])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert isinstance(data, dict)
    return data


def test_size_before_any_crawl(tmp_path: Path) -> None:
    data = size_json(QWEN32_AWQ, tmp_path / "nothing-here.duckdb")
    assert data["offers"] == []
    assert "no warehouse" in data["offers_reason"]
    for key in (
        "per_gpu_gib",
        "total_gib",
        "tensor_parallel",
        "tier_gb",
        "max_concurrency",
        "verdict",
        "placements",
    ):
        assert key in data
    breakdown = data["breakdown_gib"]
    assert set(breakdown) >= {"weights", "kv_cache", "activations", "overhead", "headroom"}
    assert data["per_gpu_gib"] == pytest.approx(sum(breakdown.values()), abs=0.05)
    assert data["breakdown_gib"]["weights"] == pytest.approx(18.0, abs=0.1)  # AWQ, 16-bit emb.
    assert data["tensor_parallel"] == 1 and data["tier_gb"] >= 64
    assert data["max_concurrency"] >= 8
    assert data["total_gib"] == pytest.approx(data["per_gpu_gib"] * data["gpus"], abs=0.01)
    assert str(data["tier_gb"]) in data["verdict"]


def test_table_output_before_any_crawl(tmp_path: Path) -> None:
    result = runner.invoke(cli_app(), [*QWEN32_AWQ, "--db", str(tmp_path / "none.duckdb")])
    assert result.exit_code == 0, result.output
    assert "memory per GPU" in result.output and "kv_cache" in result.output
    assert "no warehouse" in result.output


@pytest.fixture
def market(tmp_path: Path) -> Path:
    """Cards around Qwen2.5-32B AWQ 8 x 17k (61 GiB/GPU at TP1, 33.5 at TP2, 18.8 at TP4)."""
    acme, zeta = run_for("acme"), run_for("zeta")
    return build_warehouse(
        tmp_path / "wh" / "gpurent.duckdb",
        {
            "acme": [
                # fits at TP1, cheapest of all, but sold out: must be left out
                offer(
                    acme,
                    "a100-gone",
                    "A100",
                    80,
                    price=Decimal("0.50"),
                    status=StockStatus.SOLD_OUT,
                    available_count=0,
                ),
                # fits at TP1
                offer(acme, "a100", "A100", 80, gpu_form_factor="SXM", price=Decimal("1.20")),
                # one card, too small at TP1; per-GPU pricing rents 2 -> fits at TP2
                offer(acme, "l40s", "L40S", 48, price=Decimal("0.70")),
                # 24 GB: fits only at TP4, whole 4-card machine
                offer(
                    acme,
                    "4090x4",
                    "RTX 4090",
                    24,
                    gpu_count=4,
                    price=Decimal("1.60"),
                    price_basis=PriceBasis.INSTANCE,
                ),
            ],
            "zeta": [
                offer(zeta, "h200", "H200", 141, gpu_form_factor="SXM", price=Decimal("2.50")),
                # unknown stock is not in stock
                offer(
                    zeta,
                    "h100-dunno",
                    "H100",
                    80,
                    gpu_form_factor="SXM",
                    price=Decimal("0.90"),
                    status=StockStatus.UNKNOWN,
                    available_count=None,
                ),
                # a 24 GB single card cannot hold any placement of this model
                offer(zeta, "3090", "RTX 3090", 24, price=Decimal("0.20"), available_count=1),
            ],
        },
    )


def keys(data: dict[str, Any]) -> list[str]:
    return [o["offer_key"] for o in data["offers"]]


def test_size_ranks_only_in_stock_offers_that_fit(market: Path) -> None:
    data = size_json(QWEN32_AWQ, market, "--currency", "USD")
    assert data["offers_reason"] is None
    assert set(keys(data)) == {"a100", "l40s", "4090x4", "h200"}
    by_key = {o["offer_key"]: o for o in data["offers"]}
    assert by_key["a100"]["tensor_parallel"] == 1 and by_key["a100"]["gpu_count"] == 1
    assert by_key["l40s"]["tensor_parallel"] == 2 and by_key["l40s"]["gpu_count"] == 2
    assert by_key["4090x4"]["tensor_parallel"] == 4
    # monthly ranking: 4090x4 1.60, l40s 2 x 0.70 = 1.40, a100 1.20, h200 2.50 (USD/h, 730 h)
    assert keys(data) == ["a100", "l40s", "4090x4", "h200"]
    assert Decimal(by_key["l40s"]["true_hourly"]) == Decimal("1.4")
    assert Decimal(by_key["a100"]["true_monthly"]) == Decimal("876")
    for o in data["offers"]:
        assert o["status"] in ("in_stock", "low")
        assert o["tokens_per_s"] > 0
        per_million = Decimal(o["true_hourly"]) * 1_000_000 / (Decimal(o["tokens_per_s"]) * 3600)
        assert Decimal(o["cost_per_million_tokens"]) == pytest.approx(
            per_million, rel=Decimal("0.01")
        )
    assert data["verdict"].startswith("Rent acme A100 80GB SXM x1 (row 1): the cheapest by")


def test_size_bills_sessions_and_boot_by_the_providers_terms(market: Path) -> None:
    def a100_monthly(*usage: str) -> Decimal:
        data = size_json(
            QWEN32_AWQ, market, "--currency", "USD", "--hours-per-month", "100", *usage
        )
        [a100] = [o for o in data["offers"] if o["offer_key"] == "a100"]
        return Decimal(a100["true_monthly"])

    # "acme" has no billing facts on file: metered exactly, and boot time is counted.
    assert a100_monthly() == Decimal("120")  # 1.20 x 100 h
    assert a100_monthly("--session-hours", "5") == Decimal("120")
    # 20 sessions of 5 h, 30 minutes of boot each: 110 h billed.
    assert a100_monthly("--session-hours", "5", "--boot-minutes", "30") == Decimal("132")


def test_size_per_token_objective_reorders(market: Path) -> None:
    data = size_json(QWEN32_AWQ, market, "--currency", "USD", "--objective", "per-token")
    per_token = [Decimal(o["cost_per_million_tokens"]) for o in data["offers"]]
    assert per_token == sorted(per_token)
    hourly = size_json(QWEN32_AWQ, market, "--currency", "USD", "--objective", "hourly")
    assert [Decimal(o["true_hourly"]) for o in hourly["offers"]] == sorted(
        Decimal(o["true_hourly"]) for o in hourly["offers"]
    )


def test_fixed_gpu_count_and_no_fit_reason(market: Path) -> None:
    data = size_json(QWEN32_AWQ, market, "--gpus", "2", "--currency", "USD")
    assert data["tensor_parallel"] == 2
    assert all(o["tensor_parallel"] == 2 and o["gpu_count"] >= 2 for o in data["offers"])
    assert set(keys(data)) == {"a100", "l40s", "h200"}  # per-card offers rent 2 cards
    # 4 x 24 GB is too small per card at TP2 (33.5 GiB each)
    huge = size_json(
        ["size", "--model", "llama-3.1-405b", "--prompt-tokens", "8000", "--gen-tokens", "100"],
        market,
        "--gpus",
        "1",
    )
    assert huge["offers"] == [] and huge["tier_gb"] is None and not huge["fits"]
    assert "no card is large enough" in huge["offers_reason"]


def test_size_from_config_and_params(tmp_path: Path) -> None:
    folder = tmp_path / "glm"
    folder.mkdir()
    (folder / "config.json").write_text(
        json.dumps(
            {
                "model_type": "chatglm",
                "num_layers": 40,
                "hidden_size": 4096,
                "num_attention_heads": 32,
                "multi_query_attention": True,
                "multi_query_group_num": 2,
                "kv_channels": 128,
                "ffn_hidden_size": 13696,
                "padded_vocab_size": 151552,
                "add_qkv_bias": True,
                "torch_dtype": "bfloat16",
            }
        ),
        encoding="utf-8",
    )
    (folder / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {"total_size": 18_800_000_000}}), encoding="utf-8"
    )
    args = ["size", "--config", str(folder), "--prompt-tokens", "1000", "--gen-tokens", "100"]
    data = size_json(args, tmp_path / "none.duckdb")
    assert data["model"]["kv_kib_per_token_bf16"] == 40
    assert data["weights_total_gib"] == pytest.approx(18_800_000_000 / 2**30, abs=0.01)
    params = size_json(
        ["size", "--params-b", "8", "--prompt-tokens", "1000", "--gen-tokens", "100"],
        tmp_path / "none.duckdb",
    )
    assert params["weights_total_gib"] == pytest.approx(8e9 * 2 / 2**30, rel=0.08)
    assert any("parameter count" in n for n in params["notes"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "qwen2.5-7b", "--params-b", "7"], "exactly one"),
        (["--model", "no-such-model"], "no model"),
        (["--model", "qwen2.5-7b", "--precision", "int3"], "unknown precision"),
        (["--model", "qwen2.5-7b", "--gpus", "8"], "attention heads"),
        (["--model", "qwen2.5-7b", "--kv-dtype", "int2"], "KV-cache dtype"),
        (
            ["--model", "qwen2.5-7b", "--hours-per-month", "10", "--session-hours", "20"],
            "session_hours",
        ),
    ],
)
def test_bad_input_is_a_usage_error(tmp_path: Path, args: list[str], message: str) -> None:
    result = runner.invoke(
        cli_app(),
        [
            "size",
            *args,
            "--prompt-tokens",
            "100",
            "--gen-tokens",
            "10",
            "--db",
            str(tmp_path / "x"),
        ],
    )
    assert result.exit_code == 2
    assert message in result.output


def test_training_mode_through_the_cli(tmp_path: Path) -> None:
    args = ["size", "--model", "qwen2.5-7b", "--prompt-tokens", "4096", "--gen-tokens", "0"]
    lora = size_json([*args, "--mode", "lora"], tmp_path / "none.duckdb")
    qlora = size_json([*args, "--mode", "qlora"], tmp_path / "none.duckdb")
    assert lora["breakdown_gib"]["optimizer"] > 0
    assert qlora["per_gpu_gib"] < lora["per_gpu_gib"]
    assert qlora["precision"] == "nf4"


def test_models_lists_the_catalog() -> None:
    result = runner.invoke(cli_app(), ["models", "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert len(rows) >= 30
    names = {r["name"] for r in rows}
    assert {"Llama-3.1-8B", "DeepSeek-V3", "Qwen3-30B-A3B", "GLM-4-9B"} <= names
    v3 = next(r for r in rows if r["name"] == "DeepSeek-V3")
    assert v3["kv_heads"] == "MLA" and v3["source"].startswith("https://")
