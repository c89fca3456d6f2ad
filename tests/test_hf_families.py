"""Bring any encoder: BERT, RoBERTa, XLM-RoBERTa, DistilBERT, ALBERT and ELECTRA folders, traced by us and run by
Hugging Face `transformers` (the third-party implementation), compared after every sub-layer.

Each folder is built here, offline and seeded: a randomly initialised `transformers` model from a small
config, every weight then moved by seeded noise (so a LayerNorm gain, a bias or a segment row mapped to the
wrong place shows), saved with save_pretrained(safe_serialization=True) beside a tiny tokenizer.json of the
family's kind (WordPiece, byte-level BPE with RoBERTa's <s> specials, SentencePiece-style Unigram).
`transformers` runs the sentences with forward hooks on the modules whose outputs are our sub-steps: the
embedding (after the E → H projection where there is one), each attention block (its LayerNorm included)
and each layer. Two sentences of different lengths go through as one padded batch on both sides.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import macaron
from macaron import CheckpointError

TOL = 2e-6  # max |ours − theirs| / max |theirs|: a LayerNorm eps of 1e-5 for 1e-12 (DistilBERT) gives 5e-5
TEXTS = ["the bank of the river was [MASK] after the rain .", "she played the piano ."]
CORPUS = ["i sat on the bank of the river and watched the water .", "the capital of france is paris .",
          "the cat sat on the mat .", "she played the piano while he washed the dishes .",
          "after the long meeting , the tired engineers walked slowly to the small cafe", "it rained ."]


# ---- tokenizers of each kind ---------------------------------------------------------------------
def wordpiece():
    from conftest import tiny_tokenizer
    return tiny_tokenizer()


def byte_bpe():
    """RoBERTa's kind: byte-level BPE, specials <s> <pad> </s> <unk> <mask> (ids 0-4), RobertaProcessing."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(CORPUS * 3, trainers.BpeTrainer(
        vocab_size=300, special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"], show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
    return tok


