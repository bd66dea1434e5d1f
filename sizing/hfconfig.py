"""Reading a Hugging Face ``config.json`` into a ModelArch, whatever the family calls things.

Families name the same facts differently: ChatGLM/GLM-4 has ``num_layers``,
``multi_query_group_num``, ``kv_channels``, ``ffn_hidden_size`` and ``padded_vocab_size``;
Qwen (v1) stores twice the MLP width in ``intermediate_size``; Mixtral counts experts in
``num_local_experts``, Qwen-MoE in ``num_experts``, DeepSeek in ``n_routed_experts``;
Gemma 2 alternates sliding and global layers without saying so, Gemma 3 says
``sliding_window_pattern``, newer configs list ``layer_types``. Multimodal configs keep the
language model under ``text_config``. Beside the config, ``model.safetensors.index.json``
gives the checkpoint's exact size, the best weight figure there is (sizing/README.md,
"Weights").
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sizing.arch import ModelArch

# model_type values whose PretrainedConfig defaults tie_word_embeddings to True and whose
# configs often leave it out.
_TIED_BY_DEFAULT = frozenset({"gemma", "gemma2", "gemma3", "gemma3_text"})
# Families that always carry q/k/v biases (no config flag says so).
_QKV_BIAS = frozenset({"qwen", "qwen2", "qwen2_moe", "qwen2_vl", "qwen2_5_vl"})
_QK_NORM = frozenset({"qwen3", "qwen3_moe", "gemma3", "gemma3_text"})
_FOUR_NORMS = frozenset({"gemma2", "gemma3", "gemma3_text"})


class ConfigError(ValueError):
    """A config.json sizing cannot read."""


def _first(cfg: Mapping[str, Any], *keys: str, default: Any = None) -> Any:
    for key in keys:
        value = cfg.get(key)
        if value is not None:
            return value
    return default


def _int(cfg: Mapping[str, Any], *keys: str, default: int | None = None) -> int:
    value = _first(cfg, *keys, default=default)
    if value is None:
        raise ConfigError(f"config.json has none of {', '.join(keys)}")
    return int(value)


def arch_from_config(config: Mapping[str, Any], name: str = "config") -> ModelArch:
    """A ModelArch from a parsed config.json."""
    outer = config
    cfg: Mapping[str, Any] = config.get("text_config") or config
    model_type = str(cfg.get("model_type") or outer.get("model_type") or "").lower()

    layers = _int(cfg, "num_hidden_layers", "num_layers", "n_layer", "n_layers")
    hidden = _int(cfg, "hidden_size", "d_model", "n_embd", "model_dim")
    heads = _int(cfg, "num_attention_heads", "n_head", "num_heads")
    kv_heads = heads
    if model_type in ("chatglm", "glm") or "multi_query_group_num" in cfg:
        if cfg.get("multi_query_attention", True):
            kv_heads = _int(cfg, "multi_query_group_num", default=heads)
    else:
        kv_heads = _int(cfg, "num_key_value_heads", "n_head_kv", "num_kv_heads", default=heads)
    head_dim = _int(cfg, "head_dim", "kv_channels", default=hidden // heads)
    vocab = _int(cfg, "padded_vocab_size", "vocab_size")

    ff = _int(cfg, "intermediate_size", "ffn_hidden_size", "n_inner", default=4 * hidden)
    if model_type == "qwen":
        ff //= 2  # Qwen (v1): w1 and w2 are each intermediate_size / 2 wide
    if "tie_word_embeddings" in cfg:
        tied = bool(cfg["tie_word_embeddings"])
    else:
        tied = bool(outer.get("tie_word_embeddings", model_type in _TIED_BY_DEFAULT))
    if model_type in ("chatglm", "glm"):
        tied = False  # separate output_layer
    qkv_bias = bool(cfg.get("attention_bias") or cfg.get("add_qkv_bias") or model_type in _QKV_BIAS)

    moe: dict[str, Any] = {}
    experts = _first(cfg, "num_local_experts", "num_experts", "n_routed_experts", default=0) or 0
    if experts:
        moe_ff = _int(cfg, "moe_intermediate_size", default=ff)
        shared = int(cfg.get("shared_expert_intermediate_size") or 0)
        if not shared and cfg.get("n_shared_experts"):
            shared = int(cfg["n_shared_experts"]) * moe_ff
        moe = {
            "num_experts": int(experts),
            "experts_per_token": _int(cfg, "num_experts_per_tok", "moe_topk", "top_k"),
            "moe_intermediate_size": moe_ff,
            "shared_expert_intermediate_size": shared,
            "shared_expert_gate": model_type == "qwen2_moe",
            "first_dense_layers": int(cfg.get("first_k_dense_replace") or 0),
            "router_bias": cfg.get("topk_method") == "noaux_tc",
        }

    mla: dict[str, Any] = {}
    if cfg.get("kv_lora_rank"):
        mla = {
            "kv_lora_rank": int(cfg["kv_lora_rank"]),
            "q_lora_rank": int(cfg.get("q_lora_rank") or 0),
            "qk_rope_head_dim": int(cfg["qk_rope_head_dim"]),
            "qk_nope_head_dim": int(cfg["qk_nope_head_dim"]),
            "v_head_dim": int(cfg["v_head_dim"]),
        }
        head_dim = int(cfg["qk_nope_head_dim"]) + int(cfg["qk_rope_head_dim"])

    window, window_layers, kv_layers = _attention_layout(cfg, model_type, layers)
    vision = _vision_params(outer.get("vision_config")) if "text_config" in outer else 0
    quant = outer.get("quantization_config") or {}
    fp8_mlp_only = _fp8_keeps_attention(quant)

    return ModelArch(
        name=name,
        num_layers=layers,
        hidden_size=hidden,
        num_heads=heads,
        num_kv_heads=kv_heads,
        head_dim=head_dim,
        intermediate_size=ff,
        vocab_size=vocab,
        tie_word_embeddings=tied,
        qkv_bias=qkv_bias,
        qk_norm=model_type in _QK_NORM,
        norms_per_layer=4 if model_type in _FOUR_NORMS else 2,
        sliding_window=window,
        sliding_window_layers=window_layers,
        kv_layers=kv_layers,
        trust_remote_code=bool(outer.get("auto_map")) and model_type in ("chatglm", "glm"),
        vision_params=vision,
        fp8_mlp_only=fp8_mlp_only,
        max_position_embeddings=_first(
            cfg, "max_position_embeddings", "seq_length", "max_sequence_length"
        ),
        **moe,
        **mla,
    )


def _attention_layout(
    cfg: Mapping[str, Any], model_type: str, layers: int
) -> tuple[int | None, int, int | None]:
    """(sliding window, layers using it, layers with a KV cache or None for all)."""
    window = cfg.get("sliding_window")
    layer_types = cfg.get("layer_types")
    kv_layers: int | None = None
    if isinstance(layer_types, list) and layer_types:
        kinds = [str(t).lower() for t in layer_types]
        attention = [k for k in kinds if "attention" in k and "linear" not in k]
        if len(attention) < len(kinds):
            kv_layers = len(attention)
        sliding = sum("sliding" in k for k in kinds)
        return (int(window) if window and sliding else None), sliding, kv_layers
    interval = cfg.get("full_attention_interval")
    if interval:  # hybrid linear attention (Qwen3-Next style): KV on every n-th layer only
        kv_layers = layers // int(interval)
    if not window:
        return None, 0, kv_layers
    if model_type.startswith("qwen") and not cfg.get("use_sliding_window"):
        return None, 0, kv_layers
    if model_type == "gemma2":
        return int(window), layers // 2, kv_layers  # alternating local/global
    pattern = cfg.get("sliding_window_pattern")
    if pattern:  # Gemma 3: every pattern-th layer is global
        return int(window), layers - layers // int(pattern), kv_layers
    if model_type.startswith("qwen"):
        max_window = int(cfg.get("max_window_layers") or layers)
        return int(window), max(layers - max_window, 0), kv_layers
    return int(window), layers, kv_layers  # Mistral v0.1: every layer


def _vision_params(vision: Mapping[str, Any] | None) -> int:
    """A ViT encoder's parameters from its config (attention 4 h^2 + MLP 2 h ff per layer)."""
    if not vision:
        return 0
    h = int(vision.get("hidden_size") or 0)
    ff = int(vision.get("intermediate_size") or 4 * h)
    depth = int(vision.get("num_hidden_layers") or vision.get("depth") or 0)
    return depth * (4 * h * h + 2 * h * ff)


