"""Splitting lab: toy particle systems where the exact answer is known.

A layer of a Transformer is one step of a splitting scheme for

    dx_i/dt = F(x_i, [x_1..x_n]) + G(x_i)        F: diffusion (interaction), G: convection (drift)

(Lu et al. 2019). Here the same schemes (`macaron.schemes`) run on small systems whose exact
flow we can compute, so their errors can be measured instead of argued:

  linear      F = -β (L ⊗ V): particles are pulled together along a graph Laplacian L,
              anisotropically (value matrix V); G = B: rotation plus a little contraction.
              V and B do not commute, so neither do F and G. Exact flows by matrix exponential.
  attention   F_i = Σ_j softmax_j(β⟨Q x_i, K x_j⟩) V x_j (self-attention), G a small fixed tanh
              MLP. Exact flows by a tight DOP853 solve (scipy.integrate.solve_ivp).
  commuting   the linear system with G = c·x, which commutes with F: Lie–Trotter is exact.

Every scheme step walks a scheme tuple: each Sub(kind, fraction) advances the state by the
sub-flow of that kind for fraction·γ, solved either "exact" or by one explicit Euler step
("euler": x + fraction·γ·op(x), which is what a residual sub-layer computes).

Orders of accuracy (local = one step from x0, global = at a fixed horizon)
--------------------------------------------------------------------------
                                   local error    global error
  exact sub-flows, Lie–Trotter       O(γ²)           O(γ)
  exact sub-flows, Strang–Marchuk    O(γ³)           O(γ²)       (Theorem 1 of the paper)
  Euler sub-steps, any arrangement   O(γ²)           O(γ)
  unsplit Euler x + γ(F + G)         O(γ²)           O(γ)
  exact sub-flows, F and G commute   0 (exact: Φ_G(γ)Φ_F(γ) = Φ_{F+G}(γ))

Euler sub-steps: why Macaron's layer is not second order, and what it still gains
---------------------------------------------------------------------------------
Write F, G for the fields at x and F', G' for their Jacobians. The exact flow is

    x + γ(F + G) + γ²/2 · (F'F + F'G + G'F + G'G) + O(γ³).

Euler sub-steps in the Macaron order ½G, F, ½G give

    x₁ = x + γ/2·G
    x₂ = x₁ + γF(x₁)    = x + γ/2·G + γF + γ²/2·F'G + O(γ³)
    x₃ = x₂ + γ/2·G(x₂) = x + γ(F + G) + γ²/2 · (F'G + G'F + ½G'G) + O(γ³).

The cross terms F'G + G'F now match the exact flow: the symmetric arrangement removes the
splitting error (Lie–Trotter's commutator term ½(F'G − G'F)) just as Theorem 1 says. What it
cannot remove is the error of the sub-solvers themselves: a single Euler step of duration h for
a field K misses h²/2·K'K. So the local error is

    exact − scheme = γ²/2 · (F'F + ½G'G) + O(γ³)        (the ½: two half Euler steps of G)

and Strang with Euler sub-steps is first order globally, like the Transformer's layer. The γ²
coefficients side by side (exact − scheme, divided by γ²/2):

    unsplit Euler           F'F +  G'G + F'G + G'F
    Lie–Trotter  F then G   F'F +  G'G + F'G − G'F
    Lie–Trotter  G then F   F'F +  G'G − F'G + G'F
    Strang   ½G, F, ½G      F'F + ½G'G
    Strang   ½F, G, ½F     ½F'F +  G'G

The Macaron coefficient is Lie–Trotter's minus the commutator term ½(F'G − G'F) and minus
¼·G'G: no splitting bias, and half of G's Euler error. In the systems here that makes it
smaller: with the default seeds and 45 steps to the horizon, Macaron's global error with Euler
sub-steps is 2.3× below the Transformer's for the linear system and 1.8× below for the
attention system (same slope 1; against unsplit Euler: 3.3× and 1.1×). But it is not smaller
in every system: the terms are vectors and Lie–Trotter's can cancel. With F = ωJ (rotation)
and G = ω·x (growth), which commute, Lie–Trotter's coefficient ½(F'F + G'G)x = ½(−ω² + ω²)x
vanishes, Lie–Trotter with Euler sub-steps becomes second order, and Macaron's −ω²/4·x makes
it the worse scheme.
`leading_error` evaluates the coefficient of any scheme at any state, and the tests check it
against the measured error. The order of a network layer is capped by its sub-solvers: a
third-order local error would need each sub-layer to be a second-order step itself (e.g. a
midpoint or Heun residual block), not just the symmetric arrangement.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from functools import lru_cache

import numpy as np
from scipy.integrate import solve_ivp
from scipy.linalg import expm

from ..schemes import CONVECTION, DIFFUSION, FULL, KINDS, SCHEMES, Sub

SUBSTEPS = ("exact", "euler")

# Expected orders (local, global) from the Taylor expansions in the module docstring.
EXPECTED_ORDER = {
    ("lie-trotter", "exact"): (2, 1), ("lie-trotter-gf", "exact"): (2, 1),
    ("strang", "exact"): (3, 2), ("strang-fgf", "exact"): (3, 2),
    ("lie-trotter", "euler"): (2, 1), ("lie-trotter-gf", "euler"): (2, 1),
    ("strang", "euler"): (2, 1), ("strang-fgf", "euler"): (2, 1),
    ("unsplit", "euler"): (2, 1),
    ("lie-trotter-halves", "exact"): (2, 1), ("lie-trotter-halves", "euler"): (2, 1),
}

DEFAULT_GAMMAS = np.geomspace(4e-3, 0.1, 8)  # local study: one step of size γ
DEFAULT_N_STEPS = np.array([4, 6, 8, 11, 16, 23, 32, 45])  # global study: γ = horizon / n_steps
DEFAULT_HORIZON = 1.0
ROUNDOFF = 1e-12  # errors below this (states of size ~1) are round-off: the scheme is exact


# ---------------------------------------------------------------------------------------------
# Systems. Each offers field(kind, x), flow(kind, t, x), flows(kind, times, x), jvp(kind, x, v)
# for kind in (DIFFUSION, CONVECTION, FULL); states are arrays [n, d].
# ---------------------------------------------------------------------------------------------


class _System:
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


class _Exponential:
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


class LinearSystem(_System):
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
        self._exponential = {kind: _Exponential(self.generator(kind)) for kind in KINDS}
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


class AttentionSystem(_System):
    """F_i = Σ_j softmax_j(β⟨Q x_i, K x_j⟩) V x_j,  G(x) = W₂ tanh(W₁ x + b₁) + b₂.

    Exact flows are DOP853 solves at rtol = atol = `tol`, cached per (kind, t, state).
    """

    def __init__(self, query, key, value, w1, b1, w2, b2, beta=1.0, tol=1e-12, n=64,
                 name="attention"):
        self.n = n  # particle count of the default initial state; F works for any n
        self.query, self.key, self.value = (np.asarray(a, float) for a in (query, key, value))
        self.w1, self.b1, self.w2, self.b2 = (np.asarray(a, float) for a in (w1, b1, w2, b2))
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
        return np.tanh(x @ self.w1.T + self.b1) @ self.w2.T + self.b2

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


def initial_positions(n=64, d=2, seed=0) -> np.ndarray:
    return np.random.default_rng(seed + 1).normal(size=(n, d))


# ---------------------------------------------------------------------------------------------
# Untied halves: a trained Macaron layer's two half-FFNs are two different networks.
# ---------------------------------------------------------------------------------------------

FIRST_HALF, SECOND_HALF = "convection-1", "convection-2"  # G₁ = G + εΔ, then G₂ = G − εΔ


class LinearDrift:
    """Δ(x) = x Eᵀ: a linear field (its flows are matrix exponentials)."""

    def __init__(self, matrix):
        self.matrix = np.asarray(matrix, float)

    def __call__(self, x):
        return x @ self.matrix.T


class MlpDrift:
    """Δ(x) = W₂ tanh(W₁ x + b₁) + b₂: a second small MLP, like a second FFN."""

    def __init__(self, w1, b1, w2, b2):
        self.w1, self.b1, self.w2, self.b2 = (np.asarray(a, float) for a in (w1, b1, w2, b2))

    def __call__(self, x):
        return np.tanh(x @ self.w1.T + self.b1) @ self.w2.T + self.b2


def drift_for(system, seed: int = 7):
    """A seeded Δ of the same kind and size as the system's G: another matrix, or another MLP."""
    rng = np.random.default_rng(seed)
    if isinstance(system, LinearSystem):
        e = rng.normal(size=(system.d, system.d))
        return LinearDrift(e * np.linalg.norm(system.drift) / np.linalg.norm(e))
    hidden = len(system.b1)
    return MlpDrift(rng.normal(size=(hidden, system.d)), rng.normal(size=hidden) * 0.5,
                    rng.normal(size=(system.d, hidden)) / np.sqrt(hidden), rng.normal(size=system.d) * 0.1)


