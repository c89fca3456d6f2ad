# %% [markdown]
# # 2 · Two models on one clock
#
# One sentence through two shipped models trained alike (one tokenizer; the same batches, masks and budget): a
# Transformer, whose layer is a Lie–Trotter step (attention, then FFN: two sub-steps), and a Macaron, whose layer is
# a Strang–Marchuk step (½ FFN, attention, ½ FFN: three). Their clocks count layers, so the ends of their layers line
# up; between them the two models take different numbers of sub-steps. Then three ways to ask how alike they are:
# Procrustes (one rotation of one cloud onto the other), CKA (no rotation needed) and, for what each model answers,
# attribution (which words its guess rests on). It runs on a CPU with no network, on the models in `pretrained/`.
#
# **In Jupyter**, from a clone: `.venv/bin/pip install ".[notebooks]"`, then
# `.venv/bin/jupytext --to ipynb docs/tutorials/two-models.py && .venv/bin/jupyter lab
# docs/tutorials/two-models.ipynb`
# (jupytext writes the notebook from this `# %%` file; the tests run the file as a script).
#
# **On Colab**, a first cell that installs the explorer from the repository (not tried: the machine this was written
# on has no network): `!git clone --depth 1 <the repository's address> macaron-explorer` then
# `%pip install -e macaron-explorer` and `%cd macaron-explorer`.

# %%
import dataclasses

import numpy as np

import macaron
from macaron import analysis, plot

text = "the bank of the river was [MASK] ."
names = ["transformer-mini", "macaron-mini"]
models = [macaron.load(name) for name in names]
traj_a, traj_b = (model.trace(text) for model in models)
for name, traj in zip(names, (traj_a, traj_b)):
    print(f"{name}: {traj.meta['scheme']}, {traj.n_steps} sub-steps, {len(traj.tokens)} particles")
    print("   depth of every state:", traj.times)
print("both split the sentence alike:", traj_a.tokens == traj_b.tokens)

# %% [markdown]
# ## Side by side on one clock
#
# Each panel is its own model's PCA (two models have unrelated coordinates: no axis of one means anything in the
# other). The slider is layer time: at each time both panels show their latest state, so at t = 1, 2, … both have
# just finished a layer. ▶ Play runs the clock.

# %%
projections = [analysis.project(t, normalised=True) for t in (traj_a, traj_b)]
for name, p in zip(names, projections):
    print(f"{name}: PC1 and PC2 hold {p.explained.sum():.0%} of the states' spread")
print("the clock:", analysis.time_grid(traj_a, traj_b))
plot.compare([traj_a, traj_b], projections, names).show()

# %% [markdown]
# ## Procrustes: one rotation for every layer
#
# `analysis.procrustes` centres each layer's cloud of particles, scales it to unit size, and finds the one
# orthogonal matrix (and scale) that carries B's clouds onto A's at every layer boundary at once, particle to
# particle. What is left, the residual, is 0 for the same shape and grows as the shapes differ. [CLS] and [SEP] are
# left out by default (`hide_special=True`), as in the app.
#
# A residual means little without a control: the same clouds of B, with its particles handed to the wrong tokens
# (the words shuffled among themselves), have exactly the same shapes as clouds; only the correspondence is lost.

# %%
aligned = analysis.procrustes(traj_a, traj_b)
print(f"residual over all layers: {aligned.residual:.3f}")
for t, r in zip(aligned.layer_times, aligned.layer_residuals):
    print(f"   t = {t:g}: {r:.3f}")

rng = np.random.default_rng(0)
inner = len(traj_b.tokens) - 2                    # the words between [CLS] and [SEP]
controls = []
for _ in range(20):
    order = np.r_[0, 1 + rng.permutation(inner), inner + 1]
    shuffled = dataclasses.replace(traj_b, states=traj_b.states[:, order])
    controls.append(analysis.procrustes(traj_a, shuffled).residual)
print(f"with B's words shuffled (20 draws): residual {min(controls):.3f} to {max(controls):.3f}, "
      f"median {np.median(controls):.3f}")
plot.overlay(aligned, traj_a, traj_b, names).show()

# %% [markdown]
# ## CKA: similar without a rotation
#
# Linear CKA compares the two clouds through their particles' similarities to each other (the Gram matrices), so it
# needs no rotation: 1 for the same geometry up to rotation and scale. `analysis.cka` gives it for every state of A
# against every state of B; it needs both models to split the sentence into the same tokens (they do here: one
# tokenizer). A bright diagonal means both pass through similar configurations at the same depth.

# %%
cka = analysis.cka(traj_a, traj_b)
ends_a, ends_b = traj_a.layer_boundaries(), traj_b.layer_boundaries()
at_ends = cka[np.ix_(ends_a, ends_b)]
nearest = at_ends.argmax(axis=1)
for i, j in enumerate(nearest):
    print(f"{names[0]} after layer {i}: most like {names[1]} after layer {j} (CKA {at_ends[i, j]:.2f}; "
          f"same layer {at_ends[i, i]:.2f})")
plot.cka(cka, traj_a, traj_b, *names).show()

# %% [markdown]
# ## Attribution: which words each guess rests on
#
# Integrated gradients (Captum) from a baseline sentence that keeps [CLS], [SEP] and [MASK] and replaces every other
# word by [PAD]: each word's share of how much the log-probability of the model's top guess rises from the
# baseline's. The shares add up to that rise, within `delta` (the completeness gap: a check on the integration).

# %%
attributions = []
for name, model, traj in zip(names, models, (traj_a, traj_b)):
    att = analysis.attribute(model, traj)
    attributions.append(att)
    words = ", ".join(f"{tok} {s:+.2f}" for tok, s in zip(traj.tokens, att.scores))
    print(f"{name}: {att.target}\n   {words}\n   sum {att.scores.sum():.3f}, completeness gap {att.delta:.1e}")

try:  # in Jupyter, the sentence shaded as the app shades it
    from IPython.display import HTML, display
    for traj, att in zip((traj_a, traj_b), attributions):
        display(HTML(plot.attribution_html(traj.tokens, att.scores)))
except ImportError:
    pass

# %% [markdown]
# ## What this showed, checked
#
# The two models' clocks meet at every layer boundary; after one rotation their clouds have nearly the same shape
# (a residual more than three times below the shuffled control's smallest); CKA's best match for each of A's
# layers lies at most one layer away in B; and both models' guesses rest most on the word just before the [MASK],
# "was", with the integrated gradients complete to within 1 % of their sum.

# %%
assert set(traj_a.times[ends_a]) == set(traj_b.times[ends_b]) == set(range(7))
assert aligned.residual < min(controls) / 3, (aligned.residual, min(controls))
assert np.all(np.abs(nearest - np.arange(len(nearest))) <= 1), nearest
for traj, att in zip((traj_a, traj_b), attributions):
    assert traj.tokens[int(att.scores.argmax())] == "was"
    assert att.delta < 0.01 * abs(att.scores.sum())
