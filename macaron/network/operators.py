"""The two operators of a layer: diffusion (mixing between particles) and convection (FFN); and in a decoder the
external field of another particle system (cross-attention: the target's particles moving toward the source's).

Diffusion is a mixing matrix times the values: y_i = Σ_j A_ij V x_j, row-stochastic A.
`dot` builds A from query–key products (Vaswani et al.); the Synthesizer family (Tay et al.,
seed 002) synthesizes the logits of A without token–token dot products:
  dense              logits_i = W₂ σ(W₁ x_i)                  (each token predicts its row)
  random             logits   = R, a learned [T, T] matrix     (random-fixed: R is frozen)
  factorized-dense   logits_i = tile(A x_i) ⊙ tile(B x_i)      (a·b = max_len)
  factorized-random  logits   = R₁ R₂ᵀ, rank k
  x+y                softmax-normalised learned weights α: logits = α₁ S_x + α₂ S_y
"""
from __future__ import annotations

import math
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from ..config import ModelConfig
from ..schemes import CONVECTION, CROSS, DIFFUSION, FULL

ACTIVATION = {"gelu": nn.GELU, "relu": nn.ReLU, "gelu_tanh": lambda: nn.GELU(approximate="tanh"), "silu": nn.SiLU}


def norm(cfg: ModelConfig, width: int) -> nn.Module:
    """A norm of the residual stream: LayerNorm, or RMSNorm (Llama); without gain and bias where the config says
    so (the head's own norm is BERT's LayerNorm, built there)."""
    kind = nn.RMSNorm if cfg.norm_kind == "rms" else nn.LayerNorm
    return kind(width, eps=cfg.layer_norm_eps, elementwise_affine=cfg.norm_affine)


