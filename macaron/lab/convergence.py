"""Measurements: errors against the exact flow, one step from a state (local) and at a horizon (global),
for every scheme and sub-flow solver, and the orders fitted to them (ConvergenceStudy); and over many
random linear systems, how often Strang with Euler sub-steps is the more accurate (strang_over_lie_trotter).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from ..schemes import FULL, SCHEMES
from .linear import random_linear_system
from .splitting import SUBSTEPS, integrate, registered, step, unsplit
from .system import initial_positions

DEFAULT_H = np.geomspace(4e-3, 0.1, 8)  # local study: one step of size h
DEFAULT_N_STEPS = np.array([4, 6, 8, 11, 16, 23, 32, 45])  # global study: h = horizon / n_steps
DEFAULT_HORIZON = 1.0
ROUNDOFF = 1e-12  # errors below this (states of size ~1) are round-off: the scheme is exact


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


def local_errors(system, scheme, h, x0, solver="exact", reference=None) -> np.ndarray:
    """|one step of size h − exact flow for h| from x0, for every step size in h."""
    if reference is None:
        reference = system.flows(FULL, h, x0)
    return np.array([distance(step(system, scheme, size, x0, solver), ref)
                     for size, ref in zip(h, reference)])


def global_errors(system, scheme, horizon, n_steps, x0, solver="exact", reference=None) -> np.ndarray:
    """|n steps of size horizon/n − exact flow at the horizon|, for every n."""
    if reference is None:
        reference = system.flow(FULL, horizon, x0)
    return np.array([distance(integrate(system, scheme, horizon / n, int(n), x0, solver), reference)
                     for n in n_steps])


@dataclass
class ConvergenceStudy:
    """Errors and fitted orders, keyed [scheme][solver]; arrays follow `h` / `n_steps`."""

    system: str
    h: np.ndarray                         # [8] step sizes of the local study
    horizon: float
    n_steps: np.ndarray                   # [8] step counts of the global study
    local_error: dict = field(default_factory=dict)   # [scheme][solver] -> [8]
    global_error: dict = field(default_factory=dict)  # [scheme][solver] -> [8]
    local_slope: dict = field(default_factory=dict)   # [scheme][solver] -> float
    global_slope: dict = field(default_factory=dict)  # [scheme][solver] -> float

    @property
    def global_h(self) -> np.ndarray:
        """[8] step sizes of the global study: horizon / n_steps."""
        return self.horizon / self.n_steps

    def to_dict(self) -> dict:
        return asdict(self)


def convergence_study(system, x0=None, h=DEFAULT_H, horizon=DEFAULT_HORIZON,
                      n_steps=DEFAULT_N_STEPS, schemes=None, solvers=SUBSTEPS) -> ConvergenceStudy:
    """Local and global errors of every scheme × sub-flow solver, with fitted slopes.

    The references are computed once: the exact flow from x0 at every step size h (one dense solve)
    and at the horizon. "unsplit" runs with Euler only (its exact version is the reference).
    """
    x0 = initial_positions(system.n, system.d) if x0 is None else x0
    schemes = registered() if schemes is None else schemes
    h, n_steps = np.array(h, float), np.array(n_steps, int)
    local_ref = system.flows(FULL, h, x0)
    global_ref = system.flow(FULL, horizon, x0)
    study = ConvergenceStudy(system.name, h, float(horizon), n_steps)
    for name, scheme in schemes.items():
        for solver in solvers:
            if solver == "exact" and unsplit(scheme):
                continue
            loc = local_errors(system, scheme, h, x0, solver, local_ref)
            glo = global_errors(system, scheme, horizon, n_steps, x0, solver, global_ref)
            study.local_error.setdefault(name, {})[solver] = loc
            study.global_error.setdefault(name, {})[solver] = glo
            study.local_slope.setdefault(name, {})[solver] = fit_slope(h, loc)
            study.global_slope.setdefault(name, {})[solver] = fit_slope(study.global_h, glo)
    return study


def combined(rows: dict[str, tuple[ConvergenceStudy, str]]) -> ConvergenceStudy:
    """One study of rows taken from studies on the same grid: key -> (study, scheme) files that study's errors
    and slopes of the scheme under the key (e.g. Strang with tied and with untied halves on one chart)."""
    first = next(iter(rows.values()))[0]
    out = ConvergenceStudy(first.system, first.h, first.horizon, first.n_steps)
    for key, (study, scheme) in rows.items():
        for name in ("local_error", "global_error", "local_slope", "global_slope"):
            getattr(out, name)[key] = getattr(study, name)[scheme]
    return out


def strang_over_lie_trotter(n_draws: int = 200, f_scale: float = 1.0, g_scale: float = 1.0, n: int = 8,
                            d: int = 2, horizon: float = 1.0, n_steps: int = 16, solver: str = "euler",
                            seed: int = 0) -> np.ndarray:
    """[n_draws]: global error of Strang–Marchuk over that of Lie–Trotter at the horizon, one random
    linear system and initial state per draw. Below 1: Strang is the more accurate there."""
    rng = np.random.default_rng([seed, int(1000 * f_scale), int(1000 * g_scale)])
    h = horizon / n_steps
    out = np.empty(n_draws)
    for i in range(n_draws):
        system = random_linear_system(rng, n, d, f_scale, g_scale)
        x0 = rng.normal(size=(n, d))
        exact = system.flow(FULL, horizon, x0)
        errors = [distance(integrate(system, SCHEMES[name].substeps, h, n_steps, x0, solver), exact)
                  for name in ("strang", "lie-trotter")]
        out[i] = errors[0] / errors[1]
    return out


def ratio_summary(ratios) -> tuple[float, float]:
    """Of strang_over_lie_trotter's ratios: the share of draws in which Strang–Marchuk's error is the larger, and
    the median ratio."""
    ratios = np.asarray(ratios, float)
    return float(np.mean(ratios > 1)), float(np.median(ratios))
