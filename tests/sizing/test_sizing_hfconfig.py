"""Reading config.json: every family's field names give the catalog's architecture."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sizing.hfconfig import (
    ConfigError,
    arch_from_config,
    checkpoint_bytes,
    config_precision,
    read_config,
)
from sizing.models import get_model

# Configs in the shapes the model repositories publish (only the fields that matter here).
GLM4_9B_CHAT: dict[str, Any] = {
    "architectures": ["ChatGLMModel"],
    "auto_map": {"AutoModelForCausalLM": "modeling_chatglm.ChatGLMForConditionalGeneration"},
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
    "add_bias_linear": False,
    "seq_length": 131072,
    "torch_dtype": "bfloat16",
}
QWEN25_7B: dict[str, Any] = {
    "model_type": "qwen2",
    "hidden_size": 3584,
    "intermediate_size": 18944,
    "num_hidden_layers": 28,
    "num_attention_heads": 28,
    "num_key_value_heads": 4,
    "vocab_size": 152064,
    "tie_word_embeddings": False,
    "sliding_window": 131072,
    "use_sliding_window": False,
    "max_window_layers": 28,
    "torch_dtype": "bfloat16",
}
DEEPSEEK_V3: dict[str, Any] = {
    "model_type": "deepseek_v3",
    "hidden_size": 7168,
    "intermediate_size": 18432,
    "moe_intermediate_size": 2048,
    "num_hidden_layers": 61,
    "num_attention_heads": 128,
    "num_key_value_heads": 128,
    "n_shared_experts": 1,
    "n_routed_experts": 256,
    "num_experts_per_tok": 8,
    "first_k_dense_replace": 3,
    "kv_lora_rank": 512,
    "q_lora_rank": 1536,
    "qk_rope_head_dim": 64,
    "qk_nope_head_dim": 128,
    "v_head_dim": 128,
    "vocab_size": 129280,
    "tie_word_embeddings": False,
    "topk_method": "noaux_tc",
    "num_nextn_predict_layers": 1,
    "quantization_config": {
        "quant_method": "fp8",
        "fmt": "e4m3",
        "activation_scheme": "dynamic",
        "weight_block_size": [128, 128],
    },
}
QWEN3_30B_A3B: dict[str, Any] = {
    "model_type": "qwen3_moe",
    "hidden_size": 2048,
    "intermediate_size": 6144,
    "moe_intermediate_size": 768,
    "num_experts": 128,
    "num_experts_per_tok": 8,
    "num_hidden_layers": 48,
    "num_attention_heads": 32,
    "num_key_value_heads": 4,
    "head_dim": 128,
    "vocab_size": 151936,
    "tie_word_embeddings": False,
    "sliding_window": None,
    "use_sliding_window": False,
    "decoder_sparse_step": 1,
    "mlp_only_layers": [],
}
MIXTRAL_8X7B: dict[str, Any] = {
    "model_type": "mixtral",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "num_local_experts": 8,
    "num_experts_per_tok": 2,
    "vocab_size": 32000,
    "tie_word_embeddings": False,
    "sliding_window": None,
}
GEMMA2_9B: dict[str, Any] = {
    "model_type": "gemma2",
    "hidden_size": 3584,
    "intermediate_size": 14336,
    "num_hidden_layers": 42,
    "num_attention_heads": 16,
    "num_key_value_heads": 8,
    "head_dim": 256,
    "vocab_size": 256000,
    "sliding_window": 4096,
}
GEMMA3_27B: dict[str, Any] = {
    "model_type": "gemma3",
    "text_config": {
        "model_type": "gemma3_text",
        "hidden_size": 5376,
        "intermediate_size": 21504,
        "num_hidden_layers": 62,
        "num_attention_heads": 32,
        "num_key_value_heads": 16,
        "head_dim": 128,
        "sliding_window": 1024,
        "sliding_window_pattern": 6,
        "vocab_size": 262208,
    },
    "vision_config": {
        "model_type": "siglip_vision_model",
        "hidden_size": 1152,
        "intermediate_size": 4304,
        "num_hidden_layers": 27,
    },
}
QWEN_7B_V1: dict[str, Any] = {
    "model_type": "qwen",
    "hidden_size": 4096,
    "intermediate_size": 22016,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "kv_channels": 128,
    "vocab_size": 151936,
    "tie_word_embeddings": False,
}


@pytest.mark.parametrize(
    ("config", "catalog_name"),
    [
        (GLM4_9B_CHAT, "GLM-4-9B"),
        (QWEN25_7B, "Qwen2.5-7B"),
        (DEEPSEEK_V3, "DeepSeek-V3"),
        (QWEN3_30B_A3B, "Qwen3-30B-A3B"),
        (MIXTRAL_8X7B, "Mixtral-8x7B"),
        (GEMMA2_9B, "Gemma-2-9B"),
        (QWEN_7B_V1, "Qwen-7B"),
    ],
)
def test_config_gives_the_catalog_architecture(config: dict[str, Any], catalog_name: str) -> None:
    arch = arch_from_config(config)
    expected = get_model(catalog_name)
    assert arch.param_counts() == expected.param_counts()
    assert arch.kv_elements_per_token() == expected.kv_elements_per_token()
    assert arch.kv_elements(100_000) == expected.kv_elements(100_000)
    assert arch.active_ff == expected.active_ff


def test_chatglm_names() -> None:
    arch = arch_from_config(GLM4_9B_CHAT)
    assert (arch.num_layers, arch.num_kv_heads, arch.head_dim) == (40, 2, 128)
    assert (arch.intermediate_size, arch.vocab_size) == (13696, 151552)
    assert arch.trust_remote_code and not arch.tie_word_embeddings
    assert arch.kv_elements_per_token() * 2 / 1024 == 40


def test_gemma3_text_config_and_global_layers() -> None:
    arch = arch_from_config(GEMMA3_27B)
    expected = get_model("Gemma-3-27B")
    assert (arch.sliding_window, arch.sliding_window_layers) == (1024, 52)  # 10 of 62 global
    assert arch.tie_word_embeddings  # gemma's default when the config leaves it out
    text = arch.param_counts().total - arch.param_counts().vision
    assert text == expected.param_counts().total - expected.param_counts().vision
    assert arch.vision_params == pytest.approx(expected.vision_params, rel=0.05)


def test_hybrid_linear_attention_keeps_kv_on_attention_layers_only() -> None:
    base = {**QWEN3_30B_A3B, "model_type": "qwen3_next"}
    by_types = arch_from_config(
        {**base, "layer_types": ["linear_attention"] * 3 * 12 + ["full_attention"] * 12}
    )
    by_interval = arch_from_config({**base, "full_attention_interval": 4})
    full = arch_from_config(QWEN3_30B_A3B)
    assert by_types.attention_layers == by_interval.attention_layers == 12
    assert by_types.kv_elements_per_token() * 4 == full.kv_elements_per_token()


def test_precision_from_quantization_config() -> None:
    assert config_precision(DEEPSEEK_V3) == "fp8"
    assert config_precision(QWEN25_7B) == "bf16"
    awq = {**QWEN25_7B, "quantization_config": {"quant_method": "awq", "bits": 4}}
    assert config_precision(awq) == "awq"
    gptq8 = {**QWEN25_7B, "quantization_config": {"quant_method": "gptq", "bits": 8}}
    assert config_precision(gptq8) == "gptq-int8"


def test_fp8_checkpoint_that_skips_attention() -> None:
    cfg = {
        **QWEN25_7B,
        "quantization_config": {
            "quant_method": "fbgemm_fp8",
            "modules_to_not_convert": ["model.layers.0.self_attn.q_proj"],
        },
    }
    assert arch_from_config(cfg).fp8_mlp_only
    assert not arch_from_config(DEEPSEEK_V3).fp8_mlp_only


def test_read_config_from_folder_and_checkpoint_size(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps(QWEN25_7B), encoding="utf-8")
    (tmp_path / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {"total_size": 15231233024}, "weight_map": {}}), encoding="utf-8"
    )
    arch, raw = read_config(tmp_path)
    assert arch.num_kv_heads == 4 and raw["model_type"] == "qwen2"
    assert checkpoint_bytes(tmp_path) == 15231233024
    assert checkpoint_bytes(tmp_path / "config.json") == 15231233024


def test_bad_configs_say_why(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"no config\.json"):
        read_config(tmp_path)
    bad = tmp_path / "config.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid JSON"):
        read_config(bad)
    bad.write_text(json.dumps({"model_type": "llama", "hidden_size": 4096}), encoding="utf-8")
    with pytest.raises(ConfigError, match="num_hidden_layers"):
        read_config(bad)
