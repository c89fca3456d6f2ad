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

The modules, lowest first: system (what every system offers, the initial particles); linear and
attention (the systems); untied (a Strang step whose two halves run different fields); splitting (a
scheme's step, and the h² coefficient of its error: the orders of accuracy, derived in its docstring);
convergence (errors and fitted orders, ConvergenceStudy; many random systems); paths (the particles'
paths for an animation, the lab's systems by name). Their public names are all here too.
"""
from .attention import AttentionSystem, MlpDrift, attention_system
from .convergence import (
    DEFAULT_H,
    DEFAULT_HORIZON,
    DEFAULT_N_STEPS,
    ROUNDOFF,
    ConvergenceStudy,
    combined,
    convergence_study,
    distance,
    fit_slope,
    global_errors,
    is_roundoff,
    local_errors,
    ratio_summary,
    strang_over_lie_trotter,
)
from .linear import (
    Exponential,
    LinearDrift,
    LinearSystem,
    commuting_system,
    linear_system,
    random_graph,
    random_linear_system,
)
from .paths import SYSTEMS, ParticlePaths, lab_paths, particle_paths
from .splitting import EXPECTED_ORDER, SUBSTEPS, integrate, leading_error, registered, step, substep, unsplit
from .system import System, initial_positions
from .untied import FIRST_HALF, SECOND_HALF, Untied, drift_for, untie, untied_leading_error

__all__ = ["AttentionSystem", "ConvergenceStudy", "DEFAULT_H", "DEFAULT_HORIZON", "DEFAULT_N_STEPS",
           "EXPECTED_ORDER", "Exponential", "FIRST_HALF", "LinearDrift", "LinearSystem", "MlpDrift", "ParticlePaths",
           "ROUNDOFF", "SECOND_HALF", "SUBSTEPS", "SYSTEMS", "System", "Untied", "attention_system", "combined",
           "commuting_system", "convergence_study", "distance", "drift_for", "fit_slope", "global_errors",
           "initial_positions", "integrate", "is_roundoff", "lab_paths", "leading_error", "linear_system",
           "local_errors", "particle_paths", "random_graph", "random_linear_system", "ratio_summary", "registered",
           "step", "strang_over_lie_trotter", "substep", "untie", "untied_leading_error", "unsplit"]