def unigram(specials: list[str], cls: str, sep: str):
    """SentencePiece's kind (ALBERT, XLM-RoBERTa): a Unigram model over Metaspace pieces."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.Unigram())
    tok.pre_tokenizer, tok.decoder = pre_tokenizers.Metaspace(), decoders.Metaspace()
    unk = next(s for s in specials if "unk" in s)
    tok.train_from_iterator(CORPUS * 3, trainers.UnigramTrainer(vocab_size=120, special_tokens=specials,
                                                                unk_token=unk, show_progress=False))
    tok.post_processor = processors.TemplateProcessing(
        single=f"{cls} $A {sep}", special_tokens=[(cls, tok.token_to_id(cls)), (sep, tok.token_to_id(sep))])
    return tok


# ---- the families: a small config each, the HF class, and the modules whose outputs are our states ----------
SMALL = dict(hidden_size=32, num_hidden_layers=3, num_attention_heads=4, intermediate_size=64,
             max_position_embeddings=40)


def bert_like(base):  # BERT, RoBERTa, ELECTRA: BertAttention's output is after its LayerNorm
    return [m for layer in base.encoder.layer for m in (layer.attention, layer)]


def albert_steps(base):  # one AlbertLayer, called once per depth: its hooks fire at every step
    layer = base.encoder.albert_layer_groups[0].albert_layers[0]
    return [layer.attention, layer] * base.config.num_hidden_layers


def distil_steps(base):  # DistilBERT's residual sums are normalised by the block's own two LayerNorms
    return [m for layer in base.transformer.layer for m in (layer.sa_layer_norm, layer.output_layer_norm)]


def embedding_out(base):
    return getattr(base, "embeddings_project", None) or getattr(getattr(base, "encoder", None),
                                                                "embedding_hidden_mapping_in", None) or base.embeddings


FAMILIES = {  # name: (transformers class, config, tokenizer, sub-step modules)
    "bert": ("BertForMaskedLM", lambda v: dict(SMALL, vocab_size=v), wordpiece, bert_like),  # its MLM head too
    "roberta": ("RobertaForMaskedLM", lambda v: dict(SMALL, vocab_size=v, max_position_embeddings=42,
                                                     hidden_act="gelu_new", type_vocab_size=1, layer_norm_eps=1e-5),
                byte_bpe, bert_like),
    "xlm-roberta": ("XLMRobertaForMaskedLM", lambda v: dict(SMALL, vocab_size=v, max_position_embeddings=42),
                    lambda: unigram(["<s>", "<pad>", "</s>", "<unk>", "<mask>"], "<s>", "</s>"), bert_like),
    "camembert": ("CamembertForMaskedLM", lambda v: dict(SMALL, vocab_size=v, max_position_embeddings=42),
                  lambda: unigram(["<s>", "<pad>", "</s>", "<unk>", "<mask>"], "<s>", "</s>"), bert_like),
    "distilbert": ("DistilBertForMaskedLM", lambda v: dict(vocab_size=v, dim=32, n_layers=3, n_heads=4, hidden_dim=64,
                                                           max_position_embeddings=40, sinusoidal_pos_embds=True),
                   wordpiece, distil_steps),
    "albert": ("AlbertForMaskedLM", lambda v: dict(SMALL, vocab_size=v, embedding_size=16),
               lambda: unigram(["<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]"], "[CLS]", "[SEP]"), albert_steps),
    "electra-discriminator": ("ElectraForPreTraining", lambda v: dict(SMALL, vocab_size=v, embedding_size=16),
                              wordpiece, bert_like),
    "electra-generator": ("ElectraForMaskedLM",  # factorised like the real ones (E < H); its head's GELU is fixed
                          lambda v: dict(SMALL, vocab_size=v, embedding_size=16, hidden_act="gelu_new"),
                          wordpiece, bert_like),
}


def make_folder(root, family: str, seed: int = 0):
    """A saved, seeded, randomly initialised `transformers` model of the family; (folder, the model)."""
    import transformers

    cls_name, config_of, tokenizer_of, _ = FAMILIES[family]
    cls = getattr(transformers, cls_name)
    tok = tokenizer_of()
    torch.manual_seed(seed)
    model = cls(cls.config_class(**config_of(tok.get_vocab_size()), attn_implementation="eager")).eval()
    with torch.no_grad():  # away from the initialisation's ones and zeros, so a misplaced norm or bias shows
        for name, p in model.named_parameters():
            if "position_embeddings" not in name or family != "distilbert":  # keep its sinusoids
                p.add_(0.1 * torch.randn_like(p))
    folder = root / family
    model.save_pretrained(folder, safe_serialization=True)
    tok.save(str(folder / "tokenizer.json"))
    return folder, model


def hf_states(model, family: str, ids: torch.Tensor, attention_mask: torch.Tensor):
    """transformers' states (embedding, then after every sub-step) and final output, and the MLM logits."""
    base = getattr(model, model.base_model_prefix)
    captured = []

    def keep_output(_module, _inputs, output):
        captured.append((output[0] if isinstance(output, tuple) else output).detach())

    modules = [embedding_out(base)] + FAMILIES[family][3](base)
    hooks = [m.register_forward_hook(keep_output) for m in dict.fromkeys(modules)]  # a shared module hooked once
    with torch.no_grad():
        out = model(input_ids=ids, attention_mask=attention_mask.long(), output_hidden_states=True)
    for h in hooks:
        h.remove()
    logits = out.logits if type(model).__name__.endswith("MaskedLM") else None  # ELECTRA's discriminator: no MLM
    return captured, out.hidden_states[-1], logits


def rel(ours: np.ndarray, theirs: np.ndarray) -> float:
    return float(np.abs(ours - theirs).max() / np.abs(theirs).max())


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("hf")
    return {f: make_folder(root, f) for f in FAMILIES}


@pytest.mark.parametrize("family", list(FAMILIES))
def test_every_substep_matches_transformers(folders, family):
    folder, hf = folders[family]
    ours = macaron.load(folder, device="cpu")
    trajs = ours.trace(TEXTS)
    lengths = [len(t.token_ids) for t in trajs]
    ids = torch.full((2, max(lengths)), ours.config.pad_id)
    attention_mask = torch.zeros(2, max(lengths), dtype=torch.bool)
    for b, t in enumerate(trajs):
        ids[b, : lengths[b]], attention_mask[b, : lengths[b]] = torch.tensor(t.token_ids), True
    captured, final, logits = hf_states(hf, family, ids, attention_mask)
    assert len(captured) == 1 + trajs[0].n_steps == 1 + 2 * hf.config.num_hidden_layers
    diffs = {"sub-steps": [], "final": [], "logits": []}
    for b, t in enumerate(trajs):
        T = lengths[b]
        diffs["sub-steps"] += [rel(t.states[k], captured[k][b, :T].numpy()) for k in range(len(captured))]
        diffs["final"].append(rel(t.final, final[b, :T].numpy()))
        if logits is not None:  # the head: our [MASK] guesses are theirs
            with torch.no_grad():
                diffs["logits"].append(rel(ours.mlm_logits(t.token_ids).numpy(), logits[b, :T].numpy()))
    worst = {kind: max(d) for kind, d in diffs.items() if d}  # over both sentences (README's table quotes them)
    print(f"{family}: max relative difference " + ", ".join(f"{kind} {w:.1e}" for kind, w in worst.items()))
    assert max(worst.values()) <= TOL, (family, worst)
    assert ours.has_mlm_head == (logits is not None) and ours.config.norm == "post"