class Untied(_System):
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
        return _System.jvp(self, kind, x, v) if self._sign(kind) else self.base.jvp(kind, x, v)

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
    """The γ² coefficient of exact − untied Strang with exact sub-flows, by hand: with D = εΔ,

        ½(D'F − F'D) + ¼(D'G − G'D)

    (the issue's γ²[¼(F'δ − δ'F) + ⅛(G₁'G₂ − G₂'G₁)] with δ = G₂ − G₁ = −2D). Zero for ε = 0: tied
    halves are third order. Written out separately from `leading_error`, which checks it."""
    base, eps = system.base, system.eps
    f, g, d = base.field(DIFFUSION, x), base.field(CONVECTION, x), eps * system.delta(x)

    def delta_jvp(v):  # D'(x)·v by central differences
        h = 1e-5 * (1.0 + np.linalg.norm(x)) / max(np.linalg.norm(v), 1e-300)
        return eps * (system.delta(x + h * v) - system.delta(x - h * v)) / (2 * h)

    return (0.5 * (delta_jvp(f) - base.jvp(DIFFUSION, x, d))
            + 0.25 * (delta_jvp(g) - base.jvp(CONVECTION, x, d)))


# ---------------------------------------------------------------------------------------------
# Many random systems: is Strang with Euler sub-steps always the more accurate?
# ---------------------------------------------------------------------------------------------


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


