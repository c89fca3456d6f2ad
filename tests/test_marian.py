"""Hugging Face Marian translation models (MarianMTModel) opened as our encoder–decoder, held against transformers.

The fixture is a Marian folder as the Hub holds one (Helsinki-NLP/opus-mt-*): SentencePiece models trained here on a
few German and English sentences (source.spm, target.spm), vocab.json mapping their pieces to ids (</s> 0, <unk> 1,
<pad> last; two source pieces left out, as Marian's vocabularies leave pieces out), tokenizer_config.json and
generation_config.json as opus-mt's, and a tiny MarianMTModel (2 + 2 layers × 32, 4 heads) trained a few steps on
those sentences and saved by transformers. transformers is the reference throughout: its MarianTokenizer's ids and
decode, its model's states and logits, its generate's outputs; never our code against itself.
"""
from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
import torch
import transformers

import macaron
from macaron import CheckpointError, InputError
from macaron.schemes import CONVECTION, CROSS, DIFFUSION

transformers.logging.set_verbosity_error()  # its note on max_new_tokens beside max_length, at every generate

GERMAN = ["Das Haus ist klein.", "Das Haus ist sehr groß.", "Ich habe ein kleines Haus, oder?",
          "Die Kinder spielen im Garten.", "Er sagt: das ist gut und schön.", "Der Garten ist groß und grün."]
ENGLISH = ["The house is small.", "The house is very big.", "I have a small house, right?",
           "The children play in the garden.", "He says: that is good and nice.", "The garden is big and green."]
SENTENCES = ["Das Haus ist klein.", "Die Kinder spielen im großen Garten, oder?", "Er sagt: das Xylophon ist gut!",
             "ich habe ein Haus", "Der Garten"]
D, LAYERS, HEADS, FFN, POSITIONS = 32, 2, 4, 64, 40
TOL = 1e-4


# ---- the fixture: a Marian folder as the Hub holds one ---------------------------------------------------------
def sentencepiece(lines: list[str], size: int) -> bytes:
    import sentencepiece as spm

    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines * 3), model_writer=model, vocab_size=size,
                                   model_type="unigram", character_coverage=0.98, hard_vocab_limit=False,
                                   minloglevel=2, num_threads=1)
    return model.getvalue()


def vocabulary(*models: bytes, leave_out: int = 0) -> dict[str, int]:
    """vocab.json as Marian's conversion writes it: </s> 0, <unk> 1, the pieces of the models, <pad> last; the source's
    last `leave_out` pieces left out (they read as <unk>)."""
    import sentencepiece as spm

    vocab = {"</s>": 0, "<unk>": 1}
    for k, model in enumerate(models):
        p = spm.SentencePieceProcessor(model_proto=model)
        pieces = [p.id_to_piece(i) for i in range(p.get_piece_size())
                  if not (p.is_control(i) or p.is_unknown(i) or p.is_unused(i))]
        for piece in pieces[:len(pieces) - (leave_out if k == 0 else 0)]:
            vocab.setdefault(piece, len(vocab))
    vocab["<pad>"] = len(vocab)
    return vocab


