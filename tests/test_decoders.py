"""Bring a decoder: GPT-2, GPT-NeoX (Pythia) and Llama folders (Mistral and Qwen2 through Llama's map), traced by us
and run by Hugging Face `transformers` (the third-party implementation), compared after every layer.

Each folder is built here, offline and seeded, from the family's config class: a random model, every parameter
then moved by seeded noise (a norm's gain, a bias or a rotary half put in the wrong place shows), saved with
save_pretrained beside a byte-level BPE tokenizer.json. `transformers` gives the state after every layer
(output_hidden_states; its last entry has the final norm applied, so it is compared with our final state) and the
next-word logits.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import macaron
from macaron import CheckpointError
from macaron.schemes import FULL

TOL = 2e-5  # max |ours − theirs| / max |theirs|
TEXTS = ["the bank of the river was flooded after the rain .", "she played the piano ."]
CORPUS = ["i sat on the bank of the river and watched the water .", "the capital of france is paris .",
          "the cat sat on the mat .", "she played the piano while he washed the dishes .", "it rained ."]


def byte_bpe():
    """GPT-2's kind of tokenizer: byte-level BPE, no specials around a sentence."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(CORPUS * 3, trainers.BpeTrainer(
        vocab_size=300, special_tokens=["<|endoftext|>"], show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return tok


def small(kind: str, vocab: int, **extra):
    """(config, model class) of a small random decoder of each family."""
    import transformers as tr

    common = dict(vocab_size=vocab, **extra)
    llama = dict(hidden_size=32, num_hidden_layers=3, num_attention_heads=4, intermediate_size=48,
                 max_position_embeddings=64, **common)
    return {
        "gpt2": (tr.GPT2Config(n_embd=32, n_layer=3, n_head=4, n_positions=64, **common), tr.GPT2LMHeadModel),
        "gpt_neox": (tr.GPTNeoXConfig(hidden_size=32, num_hidden_layers=3, num_attention_heads=4,
                                      intermediate_size=64, max_position_embeddings=64, **common),
                     tr.GPTNeoXForCausalLM),
        "gpt_neox-sequential": (tr.GPTNeoXConfig(hidden_size=32, num_hidden_layers=3, num_attention_heads=4,
                                                 intermediate_size=64, max_position_embeddings=64,
                                                 use_parallel_residual=False, **common), tr.GPTNeoXForCausalLM),
        "llama": (tr.LlamaConfig(num_key_value_heads=2, **llama), tr.LlamaForCausalLM),
        "llama-tied": (tr.LlamaConfig(num_key_value_heads=4, tie_word_embeddings=True, **llama), tr.LlamaForCausalLM),
        "mistral": (tr.MistralConfig(num_key_value_heads=2, **llama), tr.MistralForCausalLM),
        "qwen2": (tr.Qwen2Config(num_key_value_heads=2, **llama), tr.Qwen2ForCausalLM),
    }[kind]


@pytest.fixture(scope="module")
def bpe():
    return byte_bpe()


def build(kind: str, folder, tokenizer, seed: int = 0):
    """A saved folder of family `kind`, every parameter moved off its initial value; the transformers model."""
    config, cls = small(kind, tokenizer.get_vocab_size())
    torch.manual_seed(seed)
    model = cls(config).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.05 * torch.randn_like(p))
    model.save_pretrained(folder, safe_serialization=True)
    tokenizer.save(str(folder / "tokenizer.json"))
    return model


FAMILIES = ["gpt2", "gpt_neox", "gpt_neox-sequential", "llama", "llama-tied", "mistral", "qwen2"]


@pytest.mark.parametrize("kind", FAMILIES)
def test_a_decoder_matches_transformers_after_every_layer(kind, bpe, tmp_path):
    theirs = build(kind, tmp_path / kind, bpe)
    ours = macaron.load(tmp_path / kind, device="cpu")
    assert ours.config.causal and ours.config.lm_head
    scheme = "unsplit" if kind == "gpt_neox" else "transformer"  # NeoX's parallel block: the unsplit step
    assert ours.config.scheme == scheme
    for text in TEXTS:
        traj = ours.trace(text)
        ids = torch.tensor([traj.token_ids])
        with torch.no_grad():
            out = theirs(ids, output_hidden_states=True)
        hidden = [h[0].numpy() for h in out.hidden_states]
        bounds = traj.layer_boundaries()
        assert len(bounds) == len(hidden)
        for k in range(len(hidden) - 1):  # the last entry is after the final norm: our final state
            np.testing.assert_allclose(traj.states[bounds[k]], hidden[k], atol=TOL * np.abs(hidden[k]).max())
        last = theirs.base_model(ids).last_hidden_state[0].detach().numpy()
        np.testing.assert_allclose(traj.final, last, atol=TOL * np.abs(last).max())
        logits = out.logits[0].numpy()
        with torch.no_grad():
            mine = ours.head(torch.as_tensor(traj.final)).numpy()
        np.testing.assert_allclose(mine, logits, atol=TOL * np.abs(logits).max())
        # causal: no particle listens to one after it, and each row still sums to one
        for m in traj.mixing:
            if m is not None:
                assert np.allclose(np.triu(m, 1), 0) and np.allclose(m.sum(-1), 1, atol=1e-5)
    if kind == "gpt_neox":
        assert [s.kind for s in traj.steps] == [FULL] * 3


