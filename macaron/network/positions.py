"""Position signals: learned table, sinusoids, none, or FLOATER's Neural ODE (Liu et al., seed 004).

FLOATER: positions are samples of a continuous path p(t) with dp/dt = h(p, t; θ), taken at
t_i = i·Δ. One dynamics network h is shared by all blocks; each block n starts from its
own learned p⁽ⁿ⁾(0), so every block gets a different encoding for the price of one small
network. Because p is a flow and not a table, any length can be encoded.
"""
from __future__ import annotations

import math

import torch
from torch import nn
from torchdiffeq import odeint

from ..config import ModelConfig


def sinusoids(T: int, d: int, device=None, start: int = 0, *, halves: bool = False, fairseq: bool = False,
              dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """[T, d] float32, the one sinusoid table: positions start … start + T − 1 as sin(p·ω_i) and cos(p·ω_i),
    ω_i = 10000^(−2i/d) (Vaswani et al.). Ours interleave them (sin in the even columns, cos in the odd); `halves`
    puts them side by side, [sin | cos], as fairseq's and Marian's tables do (an odd d: one sine more). `fairseq`:
    fairseq's rate, ω_i = 10000^(−i/(d/2 − 1)) over d // 2 frequencies (an odd d's last column zero). Computed in
    `dtype` (Marian's: float64, as transformers' numpy) with each source's operations, so each is its table."""
    m = d // 2 if fairseq else (d + 1) // 2
    step, scale = (1, m - 1) if fairseq else (2, d)
    freq = torch.exp(torch.arange(0, step * m, step, device=device, dtype=dtype) * -(math.log(10000) / scale))
    angles = torch.arange(start, start + T, device=device, dtype=dtype)[:, None] * freq
    sin, cos = torch.sin(angles), torch.cos(angles[:, : d // 2])
    if halves:
        table = torch.cat([sin, cos], dim=1)
        return nn.functional.pad(table, (0, d - table.shape[1])).float()
    table = torch.zeros(T, d, device=device, dtype=dtype)
    table[:, 0::2], table[:, 1::2] = sin, cos
    return table.float()


class Dynamics(nn.Module):
    """h(p, t; θ): the vector field that moves the position encoding along t."""

    def __init__(self, d: int, hidden: int):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d + 1, hidden), nn.Tanh(), nn.Linear(hidden, d))
        nn.init.normal_(self.net[2].weight, std=0.02)  # small field: starts close to a constant p (paper §4)
        nn.init.zeros_(self.net[2].bias)

    def forward(self, t, p):  # p [blocks, d]
        return self.net(torch.cat([p, t.expand(p.shape[0], 1)], dim=-1))


class Floater(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.delta = cfg.floater_delta
        self.min_len = cfg.max_len
        self.dynamics = Dynamics(cfg.d_model, cfg.floater_hidden)
        self.initial = nn.Parameter(torch.randn(cfg.n_layers, cfg.d_model) * 0.02)
        self._cache: torch.Tensor | None = None

    def train(self, mode: bool = True):
        self._cache = None  # parameters may change: recompute after training
        return super().train(mode)

    def _solve(self, T: int) -> torch.Tensor:  # -> [blocks, T, d]
        t = torch.arange(T, device=self.initial.device, dtype=torch.float32) * self.delta
        path = odeint(self.dynamics, self.initial, t, method="rk4")  # [T, blocks, d]
        return path.transpose(0, 1)

    def forward(self, T: int) -> torch.Tensor:
        if self.training:
            return self._solve(T)
        if self._cache is None or self._cache.shape[1] < T or self._cache.device != self.initial.device:
            with torch.no_grad():  # computed once, reused by every sentence at inference
                self._cache = self._solve(max(T, self.min_len))
        return self._cache[:, :T]
