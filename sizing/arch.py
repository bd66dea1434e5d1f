"""A model's architecture facts and what follows from them: parameter counts and KV per token.

Everything here is exact arithmetic on the config fields (sizing/README.md, "Weights" and
"KV cache"); the engine, the precision and the workload come later (quant.py, memory.py).
Counting this way reproduces the published totals (Llama-3.1-8B 8.03B, Qwen2.5-7B 7.62B,
Mixtral 46.70B, DeepSeek-V3 671B, Qwen3-30B-A3B 30.53B), which the tests check.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ParamCounts:
    """Parameters by how they are stored and used (counts, not bytes)."""

    embedding: int
    """Input token embedding table (stays 16-bit under GPTQ/AWQ/FP8/bnb)."""
    lm_head: int
    """Output projection; 0 when tied to the embedding."""
    attention_linear: int
    """Linear weights of the attention blocks (quantisable)."""
    mlp_linear: int
    """Linear weights of the dense MLPs and of every expert, shared experts included."""
    other: int
    """Norms, biases, routers, MLA norms: small tensors that stay 16-bit."""
    vision: int
    """A vision encoder's parameters (VLMs), kept 16-bit."""
    active_mlp_linear: int
    """MLP weights one token runs through (MoE: top-k routed + shared experts)."""

    @property
    def total(self) -> int:
        return (
            self.embedding
            + self.lm_head
            + self.attention_linear
            + self.mlp_linear
            + self.other
            + self.vision
        )

    @property
    def linear(self) -> int:
        """The weights GPTQ/AWQ/FP8/bnb quantise: attention and MLP linears."""
        return self.attention_linear + self.mlp_linear

    @property
    def sixteen_bit(self) -> int:
        """What stays 16-bit under weight-only quantisation."""
        return self.embedding + self.lm_head + self.other + self.vision

    @property
    def active(self) -> int:
        """Parameters used per token (MoE: routed experts only), embeddings included,
        the convention of the published "active" figures (Mixtral 12.9B, DeepSeek-V3 37B)."""
        return self.total - self.mlp_linear + self.active_mlp_linear - self.vision


