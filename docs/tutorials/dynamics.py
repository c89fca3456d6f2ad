# %% [markdown]
# # 5 · The particle theory, measured on a sentence set
#
# The mathematics of self-attention as interacting particles (Geshkovski, Letrouit, Polyanskiy & Rigollet 2023)
# predicts that tokens gather into clusters with depth and that a few leaders draw the attention; Sinkformers
# (Sander, Ablin, Blondel & Peyré 2022) that attention tends to be doubly stochastic; and a residual network is an
# ODE solver only if its steps are small and refining them changes little (Sander, Ablin & Peyré 2022).
# `macaron.studies.dynamics` measures each of these for every sub-step of a trace, and over a sentence set as median
# and quartiles. Here: the two shipped minis over the 318 shipped sentences, and the ODE-trained `macaron-ode` for
# contrast. It runs on a CPU with no network.
#
# **In Jupyter**, from a clone: `.venv/bin/pip install ".[notebooks]"`, then
# `.venv/bin/jupytext --to ipynb docs/tutorials/dynamics.py && .venv/bin/jupyter lab
# docs/tutorials/dynamics.ipynb`
# (jupytext writes the notebook from this `# %%` file; the tests run the file as a script).
#
# **On Colab**, a first cell that installs the explorer from the repository (not tried: the machine this was written
# on has no network): `!git clone --depth 1 <the repository's address> macaron-explorer` then
# `%pip install -e macaron-explorer` and `%cd macaron-explorer`.

# %%
import numpy as np

import macaron
from macaron import dynamics, sentences
from macaron.plot import dynamics as figures

texts = sentences.read()  # every shipped set: everyday and technical
print(len(texts), "sentences, e.g.", texts[0])
names = ["transformer-mini", "macaron-mini"]
models = {name: macaron.load(name) for name in names}
sets = {name: dynamics.measure_set(model, texts) for name, model in models.items()}  # traced in padded batches

# %% [markdown]
# ## Do the tokens gather into clusters?
#
# The effective number of clusters is the participation ratio of the tokens' cosine Gram matrix: k orthogonal
# groups count k, one tight group 1. Median over the sentences, at the embedding and at the end of each layer; all
# tokens, [CLS] and [SEP] included, each standardised as the next operator reads it.

# %%
def at_layer_ends(s, values):
    return np.asarray(values)[[i for i, t in enumerate(s.times) if float(t).is_integer()]]


clusters = {name: at_layer_ends(s, s.state["clusters"].median) for name, s in sets.items()}
for name, c in clusters.items():
    print(f"{name}: effective clusters", " → ".join(f"{v:.1f}" for v in c),
          f"(fewest after layer {int(np.argmin(c))})")
figures.over_depth(list(sets.values()), "clusters").show()

# %% [markdown]
# ## Who leads?
#
# A head's leader in a sub-step is the token that receives the most attention. Counted over every sentence,
# attention sub-step and head, by the token's role, and divided by chance (what a token drawn at random from its
# sentence would get): 1 is chance.

# %%
lifts = {name: {row.key: row.lift for row in s.leaders.by_role} for name, s in sets.items()}
for name, lift in lifts.items():
    print(f"{name}:", ", ".join(f"{role} {v:.2f}" for role, v in lift.items()))
figures.leaders(list(sets.values())).show()

# %% [markdown]
# ## Doubly stochastic attention? Small steps?
#
# The doubly-stochastic gap is the share of a head's attention that would have to move for every column to sum to 1
# as every row does (0: doubly stochastic). The relative step is how far a sub-step moves a token against its
# length, ‖Δx‖ / ‖x‖: an ODE solver's steps are small.

# %%
for name, s in sets.items():
    gap, step = s.diffusion["ds_gap"].median, s.step.median
    print(f"{name}: doubly-stochastic gap {gap.min():.2f}–{gap.max():.2f} (per attention sub-step, mean of heads);"
          f" relative step {step.min():.2f}–{step.max():.2f} (per sub-step)")
