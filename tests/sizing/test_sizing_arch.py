"""Architecture facts: parameter counts reproduce the published totals; KV per token."""

from __future__ import annotations

import pytest

from sizing.arch import ModelArch
from sizing.models import catalog, find_model, generic_arch, get_model

GIB = 2**30


@pytest.mark.parametrize(
    ("name", "total_b", "active_b"),
    [
        ("Llama-3.1-8B", 8.03, 8.03),
        ("Llama-3.1-70B", 70.55, 70.55),
        ("Llama-3.1-405B", 405.85, 405.85),
        ("Qwen2.5-7B", 7.62, 7.62),
        ("Qwen2.5-14B", 14.77, 14.77),
        ("Qwen2.5-32B", 32.76, 32.76),
        ("Qwen2.5-72B", 72.71, 72.71),
        ("Mixtral-8x7B", 46.70, 12.88),
        ("Qwen3-30B-A3B", 30.53, 3.35),
        ("DeepSeek-V3", 671.0, 37.6),
        ("Qwen2-57B-A14B", 57.41, 14.25),
        ("GLM-4-9B", 9.40, 9.40),
    ],
)
def test_param_counts_match_published_totals(name: str, total_b: float, active_b: float) -> None:
    counts = get_model(name).param_counts()
    assert counts.total / 1e9 == pytest.approx(total_b, rel=0.002)
    assert counts.active / 1e9 == pytest.approx(active_b, rel=0.005)


def test_exact_counts_where_published_to_the_parameter() -> None:
    # keras-hub presets assert equality with transformers' num_parameters()
    assert get_model("Qwen3-30B-A3B").param_counts().total == 30_532_122_624
    assert get_model("Mixtral-8x7B").param_counts().total == 46_702_792_704
    assert get_model("Llama-3.1-8B").param_counts().total == 8_030_261_248
    assert get_model("Gemma-2-9B").param_counts().total == 9_241_705_984


def test_every_catalog_model_matches_its_published_count_and_has_a_source() -> None:
    models = catalog()
    assert len(models) >= 30
    for model in models.values():
        assert model.source
        assert model.arch.param_counts().total / 1e9 == pytest.approx(model.params_b, rel=0.01)


@pytest.mark.parametrize(
    ("name", "kib"),
    [
        ("Llama-3.1-8B", 128),
        ("Llama-3.1-70B", 320),
        ("Llama-3.1-405B", 504),
        ("Qwen2.5-7B", 56),
        ("Qwen3-30B-A3B", 96),
        ("Gemma-2-9B", 336),
        ("GLM-4-9B", 40),
    ],
)
def test_kv_per_token_matches_sizing_table(name: str, kib: float) -> None:
    arch = get_model(name)
    assert arch.kv_elements_per_token() * 2 / 1024 == pytest.approx(kib)


def test_mla_latent_and_materialised_kv() -> None:
    v3 = get_model("DeepSeek-V3")
    assert v3.kv_elements_per_token() * 2 / 1024 == pytest.approx(68.625)  # 61 x 576 x 2 B
    full = v3.kv_elements_per_token(materialize_mla=True) * 2 / 2**20
    assert full == pytest.approx(4.77, abs=0.01)  # 61 x (128x192 + 128x128) x 2 B


def test_hf_blog_kv_at_128k() -> None:
    # HF Llama 3.1 blog: 15.62 GB (8B) and 39.06 GB (70B) of fp16 KV at 128k: GiB, really.
    tokens = 131072
    assert get_model("Llama-3.1-8B").kv_elements(tokens) * 2 / GIB == pytest.approx(16.0)
    assert get_model("Llama-3.1-70B").kv_elements(tokens) * 2 / GIB == pytest.approx(40.0)


def test_sliding_window_layers_keep_only_the_window() -> None:
    gemma = get_model("Gemma-2-9B")
    at_128k = gemma.kv_elements(131072) * 2 / GIB
    no_swa = gemma.kv_elements(131072, honour_sliding_window=False) * 2 / GIB
    assert no_swa == pytest.approx(42.0)
    assert at_128k == pytest.approx(21.0 + 21 * 4096 * 8 * 256 * 2 * 2 / GIB)
    short = 2000  # below the window every layer holds every token
    assert gemma.kv_elements(short) == gemma.kv_elements(short, honour_sliding_window=False)


def test_lookup_by_alias_org_prefix_and_suffix() -> None:
    assert find_model("qwen2.5-32b") is not None
    assert find_model("Qwen/Qwen2.5-32B-Instruct") is not None
    found = find_model("meta-llama/Llama-3.1-8B-Instruct")
    assert found is not None and found.name == "Llama-3.1-8B"
    assert find_model("glm-4-9b-chat") is not None
    assert find_model("no-such-model-9000") is None


def test_generic_arch_matches_the_requested_count() -> None:
    for params_b in (1.0, 7.0, 70.0, 400.0):
        arch = generic_arch(params_b)
        assert arch.param_counts().total / 1e9 == pytest.approx(params_b, rel=0.08)


def test_heads_must_split_into_kv_groups() -> None:
    with pytest.raises(ValueError, match="KV groups"):
        ModelArch(
            name="bad",
            num_layers=2,
            hidden_size=64,
            num_heads=6,
            num_kv_heads=4,
            head_dim=16,
            intermediate_size=128,
            vocab_size=100,
        )
