"""The paper's own checkpoints (fairseq 0.6, Lu et al. 2019): import, computation and reading of text.

The checkpoints here are written as fairseq 0.6's utils.save_state writes them (its args Namespace with the real
field names, the model's state under fairseq's own key names with the output embedding shared, the optimizer's
history and state, extra_state with the trainer's meters), in the legacy pickle format torch 1.x wrote; small
(2 layers × 32, 4 heads) with random weights, the Macaron and the baseline. Each is checked against an
independent recomputation written here in plain torch from the paper's code (bert/fairseq/models/transformer.py,
multihead_attention.py, sinusoidal_positional_embedding.py, fairseq_model.py), never by calling our model; the
reading of text against sacremoses and subword-nmt's own BPE on codes learned here.
"""
from __future__ import annotations

import argparse
import functools
import json
import math
import sys
import types
from collections import OrderedDict
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import macaron
from macaron import CheckpointError
from macaron.formats.fairseq import read_checkpoint
from macaron.formats.fairseq_import import import_fairseq
from macaron.formats.moses_bpe import MosesBPE, read_codes, read_dictionary

D, LAYERS, HEADS, FFN, MAX_POS = 32, 2, 4, 48, 24
TOL = 1e-4
CORPUS = ["the bank of the river was flooded after the rain .", "she played the piano while he washed the dishes .",
          "the banks lowered their rates ; the river banks were lower .", "i can't believe it's raining again !",
          "lower , lowest , newer , newest , wider , widest , player , players , playing",
          "banana , bananas , ananas , mississippi , aaaa , aaaaaa , lowlow"]
SENTENCES = ["The bank of the river was [MASK] after the rain.", "She played the piano—while he washed dishes!",
             "I can't believe it's \u201craining\u201d again... 5,300 players\tplaying \\ newest",
             "\u201cLowest\u201d rates\u2019 banks... (newer) <<wider>> ,, played.... *widest \u0007player",
             "Zebras\u00a0qu\u00e9bec xylophone [MASK] [MASK]",
             "Bananas of Mississippi: aaaaa aaaaaaa, lowlowlow play\u00aders wider\u200bwidest"]


# ---- fixtures as fairseq 0.6 writes them -------------------------------------------------------------------
def dictionary_lines(codes_file: Path | None = None) -> list[str]:
    """dict.txt's symbols: the words and pieces the test's BPE makes of CORPUS and SENTENCES, minus a few (so some
    pieces are <unk>), most frequent first, as fairseq's preprocess writes them."""
    from collections import Counter
    counts = Counter()
    for text in CORPUS + SENTENCES:
        counts.update(reference_pieces(text, codes_file) if codes_file else reference_words(text))
    return [f"{s} {n}" for s, n in counts.most_common() if s not in ("xylophone", "z@@", "zebr@@")]


def write_dictionary(folder: Path, lines: list[str]) -> Path:
    file = folder / "dict.txt"
    file.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return file


def fairseq_state(V: int, macaron_layers: bool, seed: int, affine: bool = False) -> OrderedDict:
    """A TransformerBertModel's state_dict(), under its names, with random weights (std 0.3: the norms' inputs
    and the head's terms all matter)."""
    g = torch.Generator().manual_seed(seed)

    def w(*shape, std=0.3):
        return torch.randn(*shape, generator=g) * std

    ffn = FFN // 2 if macaron_layers else FFN
    s = OrderedDict()
    s["encoder.embed_tokens.weight"] = w(V, D, std=D ** -0.5)
    s["encoder.embed_positions._float_tensor"] = torch.tensor([float("nan")])  # FloatTensor(1): uninitialised
    s["encoder.embed_segment.weight"] = w(2, D)  # the padding row (1) nonzero here, so dropping it shows
    for i in range(LAYERS):
        p = f"encoder.layers.{i}."
        s[p + "self_attn.in_proj_weight"], s[p + "self_attn.in_proj_bias"] = w(3 * D, D), w(3 * D)
        s[p + "self_attn.out_proj.weight"], s[p + "self_attn.out_proj.bias"] = w(D, D), w(D)
        s[p + "fc1.weight"], s[p + "fc1.bias"], s[p + "fc2.weight"], s[p + "fc2.bias"] = \
            w(ffn, D), w(ffn), w(D, ffn), w(D)
        if macaron_layers:
            s[p + "macaron_fc1.weight"], s[p + "macaron_fc1.bias"] = w(ffn, D), w(ffn)
            s[p + "macaron_fc2.weight"], s[p + "macaron_fc2.bias"] = w(D, ffn), w(D)
        if affine:
            for n in range(3 if macaron_layers else 2):
                s[p + f"layer_norms.{n}.weight"], s[p + f"layer_norms.{n}.bias"] = 1 + w(D), w(D)
    s["encoder.version"] = torch.Tensor([2])
    if affine:
        s["encoder.layer_norm.weight"], s["encoder.layer_norm.bias"] = 1 + w(D), w(D)
    s["embed_out"] = s["encoder.embed_tokens.weight"]  # share_all_embeddings: one Parameter, two names
    s["mid_layer.0.weight"], s["mid_layer.0.bias"] = w(D, D), w(D)
    s["mid_layer.2.weight"], s["mid_layer.2.bias"] = 1 + w(D), w(D)
    s["classifier.weight"], s["classifier.bias"] = w(1, D), w(1)
    return s


