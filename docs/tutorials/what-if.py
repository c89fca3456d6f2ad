# %% [markdown]
# # 8 · What if: interventions and activation patching
#
# The explorer can change a run as it goes and compare it with the run as trained: switch a kind of sub-step off or
# scale it, silence one attention head, patch one particle's state from another sentence's run. Here, on the shipped
# `macaron-small` (an encoder with Macaron layers: ½ convection, diffusion, ½ convection) and the shipped translator
# `macaron-es-en`, each intervention is made once and what it changed is measured: each particle's distance from its
# own path as trained, and the model's answer before → after. It runs on a CPU with no network.
#
# **In Jupyter**, from a clone: `.venv/bin/pip install ".[notebooks]"`, then
# `.venv/bin/jupytext --to ipynb docs/tutorials/what-if.py && .venv/bin/jupyter lab
# docs/tutorials/what-if.ipynb`
# (jupytext writes the notebook from this `# %%` file; the tests run the file as a script).
#
# **On Colab**, a first cell that installs the explorer from the repository (not tried: the machine this was written
# on has no network): `!git clone --depth 1 <the repository's address> macaron-explorer` then
# `%pip install -e macaron-explorer` and `%cd macaron-explorer`.

# %%
import numpy as np

import macaron
import macaron.plot.patching
from macaron import analysis, plot
from macaron import interventions as iv
from macaron.plot.whatif import Run
from macaron.translation import model as translation

model = macaron.load("macaron-small")
text = "he was born in new [MASK] ."
plain = model.trace(text)
print(model.config.name, "·", model.config.n_layers, "layers ×", model.config.n_heads, "heads ·", plain.tokens)
print("a layer:", [s.label for s in plain.steps if s.layer == 0])

# %% [markdown]
# ## Diffusion off
#
# `iv.Off("diffusion")` runs every diffusion (attention) sub-step for a time of 0: no particle is pulled by another,
# each moves by its own convection (FFN) only. `iv.effect` compares the altered run with the plain one: the top words
# where the model answers (`[MASK]`), before and after, and each particle's distance from its own unaltered path at
# every state (`iv.drift`). The figure plays the altered run over the unaltered paths (grey ghosts) in one PCA of both
# runs' states.

# %%
off = model.trace(text, interventions=[iv.Off("diffusion")])
change = iv.effect(model, plain, off, k=3)
print("what was done:", off.interventions)
print("before:", ", ".join(f"{w} {p:.2f}" for w, p in change.before))
print("after: ", ", ".join(f"{w} {p:.2f}" for w, p in change.after))
distance = iv.drift(plain, off)  # [states, particles], as change.drift
print("each particle's distance from its own path, at the last state:")
for token, d in zip(off.tokens, distance[-1]):
    print(f"{token:>8} {d:6.2f}")
projections = analysis.project_together(plain, off)
plot.whatif([Run(plain, off, *projections, effect=change)], said=off.interventions[0]).show()

# %% [markdown]
# ## With diffusion off, a particle's path is its token's and its position's alone
#
# Without the interaction nothing reaches a particle from the others: its path depends only on the token it starts
# as and on its position. So two sentences with `[MASK]` at the same index give the same `[MASK]` state at every
# sub-step, and the same answer, though as trained they answer differently. Below, each index of the two sentences:
# whether the tokens there are the same, and whether the paths with diffusion off are.

# %%
other = "the cat sat on a [MASK] ."
other_plain, other_off = model.trace(other), model.trace(other, interventions=[iv.Off("diffusion")])
print(f"as trained: {text!r} → {model.logit_lens(plain, plain.guess_at, 1)[-1][0][0]!r}, "
      f"{other!r} → {model.logit_lens(other_plain, other_plain.guess_at, 1)[-1][0][0]!r}")
print(f"diffusion off: {model.logit_lens(off, off.guess_at, 1)[-1][0][0]!r} and "
      f"{model.logit_lens(other_off, other_off.guess_at, 1)[-1][0][0]!r}")
