# %% [markdown]
# # 1 · A first trace
#
# Load a shipped model, trace one sentence through it and look at what the trace holds: the particles and their
# moves, who pulls whom in an attention sub-step, and what the model would guess at every sub-step (the logit lens).
# It runs on a CPU in a few seconds, with no network, on the models in the clone's `pretrained/`.
#
# **In Jupyter**, from a clone: `.venv/bin/pip install ".[notebooks]"`, then
# `.venv/bin/jupytext --to ipynb docs/tutorials/first-trace.py && .venv/bin/jupyter lab
# docs/tutorials/first-trace.ipynb`
# (jupytext writes the notebook from this `# %%` file; the tests run the file as a script).
#
# **On Colab**, a first cell that installs the explorer from the repository (not tried: the machine this was written
# on has no network): `!git clone --depth 1 <the repository's address> macaron-explorer` then
# `%pip install -e macaron-explorer` and `%cd macaron-explorer`.

# %%
import numpy as np

import macaron
from macaron import analysis, plot

model = macaron.load("macaron-mini")  # a shipped name (a folder in pretrained/), any model folder, or a Hub id
traj = model.trace("he was born in new [MASK] .")
print(model.kind, "·", traj.meta["scheme"], "·", traj.meta["norm"] + "-LN")

# %% [markdown]
# ## What a Trajectory holds
#
# One state per particle after every sub-step: `states[0]` is the embedding, `states[k]` the state after sub-step
# `k`, described by `steps[k - 1]` (its layer, its kind, the fraction of the layer's step it runs for, and the depth
# it reaches). A Macaron layer has three sub-steps: ½ convection (FFN), diffusion (attention), ½ convection.

# %%
print("tokens:", traj.tokens)
print("states:", traj.states.shape, "= (1 + sub-steps, particles, width)")
for k, step in enumerate(traj.steps[:3], start=1):
    print(f"sub-step {k}: {step.label:32} kind {step.kind:10} fraction {step.fraction} depth {step.time}")
print("depth of every state:", traj.times)
print("the embedding and the end of each layer:", traj.layer_boundaries())
print("final:", traj.final.shape, "· the head answers at", traj.guess_at, repr(traj.tokens[traj.guess_at]))

# %% [markdown]
# ## The particles
#
# One PCA of every state of the sentence draws all the frames, so motion on screen is motion of the states; ▶ Play
# walks through the sub-steps. Each dot is a token.

# %%
projection = analysis.project(traj, normalised=True)
print(f"PC1 and PC2 hold {projection.explained.sum():.0%} of the states' spread")
plot.particles(traj, projection).show()

# %% [markdown]
# ## Who pulls whom
#
# In a diffusion (attention) sub-step each particle moves towards a weighted mean of the others: the mixing
# matrix gives the weights, one row a particle, for every head. Averaged over the heads, each row still sums to 1.
# A convection (FFN) sub-step has none: each particle moves on its own.

# %%
first = analysis.diffusion_steps(traj)[0]
weights = traj.mixing[first].mean(axis=0)  # [particles, particles]: row i, whom particle i listens to
print(traj.steps[first].label)
for i, token in enumerate(traj.tokens):
    print(f"{token:>8} listens most to {traj.tokens[int(weights[i].argmax())]!r} ({weights[i].max():.0%})")
plot.mixing_heatmap(traj, first).show()

# %% [markdown]
# One particle's row, largest first (`analysis.listens_to`), and the animation with that particle ringed and its four
# largest weights written above the plot after every attention sub-step (the app's *Spell out whom a word listens
# to*, and what lesson step 2 shows for *bank*): readable where a projected matrix is not.

# %%
mask = traj.tokens.index("[MASK]")
print("[MASK] listens to", ", ".join(f"{traj.tokens[j]} {w:.0%}" for j, w in analysis.listens_to(traj, first, mask)))
plot.particles(traj, projection, focus=mask).show()

# %% [markdown]
# ## The logit lens
#
# The model's masked-word head read off the `[MASK]` particle's state after every sub-step: what it would guess if
# the model stopped there.

# %%
lens = model.logit_lens(traj, traj.guess_at, k=3)  # one list of (word, probability) a state
for k in traj.layer_boundaries():  # the embedding, then the end of each layer
    print(f"{'embedding' if k == 0 else f'end of layer {int(traj.times[k])}':16}",
          ", ".join(f"{word} {p:.2f}" for word, p in lens[k]))
plot.logit_lens(lens, traj).show()

# %% [markdown]
# ## What this showed, checked
#
# Every row of an attention sub-step's mixing matrix is a set of weights that sums to 1 (the [MASK]'s largest is the
# one `listens_to` names first), a convection sub-step records none, and after the last sub-step the model's first
# guess for "he was born in new [MASK] ." is *york*.

# %%
assert np.allclose(weights.sum(axis=1), 1.0, atol=1e-4)
assert analysis.listens_to(traj, first, mask)[0] == (int(weights[mask].argmax()), float(weights[mask].max()))
assert all(traj.mixing[k] is None for k, step in enumerate(traj.steps) if step.kind == "convection")
assert lens[-1][0][0] == "york", lens[-1]
