# %% [markdown]
# # 7 · Translation as two particle systems
#
# A translation model moves two sets of particles: the encoder the source sentence's, then the decoder the
# translation's. The decoder's layers have one more kind of sub-step, cross-attention: each target particle is pulled
# toward the source's final particles, a field the other system makes. Here the shipped `macaron-es-en` (Spanish to
# English, Macaron layers in both systems, trained in this repository on Tatoeba) translates, is traced sub-step by
# sub-step, and has its cross-attention switched off. It runs on a CPU with no network.
#
# **In Jupyter**, from a clone: `.venv/bin/pip install ".[notebooks]"`, then
# `.venv/bin/jupytext --to ipynb docs/tutorials/translation.py && .venv/bin/jupyter lab
# docs/tutorials/translation.ipynb`
# (jupytext writes the notebook from this `# %%` file; the tests run the file as a script).
#
# **On Colab**, a first cell that installs the explorer from the repository (not tried: the machine this was written
# on has no network): `!git clone --depth 1 <the repository's address> macaron-explorer` then
# `%pip install -e macaron-explorer` and `%cd macaron-explorer`.

# %%
import macaron
from macaron import analysis, plot
from macaron import interventions as iv
from macaron.formats.folder import translator_scores
from macaron.sources.locate import locate
from macaron.translation import model as translation

translator = macaron.load_translator("macaron-es-en")
c = translator.config
print(f"{c.name}: {c.source_lang} → {c.target_lang}, {translator.num_parameters():,} parameters")
for side in (c.encoder, c.decoder):
    print(f"   {side.name}: {side.scheme}, {side.norm}-LN, {side.n_layers} layers × {side.d_model}")
print("measured when it was trained (its folder's training.json):", translator_scores(locate("macaron-es-en")))

# %% [markdown]
# ## One word, two translations
#
# Spanish *banco* is a bench and a bank. `translate` runs the model's own search (beam 5 here) and records both
# systems: `source`, the encoder's Trajectory, and `target`, the decoder's, teacher-forced on the translation it
# found.

# %%
bench_es, bank_es = translation.EXAMPLES["es"][:2]
found = [translator.translate(s) for s in (bench_es, bank_es)]
for sentence, translated in zip((bench_es, bank_es), found):
    print(f"{sentence}  →  {translated.text}   (beam {translated.beam}, score {translated.score:.3f})")
tr = found[0]
print("source particles:", tr.source.tokens)
print("target particles:", tr.target.tokens)
print("a decoder layer:", [s.label for s in tr.target.steps if s.layer == 0])

# %% [markdown]
# ## Who listens to which source word
#
# A cross-attention sub-step's mixing matrix has one row a target particle and one column a source particle. The
# decoder reads the translation shifted by one (its first particle is the start, `</s>`), so the particle in row k
# is the one that says word k + 1: it should listen to the source word that word k + 1 translates.

# %%
cross = [k for k, s in enumerate(tr.target.steps) if s.kind == "cross"]
layer2 = cross[1]
weights = tr.target.mixing[layer2].mean(axis=0)  # [target, source], averaged over the heads
for k in range(len(tr.target.tokens) - 1):
    j = int(weights[k].argmax())
    print(f"{tr.target.tokens[k]:>8} → says {tr.target.tokens[k + 1]!r:10} listens most to "
          f"{tr.source.tokens[j]!r} ({weights[k, j]:.0%})")


def listener_of(translated, english: str) -> str:
    """The source particle that the particle saying `english` next listens to most, in layer 2's cross-attention."""
    k = [t.strip("▁") for t in translated.target.tokens].index(english) - 1
    return translated.source.tokens[int(translated.target.mixing[layer2].mean(axis=0)[k].argmax())]


print("saying 'bench':", listener_of(found[0], "bench"), "· saying 'bank':", listener_of(found[1], "bank"))

# %% [markdown]
# ## Both systems on one clock
#
# `translation.joint` puts both systems into one Trajectory (`translator.trace(text)` translates and does the same):
# the encoder's sub-steps move the source while the target's particles wait at their embeddings; then the decoder's
# move the target while the source stays where the encoder left it. One PCA draws them all, and a cross-attention
# matrix, which reads the source's particles, can be drawn from it: target rows, source columns.

# %%
both = translation.joint(tr)
print(both.meta["two_systems"], "·", both.n_steps, "sub-steps ·", both.text)
plot.particles(both, analysis.project(both, normalised=True)).show()
plot.mixing_heatmap(both, tr.source.n_steps + layer2).show()  # layer 2's cross-attention, in the joint clock

# %% [markdown]
# ## How much of the decoder's motion is the pull of the source
#
# Per layer, the share of each target particle's path that each kind of sub-step travels, over the model's eight
# preset sentences (the first of its test set).

# %%
presets = translation.presets(locate("macaron-es-en"))
shares = analysis.move_shares([translator.translate(s, beam=1).target for s in presets])
for layer, row in enumerate(shares.shares, start=1):
    print(f"layer {layer}:", ", ".join(f"{kind} {share:.0%}" for kind, share in zip(shares.kinds, row)))
plot.move_shares({c.name: shares}).show()

# %% [markdown]
# ## Cross-attention off
#
# `iv.Off("cross")` runs every cross-attention sub-step for a time of 0, in the search too: the decoder no longer
# hears the source at all, so whatever it writes cannot depend on the sentence.

# %%
deaf = [translator.translate(s, interventions=[iv.Off("cross")]) for s in (bench_es, bank_es)]
for sentence, translated in zip((bench_es, bank_es), deaf):
    print(f"{sentence}  →  {translated.text}")

# %% [markdown]
# ## What this showed, checked
#
# The source's *banco* becomes "bench" beside a park and "bank" beside money; the decoder's particle that says each
# of them listens most to *banco* in layer 2's cross-attention; and with cross-attention off, both sentences get one
# and the same translation, which is neither of theirs.

# %%
said = [set(translated.text.replace(".", " ").split()) for translated in found]
assert "bench" in said[0] and "bank" not in said[0] and "bank" in said[1] and "bench" not in said[1], said
assert listener_of(found[0], "bench") == listener_of(found[1], "bank") == "▁banco"
assert deaf[0].text == deaf[1].text and deaf[0].text not in (found[0].text, found[1].text)
