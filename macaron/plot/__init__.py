"""Every figure the explorer shows, as pure functions: trajectories, macaron.studies.analysis and macaron.lab results
in, Plotly figures out (call .show() in a notebook, or to_html for a file that opens offline).

    proj = analysis.project(traj)
    plot.particles(traj, proj).show()

One style for all of them lives in macaron.plot.style.
"""
from .compare import cka, compare, lines_over_depth, overlay
from .guesses import attribution_html, logit_lens
from .lab import (
    convergence,
    kappa_curves,
    layer_bars,
    model_colors,
    ratio_histogram,
    slope_rows,
    spread_rows,
    toy_particles,
    untied_rows,
)
from .learning import learning
from .matrix import mixing_heatmap
from .particles import particles
from .race import curves as race_curves
from .race import differences as race_differences
from .race import gaps as race_gaps
from .rhythm import displacement, displacement_heatmap
from .style import to_html
from .translation import move_shares
from .whatif import whatif

__all__ = ["attribution_html", "cka", "compare", "convergence", "displacement", "displacement_heatmap", "kappa_curves",
           "layer_bars", "learning", "lines_over_depth", "logit_lens", "mixing_heatmap", "model_colors", "move_shares",
           "overlay", "particles", "race_curves", "race_differences", "race_gaps", "ratio_histogram", "slope_rows",
           "spread_rows", "to_html", "toy_particles", "untied_rows", "whatif"]