def fairseq_args(arch: str, **changes) -> argparse.Namespace:
    """save_state's args: the command line of macaron-scripts/train/train.sh, then the architecture's defaults."""
    args = dict(arch=arch, task="bert", data=["data-bin/bert_corpus/"], seed=3, share_all_embeddings=True,
                optimizer="adam", adam_betas="(0.9, 0.999)", adam_eps=1e-6, clip_norm=0.0, weight_decay=0.01,
                lr=[0.0003], lr_scheduler="linear", warmup_updates=1, min_lr=1e-09, criterion="cross_entropy_bert",
                max_tokens=6400, update_freq=[5], max_update=800000, ddp_backend="no_c10d", fp16=False,
                left_pad=False, max_positions=MAX_POS, max_source_positions=MAX_POS, masked_lm_prob=0.15,
                encoder_embed_path=None, encoder_embed_dim=D, encoder_ffn_embed_dim=FFN // 2 if "macaron" in arch
                else FFN, encoder_layers=LAYERS, encoder_attention_heads=HEADS, encoder_normalize_before=True,
                encoder_learned_pos=False, attention_dropout=0.1, relu_dropout=0.0, dropout=0.1,
                no_token_positional_embeddings=False, act_fn="gelu", no_normalize_affine=True)
    if "macaron" in arch:
        args["macaron"] = True
    args.update(changes)
    return argparse.Namespace(**args)


class AverageMeter:  # fairseq.meters' classes, as the trainer pickles them into extra_state
    def __init__(self):
        self.val, self.avg, self.sum, self.count = 2.5, 2.5, 250.0, 100


class TimeMeter:
    def __init__(self):
        self.init, self.start, self.n = 0, 1.5e9, 1234


class StopwatchMeter:
    def __init__(self):
        self.sum, self.n, self.start_time = 3600.0, 1234, None


def save_fairseq(file: Path, args, state, monkeypatch, legacy: bool = True, **extra) -> Path:
    """utils.save_state's dict, pickled by torch.save (the legacy format of torch 1.x unless `legacy` is False)."""
    meters = types.ModuleType("fairseq.meters")
    for cls in (AverageMeter, TimeMeter, StopwatchMeter):
        cls.__module__ = "fairseq.meters"
        setattr(meters, cls.__name__, cls)
    monkeypatch.setitem(sys.modules, "fairseq", types.ModuleType("fairseq"))
    monkeypatch.setitem(sys.modules, "fairseq.meters", meters)
    params = [t for k, t in state.items() if t.is_floating_point() and k != "embed_out"]
    ckpt = {
        "args": args, "model": state,
        "optimizer_history": [{"criterion_name": "CrossEntropyBertCriterion", "optimizer_name": "FairseqAdam",
                               "lr_scheduler_state": {"best": 2.4}, "num_updates": 1234}],
        "last_optimizer_state": {
            "state": {i: {"step": 1234, "exp_avg": torch.zeros_like(p), "exp_avg_sq": torch.zeros_like(p)}
                      for i, p in enumerate(params[:3])},
            "param_groups": [{"lr": 0.0003, "betas": (0.9, 0.999), "eps": 1e-6, "weight_decay": 0.01,
                              "amsgrad": False, "params": list(range(len(params)))}]},
        "extra_state": {"best": 2.4, "train_iterator": {"epoch": 3, "iterations_in_epoch": 17}, "val_loss": 2.45,
                        "train_meters": OrderedDict(train_loss=AverageMeter(), wps=TimeMeter(),
                                                    train_wall=StopwatchMeter())},
        **extra}
    torch.save(ckpt, file, _use_new_zipfile_serialization=not legacy)
    return file