class Convection(nn.Module):
    """G(x): the same MLP applied to every particle on its own: fc2(act(fc1 x)), or gated (SwiGLU, Llama):
    fc2(act(gate x) ⊙ up x), gate and up stacked in fc1."""

    def __init__(self, d: int, inner: int, activation: str, gated: bool = False, bias: bool = True):
        super().__init__()
        self.gated = gated
        self.fc1 = nn.Linear(d, 2 * inner if gated else inner, bias=bias)
        self.act = ACTIVATION[activation]()
        self.fc2 = nn.Linear(inner, d, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [B, T, d] -> [B, T, d]
        if self.gated:
            gate, up = self.fc1(x).chunk(2, dim=-1)
            return self.fc2(self.act(gate) * up)
        return self.fc2(self.act(self.fc1(x)))


def rotary(x: torch.Tensor, dims: int, theta: float, offset: int = 0) -> torch.Tensor:
    """Rotary positions (Su et al. 2021) as GPT-NeoX and Llama apply them: the first `dims` features of each head
    [B, H, T, d_head] turned by angles position·θ^(−2i/dims), pairing feature i with i + dims/2; the positions start
    at `offset`."""
    T = x.shape[-2]
    inv = theta ** -(torch.arange(0, dims, 2, device=x.device, dtype=torch.float32) / dims)
    positions = torch.arange(offset, offset + T, device=x.device, dtype=torch.float32)
    angles = torch.outer(positions, inv)  # [T, dims/2]
    cos, sin = (torch.cat([f(angles)] * 2, dim=-1).to(x.dtype) for f in (torch.cos, torch.sin))
    turned, rest = x[..., :dims], x[..., dims:]
    a, b = turned.chunk(2, dim=-1)
    return torch.cat([turned * cos + torch.cat([-b, a], dim=-1) * sin, rest], dim=-1)


def _divisor_near_sqrt(n: int) -> int:
    return max(a for a in range(1, int(math.isqrt(n)) + 1) if n % a == 0)


def split_heads(x, heads: int, d_head: int):  # [B, T, heads·d_head] -> [B, heads, T, d_head]
    B, T, _ = x.shape
    return x.view(B, T, heads, d_head).transpose(1, 2)


def mix(logits, mask, v, dropout: float, training: bool, batch: int):
    """The mixing matrix A = softmax(logits) where `mask` allows (True: may attend; None: everywhere) and its move
    A·v: (y [B, H, T, d_head], A [B, H, T, S]) (logits [B or 1, H, T, S], broadcast over the batch)."""
    if mask is not None:
        logits = logits.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(logits, dim=-1).expand(batch, -1, -1, -1)
    return F.dropout(weights, dropout, training) @ v, weights


class Edit(NamedTuple):
    """What an intervention changes inside one sub-step's operator (macaron.interventions): each head's output scaled
    before the output projection (0 silences it, as TransformerLens's zero-ablation of hook_z), the positions no other
    particle attends to (cut from the interaction), an unsplit sub-step's attention and FFN moves scaled apart."""

    heads: torch.Tensor | None = None        # [H], a factor on each head's output
    cut: tuple[int, ...] = ()                # positions in the sentence (a cache's earlier words counted)
    parts: tuple[float, float] = (1.0, 1.0)  # (attention, FFN) of an unsplit sub-step


def scaled_heads(y: torch.Tensor, edit: Edit | None) -> torch.Tensor:
    """The heads' outputs y [B, H, T, d_head] times the edit's factors."""
    return y if edit is None or edit.heads is None else y * edit.heads.to(y.dtype)[:, None, None]


class KeyValueCache:
    """What a causal decoder has computed for the words it has read, so that the next word costs one position's
    work (incremental decoding): each self-attention's keys and values, in the order the attention sub-steps run
    (a layer run twice, shared or in a program, holds two entries), and each cross-attention's keys and values of
    the source, the same at every word. Causal attention makes a word's keys and values depend on the words up to
    it only, so they never change once computed."""

    def __init__(self):
        self.length = 0  # the words read so far: the next word's position
        self.past: list[tuple[torch.Tensor, torch.Tensor]] = []  # [n, kv heads, length, d_head] each
        self.source: dict[nn.Module, tuple[torch.Tensor, torch.Tensor]] = {}
        self._next = 0  # the entry of `past` the next attention sub-step extends

    def begin(self):
        """Model.forward calls this before a pass: its attention sub-steps take their entries in order."""
        self._next = 0

    def extend(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The keys and values of every word read so far, the new words' [n, heads, t, d_head] appended."""
        if self._next < len(self.past):
            k, v = (torch.cat([old, new], dim=2) for old, new in zip(self.past[self._next], (k, v)))
            self.past[self._next] = k, v
        else:
            self.past.append((k, v))
        self._next += 1
        return k, v

    def select(self, rows: torch.Tensor):
        """Keep the rows a search continues (a beam's reordering): row i now holds what row rows[i] held."""
        self.past = [(k[rows], v[rows]) for k, v in self.past]


class Diffusion(nn.Module):
    """F(x): particles move towards a weighted mean of the others' values."""

    sdpa = True  # plain dot-product attention by SDPA's fused kernel; False: matmul, softmax, matmul where gradients
    # flow (use_attention)

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        d, h, L = cfg.d_model, cfg.n_heads, cfg.max_len
        self.n_heads, self.d_head, self.max_len, self.kv_heads = h, cfg.d_head, L, cfg.kv_heads
        self.parts = cfg.attention.split("+")
        self.dropout = cfg.dropout
        self.causal = cfg.causal  # each particle moves only because of those before it (decoders)
        self.rotary = (cfg.rotary_dims or self.d_head) if cfg.position == "rotary" else 0
        self.theta = cfg.rope_theta
        if "dot" in self.parts:  # queries, then keys and values (fewer heads of them in grouped-query attention)
            self.qkv = nn.Linear(d, d + 2 * self.kv_heads * self.d_head, bias=cfg.bias)
        else:
            self.value = nn.Linear(d, d)
        if "dense" in self.parts:
            self.dense_in = nn.Linear(d, d)
            self.dense_out = nn.Linear(d, h * L)
        # Synthesized logits start at unit variance ("initialized to random values", Tay et al. §3.2): a
        # frozen random alignment then mixes particles unevenly. At the 0.02 scale of the other weights,
        # softmax(R) would be within 1 % of uniform averaging, and random-fixed would be mean-pooling.
        if "random" in self.parts or cfg.attention == "random-fixed":
            self.random = nn.Parameter(torch.randn(h, L, L), requires_grad=cfg.attention != "random-fixed")
        if cfg.attention == "factorized-dense":
            self.fa = _divisor_near_sqrt(L)
            self.fb = L // self.fa
            self.factor_a = nn.Linear(d, h * self.fa)
            self.factor_b = nn.Linear(d, h * self.fb)
        if cfg.attention == "factorized-random":
            scale = cfg.factor_rank ** -0.25  # so that each logit Σ_k r1 r2 has unit variance too
            self.r1 = nn.Parameter(torch.randn(h, L, cfg.factor_rank) * scale)
            self.r2 = nn.Parameter(torch.randn(h, L, cfg.factor_rank) * scale)
        if len(self.parts) > 1:
            self.mix_logits = nn.Parameter(torch.zeros(len(self.parts)))
        self.out = nn.Linear(d, d, bias=cfg.bias)

    def _heads(self, x, heads: int | None = None):  # [B, T, heads·d_head] -> [B, heads, T, d_head]
        return split_heads(x, heads or self.n_heads, self.d_head)

    def _mask(self, attention_mask, T: int, device, S: int | None = None, cut: tuple[int, ...] = ()):
        """Who of S words (default T; the last T are the ones that move) may attend to whom, [B or 1, 1, T or 1, S]
        bool (True: may), or None for everyone: the padding (no one attends to it), in a decoder the future, and the
        `cut` positions, which only they themselves attend to."""
        S = T if S is None else S
        mask = None if attention_mask is None else attention_mask[:, None, None, :]
        if self.causal and T > 1:
            past = torch.ones(T, S, dtype=torch.bool, device=device).tril(S - T)
            mask = past if mask is None else mask & past
        if cut:
            words = torch.arange(S, device=device)
            keep = ~torch.isin(words, torch.tensor(cut, device=device)) | (words == words[S - T:, None])  # [T, S]
            mask = keep if mask is None else mask & keep
        return mask

    def _logits(self, part: str, x, q, k):  # -> [B or 1, H, T, T]
        T = x.shape[1]
        if part == "dot":
            return q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if part == "dense":
            rows = self.dense_out(F.relu(self.dense_in(x)))  # [B, T, H*L]
            return rows.view(*x.shape[:2], self.n_heads, self.max_len).transpose(1, 2)[..., :T]
        if part in ("random", "random-fixed"):
            return self.random[None, :, :T, :T]
        if part == "factorized-dense":
            a = self.factor_a(x).view(*x.shape[:2], self.n_heads, self.fa).transpose(1, 2)
            b = self.factor_b(x).view(*x.shape[:2], self.n_heads, self.fb).transpose(1, 2)
            return (a.repeat(1, 1, 1, self.fb) * b.repeat_interleave(self.fa, dim=-1))[..., :T]
        if part == "factorized-random":
            return (self.r1[:, :T] @ self.r2[:, :T].transpose(-2, -1))[None]
        raise ValueError(part)

    def forward(self, x, attention_mask=None, position=None, need_weights: bool = False,
                cache: KeyValueCache | None = None, edit: Edit | None = None):
        """x [B, T, d]; attention_mask [B, T] bool, True on real tokens and False on padding (as SDPA's boolean
        attn_mask: True may be attended to; None: no padding); position [T, d] added to the input
        (FLOATER). `cache`: x are the words after cache.length earlier ones, whose keys and values it holds (a
        causal dot-product decoder without padding). `edit`: heads scaled, positions cut (Edit). Returns
        (y [B, T, d], mixing [B, H, T, T or all words] or None)."""
        B, T, d = x.shape
        if position is not None:
            x = x + position
        if T > self.max_len and self.parts != ["dot"]:
            raise ValueError(f"{T} tokens exceed this synthesizer's max_len={self.max_len}")
        if cache is not None and (self.parts != ["dot"] or not self.causal or attention_mask is not None):
            raise ValueError("a key-value cache serves causal dot-product attention without padding")
        q = k = None
        if "dot" in self.parts:
            kv = self.kv_heads * self.d_head
            q, k, v = self.qkv(x).split([d, kv, kv], dim=-1)
            q, k, v = self._heads(q), self._heads(k, self.kv_heads), self._heads(v, self.kv_heads)
            if self.rotary:
                offset = cache.length if cache is not None else 0
                q, k = (rotary(t, self.rotary, self.theta, offset) for t in (q, k))
            if cache is not None:
                k, v = cache.extend(k, v)
        else:
            v = self._heads(self.value(x))
        p = self.dropout if self.training else 0.0
        fused = self.sdpa or not torch.is_grad_enabled()  # matmul attention is for the backward's sake
        S = v.shape[2]  # the words attended to: T, or with a cache every word read
        cut = edit.cut if edit is not None else ()
        if self.parts == ["dot"] and not need_weights and fused:  # the fast path: fused SDPA kernel
            causal_only = self.causal and attention_mask is None and S == T and not cut  # its own kernel, no mask
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=None if causal_only else
                                               self._mask(attention_mask, T, x.device, S, cut), dropout_p=p,
                                               is_causal=causal_only, enable_gqa=self.kv_heads != self.n_heads)
            weights = None
        else:
            if self.kv_heads != self.n_heads:  # each key and value head serves a group of query heads
                k, v = (t.repeat_interleave(self.n_heads // self.kv_heads, dim=1) for t in (k, v))
            mask = self._mask(attention_mask, T, x.device, S, cut)
            parts = [self._logits(part, x, q, k) for part in self.parts]
            if len(parts) == 1:
                logits = parts[0]
            else:
                alpha = torch.softmax(self.mix_logits, dim=0)
                logits = sum(a * s for a, s in zip(alpha, parts))
            y, weights = mix(logits, mask, v, p, self.training, B)
        y = scaled_heads(y, edit).transpose(1, 2).reshape(B, T, d)
        return self.out(y), weights


class SourceSystem(NamedTuple):
    """The other particle system, as a decoder's cross-attention reads it: the encoder's final states and which of
    them are real tokens."""

    states: torch.Tensor  # [B, S, d]
    mask: torch.Tensor | None  # [B, S] bool, True on real tokens (None: no padding)


class CrossAttention(nn.Module):
    """C(x; s): each target particle moves toward a weighted mean of the source particles' values,
    y_i = Σ_j A_ij V s_j, A = softmax(q(x_i)·k(s_j)/√d_head) over the source (its padding masked): row-stochastic,
    target × source. The source stays still; it is the field."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        d = cfg.d_model
        self.n_heads, self.d_head, self.dropout = cfg.n_heads, cfg.d_head, cfg.dropout
        self.q = nn.Linear(d, d, bias=cfg.bias)       # queries from the target's state
        self.kv = nn.Linear(d, 2 * d, bias=cfg.bias)  # keys and values from the source's
        self.out = nn.Linear(d, d, bias=cfg.bias)

    def forward(self, x, source: SourceSystem | None, need_weights: bool = False, cache: KeyValueCache | None = None,
                edit: Edit | None = None):
        """x [B, T, d], the target's states; source: the encoder's (its batch of 1 serves every row); `cache` keeps
        the source's keys and values from one call to the next; `edit`: its heads scaled. Returns (y [B, T, d],
        mixing [B, H, T, S] or None)."""
        if source is None:
            raise ValueError("a cross-attention sub-step reads the source's states: run the decoder with a source")
        B, T, d = x.shape
        q = split_heads(self.q(x), self.n_heads, self.d_head)
        kv = cache.source.get(self) if cache is not None else None
        if kv is None:
            kv = tuple(split_heads(t, self.n_heads, self.d_head) for t in self.kv(source.states).chunk(2, dim=-1))
            if cache is not None:
                cache.source[self] = kv
        k, v = (t.expand(B, -1, -1, -1) for t in kv)
        mask = None if source.mask is None else source.mask[:, None, None, :]  # [B, 1, 1, S]
        p = self.dropout if self.training else 0.0
        if not need_weights:
            y, weights = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p), None
        else:
            y, weights = mix(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask, v, p, self.training, B)
        return self.out(scaled_heads(y, edit).transpose(1, 2).reshape(B, T, d)), weights


class Parallel(nn.Module):
    """F + G in one sub-step (no splitting): attention and FFN read the same state, their moves add.

    One Euler step of the whole field, x + h·(F(x) + G(x)): the toy lab's unsplit scheme, and
    the parallel block of GPT-J and PaLM. GPT-NeoX (Pythia) normalises the state twice, once for each operator
    (cfg.parallel_norms): F(N₁x) + G(N₂x), N₂ held here and applied to the state before the layer's norm, `raw`."""

    def __init__(self, cfg: ModelConfig, activation: str | None = None):
        super().__init__()
        self.diffusion = Diffusion(cfg)
        self.convection = convection(cfg, activation)
        self.ffn_norm = norm(cfg, cfg.d_model) if cfg.parallel_norms else None

    def forward(self, x, attention_mask=None, position=None, need_weights: bool = False, raw=None, cache=None,
                edit: Edit | None = None):
        y, weights = self.diffusion(x, attention_mask, position, need_weights, cache, edit)
        if edit is None or edit.parts == (1.0, 1.0):
            return y + self.ffn(x, raw), weights
        return edit.parts[0] * y + edit.parts[1] * self.ffn(x, raw), weights

    def ffn(self, x, raw=None):
        """G's move: at x, the state as the layer's norm left it, or (GPT-NeoX) at its own norm of `raw`."""
        return self.convection(x if self.ffn_norm is None else self.ffn_norm(raw))


ATTENTION = {"sdpa": "SDPA attention", "matmul": "matmul–softmax attention"}  # the kernels use_attention sets


def use_attention(model: nn.Module, kernel: str) -> None:
    """Compute model's plain dot-product attention with SDPA's fused kernel ('sdpa') or, where gradients flow, as
    matmul, softmax, matmul ('matmul'): the same map; which trains faster depends on the CPU and the precision
    (train.precision.attention). Without gradients SDPA stays: its forward is the faster one (an AMX Xeon, 64
    sentences of 128 tokens, 4 heads of 64, with a padding mask: 2.6 against 5.0 ms in bf16, 7.6 against 21 in
    float32; interleaved medians)."""
    if kernel not in ATTENTION:
        raise ValueError(f"attention kernel {kernel!r}: choose {' or '.join(map(repr, ATTENTION))}")
    for m in model.modules():
        if isinstance(m, Diffusion):
            m.sdpa = kernel == "sdpa"


def convection(cfg: ModelConfig, activation: str | None = None) -> Convection:
    return Convection(cfg.d_model, cfg.ffn_inner, activation or cfg.activation, cfg.gated_ffn, cfg.bias)


def operator(kind: str, cfg: ModelConfig, activation: str | None = None) -> nn.Module:
    """The network that computes the velocity of a sub-step of this kind; `activation`: its FFN's, if not the
    config's (ModelConfig.convection_activations)."""
    if kind == DIFFUSION:
        return Diffusion(cfg)
    if kind == CONVECTION:
        return convection(cfg, activation)
    if kind == FULL:
        return Parallel(cfg, activation)
    if kind == CROSS:
        return CrossAttention(cfg)
    raise ValueError(f"unknown sub-step kind {kind!r}")
