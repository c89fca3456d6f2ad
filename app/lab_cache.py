"""The Splitting lab's cached computations: bounded, shared by every session, read-only, and
computed one at a time on the server (explorer_cache.heavy).

The computing is macaron's (macaron.lab, macaron.studies.bridge); this module decides what is kept.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import streamlit as st

import explorer_cache as cache
from macaron import lab
from macaron.schemes import SCHEMES
from macaron.studies import bridge, orders

EPSILONS = (0.0, 0.05, 0.2, 0.5, 1.0)  # the table of measured orders as the halves come apart
SIZES = (0.3, 1.0, 3.0)                # strength of F (β) and of G (drift scale) in the random systems
PAIR = {"strang": lab.untie(SCHEMES["strang"].substeps), "lie-trotter": SCHEMES["lie-trotter"].substeps}


@st.cache_data(show_spinner="Untying the half-steps" + cache.ONE_AT_A_TIME, max_entries=96)
def untied_study(kind: str, n: int, beta: float, eps: float) -> lab.ConvergenceStudy:
    """Strang with half-steps G + εΔ, then G − εΔ (and Lie–Trotter, which has one G) on a toy system."""
    base = cache.toy_system(kind, n, beta)
    with cache.heavy():
        return lab.convergence_study(lab.Untied(base, lab.drift_for(base), eps), lab.initial_positions(n, 2),
                                     schemes=PAIR)


@st.cache_data(show_spinner="Solving 200 random systems" + cache.ONE_AT_A_TIME, max_entries=32)
def random_ratios(f_scale: float, g_scale: float, solver: str = "euler") -> np.ndarray:
    with cache.heavy():
        return lab.strang_over_lie_trotter(n_draws=200, f_scale=f_scale, g_scale=g_scale, solver=solver)


@st.cache_data(show_spinner="Measuring every layer" + cache.ONE_AT_A_TIME, max_entries=64)
def layer_report(path: str, text: str) -> dict:
    """The bridge measures of one model on one sentence (see macaron.studies.bridge)."""
    model, traj = cache.load_model(path), cache.timed_trace(path, text)[0]
    with cache.heavy():
        curves = bridge.commutators(model, traj)
        report = {"step_ratio": bridge.step_ratio(traj), "curves": curves,
                  "limit": {k: bridge.commutator_limit(v) for k, v in curves.items()},
                  "spread": {view: bridge.spread_change(traj, normalised=view == "normalised")
                             for view in ("raw", "normalised")}, "tie": None,
                  "norm": bridge.norm_move(model, traj)[0] if model.config.norm == "post" else None}
        if sum(s.kind == "convection" for s in model.config.substeps) == 2:
            report["tie"] = bridge.half_ffn_tie(model, traj)
    return report


def measured_orders(path: str) -> dict | None:
    """A model folder's orders.json checked against the loaded weights, once per version of the file (hashing
    the weights on every rerun would be work for nothing: a served folder's weights do not change)."""
    file = Path(path) / orders.FILE
    return _measured_orders(path, file.stat().st_mtime_ns if file.exists() else 0)


@st.cache_data(show_spinner=False, max_entries=16)
def _measured_orders(path: str, version: int) -> dict | None:
    return orders.read(path, cache.load_model(path))  # version: the file's mtime, part of the cache key