ARCHS = {"macaron": "transformer_bert_base_macaron", "baseline": "transformer_bert_base"}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A dictionary, BPE codes in fastBPE's and subword-nmt's formats, learned here from CORPUS."""
    folder = tmp_path_factory.mktemp("release")
    return dict(folder=folder, **write_codes(folder))


def write_codes(folder: Path) -> dict:
    from subword_nmt.learn_bpe import learn_bpe

    words = folder / "corpus.tok"
    words.write_text("".join(" ".join(reference_words(t)) + "\n" for t in CORPUS), encoding="utf-8")
    nmt = folder / "codes.subword-nmt"
    with open(words, encoding="utf-8") as fin, open(nmt, "w", encoding="utf-8") as fout:
        learn_bpe(fin, fout, 60, min_frequency=1)
    lines = nmt.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "#version: 0.2" and len(lines) > 30
    fast = folder / "codes.fastbpe"  # fastBPE's learnbpe: no version line, each merge with its count
    fast.write_text("".join(f"{line} {1000 - n}\n" for n, line in enumerate(lines[1:])), encoding="utf-8")
    old = folder / "codes.subword-nmt-0.1"  # subword-nmt's file without its version line: its 0.1 rules
    old.write_text("\n".join(lines[1:]) + "\n", encoding="utf-8")
    return dict(nmt=nmt, fast=fast, old=old)


def imported(tmp: Path, kind: str, monkeypatch, files, affine=False, codes="fast", out: Path | None = None,
             half: bool = False) -> Path:
    lines = dictionary_lines(files[codes or "fast"])  # no codes: the dictionary of the release still
    V = 6 + len(lines)
    state = fairseq_state(V, kind == "macaron", seed=7 if kind == "macaron" else 8, affine=affine)
    if half:  # trained with --fp16: fairseq saves the model's half-precision state
        state = OrderedDict((k, v.half() if v.is_floating_point() else v) for k, v in state.items())
        state["embed_out"] = state["encoder.embed_tokens.weight"]
    ckpt = save_fairseq(tmp / f"{kind}.pt", fairseq_args(ARCHS[kind], no_normalize_affine=not affine), state,
                        monkeypatch)
    return import_fairseq(ckpt, write_dictionary(tmp, lines), files[codes] if codes else None,
                          out or tmp / f"fairseq-{kind}")


# ---- the independent recomputation ----------------------------------------------------------------------------
def gelu(x):  # fairseq's, in transformer.py
    return x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))


def paper_forward(state: dict, args, ids: list[int]) -> tuple[list[torch.Tensor], torch.Tensor]:
    """TransformerBertModel on one sentence, segment 1 throughout, in eval mode: (the state after the embedding
    and after every sub-layer, the masked-word logits [T, V])."""
    s = {k: v.double() if v.is_floating_point() else v for k, v in state.items()}
    d, pad = args.encoder_embed_dim, 1
    ids = torch.tensor(ids)
    T = len(ids)
    half = d // 2
    rate = math.log(10000) / (half - 1)
    inv = torch.exp(torch.arange(half, dtype=torch.double) * -rate)
    position = (pad + 1 + torch.arange(T)).double()[:, None] * inv[None]  # make_positions: past the padding index
    sinusoid = torch.cat([torch.sin(position), torch.cos(position)], dim=1)
    x = math.sqrt(d) * s["encoder.embed_tokens.weight"][ids] + sinusoid + s["encoder.embed_segment.weight"][1]
    out = [x]

    def norm(h, key=None):
        if args.no_normalize_affine:
            return F.layer_norm(h, (d,), eps=1e-5)
        return F.layer_norm(h, (d,), s[key + ".weight"], s[key + ".bias"], eps=1e-5)

    def attention(h, p):
        q, k, v = F.linear(h, s[p + "in_proj_weight"], s[p + "in_proj_bias"]).chunk(3, dim=-1)
        q = q * (d // args.encoder_attention_heads) ** -0.5
        heads = [t.reshape(T, args.encoder_attention_heads, -1).transpose(0, 1) for t in (q, k, v)]
        weights = torch.softmax(heads[0] @ heads[1].transpose(1, 2), dim=-1)
        y = (weights @ heads[2]).transpose(0, 1).reshape(T, d)
        return F.linear(y, s[p + "out_proj.weight"], s[p + "out_proj.bias"])

    def ffn(h, p, act):
        return F.linear(act(F.linear(h, s[p + "1.weight"], s[p + "1.bias"])), s[p + "2.weight"], s[p + "2.bias"])

    macaron_layer = getattr(args, "macaron", False)
    factor = 0.5 if macaron_layer else 1.0
    for i in range(args.encoder_layers):
        p = f"encoder.layers.{i}."
        if macaron_layer:
            x = x + factor * ffn(norm(x, p + "layer_norms.2"), p + "macaron_fc", F.relu)
            out.append(x)
        x = x + attention(norm(x, p + "layer_norms.0"), p + "self_attn.")
        out.append(x)
        x = x + factor * ffn(norm(x, p + "layer_norms.1"), p + "fc", gelu)
        out.append(x)
    x = norm(x, "encoder.layer_norm")
    out.append(x)
    mid = F.linear(x, s["mid_layer.0.weight"], s["mid_layer.0.bias"])
    mid = F.layer_norm(gelu(mid), (d,), s["mid_layer.2.weight"], s["mid_layer.2.bias"], eps=1e-5)
    return out, F.linear(mid, s["embed_out"])


# ---- the reading of text, independently: the scripts' steps, sacremoses, subword-nmt ------------------------------
@functools.cache
def moses():
    from sacremoses import MosesPunctNormalizer, MosesTokenizer
    return MosesPunctNormalizer(lang="en", perl_parity=True), MosesTokenizer(lang="en")


@functools.cache
def subword_nmt(codes: Path):
    """subword-nmt's apply_bpe on codes (fastBPE's given to it in its own format: the same merges in the same
    order, after its version-0.2 line)."""
    import io

    from subword_nmt.apply_bpe import BPE

    lines = codes.read_text(encoding="utf-8").splitlines()
    if len(lines[-1].split()) == 3:  # fastBPE's
        lines = ["#version: 0.2"] + [" ".join(line.split()[:2]) for line in lines]
    return BPE(io.StringIO("\n".join(lines) + "\n"))


def reference_words(text: str) -> list[str]:
    """process_bert.sh up to the BPE: precleanup_english.py, normalize-punctuation.perl en,
    remove-non-printing-char.perl, the backslash cleanup, tokenizer.perl -no-escape -l en, tolower."""
    import re
    import unicodedata

    normaliser, tokenizer = moses()
    line = " ".join(text.replace("\t", " ").strip().split())
    line = re.sub(r"\.{4,}", "...", line).replace("<<", "«").replace(">>", "»")
    line = re.sub(r"(\[\(«) ", r"\1", re.sub(r" (,:\.\)\]»)", r"\1", line))
    line = re.sub(r" \*([^\s])", r" \1", line.replace(",,", ",").replace(",.", "."))
    line = normaliser.normalize(" ".join(line.split()))
    line = "".join(" " if unicodedata.category(ch).startswith("C") else ch for ch in line)
    line = " ".join(re.sub(r"\\", " ", line).split())
    return tokenizer.tokenize(line, escape=False, return_str=True).lower().split() if line else []


def reference_pieces(text: str, codes: Path) -> list[str]:
    """subword-nmt's BPE of the words."""
    return [p for part in text.split("[MASK]") for p in subword_nmt(codes).segment_tokens(reference_words(part))]


