"""Untied halves: a trained Macaron layer's two half-FFNs are two different networks.

Untied runs the two convection half-steps of a scheme with different fields, G₁ = G + εΔ first, then
G₂ = G − εΔ (`untie` marks them in a scheme); Δ is a seeded field of the same kind and size as the system's
G (drift_for). untied_leading_error is the h² coefficient of the untied Strang step by hand.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.integrate import solve_ivp
from scipy.linalg import expm

from ..schemes import CONVECTION, DIFFUSION, Sub
from .attention import MlpDrift
from .linear import LinearDrift, LinearSystem
from .system import System

FIRST_HALF, SECOND_HALF = "convection-1", "convection-2"  # G₁ = G + εΔ, then G₂ = G − εΔ


def drift_for(system, seed: int = 7):
    """A seeded Δ of the same kind and size as the system's G: another matrix, or another MLP."""
    rng = np.random.default_rng(seed)
    if isinstance(system, LinearSystem):
        e = rng.normal(size=(system.d, system.d))
        return LinearDrift(e * np.linalg.norm(system.drift) / np.linalg.norm(e))
    hidden = len(system.drift.b1)
    return MlpDrift(rng.normal(size=(hidden, system.d)), rng.normal(size=hidden) * 0.5,
                    rng.normal(size=(system.d, hidden)) / np.sqrt(hidden), rng.normal(size=system.d) * 0.1)


class Untied(System):
    """The system whose two convection half-steps run different fields: G₁ = G + εΔ first, then
    G₂ = G − εΔ. Their mean is G, so the exact solution, of F + G, is the same for every ε; ε = 0 is
    the tied Strang step of Theorem 1 (the same G twice)."""

    def __init__(self, base, delta, eps: float, tol: float = 1e-12):
        self.base, self.delta, self.eps, self.tol = base, delta, float(eps), tol
        self.n, self.d, self.name = base.n, base.d, f"{base.name}, untied ε = {eps:g}"
        self._propagator = lru_cache(maxsize=256)(self._propagator_uncached)

    def _sign(self, kind) -> float:
        return {FIRST_HALF: 1.0, SECOND_HALF: -1.0}.get(kind, 0.0)

    def field(self, kind, x):
        if self._sign(kind):
            return self.base.field(CONVECTION, x) + self._sign(kind) * self.eps * self.delta(x)
        return self.base.field(kind, x)

    def jvp(self, kind, x, v):
        return System.jvp(self, kind, x, v) if self._sign(kind) else self.base.jvp(kind, x, v)

    def _propagator_uncached(self, kind, t):
        return expm(t * (self.base.drift + self._sign(kind) * self.eps * self.delta.matrix))

    def flow(self, kind, t, x):
        if not self._sign(kind):
            return self.base.flow(kind, t, x)
        if isinstance(self.base, LinearSystem) and isinstance(self.delta, LinearDrift):
            return x @ self._propagator(kind, float(t)).T
        shape = np.shape(x)
        sol = solve_ivp(lambda _t, y: self.field(kind, y.reshape(shape)).ravel(), (0.0, t), np.ravel(x),
                        method="DOP853", rtol=self.tol, atol=self.tol, first_step=t if t > 0 else None)
        return sol.y[:, -1].reshape(shape)


def untie(scheme) -> tuple[Sub, ...]:
    """The scheme with its two convection sub-steps run by G₁, then G₂ (one G stays G)."""
    halves = [k for k, sub in enumerate(scheme) if sub.kind == CONVECTION]
    out = list(scheme)
    if len(halves) == 2:
        for k, kind in zip(halves, (FIRST_HALF, SECOND_HALF)):
            out[k] = Sub(kind, scheme[k].fraction)
    return tuple(out)


def untied_leading_error(system: Untied, x: np.ndarray) -> np.ndarray:
    """The h² coefficient of exact − untied Strang with exact sub-flows, by hand: with D = εΔ,

        ½(D'F − F'D) + ¼(D'G − G'D)

    (the issue's h²[¼(F'δ − δ'F) + ⅛(G₁'G₂ − G₂'G₁)] with δ = G₂ − G₁ = −2D). Zero for ε = 0: tied
    halves are third order. Written out separately from `leading_error`, which checks it."""
    base, eps = system.base, system.eps
    f, g, d = base.field(DIFFUSION, x), base.field(CONVECTION, x), eps * system.delta(x)

    def delta_jvp(v):  # D'(x)·v by central differences
        h = 1e-5 * (1.0 + np.linalg.norm(x)) / max(np.linalg.norm(v), 1e-300)
        return eps * (system.delta(x + h * v) - system.delta(x - h * v)) / (2 * h)

    return (0.5 * (delta_jvp(f) - base.jvp(DIFFUSION, x, d))
            + 0.25 * (delta_jvp(g) - base.jvp(CONVECTION, x, d)))
