"""Splitting schemes on the lab's systems: a step walks a scheme tuple, and its error has a known
leading term.

Every scheme step walks a scheme tuple: each Sub(kind, fraction) advances the state by the
sub-flow of that kind for fraction·h, solved either "exact" or by one explicit Euler step
("euler": x + fraction·h·op(x), which is what a residual sub-layer computes).

Orders of accuracy (local = one step from x0, global = at a fixed horizon)
--------------------------------------------------------------------------
                                   local error    global error
  exact sub-flows, Lie–Trotter       O(h²)           O(h)
  exact sub-flows, Strang–Marchuk    O(h³)           O(h²)       (Theorem 1 of the paper)
  Euler sub-steps, any arrangement   O(h²)           O(h)
  unsplit Euler x + h(F + G)         O(h²)           O(h)
  exact sub-flows, F and G commute   0 (exact: Φ_G(h)Φ_F(h) = Φ_{F+G}(h))

Euler sub-steps: why Macaron's layer is not second order, and what it still gains
---------------------------------------------------------------------------------
Write F, G for the fields at x and F', G' for their Jacobians. The exact flow is

    x + h(F + G) + h²/2 · (F'F + F'G + G'F + G'G) + O(h³).

Euler sub-steps in the Macaron order ½G, F, ½G give

    x₁ = x + h/2·G
    x₂ = x₁ + hF(x₁)    = x + h/2·G + hF + h²/2·F'G + O(h³)
    x₃ = x₂ + h/2·G(x₂) = x + h(F + G) + h²/2 · (F'G + G'F + ½G'G) + O(h³).

The cross terms F'G + G'F now match the exact flow: the symmetric arrangement removes the
splitting error (Lie–Trotter's commutator term ½(F'G − G'F)) just as Theorem 1 says. What it
cannot remove is the error of the sub-solvers themselves: a single Euler step of duration τ for
a field K misses τ²/2·K'K. So the local error is

    exact − scheme = h²/2 · (F'F + ½G'G) + O(h³)        (the ½: two half Euler steps of G)

and Strang with Euler sub-steps is first order globally, like the Transformer's layer. The h²
coefficients side by side (exact − scheme, divided by h²/2):

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

import numpy as np

from ..schemes import FULL, SCHEMES, Sub

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


def registered() -> dict[str, tuple[Sub, ...]]:
    """Every registered scheme (macaron.schemes), as name -> sub-steps."""
    return {name: s.substeps for name, s in SCHEMES.items()}


def unsplit(scheme) -> bool:
    """A sub-step of F + G together: with exact sub-flows it would be the reference itself."""
    return any(sub.kind == FULL for sub in scheme)


def substep(system, sub: Sub, h: float, x: np.ndarray, solver: str = "exact") -> np.ndarray:
    """Advance x by the sub-flow `sub.kind` for sub.fraction·h: exactly, or one Euler step."""
    tau = sub.fraction * h
    if solver == "exact":
        return system.flow(sub.kind, tau, x)
    if solver == "euler":
        return x + tau * system.field(sub.kind, x)
    raise ValueError(f"unknown sub-flow solver {solver!r}; choose one of {SUBSTEPS}")


def step(system, scheme, h: float, x: np.ndarray, solver: str = "exact") -> np.ndarray:
    """One step of size h: the scheme's sub-steps, left to right."""
    for sub in scheme:
        x = substep(system, sub, h, x, solver)
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


def integrate(system, scheme, h: float, n_steps: int, x: np.ndarray, solver: str = "exact",
              record: bool = False) -> np.ndarray:
    """n_steps steps of size h from x: the final state, or [n_steps + 1, n, d] if record."""
    if record:
        path = [x]
        for _ in range(n_steps):
            path.append(step(system, scheme, h, path[-1], solver))
        return np.stack(path)
    subs = _merged(scheme, n_steps) if solver == "exact" else list(scheme) * n_steps
    for sub in subs:
        x = substep(system, sub, h, x, solver)
    return x


def leading_error(system, scheme, x: np.ndarray, solver="exact") -> np.ndarray:
    """C in exact(h) − step(h) = h²·C + O(h³), from the Taylor expansion of the scheme.

    Sub-step k (kind K_k, fraction a_k) evaluates K_k at x + h Σ_{j<k} a_j K_j + O(h²), so

        step = x + h Σ a_k K_k + h² [Σ_{j<k} a_j a_k K_k' K_j + Σ_k e_k a_k²/2 K_k' K_k] + O(h³)

    with e_k = 1 for an exact sub-flow, 0 for an Euler step. The exact flow has h²/2 (F+G)'(F+G).
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