def _fp8_keeps_attention(quant: Mapping[str, Any]) -> bool:
    method = str(quant.get("quant_method") or "").lower()
    if "fp8" not in method:
        return False
    skipped = quant.get("modules_to_not_convert") or quant.get("ignored_layers") or []
    return any("attn" in str(m) or "attention" in str(m) for m in skipped)


def config_quantisation(config: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """The quantisation a config's ``quantization_config`` declares, as (precision name,
    the method as written), or (None, None) for an unquantised checkpoint (whatever its
    dtype: a 16-bit checkpoint can be quantised on load, a quantised one cannot be
    anything else)."""
    quant = config.get("quantization_config") or {}
    method = str(quant.get("quant_method") or "")
    if not method:
        return None, None
    own = config_precision({"quantization_config": quant})
    return own, f"quantization_config {method}" + (
        f" {quant['bits']}-bit" if quant.get("bits") else ""
    )


def config_precision(config: Mapping[str, Any]) -> str | None:
    """The checkpoint's own precision name (see quant.PRECISIONS), when the config says."""
    quant = config.get("quantization_config") or {}
    method = str(quant.get("quant_method") or "").lower()
    bits = int(quant.get("bits") or 0)
    if method == "awq":
        return "awq"
    if method == "gptq":
        return "gptq-int8" if bits == 8 else "gptq-int4"
    if "fp8" in method:
        return "fp8"
    if method == "bitsandbytes":
        return "nf4" if quant.get("load_in_4bit") else "int8"
    dtype = str(config.get("torch_dtype") or config.get("dtype") or "").lower()
    return {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}.get(dtype)


def read_config(path: Path) -> tuple[ModelArch, dict[str, Any]]:
    """The ModelArch of a config.json (a file, or a folder holding one), and the raw dict."""
    file = path / "config.json" if path.is_dir() else path
    try:
        config = json.loads(file.read_text("utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"no config.json at {file}") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{file} is not valid JSON: {exc}") from None
    if not isinstance(config, dict):
        raise ConfigError(f"{file} does not hold a JSON object")
    name = str(config.get("_name_or_path") or file.parent.name or "config")
    try:
        return arch_from_config(config, name=name), config
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"{file}: {exc}") from exc


def checkpoint_bytes(path: Path) -> int | None:
    """``metadata.total_size`` of the safetensors index beside the config, if there is one."""
    folder = path if path.is_dir() else path.parent
    index = folder / "model.safetensors.index.json"
    if not index.is_file():
        return None
    try:
        total = json.loads(index.read_text("utf-8"))["metadata"]["total_size"]
    except (KeyError, TypeError, json.JSONDecodeError):
        return None
    return int(total) if total else None
