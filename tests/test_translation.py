"""The paper's translation models (fairseq 0.6, Lu et al. 2019, translation/): import, computation, search, reading.

The checkpoints here are written as fairseq 0.6's train.py saves a translation model (its args Namespace with the
translation task's and the architecture's field names, the model's state under fairseq's key names, the optimizer's
history, extra_state with the trainer's meters), in the legacy pickle format torch 1.x wrote; small (2 layers × 32,
4 heads, vocabularies under 60) with random weights, for every architecture registered for 'transformer' in
translation/fairseq/models/transformer.py. Each is checked against an independent recomputation written here in
plain torch from the paper's code (TransformerEncoder(Layer), TransformerDecoder(Layer), MultiheadAttention,
SinusoidalPositionalEmbedding, utils.make_positions) and its generator (sequence_generator.py, search.BeamSearch),
never by calling our model; the reading of text against sacremoses and subword-nmt as the data scripts run them.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import types
from collections import Counter, OrderedDict
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import macaron
from macaron import CheckpointError, InputError
from macaron.config import ModelConfig
from macaron.formats.fairseq import TRANSLATION
from macaron.formats.fairseq_import import import_fairseq
from macaron.network.model import Model
from macaron.network.operators import SourceSystem
from macaron.schemes import CONVECTION, CROSS, DIFFUSION, SCHEMES, Sub, with_cross

D, LAYERS, HEADS, FFN, MAX_POS = 32, 2, 4, 48, 40
PAD, EOS, UNK = 1, 2, 3
TOL = 1e-4
# (Macaron, pre-LN) of every architecture registered for 'transformer' in the paper's translation/fairseq/models/
# transformer.py, read off its functions: _v2 and t2t set encoder/decoder_normalize_before, *_macaron set macaron
ARCHS = {
    "transformer": (False, False), "transformer_iwslt_de_en": (False, False),
    "transformer_iwslt_de_en_macaron": (True, False), "transformer_iwslt_de_en_v2": (False, True),
    "transformer_iwslt_de_en_macaron_v2": (True, True), "transformer_wmt_en_de": (False, False),
    "transformer_wmt_en_de_macaron": (True, False), "transformer_wmt_en_de_v2": (False, True),
    "transformer_wmt_en_de_macaron_v2": (True, True), "transformer_vaswani_wmt_en_de_big": (False, False),
    "transformer_vaswani_wmt_en_fr_big": (False, False), "transformer_wmt_en_de_big": (False, False),
    "transformer_wmt_en_de_big_t2t": (False, True), "transformer_wmt_en_de_big_t2t_macaron": (True, True),
}
GERMAN = ["das haus ist klein .", "das haus ist sehr groß .", "ich habe ein kleines haus , oder ?",
          "die kinder spielen im garten .", "er sagt : das ist gut & schön ."]
ENGLISH = ["the house is small .", "the house is very big .", "i have a small house , right ?",
           "the children play in the garden .", "he says : it's good & nice ."]
SOURCES = [[10, 11, 12, 13, EOS], [14, 15, 16, EOS], [12, 17, 18, 19, 20, 21, EOS], [22, 23, EOS], [9, 9, 9, EOS],
           [30, 5, 28, 7, 19, EOS]]


# ---- the reading of text, as prepare-iwslt14.sh prepares it: Moses (escaped), lower case, subword-nmt BPE -------
def moses_words(text: str, lang: str) -> list[str]:
    from sacremoses import MosesTokenizer
    line = " ".join(text.replace("\u2019", "'").split())
    return MosesTokenizer(lang=lang).tokenize(line, escape=True, return_str=True).lower().split()


def bpe(codes: Path):
    from subword_nmt.apply_bpe import BPE
    with open(codes, encoding="utf-8") as f:
        return BPE(f)


def pieces(text: str, lang: str, codes: Path) -> list[str]:
    return bpe(codes).segment_tokens(moses_words(text, lang))


def dictionary_lines(texts: list[tuple[str, str]], codes: Path) -> list[str]:
    """dict.txt as preprocess.py writes it: the pieces most frequent first, padded to a multiple of 8 entries (with
    the 4 specials) by madeupword lines (Dictionary.finalize, padding_factor 8)."""
    counts = Counter(p for text, lang in texts for p in pieces(text, lang, codes))
    lines = [f"{s} {n}" for s, n in counts.most_common()]
    lines += [f"madeupword{i:04d} 0" for i in range(-(len(lines) + 4) % 8)]
    return lines


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    """BPE codes learned (subword-nmt, 0.2) on the joined corpus, and dictionaries: joined, German's, English's."""
    from subword_nmt.learn_bpe import learn_bpe

    folder = tmp_path_factory.mktemp("release")
    corpus = folder / "train.en-de"
    corpus.write_text("".join(" ".join(moses_words(t, lang)) + "\n" for ts, lang in ((GERMAN, "de"), (ENGLISH, "en"))
                              for t in ts), encoding="utf-8")
    codes = folder / "code"
    with open(corpus, encoding="utf-8") as fin, open(codes, "w", encoding="utf-8") as fout:
        learn_bpe(fin, fout, 10, min_frequency=2)
    de, en = [(t, "de") for t in GERMAN], [(t, "en") for t in ENGLISH]
    out = dict(folder=folder, codes=codes)
    for name, texts in (("joined", de + en), ("de", de), ("en", en)):
        out[name] = folder / f"dict.{name}.txt"
        out[name].write_text("".join(line + "\n" for line in dictionary_lines(texts, codes)), encoding="utf-8")
        assert 4 + len(dictionary_lines(texts, codes)) <= 60
    return out


def symbols(file: Path) -> list[str]:
    """fairseq's Dictionary.load: <Lua heritage>, <pad>, </s>, <unk>, then one symbol a line."""
    return ["<Lua heritage>", "<pad>", "</s>", "<unk>"] + [line.rsplit(" ", 1)[0] for line in
                                                            file.read_text(encoding="utf-8").splitlines()]


