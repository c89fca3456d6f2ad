"""Linear systems: graph diffusion F = -β (L ⊗ V) and a linear drift G = B, solved exactly.

L is a normalised graph Laplacian (random_graph), V a value matrix, B any d×d drift. In the
eigenbasis of L every mode moves on its own, so each exact flow is a few small matrix exponentials
(Exponential). linear_system: V anisotropic and B a rotation with a little contraction, which do not
commute; commuting_system: G = c·x, which commutes with F (Lie–Trotter is exact); random_linear_system:
the random draws of macaron.lab.convergence.strang_over_lie_trotter.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.linalg import expm

from ..schemes import CONVECTION, DIFFUSION, FULL, KINDS
from .system import System


class Exponential:
    """t ↦ expm(t·M) for a stack of small generators M [m, d, d], from one eigendecomposition.

    M = S diag(μ) S⁻¹ gives expm(tM) = S diag(e^{tμ}) S⁻¹ at the cost of a few small products
    per t. Nearly defective generators (ill-conditioned S) go to scipy.linalg.expm instead.
    """

    def __init__(self, generators: np.ndarray):
        self.generators = generators
        self.mu, self.S = np.linalg.eig(generators)
        self.direct = np.linalg.cond(self.S) > 1e6
        self.S[self.direct] = np.eye(generators.shape[-1])  # keep inv() finite; recomputed below
        self.S_inv = np.linalg.inv(self.S)

    def __call__(self, t: float) -> np.ndarray:
        E = ((self.S * np.exp(t * self.mu)[..., None, :]) @ self.S_inv).real
        if self.direct.any():
            E[self.direct] = expm(t * self.generators[self.direct])
        return E


class LinearSystem(System):
    """dX/dt = -β L X Vᵀ + X Bᵀ for X [n, d]: F = -β (L ⊗ V), G = I ⊗ B.

    L symmetric (graph Laplacian), V a value matrix, B any d×d drift. In the eigenbasis of
    L = P diag(λ) Pᵀ every mode i moves on its own with the d×d generator B − βλ_i V, so each
    exact flow is n small matrix exponentials (`matrix` gives the full one, for checking).
    """

    def __init__(self, laplacian, value, drift, beta=1.0, name="linear", spectrum=None):
        self.laplacian = np.asarray(laplacian, float)
        self.value = np.asarray(value, float)
        self.drift = np.asarray(drift, float)
        self.beta = float(beta)
        self.name = name
        self.n, self.d = len(self.laplacian), len(self.value)
        # (eigenvalues, modes) of L may be passed in: the graph outlives changes of β, V, B
        self.eigenvalues, self.modes = np.linalg.eigh(self.laplacian) if spectrum is None else spectrum
        self._exponential = {kind: Exponential(self.generator(kind)) for kind in KINDS}
        self._propagator = lru_cache(maxsize=1024)(self._propagator_uncached)

    def _field(self, kind, x):
        if kind == DIFFUSION:
            return -self.beta * self.laplacian @ x @ self.value.T
        return x @ self.drift.T

    def jvp(self, kind, x, v):
        return self.field(kind, v)  # linear: K'(x)v = K(v)

    def generator(self, kind: str) -> np.ndarray:
        """d×d generators of sub-flow `kind` per mode of L: [n, d, d] ([1, d, d] for convection)."""
        diffusion = -self.beta * self.eigenvalues[:, None, None] * self.value
        return {DIFFUSION: diffusion, CONVECTION: self.drift[None], FULL: diffusion + self.drift}[kind]

    def matrix(self, kind: str = FULL) -> np.ndarray:
        """The [n·d, n·d] matrix of `kind` acting on X.ravel() (for checks, not for speed)."""
        diffusion = -self.beta * np.kron(self.laplacian, self.value)
        convection = np.kron(np.eye(self.n), self.drift)
        return {DIFFUSION: diffusion, CONVECTION: convection, FULL: diffusion + convection}[kind]

    def _propagator_uncached(self, kind, t):
        return self._exponential[kind](t)

    def flow(self, kind, t, x):
        E = self._propagator(kind, float(t))
        if kind == CONVECTION:  # the same d×d exponential for every particle
            return x @ E[0].T
        y = self.modes.T @ x  # to the eigenbasis of L, where the modes decouple
        return self.modes @ np.einsum("nij,nj->ni", E, y)


@lru_cache(maxsize=16)
def random_graph(n: int, seed: int = 0):
    """Normalised Laplacian L = I − D^-½ W D^-½ of a dense random weighted graph, with its
    eigendecomposition (spectrum in [0, 2]): (L, eigenvalues, modes), read-only and cached."""
    rng = np.random.default_rng(seed)
    w = np.triu(rng.uniform(size=(n, n)) ** 4, 1)  # a few strong bonds, many weak ones
    w = w + w.T
    s = 1.0 / np.sqrt(w.sum(1))
    laplacian = np.eye(n) - s[:, None] * w * s[None, :]
    eigenvalues, modes = np.linalg.eigh(laplacian)
    for a in (laplacian, eigenvalues, modes):
        a.flags.writeable = False
    return laplacian, eigenvalues, modes


def _rotation_drift(d: int, omega: float, rate: float) -> np.ndarray:
    """rate·I plus a rotation at angular speed ω in the plane of the first two coordinates."""
    B = rate * np.eye(d)
    if d >= 2:
        B[0, 1], B[1, 0] = -omega, omega
    return B


def linear_system(n=64, d=2, beta=1.0, omega=1.0, contraction=0.1, seed=0) -> LinearSystem:
    """Anisotropic graph diffusion (V = diag(1 … 0.2)) plus rotation: F and G do not commute."""
    laplacian, eigenvalues, modes = random_graph(n, seed)
    value = np.diag(np.linspace(1.0, 0.2, d))
    drift = _rotation_drift(d, omega, -contraction)
    return LinearSystem(laplacian, value, drift, beta, "linear", (eigenvalues, modes))


def commuting_system(n=64, d=2, beta=1.0, rate=-0.3, seed=0) -> LinearSystem:
    """The same graph diffusion with G = rate·x: F and G commute, so Lie–Trotter is exact."""
    laplacian, eigenvalues, modes = random_graph(n, seed)
    value = np.diag(np.linspace(1.0, 0.2, d))
    return LinearSystem(laplacian, value, rate * np.eye(d), beta, "commuting", (eigenvalues, modes))


class LinearDrift:
    """Δ(x) = x Eᵀ: a linear field (its flows are matrix exponentials), a linear system's second drift for
    untied halves (macaron.lab.untied.drift_for)."""

    def __init__(self, matrix):
        self.matrix = np.asarray(matrix, float)

    def __call__(self, x):
        return x @ self.matrix.T


def random_linear_system(rng: np.random.Generator, n: int = 8, d: int = 2, f_scale: float = 1.0,
                         g_scale: float = 1.0) -> LinearSystem:
    """A random graph diffusion (value matrix V positive definite, spectrum in [0.2, 1]) of strength
    f_scale, and a random drift B (Gaussian, entries of size g_scale/√d): almost surely F and G do not
    commute."""
    laplacian, eigenvalues, modes = random_graph(n, int(rng.integers(1 << 30)))
    q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    value = q @ np.diag(rng.uniform(0.2, 1.0, d)) @ q.T
    drift = rng.normal(size=(d, d)) * g_scale / np.sqrt(d)
    return LinearSystem(laplacian, value, drift, f_scale, "random", (eigenvalues, modes))