def reference_ids(text: str, symbols: list[str], codes: Path) -> list[int]:
    """<cls>, the pieces' ids in fairseq's Dictionary (its index(): <unk> where missing), <mask> for [MASK], </s>."""
    index = {s: i for i, s in enumerate(symbols)}
    ids = []
    for k, part in enumerate(text.split("[MASK]")):
        if k:
            ids.append(4)
        ids += [index.get(p, 3) for p in reference_pieces(part, codes)]
    return [5, *ids, 2]


# ---- tests: the computation ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind,affine,half", [("macaron", False, False), ("baseline", False, False),
                                               ("macaron", True, False), ("baseline", True, False),
                                               ("macaron", False, True)])
def test_import_matches_the_papers_computation(tmp_path, monkeypatch, files, kind, affine, half):
    folder = imported(tmp_path, kind, monkeypatch, files, affine, half=half)
    ckpt = torch.load(tmp_path / f"{kind}.pt", weights_only=False)
    model = macaron.load(folder, device="cpu")
    assert model.config.scheme == ("macaron" if kind == "macaron" else "transformer") and model.has_mlm_head
    assert json.loads((folder / "converted.json").read_text())["dtype"] == ("float16" if half else "float32")
    for text in SENTENCES[:3]:
        ids = model.tokenize(text)[0]
        states, logits = paper_forward(ckpt["model"], ckpt["args"], ids)
        traj = model.trace(ids)
        assert len(traj.states) == len(states) - 1  # every sub-step recorded; the final norm is traj.final
        for k, (ours, theirs) in enumerate(zip(traj.states, states)):
            err = float((torch.as_tensor(ours).double() - theirs).abs().max())
            assert err < TOL * max(1.0, float(theirs.abs().max())), (k, traj.labels[k], err)
        assert float((torch.as_tensor(traj.final).double() - states[-1]).abs().max()) < TOL
        with torch.no_grad():
            ours = model.mlm_logits(ids).double()
        assert ours.shape == logits.shape
        assert float((ours - logits).abs().max()) < TOL * max(1.0, float(logits.abs().max()))