def test_the_comparison_can_fail(folders):
    """The same check on a wrongly mapped model (the attention's LayerNorm gain perturbed) fails at its sub-step."""
    folder, hf = folders["roberta"]
    ours = macaron.load(folder, device="cpu")
    with torch.no_grad():
        ours.layers[1].norms[0].weight.mul_(1.01)
    t = ours.trace(TEXTS[0])
    captured, _, _ = hf_states(hf, "roberta", torch.tensor([t.token_ids]), torch.ones(1, len(t.token_ids), dtype=bool))
    diffs = [rel(t.states[k], captured[k][0].numpy()) for k in range(len(captured))]
    assert max(diffs[:3]) <= TOL < diffs[3]  # right until layer 2's attention, wrong from there on


def test_albert_is_one_shared_layer_and_extends(folders):
    folder, _ = folders["albert"]
    model = macaron.load(folder, device="cpu")
    c = model.config
    assert c.shared and c.hf_family == "ALBERT" and c.embedding_size == 16 and c.d_model == 32
    assert all(layer is model.layers[0] for layer in model.layers)  # the same weights at every step
    assert not any(k.startswith("layers.1.") for k in model.state_dict())  # stored once
    from macaron.studies.dynamics import extended
    program = extended(model, 4)  # the shared layer run four steps further: the autonomous flow continued
    t = model.trace(TEXTS[1], program=program)
    assert t.n_steps == 2 * (c.n_layers + 4) and np.isfinite(t.states).all()
    from macaron.plot.style import model_label
    label = model_label(model)
    assert "ALBERT" in label and "shared" in label


def test_roberta_specials_read_as_berts(folders):
    """RoBERTa's <s>, </s> and <mask> keep their ids under BERT's names, so [MASK] is typed and guessed."""
    folder, _ = folders["roberta"]
    model = macaron.load(folder, device="cpu")
    t = model.trace(TEXTS[0])
    assert t.tokens[0] == "[CLS]" and t.tokens[-1] == "[SEP]" and "[MASK]" in t.tokens
    assert t.token_ids[0] == 0 and t.token_ids[-1] == 2 and t.token_ids[t.tokens.index("[MASK]")] == 4
    guesses = model.logit_lens(t, t.tokens.index("[MASK]"), k=3)
    assert len(guesses) == t.n_steps + 1 and all(len(g) == 3 for g in guesses)
    assert model.config.max_len == 40  # 42 position rows, the first two before RoBERTa's start (padding index 1)


def test_distilbert_positions_are_its_sinusoids(folders):
    """DistilBERT's sinusoidal table is stored in the folder and loads as a table; it is HF's formula."""
    from transformers.models.distilbert.modeling_distilbert import _create_sinusoidal_embeddings

    folder, _ = folders["distilbert"]
    model = macaron.load(folder, device="cpu")
    expected = _create_sinusoidal_embeddings(40, 32, torch.empty(40, 32))
    assert torch.equal(model.position_embedding.weight, expected)  # no segment row to fold in
    assert model.config.hf_family == "DistilBERT"


