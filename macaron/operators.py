"""The two operators of a layer: diffusion (mixing between particles) and convection (FFN).

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

import torch
import torch.nn.functional as F
from torch import nn

from .config import ModelConfig
from .schemes import CONVECTION, DIFFUSION, FULL

ACTIVATION = {"gelu": nn.GELU, "relu": nn.ReLU, "gelu_tanh": lambda: nn.GELU(approximate="tanh")}


class Convection(nn.Module):
    """G(x): the same two-layer MLP applied to every particle on its own."""

    def __init__(self, d: int, inner: int, activation: str):
        super().__init__()
        self.fc1 = nn.Linear(d, inner)
        self.act = ACTIVATION[activation]()
        self.fc2 = nn.Linear(inner, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [B, T, d] -> [B, T, d]
        return self.fc2(self.act(self.fc1(x)))


def _divisor_near_sqrt(n: int) -> int:
    return max(a for a in range(1, int(math.isqrt(n)) + 1) if n % a == 0)


class Diffusion(nn.Module):
    """F(x): particles move towards a weighted mean of the others' values."""

    sdpa = True  # plain dot-product attention by SDPA's fused kernel; False: matmul, softmax, matmul where gradients
    # flow (use_attention)

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        d, h, L = cfg.d_model, cfg.n_heads, cfg.max_len
        self.n_heads, self.d_head, self.max_len = h, d // h, L
        self.parts = cfg.attention.split("+")
        self.dropout = cfg.dropout
        if "dot" in self.parts:
            self.qkv = nn.Linear(d, 3 * d)
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
        self.out = nn.Linear(d, d)

    def _heads(self, x):  # [B, T, d] -> [B, H, T, d_head]
        B, T, _ = x.shape
        return x.view(B, T, self.n_heads, self.d_head).transpose(1, 2)

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

    def forward(self, x, attention_mask=None, position=None, need_weights: bool = False):
        """x [B, T, d]; attention_mask [B, T] bool, True on real tokens and False on padding (as SDPA's boolean
        attn_mask: True may be attended to; None: no padding); position [T, d] added to the input
        (FLOATER). Returns (y [B, T, d], mixing [B, H, T, T] or None)."""
        B, T, d = x.shape
        if position is not None:
            x = x + position
        if T > self.max_len and self.parts != ["dot"]:
            raise ValueError(f"{T} tokens exceed this synthesizer's max_len={self.max_len}")
        q = k = None
        if "dot" in self.parts:
            q, k, v = (self._heads(t) for t in self.qkv(x).split(d, dim=-1))
        else:
            v = self._heads(self.value(x))
        mask = None if attention_mask is None else attention_mask[:, None, None, :]  # broadcast over heads and queries
        p = self.dropout if self.training else 0.0
        fused = self.sdpa or not torch.is_grad_enabled()  # matmul attention is for the backward's sake
        if self.parts == ["dot"] and not need_weights and fused:  # the fast path: fused SDPA kernel
            y, weights = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p), None
        else:
            parts = [self._logits(part, x, q, k) for part in self.parts]
            if len(parts) == 1:
                logits = parts[0]
            else:
                alpha = torch.softmax(self.mix_logits, dim=0)
                logits = sum(a * s for a, s in zip(alpha, parts))
            if mask is not None:
                logits = logits.masked_fill(~mask, float("-inf"))
            weights = torch.softmax(logits, dim=-1).expand(B, -1, -1, -1)
            y = F.dropout(weights, p, self.training) @ v
        y = y.transpose(1, 2).reshape(B, T, d)
        return self.out(y), weights


class Parallel(nn.Module):
    """F + G in one sub-step (no splitting): attention and FFN read the same state, their moves add.

    One Euler step of the whole field, x + h·(F(x) + G(x)): the toy lab's unsplit scheme, and
    the parallel block of GPT-J and PaLM."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.diffusion = Diffusion(cfg)
        self.convection = Convection(cfg.d_model, cfg.ffn_inner, cfg.activation)

    def forward(self, x, attention_mask=None, position=None, need_weights: bool = False):
        y, weights = self.diffusion(x, attention_mask, position, need_weights)
        return y + self.convection(x), weights


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


def operator(kind: str, cfg: ModelConfig) -> nn.Module:
    """The network that computes the velocity of a sub-step of this kind."""
    if kind == DIFFUSION:
        return Diffusion(cfg)
    if kind == CONVECTION:
        return Convection(cfg.d_model, cfg.ffn_inner, cfg.activation)
    if kind == FULL:
        return Parallel(cfg)
    raise ValueError(f"unknown sub-step kind {kind!r}")