def write_marian(folder: Path, *, separate: bool = False, generation: dict | None = None, seed: int = 0,
                 **config) -> Path:
    """A Marian folder: spm models, vocabularies, tokenizer and generation configs, and a tiny MarianMTModel trained
    for a few steps on the six pairs (random weights translate into one piece repeated: a search test on them would
    prove little), saved by transformers."""
    folder.mkdir(parents=True)
    source, target = sentencepiece(GERMAN, 48), sentencepiece(ENGLISH, 44)
    (folder / "source.spm").write_bytes(source)
    (folder / "target.spm").write_bytes(target)
    if separate:  # <pad> (the decoder's start) at one id in both, the target's vocabulary the larger
        vocab, target_vocab = vocabulary(source, leave_out=2), vocabulary(target)
        pad = max(vocab.pop("<pad>"), target_vocab.pop("<pad>"))
        for v, extra in ((vocab, 0), (target_vocab, 3)):
            v.update({f"<unused{i}>": i for i in range(len(v), pad)} | {"<pad>": pad})
            v.update({f"<unused{i}>": i for i in range(pad + 1, pad + 1 + extra)})
        (folder / "target_vocab.json").write_text(json.dumps(target_vocab, ensure_ascii=False, indent=2))
    else:
        vocab = target_vocab = vocabulary(source, target, leave_out=2)
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False, indent=2))
    (folder / "tokenizer_config.json").write_text(json.dumps(
        {"source_lang": "de", "target_lang": "en", "model_max_length": 512, "separate_vocabs": separate,
         "tokenizer_class": "MarianTokenizer", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>"}))
    pad = vocab["<pad>"]
    fields = dict(vocab_size=len(vocab), decoder_vocab_size=len(target_vocab), d_model=D, encoder_layers=LAYERS,
                  decoder_layers=LAYERS, encoder_attention_heads=HEADS, decoder_attention_heads=HEADS,
                  encoder_ffn_dim=FFN, decoder_ffn_dim=FFN, max_position_embeddings=POSITIONS,
                  activation_function="swish", scale_embedding=True, pad_token_id=pad, decoder_start_token_id=pad,
                  eos_token_id=0, forced_eos_token_id=0, dropout=0.0)
    fields.update(config)
    torch.manual_seed(seed)
    model = transformers.MarianMTModel(transformers.MarianConfig(**fields))
    train(model, transformers.MarianTokenizer.from_pretrained(folder))
    with torch.no_grad():
        model.final_logits_bias.normal_(0, 0.1)  # a bias that is not zero, so that leaving it out would show
    model.eval().save_pretrained(folder)
    opus = {"bad_words_ids": [[pad]], "bos_token_id": 0, "decoder_start_token_id": pad, "eos_token_id": 0,
            "forced_eos_token_id": 0, "max_length": POSITIONS, "num_beams": 4, "pad_token_id": pad,
            "renormalize_logits": True}  # as the opus-mt repositories' generation_config.json
    (folder / "generation_config.json").write_text(json.dumps(opus | (generation or {})))
    return folder


def train(model, tok, steps: int = 120) -> None:
    """Adam on the six pairs, half-way to learning them: translations of words that end, and differ by search."""
    batch = tok(GERMAN, text_target=ENGLISH, padding=True, return_tensors="pt")
    batch["labels"][batch["labels"] == tok.pad_token_id] = -100
    optimiser = torch.optim.Adam(model.parameters(), lr=3e-3)
    model.train()
    for _ in range(steps):
        optimiser.zero_grad()
        model(**batch).loss.backward()
        optimiser.step()


def with_generation(folder: Path, copy: Path, **changes) -> Path:
    """A copy of a Marian folder whose generation_config.json has these settings changed."""
    shutil.copytree(folder, copy)
    doc = json.loads((copy / "generation_config.json").read_text())
    (copy / "generation_config.json").write_text(json.dumps(doc | changes))
    return copy


def with_specials_only(folder: Path, copy: Path) -> Path:
    """A copy of a Marian folder whose vocab.json names </s>, <unk> and <pad> alone, fewer ids than its vocab_size
    (as benchmarks/bench_translate.py writes one): the ids of the model's words have no entry."""
    shutil.copytree(folder, copy)
    vocab = json.loads((copy / "vocab.json").read_text())
    (copy / "vocab.json").write_text(json.dumps({k: i for k, i in vocab.items() if k in ("</s>", "<unk>", "<pad>")}))
    return copy


@pytest.fixture(scope="module")
def marian(tmp_path_factory):
    """(folder, transformers' model, transformers' tokenizer, ours)."""
    folder = write_marian(tmp_path_factory.mktemp("marian") / "opus-mt-de-en")
    theirs = transformers.MarianMTModel.from_pretrained(folder, attn_implementation="eager").eval()
    return folder, theirs, transformers.MarianTokenizer.from_pretrained(folder), macaron.load(folder, device="cpu")


def err(ours, theirs) -> float:
    """The largest difference, relative to the larger of 1 and the reference's largest magnitude."""
    ours, theirs = torch.as_tensor(ours).double(), torch.as_tensor(theirs).double()
    return float((ours - theirs).abs().max()) / max(1.0, float(theirs.abs().max()))


def generated(model, source_ids: list[int], **kwargs) -> list[int]:
    """transformers' generate on one sentence: the ids after the start token."""
    with torch.no_grad():
        out = model.generate(torch.tensor([source_ids]), **kwargs)
    return out[0, 1:].tolist()


# ---- the reading --------------------------------------------------------------------------------------------------
def test_text_reads_as_marian_tokenizer_reads_it(marian):
    folder, _, tok, ours = marian
    texts = SENTENCES + ["Xylophon", ">>en<< Das Haus", "das </s> Haus <unk> x<pad>", "  Garten  ", "Ça? ½ – «gut»"]
    unknown = 0
    for text in texts:
        ids = ours.tokenize(text)[0]
        assert ids == tok(text).input_ids, text
        unknown += ids.count(tok.unk_token_id)
    assert unknown >= 4  # characters SentencePiece lacks, pieces vocab.json lacks, a typed <unk>
    tokens = ours.translate("Das Xylophon", beam=1, max_tokens=3).source.tokens
    assert tokens[-1] == "</s>" and any(t.startswith("[UNK:") for t in tokens)
    g = torch.Generator().manual_seed(1)
    for _ in range(20):  # any ids, specials among them, read back as its decode does
        ids = torch.randint(0, len(tok), (12,), generator=g).tolist() + [0]
        assert ours.tokenizer.target.decode(ids) == tok.decode(ids, skip_special_tokens=True), ids


def test_an_id_the_vocabulary_does_not_name_reads_as_its_number(tmp_path, marian):
    """A vocab.json naming fewer ids than the model's embeddings: an id without an entry shows as <id 17> wherever
    ids are read as tokens (a translation's, given ids, the logit lens), not as None. The ids are transformers'."""
    folder, theirs, tok, _ = marian
    ours = macaron.load(with_specials_only(folder, tmp_path / "specials-only"), device="cpu")
    pad = tok.pad_token_id
    shown = {0: "</s>", 1: "[UNK]", pad: "<pad>"}
    source_ids = ours.tokenize(SENTENCES[0])[0]
    translation = ours.translate(source_ids, beam=1)
    assert translation.target_ids == generated(theirs, source_ids, num_beams=1)
    assert translation.target.tokens == [shown.get(i, f"<id {i}>") for i in [pad, *translation.target_ids]]
    assert any(t.startswith("<id ") for t in translation.target.tokens)
    assert ours.decoder.reader.ids([17, 0])[1] == ["<id 17>", "</s>"]
    guesses = ours.decoder.logit_lens(translation.target, 0, k=ours.config.decoder.vocab_size)[-1]
    assert all(isinstance(word, str) for word, _ in guesses) and any(w.startswith("<id ") for w, _ in guesses)


# ---- the computation ----------------------------------------------------------------------------------------------
def test_sinusoids_are_transformers():
    from transformers.models.marian.modeling_marian import MarianSinusoidalPositionalEmbedding

    from macaron.network.positions import sinusoids

    def marian(n, d):  # the one table, as formats.marian asks for it
        return sinusoids(n, d, halves=True, dtype=torch.float64)

    for n, d in ((40, 32), (9, 7)):
        assert torch.equal(marian(n, d), MarianSinusoidalPositionalEmbedding(n, d).create_weight())
    fairseqs = sinusoids(40, 32, halves=True, fairseq=True)
    assert not torch.allclose(marian(40, 32), fairseqs, atol=1e-2)  # not fairseq's table


def test_states_and_logits_are_transformers(marian):
    folder, theirs, tok, ours = marian
    worst = 0.0
    for text in SENTENCES:
        source_ids = tok(text).input_ids
        target = generated(theirs, source_ids, num_beams=1, max_new_tokens=8)
        result = ours.translate(text, beam=1, max_tokens=7)
        with torch.no_grad():
            out = theirs(input_ids=torch.tensor([source_ids]), decoder_input_ids=torch.tensor([[tok.pad_token_id,
                                                                                                 *target]]),
                         output_hidden_states=True, output_attentions=True)
        layers = [s for s, step in zip(result.source.states[1:], result.source.steps) if step.kind == CONVECTION]
        for k, state in enumerate(out.encoder_hidden_states):  # the embedding, then each layer's output
            mine = result.source.states[0] if k == 0 else layers[k - 1]
            worst = max(worst, err(mine, state[0]))
        worst = max(worst, err(result.source.final, out.encoder_last_hidden_state[0]))
        logits = ours.target_logits(source_ids, target)
        assert logits.shape == (len(target) + 1, ours.config.decoder.vocab_size)
        worst = max(worst, err(logits, out.logits[0]))
        traced = ours.trace_target(source_ids, target)
        crosses = [m for m, step in zip(traced.mixing, traced.steps) if step.kind == CROSS]
        assert len(crosses) == LAYERS
        for mine, theirs_cross in zip(crosses, out.cross_attentions):
            worst = max(worst, err(mine, theirs_cross[0]))
    assert worst < TOL, worst


def test_greedy_is_generate(marian):
    folder, theirs, tok, ours = marian
    ended = set()
    for text in SENTENCES:
        source_ids = tok(text).input_ids
        for words in (2, 6, 30):
            mine = ours.translate(source_ids, beam=1, max_tokens=words).target_ids
            assert mine == generated(theirs, source_ids, num_beams=1, do_sample=False, max_new_tokens=words + 1)
            assert mine[-1] == 0 and len(mine) <= words + 1 and tok.pad_token_id not in mine
            ended.add("at the limit" if len(mine) == words + 1 and 0 not in mine[:-1] else "before it")
        # by default: the generation config's max_length
        assert ours.translate(text, beam=1).target_ids == generated(theirs, source_ids, num_beams=1)
    assert ended == {"at the limit", "before it"}  # both ways a search ends were taken


@pytest.mark.parametrize("generation", [{}, {"early_stopping": True, "length_penalty": 0.6},
                                        {"early_stopping": "never", "length_penalty": 1.3},
                                        {"renormalize_logits": False, "min_length": 4}])
def test_beam_search_is_generate(tmp_path, marian, generation):
    folder = with_generation(marian[0], tmp_path / "opus-mt-de-en", **generation)
    theirs = transformers.MarianMTModel.from_pretrained(folder).eval()
    tok = transformers.MarianTokenizer.from_pretrained(folder)
    ours = macaron.load(folder, device="cpu")
    differ = 0
    for text in SENTENCES:
        source_ids = tok(text).input_ids
        for words in (3, 12):
            mine = ours.translate(text, beam=5, max_tokens=words)
            with torch.no_grad():
                out = theirs.generate(torch.tensor([source_ids]), num_beams=5, max_new_tokens=words + 1,
                                      return_dict_in_generate=True, output_scores=True)
            assert mine.target_ids == out.sequences[0, 1:].tolist(), (text, words)
            assert mine.score == pytest.approx(float(out.sequences_scores[0]), abs=TOL)
            differ += mine.target_ids != ours.translate(text, beam=1, max_tokens=words).target_ids
        # by default: the generation config's num_beams (4) and max_length
        assert ours.translate(text).target_ids == generated(theirs, source_ids)
    assert differ, "beam 5 never differs from greedy: the comparison would not tell them apart"


def test_a_translation_is_both_systems_traced(marian):
    folder, theirs, tok, ours = marian
    text = "Die Kinder spielen im Garten."
    result = ours.translate(text, beam=4)
    assert result.source.token_ids == tok(text).input_ids == ours.tokenize(text)[0]
    assert result.target.token_ids == [tok.pad_token_id, *result.target_ids] and result.target_ids[-1] == 0
    assert result.text == tok.decode(result.target_ids, skip_special_tokens=True) != ""
    assert result.target.tokens[0] == "<pad>" and result.target.tokens[-1] == "</s>"
    assert [s.kind for s in result.target.steps] == [DIFFUSION, CROSS, CONVECTION] * LAYERS
    assert [s.kind for s in result.source.steps] == [DIFFUSION, CONVECTION] * LAYERS
    assert result.source.meta["system"] == "source" and result.target.meta["system"] == "target"
    assert ours.config.source_lang == "de" and ours.config.target_lang == "en"
    assert ours.encoder.config.hf_family == "Marian" and ours.config.name == "opus-mt-de-en"


@pytest.mark.parametrize("shared, tied", [(True, True), (True, False), (False, True), (False, False)],
                         ids=["joined-tied", "joined-untied", "separate-tied", "separate-untied"])
def test_the_tables_transformers_5_saves_are_the_ones_read(tmp_path, shared, tied):
    """Joined or separate vocabularies (share_encoder_decoder_embeddings), tied or untied (tie_word_embeddings), as
    transformers 5 saves them: tied, one table under the name it ties to (model.shared alone, joined); untied, each
    system's own and lm_head, beside a model.shared no forward reads (joined), which reading in their place is off."""
    folder = write_marian(tmp_path / "opus-mt-de-en", separate=not shared, share_encoder_decoder_embeddings=shared,
                          tie_word_embeddings=tied, seed=5)
    from safetensors import safe_open

    with safe_open(folder / "model.safetensors", "pt") as f:
        stored = {k for k in f.keys() if "embed_tokens" in k or k.endswith(("shared.weight", "lm_head.weight"))}
    systems = {"model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight"}
    assert stored == ({"model.shared.weight"} if shared and tied else
                      (systems | {"model.shared.weight"} if shared else systems) | ({"lm_head.weight"} if not tied
                                                                                  else set()))
    theirs = transformers.MarianMTModel.from_pretrained(folder, attn_implementation="eager").eval()
    tok = transformers.MarianTokenizer.from_pretrained(folder)
    ours = macaron.load(folder, device="cpu")
    assert (ours.config.encoder.vocab_size != ours.config.decoder.vocab_size) == (not shared)
    worst, targets = 0.0, set()
    for text in SENTENCES:
        source_ids = tok(text).input_ids
        assert ours.tokenize(text)[0] == source_ids
        target = generated(theirs, source_ids, num_beams=1, max_new_tokens=10)
        translation = ours.translate(source_ids, beam=1, max_tokens=9)
        assert translation.target_ids == target and translation.text == tok.decode(target, skip_special_tokens=True)
        targets.add(tuple(target))
        with torch.no_grad():
            out = theirs(input_ids=torch.tensor([source_ids]),
                         decoder_input_ids=torch.tensor([[tok.pad_token_id, *target]]))
        worst = max(worst, err(ours.encode(source_ids).states[0], out.encoder_last_hidden_state[0]),
                    err(ours.target_logits(source_ids, target), out.logits[0]))
    assert worst < TOL, worst
    assert len(targets) > 1  # translations that differ: the tables the head reads tell the words apart


def pickle_weights(folder: Path, model) -> None:
    """The weights as the older Hub folders hold them: pytorch_model.bin, every name of a tied table and the position
    tables included, and no safetensors."""
    (folder / "model.safetensors").unlink()
    torch.save(model.state_dict(), folder / "pytorch_model.bin")


def test_pickled_weights_are_read_as_data(tmp_path, marian):
    folder, theirs, tok, ours = marian
    pickled = tmp_path / "pickled"
    shutil.copytree(folder, pickled)
    pickle_weights(pickled, theirs)
    again = macaron.load(pickled, device="cpu")
    source_ids = tok(SENTENCES[1]).input_ids
    assert again.translate(source_ids, beam=4).target_ids == generated(theirs, source_ids)


class Hostile:
    def __init__(self, target: Path):
        self.target = target

    def __reduce__(self):  # unpickled by a plain pickle.load, this would create the file
        return open, (str(self.target), "w")


def test_a_hostile_pickle_is_refused_unrun(tmp_path, marian):
    folder = marian[0]
    evil = tmp_path / "evil"
    shutil.copytree(folder, evil)
    (evil / "model.safetensors").unlink()
    target = tmp_path / "written-by-the-pickle"
    torch.save({"model.shared.weight": Hostile(target)}, evil / "pytorch_model.bin")
    with pytest.raises(CheckpointError, match="pytorch_model.bin") as e:
        macaron.load(evil, device="cpu")
    assert "\n" not in str(e.value) and not target.exists()


# ---- by Hub name, from the local Hub cache ------------------------------------------------------------------------
def test_a_hub_name_opens_from_the_local_cache(tmp_path, marian, monkeypatch):
    folder, theirs, tok, ours = marian
    repo = tmp_path / "hub" / "models--Helsinki-NLP--opus-mt-de-en"
    sha = "0123456789abcdef0123456789abcdef01234567"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(sha)
    shutil.copytree(folder, repo / "snapshots" / sha)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from macaron.sources import locate as sources

    assert sources.locate("Helsinki-NLP/opus-mt-de-en") == repo / "snapshots" / sha
    assert "Helsinki-NLP/opus-mt-de-en" in sources.cached()
    model = macaron.load("Helsinki-NLP/opus-mt-de-en", device="cpu")
    assert model.config.name == "Helsinki-NLP/opus-mt-de-en"
    source_ids = tok(SENTENCES[2]).input_ids
    assert model.translate(SENTENCES[2], beam=4).target_ids == generated(theirs, source_ids)


# ---- bad input is one clear message -------------------------------------------------------------------------------
def test_bad_input_is_one_clear_message(tmp_path, marian):
    folder, theirs, tok, ours = marian
    for bad, says in (("", "empty"), ("   ", "empty"), ([], "nothing to translate"),
                      (" ".join(["Haus"] * POSITIONS), f"more than the {POSITIONS} positions"),
                      ([5, 6], "end with </s>"), ([5, tok.pad_token_id, 0], "no <pad>")):
        with pytest.raises(InputError, match=says) as e:
            ours.translate(bad)
        assert "\n" not in str(e.value), bad
    with pytest.raises(InputError, match="unkpen"):
        ours.translate("Das Haus", unkpen=1.0)

    def broken(name: str, change) -> str:
        copy = tmp_path / name
        shutil.copytree(folder, copy)
        change(copy)
        with pytest.raises(CheckpointError) as e:
            macaron.load(copy, device="cpu")
        assert "\n" not in str(e.value)
        return str(e.value)

    assert "source.spm" in broken("no-spm", lambda f: (f / "source.spm").unlink())
    assert "truncated" in broken("truncated", lambda f: (f / "model.safetensors").write_bytes(
        (f / "model.safetensors").read_bytes()[:5000]))
    assert "SentencePiece" in broken("bad-spm", lambda f: (f / "target.spm").write_bytes(b"not a model"))

    def pickled_truncated(f: Path):
        pickle_weights(f, theirs)
        (f / "pytorch_model.bin").write_bytes((f / "pytorch_model.bin").read_bytes()[:5000])

    assert "truncated" in broken("truncated-bin", pickled_truncated)

    def a_head_of_its_own(f: Path):  # config.json ties it, and transformers would untie it: refused, not guessed
        from safetensors.torch import load_file, save_file

        weights = load_file(f / "model.safetensors")
        save_file(weights | {"lm_head.weight": torch.randn_like(weights["model.shared.weight"])},
                  f / "model.safetensors", metadata={"format": "pt"})

    assert "tie_word_embeddings" in broken("untied-head", a_head_of_its_own)

    with pytest.raises(CheckpointError, match="no_repeat_ngram_size") as e:
        macaron.load(with_generation(folder, tmp_path / "ngrams", no_repeat_ngram_size=3), device="cpu")
    assert "\n" not in str(e.value)