def test_imported_folder_is_ours_and_says_what_it_is(tmp_path, monkeypatch, files):
    folder = imported(tmp_path, "macaron", monkeypatch, files)
    assert sorted(p.name for p in folder.iterdir()) == ["README.md", "config.json", "converted.json",
                                                        "model.safetensors", "tokenizer.json"]
    config = json.loads((folder / "config.json").read_text())
    assert config["convection_activations"] == ["relu", "gelu"] and config["embedding_scale"] == pytest.approx(
        math.sqrt(D)) and config["norm_affine"] is False and config["pad_id"] == 1
    record = json.loads((folder / "converted.json").read_text())
    assert record["arch"] == "transformer_bert_base_macaron" and record["num_updates"] == 1234
    assert record["checkpoint"].endswith("macaron.pt") and record["reading"] == "the paper's"
    card = (folder / "README.md").read_text()
    for words in ("macaron.pt", "transformer_bert_base_macaron", "next-sentence classifier", "√d", "segment 1",
                  "ReLU", "codes.fastbpe"):
        assert words in card, words
    assert not list(tmp_path.glob(".*importing"))  # written whole, then moved into place


def test_an_imported_model_traces_reads_and_guesses(tmp_path, monkeypatch, files):
    folder = imported(tmp_path, "macaron", monkeypatch, files)
    model = macaron.load(folder, device="cpu")
    traj = model.trace("The bank of the river was [MASK] after the rain.")
    assert traj.tokens[0] == "[CLS]" and traj.tokens[-1] == "[SEP]" and traj.token_ids[-1] == 2
    assert traj.guess_at == traj.tokens.index("[MASK]") and traj.token_ids[traj.guess_at] == 4
    assert len(model.logit_lens(traj, traj.guess_at)) == len(traj.states)
    assert model.tokenizer.token_to_id("[MASK]") == 4 and model.tokenizer.id_to_token(5) == "[CLS]"
    assert "reading" not in traj.meta  # the paper's own reading: nothing to warn of
    assert model.config.hf_family == "fairseq"


# ---- tests: the reading of text -----------------------------------------------------------------------------------
@pytest.mark.parametrize("codes", ["fast", "nmt", "old"])
def test_text_reads_to_the_papers_ids(tmp_path, files, codes):
    lines = dictionary_lines(files[codes])
    symbols = read_dictionary(write_dictionary(tmp_path, lines))
    assert symbols[:6] == ["<Lua heritage>", "<pad>", "</s>", "<unk>", "<mask>", "<cls>"]
    assert symbols[6:] == [line.rsplit(" ", 1)[0] for line in lines]
    merges, rules = read_codes(files[codes])
    assert rules == ("0.1" if codes == "old" else "0.2")
    tok = MosesBPE(symbols, merges, rules)
    for text in SENTENCES + CORPUS:
        assert tok.encode(text).ids == reference_ids(text, symbols, files[codes]), text
    words = tok.pieces("Players were lowest")
    assert any(p.endswith("@@") for p in words) and not words[-1].endswith("@@")


def test_a_sentence_by_hand(tmp_path):
    """One reading worked out from the scripts: Moses splits 's and !, lower case, BPE merges by rank."""
    symbols = read_dictionary(write_dictionary(tmp_path, ["the 9", "ca@@ 5", "t 5", "'s 4", "! 3", "cat 1"]))
    codes = tmp_path / "codes"
    codes.write_text("c a 20\nt h 19\nth e</w> 18\n' s</w> 17\n", encoding="utf-8")  # none makes "cat": ca@@ t
    tok = MosesBPE(symbols, *read_codes(codes))
    enc = tok.encode("The Cat's [MASK]!")
    assert enc.ids == [5, 6, 7, 8, 9, 4, 10, 2]
    assert enc.tokens == ["[CLS]", "the", "ca@@", "t", "'s", "[MASK]", "!", "[SEP]"]
    assert tok.encode("dog").ids == [5, 3, 3, 3, 2] and tok.encode("dog").tokens[1:4] == ["[UNK:d]", "[UNK:o]",
                                                                                          "[UNK:g]"]