def strang_over_lie_trotter(n_draws: int = 200, f_scale: float = 1.0, g_scale: float = 1.0, n: int = 8,
                            d: int = 2, horizon: float = 1.0, n_steps: int = 16, solver: str = "euler",
                            seed: int = 0) -> np.ndarray:
    """[n_draws]: global error of Strang–Marchuk over that of Lie–Trotter at the horizon, one random
    linear system and initial state per draw. Below 1: Strang is the more accurate there."""
    rng = np.random.default_rng([seed, int(1000 * f_scale), int(1000 * g_scale)])
    gamma = horizon / n_steps
    out = np.empty(n_draws)
    for i in range(n_draws):
        system = random_linear_system(rng, n, d, f_scale, g_scale)
        x0 = rng.normal(size=(n, d))
        exact = system.flow(FULL, horizon, x0)
        errors = [distance(integrate(system, SCHEMES[name].substeps, gamma, n_steps, x0, solver), exact)
                  for name in ("strang", "lie-trotter")]
        out[i] = errors[0] / errors[1]
    return out


# ---------------------------------------------------------------------------------------------
# Schemes: walking a scheme tuple.
# ---------------------------------------------------------------------------------------------


def registered() -> dict[str, tuple[Sub, ...]]:
    """Every registered scheme (macaron.schemes), as name -> sub-steps."""
    return {name: s.substeps for name, s in SCHEMES.items()}


def unsplit(scheme) -> bool:
    """A sub-step of F + G together: with exact sub-flows it would be the reference itself."""
    return any(sub.kind == FULL for sub in scheme)


def substep(system, sub: Sub, gamma: float, x: np.ndarray, solver: str = "exact") -> np.ndarray:
    """Advance x by the sub-flow `sub.kind` for sub.fraction·γ: exactly, or one Euler step."""
    h = sub.fraction * gamma
    if solver == "exact":
        return system.flow(sub.kind, h, x)
    if solver == "euler":
        return x + h * system.field(sub.kind, x)
    raise ValueError(f"unknown sub-flow solver {solver!r}; choose one of {SUBSTEPS}")


def step(system, scheme, gamma: float, x: np.ndarray, solver: str = "exact") -> np.ndarray:
    """One step of size γ: the scheme's sub-steps, left to right."""
    for sub in scheme:
        x = substep(system, sub, gamma, x, solver)
    return x


