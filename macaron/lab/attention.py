"""The attention system: F is self-attention, G a small tanh MLP (one FFN), exact flows by a tight
DOP853 solve (scipy.integrate.solve_ivp).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.integrate import solve_ivp

from ..schemes import DIFFUSION
from .system import System


class MlpDrift:
    """x ↦ W₂ tanh(W₁ x + b₁) + b₂: a small MLP, like an FFN: the attention system's G, and a second one of
    its size for untied halves (macaron.lab.untied.drift_for)."""

    def __init__(self, w1, b1, w2, b2):
        self.w1, self.b1, self.w2, self.b2 = (np.asarray(a, float) for a in (w1, b1, w2, b2))

    def __call__(self, x):
        return np.tanh(x @ self.w1.T + self.b1) @ self.w2.T + self.b2


class AttentionSystem(System):
    """F_i = Σ_j softmax_j(β⟨Q x_i, K x_j⟩) V x_j,  G(x) = W₂ tanh(W₁ x + b₁) + b₂.

    Exact flows are DOP853 solves at rtol = atol = `tol`, cached per (kind, t, state).
    """

    def __init__(self, query, key, value, w1, b1, w2, b2, beta=1.0, tol=1e-12, n=64,
                 name="attention"):
        self.n = n  # particle count of the default initial state; F works for any n
        self.query, self.key, self.value = (np.asarray(a, float) for a in (query, key, value))
        self.drift = MlpDrift(w1, b1, w2, b2)
        self.beta, self.tol, self.name = float(beta), float(tol), name
        self.d = len(self.value)
        self._bilinear = self.beta * self.query.T @ self.key
        self._solve = lru_cache(maxsize=4096)(self._solve_uncached)

    def attention(self, x: np.ndarray) -> np.ndarray:
        """Row-stochastic [n, n] weights softmax_j(β⟨Q x_i, K x_j⟩)."""
        a = (x @ self._bilinear) @ x.T  # β x_iᵀ QᵀK x_j, one d×d product instead of two
        a -= a.max(axis=1, keepdims=True)
        np.exp(a, out=a)
        a /= a.sum(axis=1, keepdims=True)
        return a

    def _field(self, kind, x):
        if kind == DIFFUSION:
            return self.attention(x) @ (x @ self.value.T)
        return self.drift(x)

    def _solve_uncached(self, kind, times, shape, data):
        x = np.frombuffer(data).reshape(shape)
        rhs = lambda _t, y: self.field(kind, y.reshape(shape)).ravel()  # noqa: E731
        single = len(times) == 1  # then no interpolation: the last step lands on the time
        sol = solve_ivp(rhs, (0.0, times[-1]), x.ravel(), method="DOP853",
                        t_eval=None if single else times, rtol=self.tol, atol=self.tol,
                        first_step=times[-1] if single else None)  # short sub-flows: try one step
        if not sol.success:
            raise RuntimeError(f"reference solve failed: {sol.message}")
        out = (sol.y[:, -1:] if single else sol.y).T.reshape(len(times), *shape)
        out.flags.writeable = False  # cached: callers must not mutate it
        return out

    def flows(self, kind, times, x):
        times = np.asarray(times, float)
        if times.max(initial=0.0) <= 0.0:  # nothing to solve
            return np.repeat(np.asarray(x, float)[None], len(times), axis=0)
        order = np.argsort(times)  # one dense solve covers every duration
        x = np.ascontiguousarray(x, float)
        sol = self._solve(kind, tuple(times[order]), x.shape, x.tobytes())
        out = np.empty_like(sol)
        out[order] = sol
        return out

    def flow(self, kind, t, x):
        return self.flows(kind, [t], x)[0]


def attention_system(n=64, d=2, beta=1.0, hidden=16, seed=0, tol=1e-12) -> AttentionSystem:
    """Seeded weights: moderate attention logits, a convection field of size about 1."""
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=(2, d, d)) / np.sqrt(d)
    v = rng.normal(size=(d, d)) * 0.5 / np.sqrt(d)
    w1 = rng.normal(size=(hidden, d))
    b1 = rng.normal(size=hidden) * 0.5
    w2 = rng.normal(size=(d, hidden)) / np.sqrt(hidden)
    b2 = rng.normal(size=d) * 0.1
    return AttentionSystem(q, k, v, w1, b1, w2, b2, beta, tol, n)