# ---- checkpoints as fairseq 0.6's train.py writes them -----------------------------------------------------------
def translation_args(arch: str, full: bool = True, **changes) -> argparse.Namespace:
    """save_state's args: train-iwslt14.sh's (or train-wmt14-base.sh's) command line, the translation task's fields,
    then the architecture's; `full=False` leaves out the fields the architecture's function sets (normalize_before,
    macaron), so that only its name says them."""
    macaron, pre = ARCHS[arch]
    iwslt = "iwslt" in arch
    ffn = FFN // 2 if macaron else FFN
    args = dict(
        arch=arch, task="translation", data=["data-bin/iwslt14.tokenized.de-en.joined/" if iwslt else
                                             "data-bin/wmt14_en_de_joined_dict/"],
        source_lang="de" if iwslt else "en", target_lang="en" if iwslt else "de", seed=1, share_all_embeddings=True,
        optimizer="adam", adam_betas="(0.9, 0.98)", clip_norm=0.0, lr=[0.0015], lr_scheduler="inverse_sqrt",
        warmup_init_lr=1e-07, warmup_updates=8000, min_lr=1e-09, criterion="label_smoothed_cross_entropy",
        label_smoothing=0.1, weight_decay=0.0001, max_tokens=4096, update_freq=[1], ddp_backend="no_c10d",
        dropout=0.3, left_pad_source="True", left_pad_target="False", max_source_positions=MAX_POS,
        max_target_positions=MAX_POS, raw_text=False, encoder_embed_path=None, encoder_embed_dim=D,
        encoder_ffn_embed_dim=ffn, encoder_layers=LAYERS, encoder_attention_heads=HEADS, encoder_learned_pos=False,
        decoder_embed_path=None, decoder_embed_dim=D, decoder_ffn_embed_dim=ffn, decoder_layers=LAYERS,
        decoder_attention_heads=HEADS, decoder_learned_pos=False, attention_dropout=0.1, relu_dropout=0.1,
        adaptive_softmax_cutoff=None, adaptive_softmax_dropout=0, share_decoder_input_output_embed=True,
        no_token_positional_embeddings=False, decoder_output_dim=D, decoder_input_dim=D)
    if full:
        args.update(encoder_normalize_before=pre, decoder_normalize_before=pre)
        if macaron:
            args["macaron"] = True if iwslt else "new"
    args.update(changes)
    return argparse.Namespace(**args)


def translation_state(args, Vs: int, Vt: int, seed: int) -> OrderedDict:
    """A TransformerModel's state_dict(), under its names, with random weights (std 0.3; the norms' gains near 1)."""
    g = torch.Generator().manual_seed(seed)
    macaron, pre = ARCHS[args.arch]

    def w(*shape, std=0.3):
        return torch.randn(*shape, generator=g) * std

    def table(V):
        t = w(V, D, std=D ** -0.5)
        t[PAD] = 0  # Embedding(): the padding row zero
        return t

    def positions(side):
        if getattr(args, f"{side}_learned_pos"):
            t = w(MAX_POS + PAD + 1, D, std=D ** -0.5)
            t[PAD] = 0
            return {f"{side}.embed_positions.weight": t}
        return {f"{side}.embed_positions._float_tensor": torch.tensor([float("nan")])}  # FloatTensor(1)

    def attention(p):
        return {p + "in_proj_weight": w(3 * D, D), p + "in_proj_bias": w(3 * D), p + "out_proj.weight": w(D, D),
                p + "out_proj.bias": w(D)}

    def ffn(p, width):
        return {p + "1.weight": w(width, D), p + "1.bias": w(width), p + "2.weight": w(D, width), p + "2.bias": w(D)}

    def norm(p):
        return {p + ".weight": 1 + w(D), p + ".bias": w(D)}

    s = OrderedDict()
    s["encoder.embed_tokens.weight"] = words = table(Vs)
    s.update(positions("encoder"))
    for i in range(LAYERS):
        p = f"encoder.layers.{i}."
        s.update(attention(p + "self_attn."))
        s.update(ffn(p + "fc", args.encoder_ffn_embed_dim))
        if macaron:
            s.update(ffn(p + "macaron_fc", args.encoder_ffn_embed_dim))
        for n in range(3 if macaron else 2):
            s.update(norm(p + f"layer_norms.{n}"))
    s["encoder.version"] = torch.Tensor([2])
    if pre:
        s.update(norm("encoder.layer_norm"))
    if not args.share_decoder_input_output_embed:
        s["decoder.embed_out"] = w(Vt, D, std=D ** -0.5)
    s["decoder.embed_tokens.weight"] = words if args.share_all_embeddings else table(Vt)  # one Parameter, two names
    s.update(positions("decoder"))
    for i in range(LAYERS):
        p = f"decoder.layers.{i}."
        s.update(attention(p + "self_attn."))
        s.update(norm(p + "self_attn_layer_norm"))
        s.update(attention(p + "encoder_attn."))
        s.update(norm(p + "encoder_attn_layer_norm"))
        s.update(ffn(p + "fc", args.decoder_ffn_embed_dim))
        if macaron:  # sized by encoder_ffn_embed_dim in the paper's code
            s.update(ffn(p + "macaron_fc", args.encoder_ffn_embed_dim))
            s.update(norm(p + "macaron_layer_norm"))
        s.update(norm(p + "final_layer_norm"))
    s["decoder.version"] = torch.Tensor([2])
    if pre:
        s.update(norm("decoder.layer_norm"))
    return s