same_token = [a == b for a, b in zip(off.token_ids, other_off.token_ids)]
same_path = [bool(np.array_equal(off.states[:, i], other_off.states[:, i])) for i in range(len(off.tokens))]
for i, (a, b) in enumerate(zip(off.tokens, other_off.tokens)):
    print(f"{i}: {a:>8} {b:>8}   same token {same_token[i]!s:5}   same path {same_path[i]}")

# %% [markdown]
# ## Diffusion scaled
#
# `iv.Scale("diffusion", f)` multiplies every diffusion sub-step's time by f: 0 is off, 1 as trained, 2 twice as far.
# The table gives the probability of the trained answer and the top word at each factor; at 1 the run is the plain
# trace. On this sentence, the factor the model was trained with, 1, gives the answer the highest probability of the
# four.

# %%
answer = change.before[0][0]
answer_id = model.tokenizer.token_to_id(answer)


def p_of(traj) -> float:
    """The probability of the trained answer where the model answers, read off the last state."""
    return float(model.lens_logits(traj.states[-1, traj.guess_at]).softmax(-1)[answer_id])


scaled = {f: model.trace(text, interventions=[iv.Scale("diffusion", f)]) for f in (0.0, 0.5, 1.0, 2.0)}
print(f"factor  p({answer})  top word")
for f, t in scaled.items():
    print(f"{f:6g}  {p_of(t):8.3f}  {model.logit_lens(t, t.guess_at, 1)[-1][0][0]}")

# %% [markdown]
# ## One head silenced
#
# `iv.Head(layer, head)` sets one attention head's output to zero before the output projection. First, diffusion off
# in one layer at a time finds the layer whose attention the answer needs most (the lowest probability of the trained
# answer); then each of that layer's heads is silenced in turn. Layers and heads count from 0.

# %%
layers = range(model.config.n_layers)
p_layer_off = [p_of(model.trace(text, interventions=[iv.Off("diffusion", layers=[i])])) for i in layers]
print(f"as trained: p({answer}) {p_of(plain):.3f}")
for i, p in enumerate(p_layer_off):
    print(f"diffusion off in layer {i}: {p:.3f}")
layer = int(np.argmin(p_layer_off))
silenced = [model.trace(text, interventions=[iv.Head(layer=layer, head=h)]) for h in range(model.config.n_heads)]
p_head_off = [p_of(t) for t in silenced]
for h, p in enumerate(p_head_off):
    print(f"layer {layer}, head {h} silenced: {p:.3f}")
head = int(np.argmin(p_head_off))
print("its label, which counts layers from 1 as the steps' labels do:", silenced[head].interventions)
print(f"on this sentence, the head of layer {layer} that the answer needs most: head {head} "
      f"(p({answer}) {p_of(plain):.3f} → {p_head_off[head]:.3f})")

# %% [markdown]
# A silenced head acts only from its own sub-step on: every state before that layer's diffusion sub-step is the plain
# run's, exactly.

# %%
first_changed = 1 + next(k for k, s in enumerate(plain.steps) if s.layer == layer and s.kind == "diffusion")
print(f"first state that can change: {first_changed} ({plain.steps[first_changed - 1].label})")
moved = np.abs(silenced[head].states - plain.states).max(axis=(1, 2))  # the largest change of any particle, per state
print("largest change before it:", float(moved[:first_changed].max()), "· at it:", float(moved[first_changed]))

# %% [markdown]
# ## The patching map
#
# Activation patching: run the corrupted sentence ("the man said that [MASK] was tired .") with one particle's state
# at one layer boundary replaced by the clean run's ("the woman …"), and measure how much of the clean logit
# difference logit(she) − logit(he) at `[MASK]` comes back: 0 none, 1 all. `iv.patching_map` does it for every layer
# boundary and every particle, in batches.

# %%
clean, corrupted = "the woman said that [MASK] was tired .", "the man said that [MASK] was tired ."
pm = iv.patching_map(model, clean, corrupted, ("she", "he"))
corrupted_tokens = model.trace(corrupted).tokens
print(f"logit(she) − logit(he): clean {pm.clean:+.2f}, corrupted {pm.corrupted:+.2f}")
for label, row in zip(plot.patching.row_labels(pm), pm.restored):
    print(f"{label:>27}:", " ".join(f"{v:5.2f}" for v in row))