@pytest.mark.parametrize("config, says", [
    (dict(model_type="falcon", architectures=["FalconForCausalLM"], hidden_size=32), "is a decoder of a family"),
    (dict(model_type="opt", architectures=["OPTForCausalLM"], hidden_size=32), "is a decoder of a family"),
    (dict(model_type="t5", architectures=["T5ForConditionalGeneration"], is_encoder_decoder=True), "encoder–decoder"),
    (dict(model_type="modernbert", architectures=["ModernBertForMaskedLM"], hidden_size=32), "rotary positions"),
    (dict(model_type="funnel", hidden_size=32), "not a model family we map"),
    (dict(model_type="bert", is_decoder=True, hidden_size=32), "is a decoder"),
    (dict(model_type="roberta", position_embedding_type="relative_key", hidden_size=32), "absolute positions only"),
    (dict(model_type="albert", num_hidden_groups=2, inner_group_num=1, hidden_size=32), "one group of one shared"),
])
def test_another_kind_is_named_with_the_families_that_load(tmp_path, config, says):
    (tmp_path / "config.json").write_text(json.dumps(config))
    (tmp_path / "pytorch_model.bin").write_bytes(b"not read: a pickle is never opened")
    with pytest.raises(CheckpointError, match=says) as e:
        macaron.load(tmp_path)
    message = str(e.value)
    assert "These Hugging Face families load: BERT (bert), RoBERTa (roberta)" in message
    assert all(name in message for name in ("DistilBERT", "ALBERT", "ELECTRA", "XLM-RoBERTa", "GPT-2 (gpt2)",
                                            "GPT-NeoX (gpt_neox)", "Llama (llama)"))


def test_missing_weight_is_named(folders, tmp_path):
    from safetensors.torch import load_file, save_file

    folder, _ = folders["electra-discriminator"]
    broken = tmp_path / "broken"
    broken.mkdir()
    for f in ("config.json", "tokenizer.json"):
        (broken / f).write_bytes((folder / f).read_bytes())
    state = load_file(folder / "model.safetensors")
    state.pop("electra.embeddings_project.weight")
    save_file(state, broken / "model.safetensors")
    with pytest.raises(CheckpointError, match="embeddings_project.weight.*checkpoint of the ELECTRA family"):
        macaron.load(broken)


def test_a_folder_with_vocab_txt_only_says_how_to_write_tokenizer_json(folders, tmp_path):
    """A BERT folder as many are shared (vocab.txt, no tokenizer.json): the message's one line of transformers
    writes the file, and the text then reads as transformers' own tokenizer reads it."""
    from tokenizers import Tokenizer
    from transformers import AutoTokenizer

    folder, _ = folders["bert"]
    bare = tmp_path / "bare"
    bare.mkdir()
    for f in ("config.json", "model.safetensors"):
        (bare / f).write_bytes((folder / f).read_bytes())
    vocab = Tokenizer.from_file(str(folder / "tokenizer.json")).get_vocab()  # the model's own
    (bare / "vocab.txt").write_text("".join(f"{w}\n" for w in sorted(vocab, key=vocab.get)))
    with pytest.raises(macaron.InputError, match="no tokenizer.json, which transformers writes with") as e:
        macaron.load(bare, device="cpu").trace(TEXTS[0])
    assert "AutoTokenizer.from_pretrained(folder).save_pretrained(folder)" in str(e.value)  # as run here:
    AutoTokenizer.from_pretrained(bare).save_pretrained(bare)
    t = macaron.load(bare, device="cpu").trace(TEXTS[0])
    assert t.token_ids == AutoTokenizer.from_pretrained(bare)(TEXTS[0])["input_ids"]
    with pytest.raises(CheckpointError, match="a file; give the model's folder"):
        macaron.load(bare / "model.safetensors")


def edited(folder, root, **changes):
    """A copy of the folder whose config.json has `changes` (a value of ... drops the field)."""
    copy = root / f"edited-{folder.name}"
    copy.mkdir()
    for f in ("model.safetensors", "tokenizer.json"):
        (copy / f).write_bytes((folder / f).read_bytes())
    config = json.loads((folder / "config.json").read_text()) | changes
    (copy / "config.json").write_text(json.dumps({k: v for k, v in config.items() if v is not ...}))
    return copy


@pytest.mark.parametrize("family, changes, says", [
    ("roberta", dict(hidden_size=...), r"config.json: missing field 'hidden_size'$"),
    ("distilbert", dict(n_heads=...), r"config.json: missing field 'n_heads'$"),
    ("roberta", dict(max_position_embeddings=3), r"max_len=1: a sentence needs at least 2 positions"),
    ("bert", dict(max_position_embeddings=0), r"max_len=0: a sentence needs at least 2 positions"),
    ("electra-discriminator", dict(hidden_act="mish"),
     r"hidden_act='mish' is not mapped; these are: gelu, relu, gelu_new, gelu_pytorch_tanh, silu, swish"),
    ("distilbert", dict(activation="quick_gelu"), r"activation='quick_gelu' is not mapped"),
    ("roberta", dict(pad_token_id=None), r"pad_token_id is null, but RoBERTa's positions start past the padding"),
], ids=["no hidden_size", "no n_heads", "positions past the offset", "no positions", "mish", "quick_gelu",
                        "null pad"])