class AverageMeter:  # fairseq.meters', as the trainer pickles them into extra_state
    def __init__(self):
        self.val, self.avg, self.sum, self.count = 3.1, 3.1, 310.0, 100


def save_fairseq(file: Path, args, state, monkeypatch) -> Path:
    """utils.save_state's dict, pickled by torch.save in the legacy format of torch 1.x."""
    meters = types.ModuleType("fairseq.meters")
    AverageMeter.__module__ = "fairseq.meters"
    meters.AverageMeter = AverageMeter
    monkeypatch.setitem(sys.modules, "fairseq", types.ModuleType("fairseq"))
    monkeypatch.setitem(sys.modules, "fairseq.meters", meters)
    ckpt = {"args": args, "model": state,
            "optimizer_history": [{"criterion_name": "LabelSmoothedCrossEntropyCriterion",
                                   "optimizer_name": "FairseqAdam", "lr_scheduler_state": {"best": 3.9},
                                   "num_updates": 4321}],
            "last_optimizer_state": {"state": {}, "param_groups": [{"lr": 0.0015, "betas": (0.9, 0.98)}]},
            "extra_state": {"best": 3.9, "train_iterator": {"epoch": 40, "iterations_in_epoch": 0},
                            "val_loss": 3.95, "train_meters": OrderedDict(train_loss=AverageMeter())}}
    torch.save(ckpt, file, _use_new_zipfile_serialization=False)
    return file


EMBEDDINGS = {  # how a model's tables are tied: (share_all_embeddings, share_decoder_input_output_embed)
    "joined": (True, True), "tied": (False, True), "own": (False, False)}


def end_early(state: dict, args, factor: float) -> None:
    """The output embedding's </s> row made `factor` × the decoder's last LayerNorm's bias, which every final state
    carries: </s> then ranks high often, so some hypotheses end before the length limit and some at it."""
    last = "decoder.layer_norm" if ARCHS[args.arch][1] else f"decoder.layers.{LAYERS - 1}.final_layer_norm"
    output = state["decoder.embed_tokens.weight" if args.share_decoder_input_output_embed else "decoder.embed_out"]
    output[EOS] = factor * state[last + ".bias"]  # in place: a shared table is one tensor under two names


def write_checkpoint(tmp: Path, arch: str, embeddings: str, release, monkeypatch, full=True, learned=False,
                     seed=5, end=0.0, **changes):
    """(checkpoint, the import's dictionary arguments, args, state) of a random model of `arch` (`end`: end_early's
    factor)."""
    share_all, tied = EMBEDDINGS[embeddings]
    args = translation_args(arch, full, share_all_embeddings=share_all, share_decoder_input_output_embed=tied,
                            encoder_learned_pos=learned, decoder_learned_pos=learned, **changes)
    source, target = ("joined", "joined") if share_all else ("de", "en")
    state = translation_state(args, len(symbols(release[source])), len(symbols(release[target])), seed)
    if end:
        end_early(state, args, end)
    ckpt = save_fairseq(tmp / f"{arch}.pt", args, state, monkeypatch)
    dicts = dict(dictionary=release["joined"]) if share_all else dict(source_dict=release["de"],
                                                                      target_dict=release["en"])
    return ckpt, dicts, args, state


def imported(tmp: Path, arch: str, embeddings: str, release, monkeypatch, codes=True, **kw):
    ckpt, dicts, args, state = write_checkpoint(tmp, arch, embeddings, release, monkeypatch, **kw)
    folder = import_fairseq(ckpt, dicts.pop("dictionary", None), release["codes"] if codes else None,
                            tmp / f"paper-{arch}", **dicts)
    return macaron.load(folder, device="cpu"), args, state, folder