@dataclass(frozen=True)
class ModelArch:
    """The architecture facts sizing needs, under sizing's own names (those of data/models.json),
    not as any one config names them."""

    name: str
    num_layers: int
    hidden_size: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int
    """Dense MLP width (the dense layers of an MoE model too)."""
    vocab_size: int
    tie_word_embeddings: bool = False
    qkv_bias: bool = False
    qk_norm: bool = False
    """Per-head q/k RMSNorm (Qwen3, Gemma 3)."""
    norms_per_layer: int = 2
    """RMSNorm/LayerNorm weights per block: 2, or 4 for Gemma 2/3 (pre/post norms)."""
    mlp_matrices: int = 3
    """3 for gated MLPs (SwiGLU/GeGLU), 2 for plain up/down."""
    # --- mixture of experts
    num_experts: int = 0
    experts_per_token: int = 0
    moe_intermediate_size: int = 0
    shared_expert_intermediate_size: int = 0
    """Width of the shared expert(s) summed (Qwen2-MoE 20480; DeepSeek n_shared x moe width)."""
    shared_expert_gate: bool = False
    """Qwen2-MoE gates its shared expert with a 1-wide linear."""
    first_dense_layers: int = 0
    """Leading dense layers before the MoE ones (DeepSeek first_k_dense_replace)."""
    router_bias: bool = False
    """DeepSeek-V3's e_score_correction_bias per expert."""
    # --- multi-head latent attention (DeepSeek-V2/V3)
    kv_lora_rank: int = 0
    q_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    qk_nope_head_dim: int = 0
    v_head_dim: int = 0
    # --- attention layout
    sliding_window: int | None = None
    sliding_window_layers: int = 0
    """Layers that attend over (and cache) only the last ``sliding_window`` tokens."""
    kv_layers: int | None = None
    """Layers that keep a KV cache at all (hybrid linear-attention models); None = every layer."""
    linear_state_bytes_per_seq: int = 0
    """Fixed recurrent state per sequence of the linear-attention layers (hybrid models)."""
    # --- runtime quirks
    trust_remote_code: bool = False
    """Runs through the checkpoint's own modeling code in Transformers (ChatGLM/GLM-4)."""
    vision_params: int = 0
    fp8_mlp_only: bool = False
    """The published FP8 checkpoint quantises only the MLPs (Meta's Llama-3.1-405B-FP8)."""
    max_position_embeddings: int | None = None
    extra: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        for name in ("num_layers", "hidden_size", "num_heads", "head_dim", "vocab_size"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{self.name}: {name} must be positive")
        if not self.is_mla and (self.num_kv_heads <= 0 or self.num_heads % self.num_kv_heads):
            raise ValueError(
                f"{self.name}: {self.num_heads} heads do not split into {self.num_kv_heads} KV groups"
            )
        if self.is_moe and (self.experts_per_token <= 0 or self.moe_intermediate_size <= 0):
            raise ValueError(f"{self.name}: an MoE model needs experts_per_token and expert width")

    # ------------------------------------------------------------------ shape facts

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 0

    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank > 0

    @property
    def moe_layers(self) -> int:
        return self.num_layers - self.first_dense_layers if self.is_moe else 0

    @property
    def attention_layers(self) -> int:
        """Layers with a KV cache (all of them unless the model is a linear-attention hybrid)."""
        return self.num_layers if self.kv_layers is None else self.kv_layers

    @property
    def q_dim(self) -> int:
        if self.is_mla:
            return self.num_heads * (self.qk_nope_head_dim + self.qk_rope_head_dim)
        return self.num_heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        """Width of K (= of V) per token per layer, over all KV heads (GQA/MQA aware)."""
        return self.num_kv_heads * self.head_dim

    @property
    def active_ff(self) -> int:
        """MLP width one token runs through in a typical layer (MoE: top-k + shared)."""
        if self.is_moe:
            return (
                self.experts_per_token * self.moe_intermediate_size
                + self.shared_expert_intermediate_size
            )
        return self.intermediate_size

    # ------------------------------------------------------------------ parameter counts

    def _attention_params(self) -> tuple[int, int]:
        """(linear weights, small tensors) of one attention block."""
        h = self.hidden_size
        if self.is_mla:
            qk_head = self.qk_nope_head_dim + self.qk_rope_head_dim
            if self.q_lora_rank:
                q = h * self.q_lora_rank + self.q_lora_rank * self.num_heads * qk_head
                q_small = self.q_lora_rank  # q_a_layernorm
            else:
                q, q_small = h * self.num_heads * qk_head, 0
            kv_a = h * (self.kv_lora_rank + self.qk_rope_head_dim)
            kv_b = self.kv_lora_rank * self.num_heads * (self.qk_nope_head_dim + self.v_head_dim)
            o = self.num_heads * self.v_head_dim * h
            return q + kv_a + kv_b + o, q_small + self.kv_lora_rank  # + kv_a_layernorm
        linear = h * self.q_dim + 2 * h * self.kv_dim + self.q_dim * h
        small = (self.q_dim + 2 * self.kv_dim) if self.qkv_bias else 0
        if self.qk_norm:
            small += 2 * self.head_dim
        return linear, small

    def param_counts(self) -> ParamCounts:
        h, layers = self.hidden_size, self.num_layers
        attn_linear, attn_small = self._attention_params()
        dense_mlp = self.mlp_matrices * h * self.intermediate_size
        dense_layers = layers - self.moe_layers
        mlp = dense_layers * dense_mlp
        active_mlp = dense_layers * dense_mlp
        other = layers * (attn_small + self.norms_per_layer * h) + h  # + final norm
        if self.is_moe:
            expert = self.mlp_matrices * h * self.moe_intermediate_size
            shared = self.mlp_matrices * h * self.shared_expert_intermediate_size
            mlp += self.moe_layers * (self.num_experts * expert + shared)
            active_mlp += self.moe_layers * (self.experts_per_token * expert + shared)
            router = h * self.num_experts + (self.num_experts if self.router_bias else 0)
            router += h if self.shared_expert_gate else 0
            other += self.moe_layers * router
        embedding = self.vocab_size * h
        return ParamCounts(
            embedding=embedding,
            lm_head=0 if self.tie_word_embeddings else embedding,
            attention_linear=layers * attn_linear,
            mlp_linear=mlp,
            other=other,
            vision=self.vision_params,
            active_mlp_linear=active_mlp,
        )

    # ------------------------------------------------------------------ KV cache

    def kv_elements_per_token(self, *, materialize_mla: bool = False) -> int:
        """Cached elements per token summed over the attention layers (K and V together).

        MLA caches one latent of kv_lora_rank + rope dims per layer, shared by K and V; an
        engine that materialises full K/V instead (Transformers) caches
        heads x (qk_nope + rope) for K plus heads x v_head_dim for V.
        """
        if self.is_mla:
            if materialize_mla:
                per_layer = self.num_heads * (
                    self.qk_nope_head_dim + self.qk_rope_head_dim + self.v_head_dim
                )
            else:
                per_layer = self.kv_lora_rank + self.qk_rope_head_dim
            return self.attention_layers * per_layer
        return 2 * self.attention_layers * self.kv_dim

    def kv_elements(
        self, tokens: int, *, honour_sliding_window: bool = True, materialize_mla: bool = False
    ) -> int:
        """Cached elements for one sequence of ``tokens`` tokens.

        Sliding-window layers keep min(tokens, window) tokens when the engine implements it.
        """
        if tokens <= 0:
            return 0
        per_layer = self.kv_elements_per_token(materialize_mla=materialize_mla) // max(
            self.attention_layers, 1
        )
        swa = self.sliding_window_layers if self.sliding_window else 0
        swa = min(swa, self.attention_layers)
        if not honour_sliding_window or not self.sliding_window:
            return self.attention_layers * per_layer * tokens
        window_tokens = min(tokens, self.sliding_window)
        full = self.attention_layers - swa
        return per_layer * (full * tokens + swa * window_tokens)


def describe(arch: ModelArch) -> dict[str, object]:
    """Headline facts of a model for people and JSON."""
    counts = arch.param_counts()
    facts: dict[str, object] = {
        "name": arch.name,
        "params_b": round(counts.total / 1e9, 2),
        "active_params_b": round(counts.active / 1e9, 2),
        "layers": arch.num_layers,
        "hidden_size": arch.hidden_size,
        "heads": arch.num_heads,
        "kv_heads": None if arch.is_mla else arch.num_kv_heads,
        "head_dim": arch.head_dim,
        "kv_kib_per_token_bf16": round(arch.kv_elements_per_token() * 2 / 1024, 1),
        "vocab_size": arch.vocab_size,
    }
    if arch.is_moe:
        facts["experts"] = f"{arch.num_experts} (top-{arch.experts_per_token})"
    if arch.is_mla:
        facts["attention"] = "MLA"
    elif arch.sliding_window and arch.sliding_window_layers:
        facts["attention"] = (
            f"{arch.sliding_window_layers}/{arch.num_layers} layers sliding {arch.sliding_window}"
        )
    return facts