def test_without_codes_the_reading_is_approximate_and_says_so(tmp_path, monkeypatch, files):
    lines = dictionary_lines(files["fast"])
    state = fairseq_state(6 + len(lines), True, seed=1)
    ckpt = save_fairseq(tmp_path / "m.pt", fairseq_args(ARCHS["macaron"]), state, monkeypatch)
    folder = import_fairseq(ckpt, write_dictionary(tmp_path, lines), None, tmp_path / "approx")
    model = macaron.load(folder, device="cpu")
    assert model.tokenizer.approximate and "approximate" in (folder / "README.md").read_text().lower()
    assert json.loads((folder / "converted.json").read_text())["reading"] == "approximate"
    traj = model.trace("the banks lowered")
    assert "Approximate reading" in traj.meta["reading"]
    index = {s: i for i, s in enumerate(model.tokenizer.symbols)}
    for word in ("banks", "lowered"):  # the longest entries, from the left
        pieces, rest = [], word
        while rest:
            n = next(n for n in range(len(rest), 0, -1) if (rest[:n] + ("@@" if n < len(rest) else "")) in index)
            pieces.append(rest[:n] + ("@@" if n < len(rest) else ""))
            rest = rest[n:]
        assert model.tokenizer.pieces(word) == pieces


# ---- tests: bad input is one clear line, and nothing in a pickle runs -----------------------------------------
class Hostile:
    def __init__(self, target: Path):
        self.target = target

    def __reduce__(self):  # unpickled by a plain pickle.load, this would create the file
        return open, (str(self.target), "w")


class Shell:
    def __reduce__(self):
        import os
        return os.system, ("touch /tmp/macaron-fairseq-test-pwned",)


@pytest.mark.parametrize("legacy", [True, False])
def test_a_hostile_pickle_is_refused_unrun(tmp_path, monkeypatch, files, legacy):
    lines = dictionary_lines(files["fast"])
    target = tmp_path / "written-by-the-pickle"
    state = fairseq_state(6 + len(lines), True, seed=1)
    for payload, name in ((Hostile(target), "open"), (Shell(), "system")):
        ckpt = save_fairseq(tmp_path / "evil.pt", fairseq_args(ARCHS["macaron"]), state, monkeypatch, legacy,
                            payload=payload)
        with pytest.raises(CheckpointError, match=rf"refused: it needs \S*{name}.*nothing in it was run"):
            import_fairseq(ckpt, write_dictionary(tmp_path, lines), files["fast"], tmp_path / "out")
        assert not target.exists() and not Path("/tmp/macaron-fairseq-test-pwned").exists()
        assert not (tmp_path / "out").exists() and not list(tmp_path.glob(".*importing"))


def test_an_unmapped_architecture_is_refused_by_name(tmp_path, monkeypatch, files):
    lines = dictionary_lines(files["fast"])
    state = fairseq_state(6 + len(lines), False, seed=1)
    for arch, says in (("transformer_classifier_base", "GLUE classifier"), ("transformer_lm_big", "language model")):
        ckpt = save_fairseq(tmp_path / "c.pt", fairseq_args(arch), state, monkeypatch)
        with pytest.raises(CheckpointError) as e:
            import_fairseq(ckpt, write_dictionary(tmp_path, lines), files["fast"], tmp_path / "out")
        msg = str(e.value)
        assert f"'{arch}'" in msg and says in msg and "transformer_bert_base_macaron" in msg and "\n" not in msg
    ckpt = save_fairseq(tmp_path / "p.pt", fairseq_args(ARCHS["baseline"], encoder_normalize_before=False), state,
                        monkeypatch)
    with pytest.raises(CheckpointError, match="post-LN"):
        import_fairseq(ckpt, write_dictionary(tmp_path, lines), files["fast"], tmp_path / "out")
    assert not (tmp_path / "out").exists()


