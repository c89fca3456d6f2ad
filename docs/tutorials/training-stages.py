# %% [markdown]
# # 6 · The stages of training
#
# A shipped mini keeps its weights at a few stages of its training: the random start (not stored: rebuilt from the
# run's seed and checked against the checksum its training recorded), the **plateau** (the last evaluation before it
# reads word order), the **rise** (the first with half of its final context effect) and the final weights. Here one
# model is watched through them: its held-out curve, what it guesses for a [MASK], and how far apart context pushes
# two uses of one word. It runs on a CPU with no network, on the models in `pretrained/`.
#
# **In Jupyter**, from a clone: `.venv/bin/pip install ".[notebooks]"`, then
# `.venv/bin/jupytext --to ipynb docs/tutorials/training-stages.py && .venv/bin/jupyter lab
# docs/tutorials/training-stages.ipynb`
# (jupytext writes the notebook from this `# %%` file; the tests run the file as a script).
#
# **On Colab**, a first cell that installs the explorer from the repository (not tried: the machine this was written
# on has no network): `!git clone --depth 1 <the repository's address> macaron-explorer` then
# `%pip install -e macaron-explorer` and `%cd macaron-explorer`.

# %%
import numpy as np

import macaron
from macaron import analysis, plot
from macaron.studies import learning

name = "macaron-mini"
stages = macaron.milestones(name)
for stage in stages:
    print(stage)
vocabulary = macaron.load(name).config.vocab_size
print(f"a uniform guess over its {vocabulary:,} tokens scores ln {vocabulary:,} = {np.log(vocabulary):.3f} nats")

# %% [markdown]
# The **context effect** is how much the held-out loss rises when the other words of each sequence are shuffled:
# what the model owes to word order. At the plateau it is near zero (below 0.05 nats, by the plateau's definition).
# The whole run's held-out evaluations are in the folder (`metrics.jsonl`):

# %%
curve = learning.curve(name)
print(f"{len(curve['loss'])} evaluations, from {curve['tokens'][0]:,.0f} to {curve['tokens'][-1]:,.0f} tokens")
print(f"held-out loss {curve['loss'][0]:.3f} → {curve['loss'][-1]:.3f} nats; "
      f"context effect {curve['context_effect'][0]:+.3f} → {curve['context_effect'][-1]:+.3f} nats")

# %% [markdown]
# ## One sentence at every stage
#
# `learning.stages` loads the model at each stage and measures a sentence: the top guesses for its [MASK] (the
# model's own prediction at the last state), the particles' clustering, and, given two uses of one word, how far
# apart they end (1 − cos of the word's two particles, standardised, at every state).

# %%
text = "he was born in new [MASK] ."
uses = ("the bank of the river", "the bank raised its rates", "bank")
rows = learning.stages(name, text, uses=uses)
for row in rows:
    guesses = ", ".join(f"{w} {p:.2f}" for w, p in row.guesses[:3])
    print(f"{row.milestone.name:13} guesses: {guesses:38} clusters {row.clusters:4.1f} · "
          f"the two banks 1 − cos {row.distance[-1]:.3f}")
plot.learning(rows, curve).show()

# %% [markdown]
# ## Does it read the sentence?
#
# The same question of three more sentences, at every stage (`learning.at_stages` gives the model at each, loaded
# as it is needed).

# %%
others = ["the cat sat on the [MASK] .", "she played the [MASK] all night .", "paris is the capital of [MASK] ."]
first = {}
for model in learning.at_stages(name):
    said = []
    for sentence in [text, *others]:
        traj = model.trace(sentence)
        said.append(model.logit_lens(traj, traj.guess_at, k=1)[-1][0][0])
    first[model.milestone.name] = said
    print(f"{model.milestone.name:13}", " · ".join(said))

# %% [markdown]
# ## The particles at the start and at the end
#
# The sentence's particles at the random start and with the final weights, on one clock: one PCA fitted on both
# trajectories' states draws both panels (the same directions), each panel at its own scale, as the app's Compare
# page shows two stages of one model.

# %%
start, final = macaron.load(name, at=0), macaron.load(name)
print("rebuilt from the seed and checked:", start.milestone)
pair = [start.trace(text), final.trace(text)]
plot.compare(pair, analysis.project_together(*pair, normalised=True), ["random start", "final"]).show()

# %% [markdown]
# ## What this showed, checked
#
# The held-out loss falls at every stage, from about a uniform guess to 3.1 nats; at the plateau the model's first
# guess is the same token for all four sentences (it does not yet depend on the sentence), with the final weights
# four different words, *york* for "he was born in new [MASK] ."; and the two banks, one particle at the embedding
# (the same word at the same position), end further apart at each stage, hardly apart at all at the random start.

# %%
losses = [s.loss for s in stages]
assert [s.name for s in stages] == ["random start", "plateau", "rise", "final"]
assert all(a > b for a, b in zip(losses, losses[1:])) and abs(losses[0] - np.log(vocabulary)) < 0.1, losses
assert stages[1].context_effect < 0.05 < stages[2].context_effect
assert len(set(first["plateau"])) == 1 and len(set(first["final"])) == 4 and first["final"][0] == "york", first
apart = [row.distance[-1] for row in rows]
assert apart[0] < 0.01 and all(a < b for a, b in zip(apart[:3], apart[1:])), apart