def _merged(scheme, n_steps: int):
    """n_steps repetitions of the scheme with neighbouring same-kind sub-steps fused.

    Exact flows form a semigroup, Φ(a)Φ(b) = Φ(a + b), so Strang's ½G of one step and ½G
    of the next are one solve. Only valid for exact sub-flows (two Euler steps ≠ one).
    """
    subs: list[Sub] = []
    for sub in list(scheme) * n_steps:
        if subs and subs[-1].kind == sub.kind:
            subs[-1] = Sub(sub.kind, subs[-1].fraction + sub.fraction)
        else:
            subs.append(sub)
    return subs


def integrate(system, scheme, gamma: float, n_steps: int, x: np.ndarray, solver: str = "exact",
              record: bool = False) -> np.ndarray:
    """n_steps steps of size γ from x: the final state, or [n_steps + 1, n, d] if record."""
    if record:
        path = [x]
        for _ in range(n_steps):
            path.append(step(system, scheme, gamma, path[-1], solver))
        return np.stack(path)
    subs = _merged(scheme, n_steps) if solver == "exact" else list(scheme) * n_steps
    for sub in subs:
        x = substep(system, sub, gamma, x, solver)
    return x


# ---------------------------------------------------------------------------------------------
# Measurements
# ---------------------------------------------------------------------------------------------


def distance(x: np.ndarray, y: np.ndarray) -> float | np.ndarray:
    """RMS over particles of the Euclidean distance: independent of the number of particles.
    States [n, d] give a number; paths [K, n, d] give one distance per time [K]."""
    d = np.sqrt(np.mean(np.sum((np.asarray(x) - np.asarray(y)) ** 2, axis=-1), axis=-1))
    return float(d) if np.ndim(d) == 0 else d


def is_roundoff(errors) -> bool:
    """True when every error is at round-off level (the scheme is exact for this system)."""
    return bool(np.max(np.abs(errors)) < ROUNDOFF)


def fit_slope(h, err) -> float:
    """Slope of log(err) against log(h): the measured order."""
    err = np.maximum(err, 1e-300)  # exact schemes: errors of 0 give a meaningless slope, not a crash
    return float(np.polyfit(np.log(h), np.log(err), 1)[0])


def local_errors(system, scheme, gammas, x0, solver="exact", reference=None) -> np.ndarray:
    """|one step of size γ − exact flow for γ| from x0, for every γ."""
    if reference is None:
        reference = system.flows(FULL, gammas, x0)
    return np.array([distance(step(system, scheme, g, x0, solver), ref)
                     for g, ref in zip(gammas, reference)])


def global_errors(system, scheme, horizon, n_steps, x0, solver="exact", reference=None) -> np.ndarray:
    """|n steps of size horizon/n − exact flow at the horizon|, for every n."""
    if reference is None:
        reference = system.flow(FULL, horizon, x0)
    return np.array([distance(integrate(system, scheme, horizon / n, int(n), x0, solver), reference)
                     for n in n_steps])


def leading_error(system, scheme, x: np.ndarray, solver="exact") -> np.ndarray:
    """C in exact(γ) − step(γ) = γ²·C + O(γ³), from the Taylor expansion of the scheme.

    Sub-step k (kind K_k, fraction a_k) evaluates K_k at x + γ Σ_{j<k} a_j K_j + O(γ²), so

        step = x + γ Σ a_k K_k + γ² [Σ_{j<k} a_j a_k K_k' K_j + Σ_k e_k a_k²/2 K_k' K_k] + O(γ³)

    with e_k = 1 for an exact sub-flow, 0 for an Euler step. The exact flow has γ²/2 (F+G)'(F+G).
    """
    fields = [system.field(sub.kind, x) for sub in scheme]
    full = system.field(FULL, x)
    c = 0.5 * system.jvp(FULL, x, full)
    for k, sub in enumerate(scheme):
        for j in range(k):
            c -= scheme[j].fraction * sub.fraction * system.jvp(sub.kind, x, fields[j])
        if solver == "exact":
            c -= 0.5 * sub.fraction ** 2 * system.jvp(sub.kind, x, fields[k])
    return c


