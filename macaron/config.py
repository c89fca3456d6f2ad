"""ModelConfig: every architecture field of a model (encoder or decoder), and the named sizes."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from .schemes import get_scheme, n_convection, n_diffusion, n_full, with_cross

ATTENTIONS = ("dot", "dense", "random", "random-fixed", "factorized-dense", "factorized-random",
              "random+dot", "dense+dot", "random+dense")
POSITIONS = ("learned", "sinusoidal", "none", "floater", "rotary")
NORMS = ("pre", "post")
ACTIVATIONS = ("gelu", "relu", "gelu_tanh", "silu")
NORM_KINDS = ("layer", "rms")  # LayerNorm (mean and scale), RMSNorm (scale only: Llama)

SIZES = {  # (n_layers, d_model, n_heads, ffn_total)
    "mini": (6, 256, 4, 1024),
    "small": (6, 512, 8, 2048),   # the paper's "small"
    "base": (12, 768, 12, 3072),  # BERT-base
}


@dataclass
class ModelConfig:
    """Every field of one particle system (an encoder or a decoder): its splitting scheme and norm placement, its
    width, depth, heads and FFN budget, its attention and position signal, its step h, and what a family from elsewhere
    maps onto it (norms with or without gain, each half-FFN's activation, biases, a causal mask, cross-attention). A
    translator is two of them (translation.model.TranslationConfig). `ModelConfig.named(size, ...)` gives the shipped
    sizes; `to_dict()` and `from_dict()` are config.json's fields."""

    scheme: str = "transformer"   # any registered scheme (macaron.schemes) or its alias: transformer, macaron, …
    norm: str = "pre"             # pre: x + h·op(LN(x)); post: LN(x + h·op(x)) as in BERT
    d_model: int = 256
    n_layers: int = 6
    n_heads: int = 4
    ffn_total: int = 1024         # FFN width budget of a layer, split over its convection sub-steps
    activation: str = "gelu"
    dropout: float = 0.1
    vocab_size: int = 8192
    max_len: int = 512
    attention: str = "dot"
    position: str = "learned"
    layer_norm_eps: float = 1e-5
    pad_id: int = 0
    factor_rank: int = 8          # factorized-random: rank k of R = R1 R2ᵀ
    floater_hidden: int = 128     # FLOATER: width of the dynamics network h(p, t; θ)
    floater_delta: float = 0.1    # FLOATER: time between consecutive positions, t_i = i·Δ
    mlm_head: bool = True         # BERT's masked-LM head, decoder tied to the token embedding
    # Depth as time (DESIGN.md): one layer's weights at every depth make an autonomous vector field, and a
    # step h moves each sub-step by h × its fraction, so n_layers steps run to the time T = n_layers·h.
    shared: bool = False          # one set of layer weights, applied n_layers times (ALBERT; the theory)
    step: float = 1.0             # h, the layer's time step (1: the unit steps of BERT and the paper)
    tied_halves: bool = False     # one FFN (and its norm) for every convection sub-step: Strang's same G
    norm_affine: bool = True      # False: the norms have no gain or bias, so post-LN projects every state onto
                                  # one sphere of radius √d (mean zero): the tokens-on-a-sphere of Geshkovski et al.
    # Hugging Face families (macaron.formats.encoders): factorised embeddings of width E, projected to d after their
    # norm (ALBERT, small ELECTRAs; the MLM head maps d back to E), the head's own activation, and the family
    # the weights came from
    embedding_size: int | None = None
    head_activation: str = ""     # "": the layers' activation
    hf_family: str = ""           # "": one of ours
    # Conventions of other code bases, each a general mechanism (defaults: as every model of ours computes)
    embedding_scale: float = 1.0  # the token embedding times this before the positions are added (fairseq and
                                  # Vaswani et al.: √d_model)
    convection_activations: tuple[str, ...] | None = None  # one activation per convection sub-step, in the scheme's
                                  # order (the paper's Macaron: ReLU in the first half-FFN, GELU in the second);
                                  # None: `activation` in every one
    # Decoders (macaron.formats.encoders's GPT-2, GPT-NeoX and Llama): attention to the past only, rotary positions (on
    # the first rotary_dims of each head; 0: all), RMSNorm, a gated FFN (SwiGLU: down(act(gate x) ⊙ up x)), fewer key
    # and value heads than query heads (grouped-query), linear layers without biases, a next-word head (its own
    # weights, or tied to the token embedding), and GPT-NeoX's parallel block reading two norms of one state
    causal: bool = False
    rotary_dims: int = 0
    rope_theta: float = 10000.0
    norm_kind: str = "layer"
    gated_ffn: bool = False
    n_kv_heads: int | None = None  # None: as many as n_heads
    bias: bool = True
    lm_head: bool = False         # a next-word head (decoders; mlm_head is BERT's masked-word head)
    lm_head_tied: bool = True     # ... whose weights are the token embedding's
    lm_head_bias: bool = False    # ... and a bias of its own (Marian's final_logits_bias)
    parallel_norms: bool = False  # unsplit sub-step: attention reads one norm of x, the FFN another (GPT-NeoX)
    # Encoder–decoders (macaron.translation.model): the decoder's particles also move toward the source's, a
    # cross-attention sub-step after each self-attention (schemes.with_cross); and a post-LN model's embedding
    # normalised or not (BERT and ours: LN(embedding); fairseq's post-LN translation models: the embedding as it is)
    cross_attention: bool = False
    embedding_norm: bool = True
    name: str = ""

    def __post_init__(self):
        get_scheme(self.scheme)
        for field, allowed in (("attention", ATTENTIONS), ("position", POSITIONS), ("norm", NORMS),
                               ("activation", ACTIVATIONS), ("norm_kind", NORM_KINDS)):
            if getattr(self, field) not in allowed:
                raise ValueError(f"unknown {field} {getattr(self, field)!r}; choose one of {list(allowed)}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}")
        if self.convection_activations is not None:
            acts = self.convection_activations = tuple(self.convection_activations)  # JSON gives a list
            bad = [a for a in acts if a not in ACTIVATIONS]
            if bad:
                raise ValueError(f"unknown convection_activations {bad}; choose from {list(ACTIVATIONS)}")
            if len(acts) != n_convection(self.substeps):
                raise ValueError(f"convection_activations: {len(acts)} given for the {n_convection(self.substeps)} "
                                 f"convection sub-step(s) of scheme {self.scheme!r}")
            if self.tied_halves and len(set(acts)) > 1:
                raise ValueError("tied_halves: one FFN runs every convection sub-step, so it has one activation")
        if not self.embedding_scale > 0:
            raise ValueError(f"embedding_scale={self.embedding_scale}: give a positive factor")
        if self.head_activation and self.head_activation not in ACTIVATIONS:
            raise ValueError(f"unknown head_activation {self.head_activation!r}; choose one of {list(ACTIVATIONS)}")
        if self.n_heads % self.kv_heads:
            raise ValueError(f"n_heads={self.n_heads} is not a multiple of n_kv_heads={self.n_kv_heads}")
        if self.position == "rotary" and (self.rotary_dims or self.d_head) % 2:
            raise ValueError(f"rotary_dims={self.rotary_dims or self.d_head}: rotary positions turn pairs of dims")
        if self.max_len < 2:
            raise ValueError(f"max_len={self.max_len}: a sentence needs at least 2 positions ([CLS] and [SEP])")
        if self.embedding_size is not None and self.embedding_size < 1:
            raise ValueError(f"embedding_size={self.embedding_size}: give a positive width, or None for d_model")
        if not self.step > 0:
            raise ValueError(f"step={self.step}: the time step h must be positive")
        if self.tied_halves and (n_convection(self.substeps) < 2 or n_full(self.substeps)):
            raise ValueError(f"tied_halves: scheme {self.scheme!r} has no two convection sub-steps to tie")
        width = self.ffn_total - self.attention_toll
        if width <= 0 or width % self.n_ffn:
            raise ValueError(f"ffn_total={self.ffn_total} (less {self.attention_toll} for the extra attention "
                             f"sub-steps) does not split evenly over {self.n_ffn} FFNs")

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads

    @property
    def kv_heads(self) -> int:
        """Key and value heads (grouped-query attention: each serves n_heads // kv_heads query heads)."""
        return self.n_kv_heads or self.n_heads

    @property
    def substeps(self):
        """A layer's sub-steps: its scheme's, and in a decoder with cross_attention a cross-attention after each
        self-attention."""
        substeps = get_scheme(self.scheme).substeps
        return with_cross(substeps) if self.cross_attention else substeps

    @property
    def n_ffn(self) -> int:
        """FFNs a layer holds: one per convection sub-step, or one for all of them when tied."""
        return 1 if self.tied_halves else n_convection(self.substeps)

    @property
    def time(self) -> float:
        """T = n_layers·h, the time the layers run to."""
        return self.n_layers * self.step

    @property
    def attention_toll(self) -> int:
        """FFN width paid for attention sub-steps beyond the first: an attention holds 4d² weights, as
        many as 2d of FFN width, so Att-FFN-Att keeps the Transformer's parameter count (the paper's
        Table 3 baseline is parameter-matched)."""
        return 2 * self.d_model * (n_diffusion(self.substeps) - 1)

    @property
    def ffn_inner(self) -> int:
        """Inner width of each convection sub-step: 4d for a Transformer, 2d + 2d for Macaron, 2d for
        Att-FFN-Att: one FFN budget per layer, whatever the scheme. Tied halves hold one FFN of the whole
        budget (4d), run twice for ½: the parameters of a Transformer layer, twice its FFN compute."""
        return (self.ffn_total - self.attention_toll) // self.n_ffn

    @classmethod
    def named(cls, size: str, **overrides) -> "ModelConfig":
        try:
            n_layers, d, heads, ffn = SIZES[size]
        except KeyError:
            raise ValueError(f"unknown size {size!r}; choose one of {sorted(SIZES)}") from None
        return cls(n_layers=n_layers, d_model=d, n_heads=heads, ffn_total=ffn, **overrides)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "ModelConfig":
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"unknown config fields {sorted(unknown)}")
        return cls(**d)
