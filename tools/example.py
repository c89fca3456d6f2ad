# %% [markdown]
# # Macaron Explorer from a notebook
# The app's main views from the library alone: the particles animation, the logit lens, attribution,
# Transformer against Macaron (side by side, Procrustes, CKA), the splitting lab's convergence and the
# Dynamics page's token cloud over depth and its attention leaders.
#
#     .venv/bin/python tools/example.py                  # shipped models; prints where the HTML files went
#     .venv/bin/python tools/example.py --out views --transformer path/to/a --macaron path/to/b
#
# Each `# %%` cell runs on its own in Jupyter or VS Code (the percent format); there, call
# `fig.show()` instead of writing files.

# %%
import argparse
import tempfile
from pathlib import Path

import macaron
from macaron import lab, plot, sentences
from macaron.plot import dynamics as dynamics_plot
from macaron.studies import analysis, dynamics

parser = argparse.ArgumentParser(description="Write the explorer's main views as HTML files.")
parser.add_argument("--transformer", default="transformer-mini", help="a shipped model's name or a folder")
parser.add_argument("--macaron", default="macaron-mini", help="a shipped model's name or a folder")
parser.add_argument("--out", type=Path, default=None, help="folder for the HTML files (default: a new temp folder)")
args, _ = parser.parse_known_args()  # a notebook kernel passes arguments of its own
out = args.out or Path(tempfile.mkdtemp(prefix="macaron-views-"))
out.mkdir(parents=True, exist_ok=True)
figures = {}

# %% [markdown]
# ## Particles: one sentence through one model, sub-step by sub-step

# %%
m = macaron.load(args.macaron)
traj = m.trace("the bank of the river was [MASK] .", max_tokens=64)
proj = analysis.project(traj, normalised=True)  # one PCA of every state: the frame never moves
figures["particles"] = plot.particles(traj, proj)
print(f"{traj.meta['model']}: {len(traj.tokens)} particles, {traj.n_steps} sub-steps, "
      f"PC1 + PC2 explain {proj.explained.sum():.0%}; {traj.truncated} tokens dropped")

mask = traj.tokens.index("[MASK]")
figures["logit-lens"] = plot.logit_lens(m.logit_lens(traj, position=mask), traj)
attribution = analysis.attribute(m, traj, position=mask)  # Captum: integrated gradients
(out / "attribution.html").write_text(plot.attribution_html(traj.tokens, attribution.scores))
figures["mixing"] = plot.mixing_heatmap(traj, analysis.diffusion_steps(traj)[0])
figures["rhythm"] = plot.displacement([traj])

# %% [markdown]
# ## Compare: Transformer (Lie–Trotter) and Macaron (Strang–Marchuk) on one layer clock

# %%
t = macaron.load(args.transformer)
traj_t = t.trace(traj.text, max_tokens=64)
projections = [analysis.project(x, normalised=True) for x in (traj_t, traj)]
figures["compare"] = plot.compare([traj_t, traj], projections, ["Transformer", "Macaron"])
aligned = analysis.procrustes(traj_t, traj, normalised=True)  # one rotation for all layers
figures["overlay"] = plot.overlay(aligned, traj_t, traj, ["Transformer", "Macaron"])  # on the same layer clock
figures["cka"] = plot.cka(analysis.cka(traj_t, traj), traj_t, traj, "Transformer", "Macaron")
print(f"Procrustes residual {aligned.residual:.3f} (0 = the same shape, 1 = unrelated); by layer "
      + " ".join(f"{r:.2f}" for r in aligned.layer_residuals))

# %% [markdown]
# ## Splitting lab: the same schemes on a toy ODE whose exact flow is known

# %%
system = lab.linear_system(n=24)
x0 = lab.initial_positions(24, 2)
figures["convergence"] = plot.convergence(lab.convergence_study(system, x0), "euler")
figures["lab-particles"] = plot.toy_particles(lab.particle_paths(system, x0, n_steps=8), magnify=10)

# %% [markdown]
# ## Dynamics: the particle theory's measures over depth, two models on one sentence set

# %%
texts = sentences.read("everyday")[:32]  # the app measures all 318; 32 took 3 s of CPU for the two minis
sets = [dynamics.measure_set(x, texts, max_tokens=32) for x in (t, m)]
figures["dynamics-clusters"] = dynamics_plot.over_depth(sets, "clusters", ["Transformer", "Macaron"])
figures["dynamics-leaders"] = dynamics_plot.leaders(sets, ["Transformer", "Macaron"])
print("effective clusters, median over sentences, embedding → last state: " + "; ".join(
    f"{s.model} {s.state['clusters'].median[0]:.1f} → {s.state['clusters'].median[-1]:.1f}" for s in sets))

# %%
for name, fig in figures.items():
    (out / f"{name}.html").write_text(plot.to_html(fig, f"Macaron Explorer · {name}"))
print(f"{len(figures) + 1} views written to {out}")