def test_a_wrong_config_is_named(folders, tmp_path, family, changes, says):
    with pytest.raises(CheckpointError, match=says):
        macaron.load(edited(folders[family][0], tmp_path, **changes), device="cpu")


def test_a_null_pad_is_zero_where_positions_do_not_start_past_it(folders, tmp_path):
    """BERT's positions start at 0 whatever the padding id: a null one still loads (as 0, the id we pad with)."""
    model = macaron.load(edited(folders["bert"][0], tmp_path, pad_token_id=None), device="cpu")
    assert model.config.pad_id == 0


def test_dynamics_page_runs_the_shared_layer_further(folders, monkeypatch):
    """The app on an ALBERT and a RoBERTa folder: Dynamics measures both, runs them past their depth
    (ALBERT's shared layer: the autonomous flow continued) and labels each by its family."""
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("MACARON_MODELS", f"{folders['albert'][0]},{folders['roberta'][0]}")
    monkeypatch.delenv("MACARON_MODELS_DIR", raising=False)
    at = AppTest.from_file(str(Path(__file__).resolve().parent.parent / "app" / "main.py"), default_timeout=180)
    at.query_params.update({"a": "albert", "b": "roberta", "view": "one", "s": "the cat sat on the [MASK] .",
                            "exp": "1"})
    at.switch_page("views/dynamics.py")
    at.run(timeout=180)
    assert not at.exception, [e.message for e in at.exception]
    assert {"d_experiments", "d_extended", "d_ext_energy"} <= {c.key for c in at.get("plotly_chart")}
    text = " ".join(str(c.value) for c in at.caption)
    assert "albert · ALBERT ·" in text and "one layer's weights shared by every step" in text and "16 → 32" in text
    assert "roberta · RoBERTa ·" in text
    assert "albert: the shared layer 45 more times, to 16 T = 48: the same weights, the autonomous flow continued" \
        in text and "roberta: the last layer 12 more times" in text  # ALBERT's 3 layers, h = 1: T = 3


def test_an_untied_decoder_leaves_the_head_out(tmp_path):
    """Our head's decoder is the word embedding: a folder whose decoder is its own matrix loads without a
    head rather than with a wrong one."""
    import transformers

    tok = byte_bpe()
    torch.manual_seed(0)
    hf = transformers.RobertaForMaskedLM(transformers.RobertaConfig(
        **dict(SMALL, vocab_size=tok.get_vocab_size(), max_position_embeddings=42), tie_word_embeddings=False))
    hf.save_pretrained(tmp_path, safe_serialization=True)
    tok.save(str(tmp_path / "tokenizer.json"))
    model = macaron.load(tmp_path, device="cpu")
    assert not model.has_mlm_head and model.config.hf_family == "RoBERTa"


@pytest.mark.parametrize("family", ["roberta", "albert"])
def test_particles_page_guesses_the_mask(folders, family, monkeypatch):
    """On Particles a RoBERTa (byte-level BPE, <mask> read as [MASK]) and an ALBERT folder show their
    [MASK] guesses at every sub-step and explain them with integrated gradients (E-wide embeddings)."""
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("MACARON_MODELS", str(folders[family][0]))
    monkeypatch.delenv("MACARON_MODELS_DIR", raising=False)
    at = AppTest.from_file(str(Path(__file__).resolve().parent.parent / "app" / "main.py"), default_timeout=180)
    at.query_params.update({"m": family, "s": "the cat sat on the [MASK] .", "attr": "1"})
    at.run(timeout=180)
    assert not at.exception, [e.message for e in at.exception]
    assert "Final guesses for [MASK]" in " ".join(str(m.value) for m in at.markdown)
    assert {"p_lens"} <= {c.key for c in at.get("plotly_chart")}
    text = " ".join(str(c.value) for c in at.caption)
    assert "Explained: log-probability of" in text and ("RoBERTa" if family == "roberta" else "ALBERT") in text
    assert not at.error, [e.value for e in at.error]