# ---- the independent recomputation, from the paper's code ------------------------------------------------------
class Paper:
    """TransformerModel in eval mode, in float64, one sentence at a time (no padding): the paper's computation read
    off transformer.py, multihead_attention.py and sinusoidal_positional_embedding.py."""

    def __init__(self, state, args):
        self.s = {k: v.double() if v.is_floating_point() else v for k, v in state.items()}
        self.args = args
        self.macaron, self.pre = ARCHS[args.arch]

    def embed(self, side: str, ids: list[int]) -> torch.Tensor:
        s, d = self.s, D
        tokens = torch.tensor(ids)
        positions = PAD + 1 + torch.arange(len(ids))  # make_positions: numbers from padding_idx + 1
        if getattr(self.args, f"{side}_learned_pos"):
            where = s[f"{side}.embed_positions.weight"][positions]
        else:  # get_embedding: [sin | cos], ω_i = 10000^(−i/(half − 1))
            half = d // 2
            freq = torch.exp(torch.arange(half, dtype=torch.double) * -(math.log(10000) / (half - 1)))
            angles = positions.double()[:, None] * freq[None]
            where = torch.cat([torch.sin(angles), torch.cos(angles)], dim=1)
        return math.sqrt(d) * s[f"{side}.embed_tokens.weight"][tokens] + where

    def norm(self, key, x):
        return F.layer_norm(x, (D,), self.s[key + ".weight"], self.s[key + ".bias"], eps=1e-5)

    def attention(self, p, query, key, causal=False):
        """MultiheadAttention.forward: (output, weights [heads, T, S])."""
        W, b = self.s[p + "in_proj_weight"], self.s[p + "in_proj_bias"]
        q = F.linear(query, W[:D], b[:D]) * (D // HEADS) ** -0.5
        k, v = F.linear(key, W[D:2 * D], b[D:2 * D]), F.linear(key, W[2 * D:], b[2 * D:])
        q, k, v = (t.reshape(len(t), HEADS, -1).transpose(0, 1) for t in (q, k, v))
        logits = q @ k.transpose(1, 2)
        if causal:  # buffered_future_mask: -inf above the diagonal
            logits = logits + torch.triu(torch.full((len(query), len(key)), float("-inf"), dtype=torch.double), 1)
        weights = torch.softmax(logits, dim=-1)
        y = (weights @ v).transpose(0, 1).reshape(len(query), D)
        return F.linear(y, self.s[p + "out_proj.weight"], self.s[p + "out_proj.bias"]), weights

    def ffn(self, p, x):
        h = F.relu(F.linear(x, self.s[p + "1.weight"], self.s[p + "1.bias"]))
        return F.linear(h, self.s[p + "2.weight"], self.s[p + "2.bias"])

    def sublayer(self, x, norm_key, move, factor=1.0):
        """residual → maybe_layer_norm(before) → op → residual + factor·op → maybe_layer_norm(after)."""
        h = self.norm(norm_key, x) if self.pre else x
        x = x + factor * move(h)
        return x if self.pre else self.norm(norm_key, x)

    def encoder(self, ids) -> tuple[list[torch.Tensor], torch.Tensor]:
        """(the state after the embedding and after every sub-layer, encoder_out [S, d])."""
        x = self.embed("encoder", ids)
        out = [x]
        half = 0.5 if self.macaron else 1.0
        for i in range(self.args.encoder_layers):
            p = f"encoder.layers.{i}."
            if self.macaron:
                out.append(x := self.sublayer(x, p + "layer_norms.2", lambda h: self.ffn(p + "macaron_fc", h), half))
            out.append(x := self.sublayer(x, p + "layer_norms.0", lambda h: self.attention(p + "self_attn.", h, h)[0]))
            out.append(x := self.sublayer(x, p + "layer_norms.1", lambda h: self.ffn(p + "fc", h), half))
        return out, (self.norm("encoder.layer_norm", x) if self.pre else x)

    def decoder(self, encoder_out, prev: list[int]):
        """(states after the embedding and every sub-layer, cross-attention weights of each layer, logits [T, V])."""
        x = self.embed("decoder", prev)
        out, crosses = [x], []
        half = 0.5 if self.macaron else 1.0
        for i in range(self.args.decoder_layers):
            p = f"decoder.layers.{i}."
            if self.macaron:
                out.append(x := self.sublayer(x, p + "macaron_layer_norm", lambda h: self.ffn(p + "macaron_fc", h),
                                              half))
            out.append(x := self.sublayer(x, p + "self_attn_layer_norm",
                                          lambda h: self.attention(p + "self_attn.", h, h, causal=True)[0]))

            def cross(h, p=p):
                y, weights = self.attention(p + "encoder_attn.", h, encoder_out)
                crosses.append(weights)
                return y
            out.append(x := self.sublayer(x, p + "encoder_attn_layer_norm", cross))
            out.append(x := self.sublayer(x, p + "final_layer_norm", lambda h: self.ffn(p + "fc", h), half))
        if self.pre:
            x = self.norm("decoder.layer_norm", x)
        output = self.s["decoder.embed_tokens.weight"] if self.args.share_decoder_input_output_embed else \
            self.s["decoder.embed_out"]
        return out, crosses, F.linear(x, output)

    def lprobs(self, encoder_out, prefixes: torch.Tensor) -> torch.Tensor:
        """get_normalized_probs(log_probs=True) of the last position of each prefix: [n, V]."""
        return torch.stack([F.log_softmax(self.decoder(encoder_out, row.tolist())[2][-1], dim=-1)
                            for row in prefixes])

    def greedy(self, source: list[int], maxlen: int) -> list[int]:
        """The argmax word each step, <pad> never, </s> not first (min length 1); </s> forced after maxlen words."""
        enc = self.encoder(source)[1]
        out = []
        while len(out) < maxlen:
            lp = self.lprobs(enc, torch.tensor([[EOS] + out]))[0]
            lp[PAD] = float("-inf")
            if not out:
                lp[EOS] = float("-inf")
            out.append(int(lp.argmax()))
            if out[-1] == EOS:
                return out
        return out + [EOS]

    def beam(self, source: list[int], beam_size: int, maxlen: int, lenpen: float = 1.0, minlen: int = 1):
        """SequenceGenerator._generate for bsz = 1, written as its buffers run (stop_early, normalize_scores): the
        finalized hypotheses, best first, as (tokens, score)."""
        enc = self.encoder(source)[1]
        V = self.s["decoder.embed_tokens.weight"].shape[0]
        beam_size = min(beam_size, V - 1)
        tokens = torch.full((beam_size, maxlen + 2), PAD)
        tokens[:, 0] = EOS
        scores = torch.zeros(beam_size, maxlen + 1, dtype=torch.double)
        finalized, cand_size = [], 2 * beam_size

        def finalize_hypos(step, bbsz_idx, eos_scores):
            tokens_clone = tokens.index_select(0, bbsz_idx)[:, 1:step + 2].clone()
            tokens_clone[:, step] = EOS
            for i, score in enumerate((eos_scores / (step + 1) ** lenpen).tolist()):
                if len(finalized) < beam_size:
                    finalized.append((tokens_clone[i].tolist(), score))

        for step in range(maxlen + 1):
            lprobs = self.lprobs(enc, tokens[:, :step + 1])
            lprobs[:, PAD] = float("-inf")
            if step >= maxlen:
                lprobs += scores[:, step - 1].unsqueeze(-1)
                eos_scores, eos_bbsz_idx = torch.sort(lprobs[:, EOS], descending=True)
                finalize_hypos(step, eos_bbsz_idx, eos_scores)
                break
            if step == 0:  # BeamSearch.step: every hypothesis alike, the first beam's only
                lp = lprobs[::beam_size]
            else:
                lp = lprobs + scores[:, step - 1].unsqueeze(-1)
            flat = lp.reshape(-1)
            cand_scores, cand_idx = torch.topk(flat, k=min(cand_size, flat.numel() - 1))
            cand_beams, cand_indices = cand_idx // V, cand_idx % V
            eos_mask = cand_indices.eq(EOS)
            if step >= minlen:
                eos_bbsz_idx = torch.masked_select(cand_beams[:beam_size], eos_mask[:beam_size])
                if eos_bbsz_idx.numel() > 0:
                    finalize_hypos(step, eos_bbsz_idx, torch.masked_select(cand_scores[:beam_size],
                                                                           eos_mask[:beam_size]))
                    if len(finalized) == beam_size:
                        break
            active_mask = eos_mask.long() * cand_size + torch.arange(len(cand_indices))
            _, active_hypos = torch.topk(active_mask, k=beam_size, largest=False)
            active_bbsz_idx = cand_beams[active_hypos]
            tokens_buf, scores_buf = tokens.clone(), scores.clone()
            tokens_buf[:, :step + 1] = tokens[active_bbsz_idx, :step + 1]
            tokens_buf[:, step + 1] = cand_indices[active_hypos]
            if step > 0:
                scores_buf[:, :step] = scores[active_bbsz_idx, :step]
            scores_buf[:, step] = cand_scores[active_hypos]
            tokens, scores = tokens_buf, scores_buf
        return sorted(finalized, key=lambda h: h[1], reverse=True)


def err(ours, theirs) -> float:
    """The largest difference, relative to the larger of 1 and the reference's largest magnitude."""
    ours = torch.as_tensor(ours).double()
    return float((ours - theirs).abs().max()) / max(1.0, float(theirs.abs().max()))


# ---- tests: the scheme registry --------------------------------------------------------------------------------
def test_a_decoder_layer_puts_cross_attention_after_each_self_attention():
    assert with_cross(SCHEMES["strang"].substeps) == (Sub(CONVECTION, 0.5), Sub(DIFFUSION, 1.0), Sub(CROSS, 1.0),
                                                      Sub(CONVECTION, 0.5))
    assert with_cross(SCHEMES["lie-trotter"].substeps) == (Sub(DIFFUSION, 1.0), Sub(CROSS, 1.0), Sub(CONVECTION, 1.0))
    for scheme in SCHEMES.values():  # every scheme: as many cross sub-steps as attentions, each right after one
        subs = with_cross(scheme.substeps)
        assert [s for s in subs if s.kind != CROSS] == list(scheme.substeps)
        assert all(subs[k - 1].kind in (DIFFUSION, "full") for k, s in enumerate(subs) if s.kind == CROSS)
    config = ModelConfig(scheme="macaron", d_model=32, n_heads=4, ffn_total=64, causal=True, cross_attention=True)
    assert config.substeps == with_cross(SCHEMES["strang"].substeps) and config.ffn_inner == 32  # one FFN budget
    old = ModelConfig(scheme="macaron", d_model=32, n_heads=4, ffn_total=64).to_dict()
    for field in ("cross_attention", "embedding_norm"):  # a config.json written before them reads as before
        del old[field]
    read = ModelConfig.from_dict(old)
    assert read.substeps == SCHEMES["strang"].substeps and read.embedding_norm and not read.cross_attention


def test_cross_attention_reads_the_source_and_never_its_padding():
    torch.manual_seed(0)
    config = ModelConfig(scheme="macaron", d_model=D, n_layers=LAYERS, n_heads=HEADS, ffn_total=2 * FFN, dropout=0.0,
                         vocab_size=40, max_len=20, mlm_head=False, causal=True, cross_attention=True, lm_head=True)
    decoder = Model(config).eval()
    source = torch.randn(1, 5, D)
    mask = torch.tensor([[True] * 5 + [False] * 3])
    padded = SourceSystem(torch.cat([source, 10 * torch.randn(1, 3, D)], dim=1), mask)
    ids = torch.tensor([[EOS, 7, 9, 11]])
    record: list = []
    with torch.no_grad():
        alone = decoder(ids, source=SourceSystem(source, None))
        assert torch.allclose(decoder(ids, source=padded), alone, atol=1e-5)  # SDPA's path
        assert torch.allclose(decoder(ids, None, record, source=padded), alone, atol=1e-5)  # the recorded path
        flipped = decoder(ids, source=SourceSystem(source.flip(1), None))
        other = decoder(ids, source=SourceSystem(torch.randn(1, 5, D), None))
    assert torch.allclose(flipped, alone, atol=1e-5)  # a field of the source's particles: their order is in them
    assert float((other - alone).abs().max()) > 1e-4  # other particles pull the target's elsewhere
    cross = [r.mixing for r in record[1:] if r.mixing is not None and r.mixing.shape[-1] == 8]
    assert len(cross) == 2 and all(float(m[..., 5:].abs().max()) == 0 for m in cross)  # one per layer
    with pytest.raises(ValueError, match="source"):
        decoder(ids)


# ---- tests: the computation ------------------------------------------------------------------------------------
CASES = [  # (architecture, embeddings, args with the architecture's own fields, learned positions)
    ("transformer_iwslt_de_en_macaron_v2", "joined", True, False),
    ("transformer_iwslt_de_en_macaron_v2", "own", True, False),
    ("transformer_iwslt_de_en_v2", "joined", True, False),
    ("transformer_iwslt_de_en_v2", "own", True, False),
    ("transformer_iwslt_de_en", "joined", True, False),
    ("transformer_iwslt_de_en", "own", True, False),
    ("transformer_iwslt_de_en_macaron", "joined", True, False),
    ("transformer_iwslt_de_en_macaron", "tied", True, False),
    ("transformer", "joined", False, False),
    ("transformer_wmt_en_de", "tied", False, False),
    ("transformer_wmt_en_de_macaron", "joined", False, True),
    ("transformer_wmt_en_de_v2", "own", False, False),
    ("transformer_wmt_en_de_macaron_v2", "tied", True, False),
    ("transformer_vaswani_wmt_en_de_big", "own", False, False),
    ("transformer_vaswani_wmt_en_fr_big", "joined", False, False),
    ("transformer_wmt_en_de_big", "tied", True, True),
    ("transformer_wmt_en_de_big_t2t", "joined", False, False),
    ("transformer_wmt_en_de_big_t2t_macaron", "own", False, False),
]


def test_every_registered_architecture_is_a_case():
    assert set(ARCHS) == set(TRANSLATION) == {arch for arch, *_ in CASES}


@pytest.mark.parametrize("arch,embeddings,full,learned", CASES)
def test_import_matches_the_papers_computation(tmp_path, monkeypatch, release, arch, embeddings, full, learned):
    model, args, state, _ = imported(tmp_path, arch, embeddings, release, monkeypatch, full=full, learned=learned)
    macaron_layer, pre = ARCHS[arch]
    c = model.config
    expected = ("macaron" if macaron_layer else "transformer", "pre" if pre else "post")
    assert (c.encoder.scheme, c.encoder.norm) == (c.decoder.scheme, c.decoder.norm) == expected
    assert c.shared_embeddings == (embeddings == "joined") and c.decoder.lm_head_tied == (embeddings != "own")
    paper = Paper(state, args)
    for source, target in ((SOURCES[0], [14, 15, 16, EOS]), (SOURCES[2], [9, 12, 5, 7, 30, 11, EOS])):
        states, encoder_out = paper.encoder(source)
        result = model.translate(source, beam=1, max_tokens=6)
        assert len(result.source.states) == len(states)  # every sub-step recorded
        for k, theirs in enumerate(states):
            assert err(result.source.states[k], theirs) < TOL, (arch, "encoder", result.source.labels[k])
        assert err(result.source.final, encoder_out) < TOL
        dec_states, crosses, logits = paper.decoder(encoder_out, [EOS, *target])
        with torch.no_grad():
            ours = model.target_logits(source, target)
        assert ours.shape == (len(target) + 1, c.decoder.vocab_size)
        assert err(ours, logits) < TOL, (arch, "logits")
        traced = model.trace_target(source, target)
        for k, theirs in enumerate(dec_states):
            assert err(traced.states[k], theirs) < TOL, (arch, "decoder", traced.labels[k])
        mixing = [m for m, s in zip(traced.mixing, traced.steps) if s.kind == CROSS]
        assert len(mixing) == LAYERS and all(err(m, w) < TOL for m, w in zip(mixing, crosses))


@pytest.mark.parametrize("arch,embeddings,end", [("transformer_iwslt_de_en_macaron_v2", "joined", 0.5),
                                                 ("transformer_iwslt_de_en_v2", "own", 1.0),
                                                 ("transformer_iwslt_de_en_macaron", "tied", 0.5)])
def test_greedy_and_beam_search_are_fairseqs(tmp_path, monkeypatch, release, arch, embeddings, end):
    model, args, state, _ = imported(tmp_path, arch, embeddings, release, monkeypatch, end=end)
    paper = Paper(state, args)
    differ, ended = 0, set()
    for source in SOURCES:
        for maxlen in (3, 12):
            greedy = model.translate(source, beam=1, max_tokens=maxlen)
            assert greedy.target_ids == paper.greedy(source, maxlen), (source, maxlen)
            assert greedy.target_ids[-1] == EOS and len(greedy.target_ids) <= maxlen + 1 and PAD not in \
                greedy.target_ids and greedy.target_ids[0] != EOS
            beam = model.translate(source, beam=5, max_tokens=maxlen)
            reference = paper.beam(source, 5, maxlen)
            assert beam.target_ids == reference[0][0], (source, maxlen)
            assert beam.score == pytest.approx(reference[0][1], abs=1e-4)
            differ += beam.target_ids != greedy.target_ids
            ended |= {"before the limit" if len(t) <= maxlen else "at the limit" for t in (greedy.target_ids,
                                                                                        beam.target_ids)}
    assert differ, "no case where beam 5 and greedy differ: the comparison would not tell them apart"
    assert ended == {"before the limit", "at the limit"}  # both ways a search ends were taken


def test_a_translation_is_both_systems_traced(tmp_path, monkeypatch, release):
    model, args, state, folder = imported(tmp_path, "transformer_iwslt_de_en_macaron_v2", "joined", release,
                                          monkeypatch)
    result = model.translate("Das Haus ist klein.", beam=5)
    source_ids = model.tokenize("Das Haus ist klein.")[0]
    assert result.source.token_ids == source_ids and source_ids[-1] == EOS
    assert result.target.token_ids == [EOS, *result.target_ids] and result.target_ids[-1] == EOS
    assert result.source.meta["system"] == "source" and result.target.meta["system"] == "target"
    assert result.target.causal and not result.source.causal
    S, T = len(source_ids), len(result.target.token_ids)
    kinds = [s.kind for s in result.target.steps]
    assert kinds == ["convection", "diffusion", "cross", "convection"] * LAYERS
    assert [s.label for s in result.target.steps][2] == "layer 1 · external field (cross-attention)"
    for m, step in zip(result.target.mixing, result.target.steps):
        if step.kind == CROSS:  # target rows, source columns, each row a distribution over the source
            assert m.shape == (HEADS, T, S) and torch.allclose(torch.as_tensor(m).sum(-1), torch.ones(HEADS, T),
                                                               atol=1e-5)
        elif step.kind == DIFFUSION:  # the decoder's own: causal, T × T
            assert m.shape == (HEADS, T, T) and float(torch.as_tensor(m).triu(1).abs().max()) == 0
    # the traced target's final states read by the head are target_logits
    with torch.no_grad():
        recomputed = model.decoder.head(torch.as_tensor(result.target.final))
        logits = model.target_logits(source_ids, result.target_ids)
    assert float((recomputed - logits).abs().max()) < 1e-5
    # row k depends on target_ids[:k] only (teacher forcing, causal)
    changed = [t if k == 0 else 7 if t != 7 else 8 for k, t in enumerate(result.target_ids)]
    with torch.no_grad():
        other = model.target_logits(source_ids, changed)
    assert torch.allclose(other[:2], logits[:2], atol=1e-6) and not torch.allclose(other[2:], logits[2:])
    # the text: the words' pieces joined (BPE removed) and detokenised in the target's language
    from sacremoses import MosesDetokenizer
    words = " ".join(symbols(release["joined"])[i] for i in result.target_ids if i != EOS)
    assert result.text == MosesDetokenizer(lang="en").detokenize((words + " ").replace("@@ ", "").split())
    assert result.source.text == "Das Haus ist klein." and result.target.text == result.text


def test_text_reads_as_the_data_scripts_prepared_it(tmp_path, monkeypatch, release):
    model, *_ = imported(tmp_path, "transformer_iwslt_de_en_v2", "own", release, monkeypatch)
    de, en = symbols(release["de"]), symbols(release["en"])
    for text in ("Das Haus ist sehr groß!", "Er sagt: das ist gut & schön\u2019s", "Die KINDER spielen (im Garten)."):
        expected = [de.index(p) if p in de else UNK for p in pieces(text, "de", release["codes"])] + [EOS]
        assert model.tokenize(text)[0] == expected, text
    assert model.tokenizer.source.words("Gut & schön") == ["gut", "&amp;", "schön"]  # escaped: tokenizer.perl's default
    ids = [en.index(p) for p in pieces("it's good & nice .", "en", release["codes"])] + [EOS]
    assert model.tokenizer.target.decode(ids) == "it's good & nice."  # unescaped, detokenised
    assert model.decoder.tokenizer.id_to_token(EOS) == "</s>" and model.encoder.tokenizer.id_to_token(UNK) == "[UNK]"


def test_the_folder_is_ours_and_says_what_it_is(tmp_path, monkeypatch, release):
    model, args, state, folder = imported(tmp_path, "transformer_iwslt_de_en_macaron_v2", "joined", release,
                                          monkeypatch)
    assert sorted(p.name for p in folder.iterdir()) == ["README.md", "config.json", "converted.json",
                                                        "model.safetensors", "tokenizer.json"]
    config = json.loads((folder / "config.json").read_text())
    assert config["shared_embeddings"] and config["source_lang"] == "de" and config["target_lang"] == "en"
    assert config["decoder"]["cross_attention"] and config["decoder"]["causal"] and not config["encoder"]["causal"]
    record = json.loads((folder / "converted.json").read_text())
    assert record["arch"] == "transformer_iwslt_de_en_macaron_v2" and record["num_updates"] == 4321
    assert record["recipe"] == "iwslt14" and record["reading"] == "the paper's"
    card = (folder / "README.md").read_text()
    for words in ("transformer_iwslt_de_en_macaron_v2", "de → en", "cross-attention", "lower case",
                  "subword-nmt BPE", "joined", "beam 5", "√d", "pre-LN", "code"):
        assert words in card, words
    from safetensors.torch import load_file
    stored = load_file(folder / "model.safetensors")
    assert "decoder.token_embedding.weight" not in stored and "encoder.token_embedding.weight" in stored  # once
    again = macaron.load(folder, device="cpu")
    assert again.decoder.token_embedding is again.encoder.token_embedding
    post, *_ = imported(tmp_path, "transformer_iwslt_de_en", "own", release, monkeypatch, codes=False)
    post_card = (tmp_path / "paper-transformer_iwslt_de_en" / "README.md").read_text()
    assert "post-LN" in post_card and "embedding_norm" in post_card and "approximate" in post_card.lower()
    assert "Approximate reading" in post.translate("das haus").source.meta["reading"]
    assert post.encoder.config.embedding_norm is False and isinstance(post.encoder.embed_norm, torch.nn.Identity)


# ---- tests: bad input is one clear message ----------------------------------------------------------------------
def test_bad_input_is_one_clear_message(tmp_path, monkeypatch, release):
    model, *_ = imported(tmp_path, "transformer_iwslt_de_en_v2", "joined", release, monkeypatch)
    long_text = " ".join(["haus"] * (MAX_POS + 5))
    for bad, says in (("", "empty"), ("   ", "empty"), ("\u0007", "no readable tokens"), ([], "nothing to translate"),
                      (None, "nothing to translate"), ([EOS], "no readable tokens"), ([10, 11], "end with </s>"),
                      ([10, PAD, 11, EOS], "no <pad>"), ([10, 999, EOS], "outside the vocabulary"),
                      (long_text, f"more than the {MAX_POS} positions"), ([10] * MAX_POS + [EOS], "exceed")):
        with pytest.raises(InputError, match=says) as e:
            model.translate(bad)
        assert "\n" not in str(e.value), bad
    with pytest.raises(InputError, match="beam"):
        model.translate("das haus", beam=0)
    with pytest.raises(InputError, match="positions"):
        model.target_logits(SOURCES[0], [10] * MAX_POS)


def refused(tmp_path, monkeypatch, release, arch="transformer_iwslt_de_en_v2", embeddings="joined", dicts=None,
            **changes) -> str:
    ckpt, given, args, state = write_checkpoint(tmp_path, arch, embeddings, release, monkeypatch, **changes)
    given = dicts if dicts is not None else given
    with pytest.raises(CheckpointError) as e:
        import_fairseq(ckpt, given.pop("dictionary", None), release["codes"], tmp_path / "out", **given)
    assert "\n" not in str(e.value) and not (tmp_path / "out").exists()
    return str(e.value)


def test_what_is_not_mapped_is_refused_by_name(tmp_path, monkeypatch, release):
    for arch, says in (("transformer_lm", "a language model"), ("lstm_wiseman_iwslt_de_en", "LSTM"),
                       ("fconv_iwslt_de_en", "convolutions")):
        args = translation_args("transformer_iwslt_de_en_v2")
        args.arch = arch
        state = translation_state(translation_args("transformer_iwslt_de_en_v2"), 40, 40, 1)
        ckpt = save_fairseq(tmp_path / "other.pt", args, state, monkeypatch)
        with pytest.raises(CheckpointError) as e:
            import_fairseq(ckpt, release["joined"], None, tmp_path / "out")
        msg = str(e.value)
        assert f"'{arch}'" in msg and says in msg and "\n" not in msg
        assert all(name in msg for name in TRANSLATION) and "transformer_bert_base_macaron" in msg  # one list
    assert "adaptive softmax" in refused(tmp_path, monkeypatch, release, adaptive_softmax_cutoff="1000,2000")
    assert "decoder_input_dim" in refused(tmp_path, monkeypatch, release, decoder_input_dim=16)
    assert "halves differ" in refused(tmp_path, monkeypatch, release, arch="transformer_iwslt_de_en_macaron_v2",
                                      decoder_ffn_embed_dim=FFN)
    lines = release["joined"].read_text(encoding="utf-8").splitlines()
    other = tmp_path / "dict.other.txt"  # as many entries as the joined dictionary, one of them another
    other.write_text("\n".join(["zzz 1"] + lines[1:]) + "\n", encoding="utf-8")
    assert "joined dictionary" in refused(tmp_path, monkeypatch, release,
                                          dicts=dict(source_dict=release["joined"], target_dict=other))
    short = tmp_path / "dict.short.txt"
    short.write_text("\n".join(release["en"].read_text(encoding="utf-8").splitlines()[:-3]) + "\n", encoding="utf-8")
    assert "not this checkpoint's dictionary" in refused(tmp_path, monkeypatch, release, embeddings="own",
                                                         dicts=dict(source_dict=release["de"], target_dict=short))
    assert "--source-dict and --target-dict" in refused(tmp_path, monkeypatch, release, dicts={})
    assert "give --dict" in refused(tmp_path, monkeypatch, release, embeddings="own",
                                    dicts=dict(source_dict=release["de"]))


def test_cli_imports_a_translation_model_and_translates(tmp_path, monkeypatch, release, capsys):
    from macaron.__main__ import main

    ckpt, dicts, *_ = write_checkpoint(tmp_path, "transformer_iwslt_de_en_v2", "own", release, monkeypatch)
    out = tmp_path / "paper-small"
    assert main(["import-fairseq", str(ckpt), "--source-dict", str(dicts["source_dict"]), "--target-dict",
                 str(dicts["target_dict"]), "--bpe-codes", str(release["codes"]), "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert "paper-small" in said and "de → en" in said
    assert main(["trace", "--model", str(out), "das haus ist klein .", "--json", str(tmp_path / "t.json")]) == 0
    said = capsys.readouterr().out
    assert "external field (cross-attention)" in said and "translation:" in said
    doc = json.loads((tmp_path / "t.json").read_text())
    assert doc["target_ids"][-1] == EOS and doc["source"]["meta"]["system"] == "source"
    assert main(["import-fairseq", str(ckpt), "--source-dict", str(dicts["source_dict"]), "--out",
                 str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "--target-dict" in err and err.count("\n") == 1


def test_an_imported_translation_model_opens_on_the_translate_page_only(tmp_path, monkeypatch, release):
    """The paper's translation model, imported, is offered on the Translate page, which translates with it as the
    library does; the pages of one particle system do not offer it, and a link that names it there says so (never an
    exception); opened as a folder there, it says which page is its own."""
    from streamlit.testing.v1 import AppTest

    models = tmp_path / "models"
    models.mkdir()
    model, _, _, folder = imported(tmp_path, "transformer_iwslt_de_en_macaron_v2", "joined", release, monkeypatch)
    folder = folder.rename(models / "paper-small")
    monkeypatch.setenv("MACARON_MODELS_DIR", str(models))
    monkeypatch.delenv("MACARON_MODELS", raising=False)
    monkeypatch.setenv("MACARON_MODEL_ROOTS", str(tmp_path))
    at = AppTest.from_file(str(Path(__file__).resolve().parent.parent / "app" / "main.py"), default_timeout=120)
    at.query_params.update({"m": "paper-small", "src": GERMAN[0], "beam": "1"})
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert "paper-small" not in at.selectbox(key="p_model").options
    assert "does not offer" in " ".join(str(w.value) for w in at.warning)
    at.selectbox(key="p_model").set_value("Your own model folder…").run()
    at.text_input(key="p_model_folder").set_value(str(folder)).run()
    assert not at.exception
    assert "open it on the **Translate** page" in " ".join(str(e.value) for e in at.error)
    at.switch_page("views/translate.py")
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert "paper-small" in at.selectbox(key="t_model").options
    text = model.translate(GERMAN[0], beam=1).text
    assert f"de → en:** {text}" in " ".join(m.value for m in at.markdown)