figures.over_depth(list(sets.values()), "step").show()

# %% [markdown]
# ## Past the trained depth
#
# `dynamics.extended(model, k)` runs the model's own layers, then its last layer k more times (as Geshkovski et al.
# iterate ALBERT's shared layer). The theory's clusters merge in the long run. Over the first 32 sentences, 12 more
# layers:

# %%
past = {name: dynamics.measure_set(model, texts[:32], program=dynamics.extended(model, 12))
        for name, model in models.items()}
for name, s in past.items():
    c = s.state["clusters"]
    print(f"{name}, 18 layers: effective clusters median {c.median[-1]:.2f} [quartiles {c.q25[-1]:.2f}, "
          f"{c.q75[-1]:.2f}], mean cosine {s.state['mean_cosine'].median[-1]:.3f}")
figures.over_depth(list(past.values()), "clusters", trained_depth=6).show()

# %% [markdown]
# ## Refining the steps
#
# An ODE solver's output changes little when its steps are refined, and a first-order one changes 1.5 times as much
# with four moves per step as with two (its error C·h: y(h/2) − y(h) ≈ −C·h/2, y(h/4) − y(h) ≈ −3C·h/4).
# `dynamics.refined(program, n)` runs each sub-step as n Euler moves of h/n; `run_experiments` compares the final
# states with the model's own, on the same sentences with 15 % of their words masked. Over the first 32 sentences,
# for macaron-mini (layers 2–6 refined, as the site's results page *Dynamics* reports them) and for
# `macaron-ode` (one shared layer run 6 times with h = 0.5, trained to keep its moves small; all layers refined):

# %%
def refinements(model, skip_first: bool):
    own = model.program()
    programs = [dynamics.Experiment("as trained", "own", own)]
    for n in (2, 4):
        refined = dynamics.refined(own, n)
        programs.append(dynamics.Experiment(f"{n} moves", "refine", own[:1] + refined[1:] if skip_first else refined))
    return {r.name: r for r in dynamics.run_experiments(model, texts[:32], programs)}


refined = {"macaron-mini": refinements(models["macaron-mini"], skip_first=True),
           "macaron-ode": refinements(macaron.load("macaron-ode"), skip_first=False)}
growth = {}
for name, rows in refined.items():
    two, four = rows["2 moves"], rows["4 moves"]
    growth[name] = four.change.median / two.change.median
    print(f"{name}: output change {two.change.median:.1%} (2 moves), {four.change.median:.1%} (4 moves), ratio "
          f"{growth[name]:.2f}; masked guess kept {two.agreement_masked:.0%} and {four.agreement_masked:.0%}")

# %% [markdown]
# ## What this showed, checked
#
# On these sentences both minis' tokens gather with depth (fewer effective clusters after layers 1–5 than at the
# embedding) and spread again in the last layer; [CLS] and [SEP] lead above chance and words below it; no attention
# sub-step is close to doubly stochastic (a gap above 0.1 in every one); every sub-step moves a token by more than a
# fifth of its length (medians over the sentences); run on past their depth, both minis collapse to one cluster.
# Refined, macaron-mini's and macaron-ode's outputs both change about 1.5 times as much with four moves as with two, as
# a first-order method's do, but macaron-mini's changes more than five times as much as macaron-ode's: only the ODE
# model's steps are small enough for refining to change little.

# %%
for name, c in clusters.items():
    assert c[1:6].max() < c[0] and c[6] > c[1:6].min() + 1, (name, c)
    assert lifts[name]["[CLS]"] > 1 and lifts[name]["[SEP]"] > 1 and lifts[name]["word"] < 1, lifts[name]
    assert sets[name].diffusion["ds_gap"].median.min() > 0.1 and sets[name].step.median.min() > 0.2
    assert past[name].state["clusters"].median[-1] < 1.1
assert refined["macaron-mini"]["2 moves"].change.median > 5 * refined["macaron-ode"]["2 moves"].change.median
assert all(abs(g - 1.5) < 0.2 for g in growth.values()), growth