def test_a_padded_batch_traces_as_one_sentence_at_a_time(bpe, tmp_path):
    build("llama", tmp_path / "llama", bpe)
    model = macaron.load(tmp_path / "llama", device="cpu")
    batch = model.trace(TEXTS)
    for text, traj in zip(TEXTS, batch):
        alone = model.trace(text)
        np.testing.assert_allclose(traj.states, alone.states, atol=1e-5)


def test_a_long_text_keeps_its_first_tokens(bpe, tmp_path):
    build("gpt2", tmp_path / "gpt2", bpe)
    model = macaron.load(tmp_path / "gpt2", device="cpu")
    long = " ".join(CORPUS * 20)
    traj = model.trace(long)
    assert len(traj.tokens) == 64 and traj.truncated > 0
    assert traj.token_ids == model.tokenize(long, 10_000)[0][:64]


def test_rescaled_rotary_positions_get_a_message(bpe, tmp_path):
    import json

    build("llama", tmp_path / "llama", bpe)
    cfg = json.loads((tmp_path / "llama" / "config.json").read_text())
    cfg["rope_parameters"] = dict(rope_type="llama3", rope_theta=500000.0, factor=8.0)
    (tmp_path / "llama" / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(CheckpointError, match="rope_type 'llama3'"):
        macaron.load(tmp_path / "llama", device="cpu")


def test_a_decoder_guesses_the_word_where_mask_was_typed_from_the_words_before(bpe, tmp_path):
    """"he sat on the [MASK] ." : the decoder reads the sentence without the [MASK] and its guess for it is its
    next word after "the", the same as for the text cut there; without a [MASK], the word after the sentence."""
    theirs = build("gpt2", tmp_path / "gpt2", bpe)
    model = macaron.load(tmp_path / "gpt2", device="cpu")
    traj = model.trace("the cat sat on the [MASK] .")
    cut = model.trace("the cat sat on the")
    assert traj.causal and "[MASK]" not in traj.tokens and traj.tokens[:len(cut.tokens)] == cut.tokens
    assert traj.guess_at == len(cut.tokens) - 1 and traj.tokens[traj.guess_at] == cut.tokens[-1]
    with torch.no_grad():
        expected = torch.softmax(theirs(torch.tensor([cut.token_ids])).logits[0, -1], -1)
    lens = model.logit_lens(traj, traj.guess_at, k=5)
    top = expected.topk(5)
    assert [w for w, _ in lens[-1]] == [bpe.id_to_token(int(i)) for i in top.indices]
    np.testing.assert_allclose([p for _, p in lens[-1]], top.values.numpy(), rtol=1e-4)
    assert model.trace("the cat sat on the mat .").guess_at == len(model.trace("the cat sat on the mat .").tokens) - 1
    first = model.trace("[MASK] cat")  # nothing before it to guess it from
    assert first.guess_at is None and first.tokens == model.trace(" cat").tokens


def test_an_encoder_guesses_at_its_mask_and_a_headless_model_nowhere(tmp_path):
    from conftest import make_tiny_models, tiny_tokenizer

    folder = make_tiny_models(tmp_path, tiny_tokenizer())
    bert = macaron.load(folder / "tiny-transformer", device="cpu")
    traj = bert.trace("the cat sat on the [MASK] .")
    assert not traj.causal and traj.guess_at == traj.tokens.index("[MASK]")
    assert bert.trace("the cat sat on the mat .").guess_at is None
    assert macaron.Trajectory.from_dict(traj.to_dict()).guess_at == traj.guess_at


def test_a_decoders_particles_are_named_by_the_text_they_cover(bpe, tmp_path):
    build("gpt2", tmp_path / "gpt2", bpe)
    traj = macaron.load(tmp_path / "gpt2", device="cpu").trace("the cat sat on the mat .")
    assert "".join(traj.tokens).replace("␣", "") == "thecatsatonthemat." and not any("Ġ" in t for t in traj.tokens)


# ---- in the app ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def decoders(bpe, tmp_path_factory):
    root = tmp_path_factory.mktemp("decoders")
    for kind in ("gpt2", "gpt_neox", "llama"):
        build(kind, root / kind, bpe)
    return root


def test_decoders_open_in_particles_compare_and_dynamics(decoders, app_env, monkeypatch):
    """Each family in Particles (causal matrices drawn, its next-word guess for the [MASK] said), beside an encoder in
    Compare on one layer clock, and in Dynamics, without an exception."""
    import json

    from test_app import fresh, spec, texts
    from test_plot import decoded

    monkeypatch.delenv("MACARON_MODELS_DIR", raising=False)
    monkeypatch.setenv("MACARON_MODELS", ",".join([str(app_env / "tiny-transformer")] +
                                                  [str(decoders / k) for k in ("gpt2", "gpt_neox", "llama")]))

    for kind in ("gpt2", "gpt_neox", "llama"):
        at = fresh({"s": "the cat sat on the [MASK] .", "m": kind, "frame": "1", "attr": "1"})
        assert "the next word after token" in texts(at.caption)  # Captum explains the guess it names
        said = texts(at.markdown)
        assert "Final guesses for the next word after “the”" in said and "[MASK] stands" in said
        assert "causal" in texts(at.caption)
        fig = spec(at)
        matrix = decoded(next(d for d in fig["data"] if d["type"] == "heatmap")["z"]).astype(float)
        assert matrix.shape[0] > 2 and np.allclose(np.triu(matrix, 1), 0) and (np.tril(matrix) > 0).any()
    at = fresh({"s": "the cat sat on the mat .", "a": "gpt_neox", "b": "tiny-transformer"}, "views/compare.py")
    assert json.dumps(spec(at)["layout"]["title"]["text"]).count("layer time") == 1
    fresh({"s": "the cat sat on the mat .", "a": "llama", "b": "gpt2"}, "views/dynamics.py")


def test_bad_decoder_folders_get_a_message(bpe, tmp_path):
    """Weights that do not match config.json, a cut-off weights file, a tokenizer larger than the embedding, a
    family not mapped: one CheckpointError each, naming the file or the field."""
    import json
    import shutil

    good = tmp_path / "good"
    build("gpt2", good, bpe)

    def variant(name: str):
        folder = tmp_path / name
        shutil.copytree(good, folder)
        return folder

    deeper = variant("deeper")  # config.json says 4 layers, the weights hold 3
    cfg = json.loads((deeper / "config.json").read_text())
    (deeper / "config.json").write_text(json.dumps(dict(cfg, n_layer=4)))
    with pytest.raises(CheckpointError, match="h.3"):
        macaron.load(deeper, device="cpu")
    cut = variant("cut")
    data = (cut / "model.safetensors").read_bytes()
    (cut / "model.safetensors").write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="model.safetensors"):
        macaron.load(cut, device="cpu")
    small_vocab = variant("small-vocab")
    cfg = json.loads((small_vocab / "config.json").read_text())
    (small_vocab / "config.json").write_text(json.dumps(dict(cfg, vocab_size=cfg["vocab_size"] - 10)))
    with pytest.raises(CheckpointError, match="tokenizer.json|vocab"):
        macaron.load(small_vocab, device="cpu")
    other = variant("other")
    cfg = json.loads((other / "config.json").read_text())
    (other / "config.json").write_text(json.dumps(dict(cfg, model_type="falcon", architectures=["FalconForCausalLM"])))
    with pytest.raises(CheckpointError, match="decoder of a family we do not map.*GPT-2 \\(gpt2\\)"):
        macaron.load(other, device="cpu")


