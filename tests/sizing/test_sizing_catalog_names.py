"""A name reaches the catalog entry of that very model, never another model's facts: the
context window above all, which decides whether a long prompt is refused (audit: Llama 3 8B
sized with Llama 3.1's 131072 tokens; Phi-3-mini-128k refused at Phi-3-mini-4k's 4096)."""

from __future__ import annotations

import pytest

from sizing.models import another_model, catalog, find_model


@pytest.mark.parametrize(
    ("name", "entry", "window"),
    [
        ("meta-llama/Meta-Llama-3-8B-Instruct", "Llama-3-8B", 8192),
        ("llama-3-70b", "Llama-3-70B", 8192),
        ("meta-llama/Llama-3.1-8B-Instruct", "Llama-3.1-8B", 131072),
        ("microsoft/Phi-3-mini-128k-instruct", "Phi-3-mini-128k", 131072),
        ("microsoft/Phi-3-mini-4k-instruct", "Phi-3-mini-4k", 4096),
        ("microsoft/Phi-3-medium-128k-instruct", "Phi-3-medium-128k", 131072),
        ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "Qwen3-Coder-30B-A3B", 262144),
        ("Qwen/Qwen3-30B-A3B", "Qwen3-30B-A3B", 40960),
        ("Qwen/Qwen2-0.5B-Instruct", "Qwen2-0.5B", 131072),
        ("Qwen/Qwen2.5-0.5B-Instruct", "Qwen2.5-0.5B", 32768),
    ],
)
def test_a_name_gets_its_own_models_window(name: str, entry: str, window: int) -> None:
    found = find_model(name)
    assert found is not None and found.name == entry
    assert found.arch.max_position_embeddings == window
    assert not another_model(name, found)


@pytest.mark.parametrize("name", ["magistral-small", "mistral-small", "qwen2-1.5b"])
def test_a_name_whose_model_the_catalog_does_not_hold_is_not_guessed(name: str) -> None:
    """Names of models whose facts the catalog has no source for (Magistral, which Mistral
    Small, Qwen2-1.5B's window) are unknown: --config sizes them, a neighbour does not."""
    assert find_model(name) is None


def test_an_entry_built_on_another_keeps_its_shape_and_changes_only_what_it_says() -> None:
    base, variant = catalog()["Llama-3.1-8B"].arch, catalog()["Llama-3-8B"].arch
    assert variant.max_position_embeddings != base.max_position_embeddings
    for field in ("num_layers", "hidden_size", "num_heads", "num_kv_heads", "vocab_size"):
        assert getattr(variant, field) == getattr(base, field), field
