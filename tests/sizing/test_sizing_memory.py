"""Weights, KV, activations, overhead and headroom, engine and mode aware."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sizing.engines import Engine, Mode
from sizing.memory import estimate_memory
from sizing.models import get_model
from sizing.quant import UnknownPrecision, get_precision, kv_bytes_per_element, weight_bytes
from sizing.workload import Workload

GIB = 2**30


def weights_gib(model: str, precision: str) -> float:
    arch = get_model(model)
    return weight_bytes(arch.param_counts(), get_precision(precision), arch) / GIB


def test_awq_keeps_embeddings_16_bit() -> None:
    # Embeddings and lm_head stay 16-bit: Qwen2.5-7B AWQ is 5.19 GiB, not the 3.55 GiB of
    # "4 bits everywhere".
    assert weights_gib("Qwen2.5-7B", "awq") == pytest.approx(5.19, abs=0.02)
    assert weights_gib("Qwen2.5-7B", "bf16") == pytest.approx(14.19, abs=0.01)
    naive = get_model("Qwen2.5-7B").param_counts().total * 4 / 8 / GIB
    assert naive == pytest.approx(3.55, abs=0.01)


def test_gguf_bits_cover_the_whole_file() -> None:
    # llama-bench: Llama-3.1-8B Q4_K_M 4.58 GiB, Q5_K_M 5.33, Q8_0 7.95
    assert weights_gib("Llama-3.1-8B", "q4_k_m") == pytest.approx(4.58, rel=0.02)
    assert weights_gib("Llama-3.1-8B", "q5_k_m") == pytest.approx(5.33, rel=0.01)
    assert weights_gib("Llama-3.1-8B", "q8_0") == pytest.approx(7.95, rel=0.01)


def test_meta_405b_fp8_keeps_attention_in_bf16() -> None:
    # vLLM issue #6746: 57.75 GiB per GPU at TP8, against 47.7 if every weight were FP8.
    per_gpu = weights_gib("Llama-3.1-405B", "fp8") / 8
    assert 55 < per_gpu < 58.5


def test_precision_names_and_kv_dtypes() -> None:
    assert get_precision("GPTQ-Int4").name == "gptq-int4"
    assert get_precision("AWQ").bits == pytest.approx(4 + 20 / 128)
    assert get_precision("Q4_K_M").name == "q4_k_m"
    assert get_precision("INT4(bnb)").name == "nf4"
    with pytest.raises(UnknownPrecision):
        get_precision("int3")
    assert kv_bytes_per_element("fp8") == 1
    assert kv_bytes_per_element("q8_0") == pytest.approx(1.0625)
    with pytest.raises(UnknownPrecision):
        kv_bytes_per_element("int2")


@pytest.mark.parametrize(
    ("model", "precision", "ctx", "batch", "tp", "worked_gib"),
    [  # worked examples of the method: vLLM-style need per GPU (u 0.9, 8k chunk, CUDA graphs)
        ("Qwen2.5-7B", "bf16", 32768, 1, 1, 18.5),
        ("Qwen2.5-7B", "bf16", 8192, 16, 1, 23.7),
        ("Qwen2.5-14B", "awq", 32768, 4, 1, 35.6),
        ("Qwen2.5-32B", "awq", 16384, 8, 1, 53.1),
        ("Qwen2.5-72B", "bf16", 32768, 8, 4, 58.8),
        ("Llama-3.1-8B", "bf16", 131072, 1, 1, 33.3),
        ("Qwen3-30B-A3B", "bf16", 32768, 8, 1, 82.6),
        ("Mixtral-8x7B", "bf16", 32768, 8, 2, 64.1),
        ("DeepSeek-V3", "fp8", 32768, 16, 8, 116.9),
        ("GLM-4-9B", "bf16", 131072, 2, 1, 29.8),
    ],
)
def test_vllm_worked_examples(
    model: str, precision: str, ctx: int, batch: int, tp: int, worked_gib: float
) -> None:
    workload = Workload(prompt_tokens=ctx - 1000, gen_tokens=1000, batch=batch)
    est = estimate_memory(get_model(model), get_precision(precision), workload, tp)
    assert est.need_per_gpu_gib == pytest.approx(worked_gib, rel=0.04)
    # vLLM caps itself at 90 % of the card: the recommendation is need / 0.9
    assert est.per_gpu_gib == pytest.approx(est.need_per_gpu_gib / 0.9)


def test_breakdown_adds_up() -> None:
    est = estimate_memory(
        get_model("Qwen2.5-7B"),
        get_precision("bf16"),
        Workload(prompt_tokens=4000, gen_tokens=500, batch=4, engine=Engine.HF),
    )
    b = est.breakdown
    parts = b.weights + b.kv_cache + b.activations + b.optimizer + b.overhead + b.headroom
    assert b.per_gpu == pytest.approx(parts)
    assert est.total_gib == pytest.approx(b.per_gpu)
    assert b.torch_allocated == pytest.approx(b.need - b.non_torch)


def test_kv_split_replication_and_mla() -> None:
    wl = Workload(prompt_tokens=30000, gen_tokens=2000, batch=4)
    qwen7 = get_model("Qwen2.5-7B")  # 4 KV heads
    bf16 = get_precision("bf16")
    kv1 = estimate_memory(qwen7, bf16, wl, 1).breakdown.kv_cache
    assert estimate_memory(qwen7, bf16, wl, 2).breakdown.kv_cache == pytest.approx(kv1 / 2)
    assert estimate_memory(qwen7, bf16, wl, 4).breakdown.kv_cache == pytest.approx(kv1 / 4)
    v3 = get_model("DeepSeek-V3")
    fp8 = get_precision("fp8")
    latent1 = estimate_memory(v3, fp8, wl, 1).breakdown.kv_cache
    assert estimate_memory(v3, fp8, wl, 8).breakdown.kv_cache == pytest.approx(latent1)
    hf = Workload(prompt_tokens=30000, gen_tokens=2000, batch=4, engine=Engine.HF)
    assert estimate_memory(v3, fp8, hf, 1).breakdown.kv_cache > 60 * latent1


def test_fp8_kv_halves_the_cache() -> None:
    arch, prec = get_model("Llama-3.1-70B"), get_precision("fp8")
    auto = estimate_memory(arch, prec, Workload(prompt_tokens=30000, gen_tokens=2000, batch=8), 4)
    fp8 = estimate_memory(
        arch, prec, Workload(prompt_tokens=30000, gen_tokens=2000, batch=8, kv_dtype="fp8"), 4
    )
    assert fp8.breakdown.kv_cache == pytest.approx(auto.breakdown.kv_cache / 2, rel=0.01)


def test_hf_legacy_logits_term() -> None:
    arch, prec = get_model("Qwen2.5-7B"), get_precision("bf16")
    new = Workload(prompt_tokens=30720, gen_tokens=2048, engine=Engine.HF)
    old = Workload(prompt_tokens=30720, gen_tokens=2048, engine=Engine.HF, full_prompt_logits=True)
    extra = (
        estimate_memory(arch, prec, old).breakdown.activations
        - estimate_memory(arch, prec, new).breakdown.activations
    )
    assert extra == pytest.approx(30720 * 152064 * 6 / GIB)  # whole-prompt logits: T x V x 6


def test_fine_tuning_modes() -> None:
    arch, bf16 = get_model("Qwen2.5-7B"), get_precision("bf16")

    def train(mode: Mode) -> Workload:
        return Workload(prompt_tokens=2048, gen_tokens=0, mode=mode)

    lora = estimate_memory(arch, bf16, train(Mode.LORA))
    qlora = estimate_memory(arch, bf16, train(Mode.QLORA))
    full = estimate_memory(arch, bf16, train(Mode.FULL))
    assert qlora.precision.name == "nf4"
    # 4-bit linears, but PEFT casts the bitsandbytes model's embeddings/lm_head/norms to fp32
    counts = arch.param_counts()
    nf4 = counts.linear * 4.5 / 8 + counts.sixteen_bit * 4
    assert qlora.breakdown.weights == pytest.approx(nf4 / GIB, rel=0.001)
    assert qlora.breakdown.weights < lora.breakdown.weights * 0.6
    assert full.breakdown.optimizer == pytest.approx(7.615e9 * 18 / GIB, rel=0.01)
    assert qlora.per_gpu_gib < lora.per_gpu_gib < full.per_gpu_gib
    sharded = estimate_memory(arch, bf16, train(Mode.FULL), 4)
    assert sharded.breakdown.optimizer == pytest.approx(full.breakdown.optimizer / 4)
    with pytest.raises(ValueError, match="16-bit"):
        estimate_memory(arch, get_precision("awq"), train(Mode.FULL))


ENGINES = st.sampled_from(list(Engine))
MODES = st.sampled_from(list(Mode))
MODELS = st.sampled_from(
    ["Qwen2.5-7B", "Gemma-2-9B", "DeepSeek-V2-Lite", "GLM-4-9B", "Mixtral-8x7B"]
)


@settings(max_examples=150, deadline=None)
@given(
    model=MODELS,
    engine=ENGINES,
    mode=MODES,
    gpus=st.sampled_from([1, 2, 4]),
    prompt=st.integers(0, 200_000),
    gen=st.integers(1, 20_000),
    batch=st.integers(1, 64),
    more_prompt=st.integers(0, 50_000),
    more_gen=st.integers(0, 5_000),
    more_batch=st.integers(0, 16),
)
def test_more_tokens_or_batch_never_needs_less(
    model: str,
    engine: Engine,
    mode: Mode,
    gpus: int,
    prompt: int,
    gen: int,
    batch: int,
    more_prompt: int,
    more_gen: int,
    more_batch: int,
) -> None:
    arch = get_model(model)
    prec = get_precision("bf16")
    small = Workload(prompt_tokens=prompt, gen_tokens=gen, batch=batch, engine=engine, mode=mode)
    big = Workload(
        prompt_tokens=prompt + more_prompt,
        gen_tokens=gen + more_gen,
        batch=batch + more_batch,
        engine=engine,
        mode=mode,
    )
    a = estimate_memory(arch, prec, small, gpus)
    b = estimate_memory(arch, prec, big, gpus)
    assert b.need_per_gpu_gib >= a.need_per_gpu_gib
    assert b.per_gpu_gib >= a.per_gpu_gib
    for part in ("weights", "kv_cache", "activations", "optimizer", "overhead"):
        assert getattr(b.breakdown, part) >= getattr(a.breakdown, part)