def bad_inputs(tmp_path: Path, monkeypatch, files):
    """(what, checkpoint, dict, codes, expected words) of each bad input."""
    lines = dictionary_lines(files["fast"])
    good_dict = write_dictionary(tmp_path, lines)
    state = fairseq_state(6 + len(lines), True, seed=1)
    good = save_fairseq(tmp_path / "good.pt", fairseq_args(ARCHS["macaron"]), state, monkeypatch)
    zipped = save_fairseq(tmp_path / "zipped.pt", fairseq_args(ARCHS["macaron"]), state, monkeypatch, legacy=False)
    cases = [("missing checkpoint", tmp_path / "nope.pt", good_dict, files["fast"], "checkpoint file is missing"),
             ("missing dict", good, tmp_path / "nope.txt", files["fast"], "dictionary file is missing"),
             ("missing codes", good, good_dict, tmp_path / "nope.codes", "codes file is missing")]
    for name, source in (("truncated", good), ("truncated zip", zipped)):
        cut = tmp_path / f"{name}.pt"
        cut.write_bytes(source.read_bytes()[: source.stat().st_size // 2])
        cases.append((name, cut, good_dict, files["fast"], "damaged or truncated"))
    nan = OrderedDict(state)
    nan["encoder.layers.1.fc2.weight"] = torch.full_like(state["encoder.layers.1.fc2.weight"], float("nan"))
    cases.append(("NaN", save_fairseq(tmp_path / "nan.pt", fairseq_args(ARCHS["macaron"]), nan, monkeypatch),
                  good_dict, files["fast"], "'encoder.layers.1.fc2.weight' holds .* NaN"))
    short = tmp_path / "short"
    short.mkdir()
    cases.append(("dict too short", good, write_dictionary(short, lines[:-3]), files["fast"],
                  f"{6 + len(lines) - 3} entries .* {6 + len(lines)} rows: not this checkpoint's dictionary"))
    garbled = tmp_path / "garbled.txt"
    garbled.write_text("the 3\nnocount\n", encoding="utf-8")
    cases.append(("dict not fairseq's", good, garbled, files["fast"], "line 2: 'nocount' is not"))
    codes = tmp_path / "bad.codes"
    codes.write_text("a b c d\n", encoding="utf-8")
    cases.append(("codes not BPE", good, good_dict, codes, "line 1: 'a b c d' is neither"))
    hf = tmp_path / "hf.bin"
    torch.save({"bert.embeddings.word_embeddings.weight": torch.zeros(3, 2)}, hf)
    cases.append(("a state dict", hf, good_dict, files["fast"], "not a fairseq checkpoint"))
    other = OrderedDict(state)
    other["encoder.layers.0.self_attn.bias_k"] = torch.zeros(1, 1, D)
    cases.append(("unknown weight", save_fairseq(tmp_path / "bias_k.pt", fairseq_args(ARCHS["macaron"]), other,
                                                 monkeypatch), good_dict, files["fast"],
                  "weights we do not map: encoder.layers.0.self_attn.bias_k"))
    cases.append(("heads that do not divide d", save_fairseq(
        tmp_path / "heads.pt", fairseq_args(ARCHS["macaron"], encoder_attention_heads=5), state, monkeypatch),
        good_dict, files["fast"], "do not fit together .*not divisible by n_heads=5"))
    return cases


def test_bad_input_is_one_clear_line(tmp_path, monkeypatch, files):
    for what, ckpt, dictionary, codes, words in bad_inputs(tmp_path, monkeypatch, files):
        with pytest.raises(CheckpointError, match=words) as e:
            import_fairseq(ckpt, dictionary, codes, tmp_path / "out")
        assert "\n" not in str(e.value), what
        assert not (tmp_path / "out").exists(), what


def test_cli_imports_and_reports_bad_input_in_one_line(tmp_path, monkeypatch, files, capsys):
    from macaron.__main__ import main

    lines = dictionary_lines(files["fast"])
    ckpt = save_fairseq(tmp_path / "m.pt", fairseq_args(ARCHS["baseline"]), fairseq_state(6 + len(lines), False, 3),
                        monkeypatch)
    dictionary = write_dictionary(tmp_path, lines)
    out = tmp_path / "paper-transformer"
    assert main(["import-fairseq", str(ckpt), "--dict", str(dictionary), "--bpe-codes", str(files["fast"]),
                 "--out", str(out)]) == 0
    assert "paper-transformer" in capsys.readouterr().out
    assert main(["trace", "--model", str(out), "the bank of the [MASK] ."]) == 0
    assert "top [MASK] guesses" in capsys.readouterr().out
    assert main(["import-fairseq", str(ckpt), "--dict", str(tmp_path / "none.txt"), "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "dictionary file is missing" in err and err.count("\n") == 1
    own = tmp_path / "mine"
    own.mkdir()
    (own / "notes.txt").write_text("mine")
    assert main(["import-fairseq", str(ckpt), "--dict", str(dictionary), "--out", str(own)]) == 2
    assert "not a folder this import wrote" in capsys.readouterr().err and (own / "notes.txt").exists()
    assert main(["import-fairseq", str(ckpt), "--dict", str(dictionary), "--out", str(out)]) == 0  # again: replaced


def test_an_import_without_out_is_listed_where_fetch_writes(tmp_path, monkeypatch, files, capsys):
    """`import-fairseq CHECKPOINT --dict DICT`, as the Translate page advises: into the models cache under the
    checkpoint file's name (--name to choose), where `list`, `trace --model NAME` and the explorer find it; a model
    imported there under that name already is kept."""
    from macaron.__main__ import main

    monkeypatch.setenv("MACARON_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    lines = dictionary_lines(files["fast"])
    ckpt = save_fairseq(tmp_path / "checkpoint_best.pt", fairseq_args(ARCHS["macaron"]),
                        fairseq_state(6 + len(lines), True, 3), monkeypatch)
    dictionary = write_dictionary(tmp_path, lines)
    assert main(["import-fairseq", str(ckpt), "--dict", str(dictionary)]) == 0
    assert main(["import-fairseq", str(ckpt), "--dict", str(dictionary), "--name", "paper-mine"]) == 0
    capsys.readouterr()
    assert main(["list"]) == 0
    listed = capsys.readouterr().out
    for name in ("checkpoint_best", "paper-mine"):
        assert f"{name}  ({tmp_path / 'cache' / 'models' / name})" in listed
    assert main(["trace", "--model", "paper-mine", "the bank of the [MASK] ."]) == 0
    assert macaron.load("paper-mine", device="cpu").config.name == "paper-mine"
    assert main(["import-fairseq", str(ckpt), "--dict", str(dictionary), "--name", "../elsewhere"]) == 2
    assert "--name '../elsewhere'" in capsys.readouterr().err and not (tmp_path / "cache" / "elsewhere").exists()
    assert main(["import-fairseq", str(ckpt), "--dict", str(dictionary)]) == 2  # another checkpoint_best.pt, say
    assert "imported already; give another --name" in capsys.readouterr().err


def test_read_checkpoint_reads_what_fairseq_wrote(tmp_path, monkeypatch, files):
    state = fairseq_state(40, True, seed=1)
    ckpt = read_checkpoint(save_fairseq(tmp_path / "m.pt", fairseq_args(ARCHS["macaron"]), state, monkeypatch))
    assert ckpt["args"].arch == "transformer_bert_base_macaron" and ckpt["args"].lr == [0.0003]
    meters = ckpt["extra_state"]["train_meters"]
    assert meters["train_loss"].avg == 2.5 and meters["train_wall"].n == 1234  # plain records, no methods
    assert type(meters["wps"]).__name__ == "TimeMeter" and not hasattr(meters["wps"], "update")
    assert torch.equal(ckpt["model"]["encoder.layers.1.fc1.weight"], state["encoder.layers.1.fc1.weight"])


def test_every_page_and_the_lesson_open_imported_models(tmp_path, monkeypatch, files):
    """The explorer's pages (AppTest) and the offline lesson on an imported baseline and Macaron; the Macaron
    imported without codes, so its page says its reading is approximate."""
    from streamlit.testing.v1 import AppTest

    from macaron.plot.lesson import lesson_html

    models = tmp_path / "models"
    a = imported(tmp_path, "baseline", monkeypatch, files, out=models / "fairseq-transformer")
    b = imported(tmp_path, "macaron", monkeypatch, files, codes=None, out=models / "fairseq-macaron")
    monkeypatch.setenv("MACARON_MODELS_DIR", str(models))
    monkeypatch.delenv("MACARON_MODELS", raising=False)
    at = AppTest.from_file(str(Path(__file__).resolve().parent.parent / "app" / "main.py"), default_timeout=120)
    at.query_params.update({"m": "fairseq-macaron"})
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert "Approximate reading" in " ".join(str(e.value) for e in at.info)
    assert at.get("plotly_chart")
    for page in ("views/compare.py", "views/dynamics.py", "views/lab.py"):
        at.switch_page(page)
        at.run()
        assert not at.exception, (page, [e.message for e in at.exception])
    html = lesson_html([str(a), str(b)], str(a), device="cpu")
    assert html.startswith("<!DOCTYPE html>") or "<html" in html[:200]
    assert "fairseq-macaron" in html