@dataclass
class ConvergenceStudy:
    """Errors and fitted orders, keyed [scheme][solver]; arrays follow `gammas` / `n_steps`."""

    system: str
    gammas: np.ndarray                    # [8] step sizes of the local study
    horizon: float
    n_steps: np.ndarray                   # [8] step counts of the global study
    local_error: dict = field(default_factory=dict)   # [scheme][solver] -> [8]
    global_error: dict = field(default_factory=dict)  # [scheme][solver] -> [8]
    local_slope: dict = field(default_factory=dict)   # [scheme][solver] -> float
    global_slope: dict = field(default_factory=dict)  # [scheme][solver] -> float

    @property
    def global_gammas(self) -> np.ndarray:
        return self.horizon / self.n_steps

    def to_dict(self) -> dict:
        return asdict(self)


def convergence_study(system, x0=None, gammas=DEFAULT_GAMMAS, horizon=DEFAULT_HORIZON,
                      n_steps=DEFAULT_N_STEPS, schemes=None, solvers=SUBSTEPS) -> ConvergenceStudy:
    """Local and global errors of every scheme × sub-flow solver, with fitted slopes.

    The references are computed once: the exact flow from x0 at every γ (one dense solve)
    and at the horizon. "unsplit" runs with Euler only (its exact version is the reference).
    """
    x0 = initial_positions(system.n, system.d) if x0 is None else x0
    schemes = registered() if schemes is None else schemes
    gammas, n_steps = np.array(gammas, float), np.array(n_steps, int)
    local_ref = system.flows(FULL, gammas, x0)
    global_ref = system.flow(FULL, horizon, x0)
    study = ConvergenceStudy(system.name, gammas, float(horizon), n_steps)
    for name, scheme in schemes.items():
        for solver in solvers:
            if solver == "exact" and unsplit(scheme):
                continue
            loc = local_errors(system, scheme, gammas, x0, solver, local_ref)
            glo = global_errors(system, scheme, horizon, n_steps, x0, solver, global_ref)
            study.local_error.setdefault(name, {})[solver] = loc
            study.global_error.setdefault(name, {})[solver] = glo
            study.local_slope.setdefault(name, {})[solver] = fit_slope(gammas, loc)
            study.global_slope.setdefault(name, {})[solver] = fit_slope(study.global_gammas, glo)
    return study


@dataclass
class ParticlePaths:
    """Positions at times k·γ, k = 0..n_steps, under the exact flow and under each scheme."""

    times: np.ndarray                          # [n_steps + 1]
    exact: np.ndarray                          # [n_steps + 1, n, d]
    schemes: dict = field(default_factory=dict)  # name -> [n_steps + 1, n, d]
    solver: str = "euler"


def particle_paths(system, x0, horizon=DEFAULT_HORIZON, n_steps=8, schemes=None,
                   solver="euler") -> ParticlePaths:
    """Paths for an animation: every scheme on the same time grid as the exact flow."""
    schemes = registered() if schemes is None else schemes
    gamma = horizon / n_steps
    times = gamma * np.arange(n_steps + 1)
    exact = np.concatenate([x0[None], system.flows(FULL, times[1:], x0)])
    paths = ParticlePaths(times, exact, solver=solver)
    for name, scheme in schemes.items():
        if solver == "exact" and unsplit(scheme):
            continue
        paths.schemes[name] = integrate(system, scheme, gamma, n_steps, x0, solver, record=True)
    return paths


# The lab's systems by the name its views and lesson use
SYSTEMS = {"linear": linear_system, "attention": attention_system, "commuting": commuting_system}


def lab_paths(kind: str, n: int, beta: float, horizon: float, n_steps: int, solver: str):
    """The lab's animation data for a system of SYSTEMS in 2-D: every scheme's particles on the step grid
    (particle_paths), and the exact flow on a finer grid for the drawn curves: (paths, dense times, dense)."""
    system = SYSTEMS[kind](n=n, d=2, beta=beta)
    x0 = initial_positions(n, 2)
    paths = particle_paths(system, x0, horizon, n_steps, solver=solver)
    dense_t = np.linspace(0.0, horizon, max(41, 4 * n_steps + 1))
    return paths, dense_t, np.concatenate([x0[None], system.flows(FULL, dense_t[1:], x0)])
