"""What every system of the lab offers, and where its particles start.

A system has fields and exact flows for kind in (DIFFUSION, CONVECTION, FULL) on states [n, d]:
field(kind, x), flow(kind, t, x), flows(kind, times, x) and jvp(kind, x, v) (K'(x)·v, which the
leading error coefficients of macaron.lab.splitting read). System supplies FULL = F + G, the flows at
several durations and a central-difference jvp; each system writes its own `_field` and `flow`.
"""
from __future__ import annotations

import numpy as np

from ..schemes import CONVECTION, DIFFUSION, FULL


class System:
    """A particle system dx/dt = F(x) + G(x) (see the module docstring)."""

    name = "system"

    def field(self, kind: str, x: np.ndarray) -> np.ndarray:
        if kind == FULL:
            return self.field(DIFFUSION, x) + self.field(CONVECTION, x)
        return self._field(kind, x)

    def flows(self, kind: str, times, x: np.ndarray) -> np.ndarray:
        """Exact flow of `kind` from x at several durations: [len(times), n, d]."""
        return np.stack([self.flow(kind, float(t), x) for t in times])

    def jvp(self, kind: str, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        """K'(x)·v by central differences (second order, step scaled to the state)."""
        scale = np.linalg.norm(v)
        if scale == 0.0:
            return np.zeros_like(x)
        eps = 1e-5 * (1.0 + np.linalg.norm(x)) / scale
        return (self.field(kind, x + eps * v) - self.field(kind, x - eps * v)) / (2 * eps)


def initial_positions(n=64, d=2, seed=0) -> np.ndarray:
    """n seeded standard normal particles in d dimensions: the start of every study."""
    return np.random.default_rng(seed + 1).normal(size=(n, d))