plot.patching.patching_map(pm, corrupted_tokens, "she", "he").show()

# %% [markdown]
# Two rows hold whatever the model: patching the embedding (top row) of a particle whose token is the same in both
# sentences changes nothing (0), and patching the one differing token's makes the corrupted run the clean one (1);
# patching the last state (bottom row) matters only at the particle the head reads, `[MASK]` (1 there, 0 elsewhere).
# The rows between are this model's: on `macaron-small`, at every boundary between, the patch that restores most is
# the differing word's particle, and the next is `[MASK]`'s.

# %%
differs = [i for i, (a, b) in enumerate(zip(pm.tokens, corrupted_tokens)) if a != b]
print("differing token:", differs, [pm.tokens[i] for i in differs], "· the answer's particle:", pm.position)
ranked = np.argsort(-pm.restored, axis=1)  # per row, the particles from the one that restores most
print("the two particles restoring most, per row:", [[pm.tokens[t] for t in row[:2]] for row in ranked])

# %% [markdown]
# ## The translator with the external field cut
#
# In a translator the decoder's cross-attention is the pull of the source's particles on the translation's.
# `iv.Off("cross")` switches it off in every decoder layer, in the search too (greedy here, `beam=1`): the decoder
# no longer reads the source, so two different Spanish sentences must get one translation.

# %%
translator = macaron.load_translator("macaron-es-en")
sources = translation.EXAMPLES["es"][:2]
heard = [translator.translate(s, beam=1) for s in sources]
deaf = [translator.translate(s, beam=1, interventions=[iv.Off("cross")]) for s in sources]
for s, a, b in zip(sources, heard, deaf):
    print(f"{s}\n   as trained: {a.text}\n   cross off:  {b.text}")
print("what was done:", deaf[0].target.interventions)

# %% [markdown]
# ## What this showed, checked
#
# With diffusion off in every layer of `macaron-small`, nothing changes before the first diffusion sub-step and the
# answer to "he was born in new [MASK] ." is no longer the trained one; two sentences' paths are the same exactly where
# their tokens are, so both `[MASK]`s give one answer though the trained model answers them differently. Scaling
# diffusion by 1 is the plain trace, state for state, and gives the answer its highest probability of the four factors.
# Silencing a head leaves every state before its sub-step as it was, and the head found lowers the answer's
# probability. The patching map's top and bottom rows are what they must be for any model, and between them the
# differing word's particle restores most, then `[MASK]`'s. With cross-attention off, the translator writes one
# translation for two different sentences, which it translates differently as trained.

# %%
first_diffusion = 1 + next(k for k, s in enumerate(plain.steps) if s.kind == "diffusion")  # the state it leaves
assert np.all(distance[:first_diffusion] == 0) and np.all(distance[first_diffusion] > 0)
assert change.after[0][0] != answer, change.after
assert same_path == same_token and same_token[off.guess_at] and not all(same_token)
assert model.logit_lens(off, off.guess_at, 1)[-1] == model.logit_lens(other_off, other_off.guess_at, 1)[-1]
assert answer != model.logit_lens(other_plain, other_plain.guess_at, 1)[-1][0][0]
assert np.array_equal(scaled[1.0].states, plain.states) and scaled[1.0].interventions
assert np.array_equal(scaled[0.0].states, off.states)
assert p_of(scaled[1.0]) == max(p_of(t) for t in scaled.values())
assert np.array_equal(silenced[head].states[:first_changed], plain.states[:first_changed]) and moved[first_changed] > 0
assert p_head_off[head] < p_of(plain)
assert len(differs) == 1
top, bottom = pm.restored[0], pm.restored[-1]
assert np.allclose(top, [1.0 if i in differs else 0.0 for i in range(len(top))], atol=1e-4), top
assert all(list(row[:2]) == [differs[0], pm.position] for row in ranked[1:-1]), ranked
assert np.allclose(bottom, [1.0 if i == pm.position else 0.0 for i in range(len(bottom))], atol=1e-4), bottom
assert heard[0].text != heard[1].text and deaf[0].text == deaf[1].text, (heard, deaf)