def test_the_lab_measures_a_decoders_operators_and_names_its_scheme(decoders, app_env, monkeypatch):
    """Section 3 on a GPT-NeoX folder (the parallel block: its attention and FFN swapped inside the one unsplit
    sub-step) and a Llama one (Lie–Trotter): both measured, each named with its scheme and as causal."""
    from test_app import fresh

    monkeypatch.delenv("MACARON_MODELS_DIR", raising=False)
    monkeypatch.setenv("MACARON_MODELS", ",".join(str(decoders / k) for k in ("gpt_neox", "llama")))
    at = fresh({"a": "gpt_neox", "b": "llama", "s": "the cat sat on the mat ."}, "views/lab.py")
    measured = next(str(c.value) for c in at.caption if str(c.value).startswith("Measured:"))
    assert "**gpt_neox**, unsplit Euler (no splitting), causal" in measured
    assert "**llama**, Lie–Trotter (Transformer layer), causal" in measured
    assert not [w.value for w in at.warning if "attention and FFN" in str(w.value)]


def test_a_decoders_beginning_of_text_keeps_its_name(bpe, tmp_path):
    """A Llama-style tokenizer that puts <s> before the text: the particle reads <s> (BERT's names are for
    encoders' specials: it is not a [CLS]), and it is traced like any other token."""
    from tokenizers import processors

    tok = byte_bpe()
    tok.add_special_tokens(["<s>"])
    tok.post_processor = processors.TemplateProcessing(single="<s> $A",
                                                       special_tokens=[("<s>", tok.token_to_id("<s>"))])
    build("llama", tmp_path / "llama", tok)
    model = macaron.load(tmp_path / "llama", device="cpu")
    traj = model.trace("the cat sat .")
    assert traj.tokens[0] == "<s>" and "[CLS]" not in traj.tokens
    masked = model.trace("the cat [MASK] .")  # one <s>, at the start, though the text is read in two parts
    assert masked.tokens.count("<s>") == 1 and masked.tokens[:masked.guess_at + 1] == model.trace("the cat").tokens
    first = model.trace("[MASK] cat sat .")  # the first word is guessed from <s> alone
    assert first.guess_at == 0 and first.tokens[0] == "<s>"
