"""The particles' paths for an animation: the exact flow and every scheme on one time grid, and the lab's
systems by the names its views and the lesson use.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..schemes import FULL
from .attention import attention_system
from .convergence import DEFAULT_HORIZON, distance
from .linear import commuting_system, linear_system
from .splitting import integrate, registered, unsplit
from .system import initial_positions


@dataclass
class ParticlePaths:
    """Positions at times k·h, k = 0..n_steps, under the exact flow and under each scheme."""

    times: np.ndarray                          # [n_steps + 1]
    exact: np.ndarray                          # [n_steps + 1, n, d]
    schemes: dict = field(default_factory=dict)  # name -> [n_steps + 1, n, d]
    solver: str = "euler"

    def only(self, shown) -> ParticlePaths:
        """The same paths with only the schemes named in `shown`."""
        return ParticlePaths(self.times, self.exact, {s: p for s, p in self.schemes.items() if s in shown},
                             self.solver)

    def final_errors(self) -> dict[str, float]:
        """Each scheme's RMS distance to the exact particles at the last time."""
        return {s: float(distance(p[-1], self.exact[-1])) for s, p in self.schemes.items()}


def particle_paths(system, x0, horizon=DEFAULT_HORIZON, n_steps=8, schemes=None,
                   solver="euler") -> ParticlePaths:
    """Paths for an animation: every scheme on the same time grid as the exact flow."""
    schemes = registered() if schemes is None else schemes
    h = horizon / n_steps
    times = h * np.arange(n_steps + 1)
    exact = np.concatenate([x0[None], system.flows(FULL, times[1:], x0)])
    paths = ParticlePaths(times, exact, solver=solver)
    for name, scheme in schemes.items():
        if solver == "exact" and unsplit(scheme):
            continue
        paths.schemes[name] = integrate(system, scheme, h, n_steps, x0, solver, record=True)
    return paths


# The lab's systems by the names its views and the lesson use
SYSTEMS = {"linear": linear_system, "attention": attention_system, "commuting": commuting_system}


def lab_paths(kind: str, n: int, beta: float, horizon: float, n_steps: int, solver: str):
    """The lab's animation data for a system of SYSTEMS in 2-D: every scheme's particles on the step grid
    (particle_paths), and the exact flow on a finer grid for the drawn curves: (paths, dense times, dense)."""
    system = SYSTEMS[kind](n=n, d=2, beta=beta)
    x0 = initial_positions(n, 2)
    paths = particle_paths(system, x0, horizon, n_steps, solver=solver)
    dense_t = np.linspace(0.0, horizon, max(41, 4 * n_steps + 1))
    return paths, dense_t, np.concatenate([x0[None], system.flows(FULL, dense_t[1:], x0)])
