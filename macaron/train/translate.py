"""Translators trained here: encoder–decoders on a folder of sentence pairs that macaron.train.tatoeba prepared (the
race's: Tatoeba Spanish → English), several in lockstep: the translation task (TranslationTask: its data, vocabulary,
batches, dev and test sets, its options and facts) with the one trainer it shares with the masked LM (trainer.py:
checkpoints, resume, cards, bf16, budgets, torchrun and --detach). The languages are the folder's (its stats.json),
not the code's.

    python -m macaron.train.translate --models transformer-es-en,macaron-es-en,transformer-halves-es-en \\
        --data ~/.cache/macaron/tatoeba-es-en --tokens 10e6 --run-dir ~/.cache/macaron/runs/translate/seed-0 --detach

As the paper's translation runs (fairseq): label-smoothed cross-entropy (ε 0.1), Adam (0.9, 0.98) with the inverse
square root schedule, batches of sentences of like length up to --max-tokens padded tokens (source or target, the
longer), the checkpoint chosen on dev (the lowest dev loss, fairseq's checkpoint_best), and test scored as the paper's
IWSLT14 setting: beam 5, length penalty 1.0, sacreBLEU (with its signature) and chrF on the detokenised text. The
budget counts target tokens (each sentence's words and </s>). Under `torchrun --nproc_per_node N -m
macaron.train.translate ...` the N processes train one model: each takes every N-th pair of a batch, the gradients are
averaged weighted by each part's target words (LabelSmoothedNMT's share), dev is scored once in parts, and only the
main process writes and scores test.

A model is `<recipe>-<source>-<target>` (`macaron-es-en`), a recipe of options.RECIPES (its scheme) at the translators'
size: 3 + 3 layers × 256,
4 heads, an FFN budget of 1,024 a layer, pre-LN, sinusoidal positions with the embedding × √d (fairseq's), one token
table for the source, the target and the head (the vocabulary is joint), dropout 0.1. A Macaron decoder layer is
½G, F, C, ½G (schemes.with_cross), the paper's.
"""
from __future__ import annotations

import dataclasses
import json
import math
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from tokenizers import Tokenizer

from ..config import ModelConfig
from ..translation.model import JointReading, TranslationConfig
from ..translation.model import build as build_translator
from ..translation.search import own_search
from . import options, tatoeba, trainer, translator_card
from .data import IGNORE, DataError, Order
from .objective import LabelSmoothedNMT
from .options import RECIPES
from .resume import TrainError
from .task import Task

DESCRIPTION = "Translators trained here: encoder–decoders on a prepared folder of sentence pairs, several in lockstep."
SIZE = dict(n_layers=3, d_model=256, n_heads=4, ffn_total=1024, max_len=128, norm="pre", position="sinusoidal",
            embedding_scale=16.0, mlm_head=False)  # √256: fairseq's scaled embedding
BEAM, LENPEN = 5, 1.0  # the paper's IWSLT14 test setting (test-iwslt14.sh)


# ---- the data ------------------------------------------------------------------------------------------------------
class Bitext:
    """One split's pairs as token ids: source i is its pieces and </s>, target i likewise (tatoeba.encode)."""

    def __init__(self, file: Path):
        try:
            with np.load(file) as z:
                self.src, self.src_at = z["source_ids"].astype(np.int64), z["source_offsets"]
                self.tgt, self.tgt_at = z["target_ids"].astype(np.int64), z["target_offsets"]
        except (OSError, KeyError, ValueError, zipfile.BadZipFile) as e:
            raise DataError(f"{file}: not a split of macaron.train.tatoeba ({e}); run make data-translation") from None
        if len(self.src_at) != len(self.tgt_at):
            raise DataError(f"{file}: {len(self.src_at) - 1:,} sources for {len(self.tgt_at) - 1:,} targets")
        self.lengths = np.diff(self.tgt_at)           # target tokens, </s> included: what a budget counts
        self.widths = np.maximum(np.diff(self.src_at), self.lengths)  # the padded width a pair needs

    def __len__(self) -> int:
        return len(self.lengths)

    @property
    def n_tokens(self) -> int:
        return int(self.lengths.sum())

    def source(self, i: int) -> np.ndarray:
        return self.src[self.src_at[i]:self.src_at[i + 1]]

    def target(self, i: int) -> np.ndarray:
        return self.tgt[self.tgt_at[i]:self.tgt_at[i + 1]]

    def batch(self, indices, pad: int, start: int, width: int | None = None):
        """(source [B, S], source_mask [B, S], target_in [B, T], target_out [B, T]): the decoder reads the start
        token and the target's words, and is asked for each next word and </s>; padding is `pad` in the inputs,
        IGNORE in target_out. Both sides are `width` wide (default: as wide as their longest)."""
        src = [self.source(i) for i in indices]
        tgt = [self.target(i) for i in indices]
        S, T = width or max(map(len, src)), width or max(map(len, tgt))
        source = torch.full((len(src), S), pad, dtype=torch.long)
        target_in = torch.full((len(tgt), T), pad, dtype=torch.long)
        target_out = torch.full((len(tgt), T), IGNORE, dtype=torch.long)
        for b, (s, t) in enumerate(zip(src, tgt)):
            source[b, :len(s)] = torch.from_numpy(s)
            target_in[b, 0], target_in[b, 1:len(t)] = start, torch.from_numpy(t[:-1])
            target_out[b, :len(t)] = torch.from_numpy(t)
        mask = source != pad
        return source, (None if bool(mask.all()) else mask), target_in, target_out


def padded_width(widths: np.ndarray) -> np.ndarray:
    """The width a batch pads a pair to: a multiple of 4 up to 32 tokens, of 8 up to 64, then of 16. A few shapes in
    all: oneDNN compiles a kernel for every matrix shape it meets, and a run whose every batch had a shape of its own
    spent its first steps compiling (395 target tokens/s at step 10 on an AMX Xeon, 2026-11-28)."""
    w = np.asarray(widths)
    return np.where(w <= 32, -(-w // 4) * 4, np.where(w <= 64, -(-w // 8) * 8, -(-w // 16) * 16))


class Buckets:
    """Which pairs form batch number `step`, the model aside: pairs of one padded width (padded_width) in a seeded
    order, cut into batches of max_tokens // width pairs (fairseq's --max-tokens, in padded tokens), the batches in a
    seeded order per epoch. The interface of data.Order, so the run's budget and epochs read it as they read the
    masked LM's; `width(step)` is what the batch pads to."""

    def __init__(self, widths: np.ndarray, max_tokens: int, seed: int):
        padded = padded_width(widths)
        if int(padded.max()) > max_tokens:
            raise DataError(f"--max-tokens {max_tokens}: a pair is {int(padded.max())} tokens wide")
        shuffled = np.random.default_rng([seed, 0xB0C]).permutation(len(widths))
        self.batches, self.widths = [], []
        for w in np.unique(padded):
            members = shuffled[padded[shuffled] == w]
            n = max_tokens // int(w)
            self.batches += [members[k:k + n] for k in range(0, len(members), n)]
            self.widths += [int(w)] * -(-len(members) // n)
        self.order = Order(len(self.batches), 1, seed)  # the batches' order: data.Order's, one batch at a time
        self.per_epoch, self.perm, self.epoch = self.order.per_epoch, self.order.perm, self.order.epoch

    def _batch(self, step: int) -> int:
        return int(self.order.indices(step)[0])

    def width(self, step: int) -> int:
        return self.widths[self._batch(step)]

    def indices(self, step: int) -> np.ndarray:
        return self.batches[self._batch(step)]

    def _per_batch(self, lengths: np.ndarray, epoch: int) -> np.ndarray:
        return np.array([lengths[self.batches[b]].sum() for b in self.perm(epoch)])

    def tokens_for_steps(self, steps: int, lengths: np.ndarray) -> int:
        full, rest = divmod(steps, self.per_epoch)
        return int(full * lengths.sum() + self._per_batch(lengths, full)[:rest].sum())

    def steps_for_tokens(self, tokens: int, lengths: np.ndarray) -> int:
        full, left = divmod(int(tokens), int(lengths.sum()))
        if left == 0:
            return full * self.per_epoch
        return full * self.per_epoch + int(np.searchsorted(np.cumsum(self._per_batch(lengths, full)), left)) + 1


@dataclass(frozen=True)
class Corpus:
    """What Run reads of its data: the tokenizer, its hash, the statistics, the training split and the languages'
    codes (source, target: the folder's text files and the models' names end in them)."""

    tok: Tokenizer
    tok_hash: str
    stats: dict
    train: Bitext
    languages: tuple[str, str]


def open_corpus(folder: Path) -> tuple[Corpus, Bitext, Bitext]:
    """(the corpus, dev, test) of a folder that macaron.train.tatoeba wrote."""
    import hashlib

    from ..formats.folder import read_json

    stats = read_json(folder / "stats.json", DataError)
    codes = stats.get("languages") or {}
    if not all(isinstance(codes.get(side), str) for side in tatoeba.SIDES):
        raise DataError(f"{folder / 'stats.json'}: no languages (written by an older macaron.train.tatoeba); prepare "
                        f"the folder again: python -m macaron.train.tatoeba --out {folder}")
    languages = (codes["source"], codes["target"])
    try:
        tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    except Exception as e:  # tokenizers raises a bare Exception
        raise DataError(f"{folder / 'tokenizer.json'}: not a tokenizer ({e}); run make data-translation") from None
    for i, name in enumerate(tatoeba.SPECIALS):
        if tok.token_to_id(name) != i:
            raise DataError(f"{folder / 'tokenizer.json'}: {name} is not id {i}")
    lacking = [f"{split}.{code}" for split in tatoeba.SPLITS[1:] for code in languages
               if not (folder / f"{split}.{code}").is_file()]
    if lacking or not isinstance(stats.get("splits"), dict):
        raise DataError(f"{folder}: not a folder of macaron.train.tatoeba (" + (f"{', '.join(lacking)} missing"
                        if lacking else "stats.json has no splits") + "); run make data-translation")
    digest = hashlib.sha256((folder / "tokenizer.json").read_bytes()).hexdigest()[:16]
    return Corpus(tok, digest, stats, Bitext(folder / "train.npz"), languages), Bitext(folder / "dev.npz"), \
        Bitext(folder / "test.npz")


def lines(folder: Path, split: str, code: str) -> list[str]:
    return (folder / f"{split}.{code}").read_text(encoding="utf-8").splitlines()


# ---- the models ----------------------------------------------------------------------------------------------------
def translator_configs(args, vocab_size: int, languages: tuple[str, str]) -> dict[str, TranslationConfig]:
    """name -> the encoder–decoder of that recipe at the translators' size, between the data's `languages`."""
    out, suffix = {}, "".join(f"-{code}" for code in languages)
    for name in args.names:
        recipe = name.removesuffix(suffix)
        if not name.endswith(suffix) or recipe not in RECIPES:
            raise TrainError(f"--models: {name!r} is not <recipe>{suffix} (the data's languages) with a recipe of "
                             f"{sorted(RECIPES)}")
        side = dict(SIZE, **RECIPES[recipe], vocab_size=vocab_size, pad_id=tatoeba.PAD,
                    dropout=args.dropout)
        for field, value in (("d_model", args.d_model), ("n_layers", args.layers), ("n_heads", args.heads),
                             ("ffn_total", args.ffn)):  # the size overridden (a small run in a test)
            if value is not None:
                side[field] = value
        if args.d_model is not None:
            side["embedding_scale"] = math.sqrt(args.d_model)
        try:
            out[name] = TranslationConfig(
                ModelConfig(**side, name=f"{name} encoder"),
                ModelConfig(**side, causal=True, cross_attention=True, lm_head=True, name=f"{name} decoder"),
                shared_embeddings=True, source_lang=languages[0], target_lang=languages[1], name=name)
        except ValueError as e:
            raise TrainError(f"{name}: {e}") from None
    return out


# ---- what the run writes -------------------------------------------------------------------------------------------
@torch.no_grad()
def dev_scores(model, batches, dist=None) -> dict:
    """Dev loss (nats a target token, no smoothing), accuracy of the next word, and their count, teacher-forced; under
    torchrun (`dist`) each process scores its part of the batches and the sums are added."""
    was = model.training
    model.eval()
    loss = correct = count = 0.0
    for source, mask, target_in, target_out in batches:
        dev = model.device
        hidden = model(source.to(dev), None if mask is None else mask.to(dev), target_in.to(dev))
        logits = model.decoder.head(hidden).float()
        gold = target_out.to(dev)
        real = gold != IGNORE
        loss += float(F.cross_entropy(logits[real], gold[real], reduction="sum"))
        correct += float((logits.argmax(-1)[real] == gold[real]).sum())
        count += float(real.sum())
    model.train(was)
    if dist is not None:
        loss, correct, count = dist.sum([loss, correct, count])
    return {"loss": loss / count, "accuracy": correct / count, "perplexity": math.exp(min(loss / count, 50.0)),
            "targets": int(count)}


def translate_split(model, folder: Path, split: str = "test", beam: int = BEAM, lenpen: float = LENPEN,
                    limit: int | None = None) -> dict:
    """The split translated by the model's own search (beam 5, length penalty 1.0), scored by sacreBLEU (BLEU and
    chrF, with their signatures) against the split's target side as the file has it (the folder's files are named by
    the model's languages); the translations kept."""
    from sacrebleu.metrics import CHRF

    from ..studies.bleu import standard_bleu, translate_all

    sources = lines(folder, split, model.config.source_lang)[:limit]
    references = lines(folder, split, model.config.target_lang)[:limit]
    was = model.training
    model.eval()
    ids = [model.tokenize(s)[0] for s in sources]
    hypotheses = [model.tokenizer.target.decode(h) for h in translate_all(model, ids, beam, lenpen, progress=False)]
    model.train(was)
    (b, signature), chrf = standard_bleu(hypotheses, references), CHRF()
    c = chrf.corpus_score(hypotheses, [references])
    return {"bleu": round(b.score, 2), "chrf": round(c.score, 2), "bleu_signature": signature,
            "chrf_signature": str(chrf.get_signature()), "beam": beam, "lenpen": lenpen, "split": split,
            "sentences": len(sources), "hypotheses": hypotheses}


def longest_search_seconds(model, folder: Path, split: str, limit: int, beam: int) -> float:
    """Seconds to translate the split's first `limit` sentences by the model's own search with every hypothesis run to
    its longest (no </s> before the search's last word): the most its search costs, whatever the weights."""
    sources = lines(folder, split, model.config.source_lang)[:limit]
    was = model.training
    model.eval()
    t = time.time()
    for text in sources:
        ids = model.tokenize(text)[0]
        search = own_search(model.config, len(ids), beam)
        model.search(ids, search=dataclasses.replace(search, min_len=search.maxlen))
    model.train(was)
    return time.time() - t


def dev_batches(dev: Bitext, max_tokens: int) -> list:
    """The dev set's fixed batches, as every evaluation reads them."""
    order = Buckets(dev.widths, max_tokens, 0)
    return [dev.batch(b, tatoeba.PAD, tatoeba.EOS, w) for b, w in zip(order.batches, order.widths)]


def score_folder(folder: Path, data: Path, max_tokens: int = 6144) -> dict:
    """A translator's scores on the weights as its folder stores them (float16 where saved so): dev loss, and the
    test set translated again and scored; test.hyp.<target language>, training.json's final scores and the card
    rewritten."""
    from ..sources.loading import load

    info = translator_card.translator_facts(folder)  # before anything is loaded or written: a translator's folder
    model = load(folder, device="cpu")
    scores = translate_split(model, data)
    hypotheses = scores.pop("hypotheses")
    hyp = folder / f"test.hyp.{model.config.target_lang}"
    hyp.write_text("".join(h + "\n" for h in hypotheses), encoding="utf-8")
    info["final"] = {**info["final"], **dev_scores(model, dev_batches(Bitext(data / "dev.npz"), max_tokens)),
                     **scores}
    translator_card.write(folder, info)
    return info["final"]


class TranslationTask(Task):
    """Translation, as the paper's fairseq runs: the pairs of a prepared folder and its joint vocabulary, batches of
    pairs of like length up to --max-tokens padded tokens (Buckets), label-smoothed cross-entropy
    (objective.LabelSmoothedNMT), dev loss at every evaluation (greedy dev BLEU on its first --dev-bleu sentences for
    the curve), the weights of the lowest dev loss kept (<run-dir>/<name>/best, a model folder) and that checkpoint
    scored on test at the end."""

    kind, held_out_name = "translation", "dev"
    published = ("seed", "max_tokens")
    formerly = {"max_tokens": "batch"}  # checkpoints of the trainer before tasks (3751285) called it the batch
    longest = SIZE["max_len"]

    def __init__(self, args, dist):
        super().__init__(args, dist)
        self.dev = self.test = None
        self.best: dict[str, dict] = {}  # name -> the step, tokens and dev loss of the weights kept

    # ---- data and models ----------------------------------------------------------------------------------------
    def prepare(self):
        a = self.args
        self.data, self.dev, self.test = open_corpus(Path(a.data))
        self.configs = translator_configs(a, self.data.tok.get_vocab_size(), self.data.languages)
        self.train_data = self.data.train
        self.order = Buckets(self.train_data.widths, a.max_tokens, a.seed)
        self.terms = {"seed": a.seed, "max_tokens": a.max_tokens,
                      "corpus_stats": self.data.tok_hash + json.dumps(self.data.stats["splits"], sort_keys=True)}

    def network(self, config):
        return build_translator(config, JointReading(self.data.tok))

    def criterion(self, network):
        return LabelSmoothedNMT(network, self.args.label_smoothing)

    def reuses_weights(self, network) -> bool:
        return True  # one token table for the source, the target and the head (translator_configs)

    def describe(self) -> str:
        return f"{len(self.train_data):,} training pairs (mean {self.train_data.lengths.mean():.1f} target tokens)"

    def evaluation_sets(self):
        self.held_out = dev_batches(self.dev, self.args.max_tokens)

    def batch(self, step: int):
        """This process's part of batch `step` (every world-th pair), on the device, with its share of the batch's
        target words (LabelSmoothedNMT); a process left without a pair takes the first with share 0, since every
        process of DDP must take its step."""
        d, indices = self.dist, self.order.indices(step)
        lengths = self.train_data.lengths
        mine = indices[d.rank::d.world]
        share = d.world * float(lengths[mine].sum()) / float(lengths[indices].sum()) if len(mine) else 0.0
        to = dict(device=d.device, non_blocking=True)
        batch = self.train_data.batch(mine if len(mine) else indices[:1], tatoeba.PAD, tatoeba.EOS,
                                      self.order.width(step))
        batch = tuple(None if t is None else t.to(**to) for t in batch)
        return [(*batch, share)], int(lengths[indices].sum())

    # ---- evaluation and the model folders -----------------------------------------------------------------------
    def evaluate(self, m, step: int) -> dict:
        a, d = self.args, self.dist
        result = dev_scores(m.network, self.held_out[d.rank::d.world], d)
        if a.dev_bleu and step and d.main:  # the curve's BLEU, greedy on the first dev sentences, once: only the
            # main process writes the curve, and the choice of the best weights reads the loss
            scores = translate_split(m.network, Path(a.data), "dev", beam=1, limit=a.dev_bleu)
            result.update(dev_bleu=scores["bleu"], dev_bleu_sentences=scores["sentences"])
        return result

    def evaluated(self, out, m, result: dict):
        """The weights of the lowest dev loss so far kept as a model folder."""
        p, best = out.place, self.best.get(m.name)
        if p.step and (best is None or result["loss"] < best["loss"]):
            self.best[m.name] = {"step": p.step, "tokens": p.tokens, "loss": result["loss"]}
            out.write_model(m, self.best_folder(m), dict(result, step=p.step), None)

    def said(self, m, result: dict) -> str:
        return (f"loss {result['loss']:.4f} acc {result['accuracy']:.4f} ppl {result['perplexity']:.2f}"
                + (f" BLEU {result['dev_bleu']:.1f} (greedy, {self.args.dev_bleu})" if "dev_bleu" in result else "")
                + (" (best)" if self.best.get(m.name, {}).get("step") == m.last_eval["step"] else ""))

    def evaluation_seconds(self, members: list, measured: float) -> float:
        """The probe's evaluation with its greedy dev BLEU at its longest: a model that has begun to learn writes
        long translations where the probe's start ends them early (a run of 0.75 min took 207 s before)."""
        if not self.args.dev_bleu:
            return measured
        return measured + len(members) * longest_search_seconds(members[0].network, Path(self.args.data), "dev",
                                                                self.args.dev_bleu, beam=1)

    def closing_seconds(self, members: list, per_eval: float, per_ckpt: float, probe: int = 8) -> float:
        """Each model's chosen weights written and scored as stored (score_folder: dev loss, and the test set translated
        by beam search, the longest part): the search at its longest on the test set's first `probe` sentences,
        scaled to all of them."""
        data = Path(self.args.data)
        sentences = len(lines(data, "test", members[0].network.config.source_lang))
        per_sentence = longest_search_seconds(members[0].network, data, "test", probe, BEAM) / min(probe, sentences)
        return len(members) * (per_sentence * sentences + per_ckpt) + per_eval + 15.0

    def best_folder(self, m) -> Path:
        return self.args.run_dir / m.name / "best"

    def model(self, out, m):
        """The checkpoint of the lowest dev loss as the model's folder, then scored on dev and test as stored."""
        from ..sources.loading import load

        a, best = self.args, self.best[m.name]
        final = m.snapshot()  # a copy: load_state_dict writes into the very tensors state_dict() hands out
        m.network.load_state_dict(load(self.best_folder(m), device=str(self.dist.device)).state_dict())
        chosen = translator_card.translator_facts(self.best_folder(m))["final"]  # its dev scores, until score_folder's
        out.write_model(m, m.out, {**chosen, "chosen": best}, out.save_dtype)
        m.network.load_state_dict(final)
        scores = score_folder(m.out, Path(a.data), a.max_tokens)
        self.dist.log(f"saved {m.out}: the checkpoint of step {best['step']:,} (dev loss {best['loss']:.4f}), test "
                      f"BLEU {scores['bleu']:.2f}, chrF {scores['chrf']:.2f} (beam {BEAM}, lenpen {LENPEN}), as stored")

    def facts(self, m) -> dict:
        a = self.args
        return {"scheme": m.config.encoder.scheme, "max_tokens": a.max_tokens, "label_smoothing": a.label_smoothing,
                "budget": "target tokens", "train_pairs": len(self.train_data),
                "dev_pairs": sum(len(b[0]) for b in self.held_out), "best": self.best.get(m.name)}

    def write_card(self, folder: Path, facts: dict):
        translator_card.write(folder, facts)

    # ---- the checkpoint ------------------------------------------------------------------------------------------
    def state(self) -> dict:
        return {"best": self.best}

    def started(self, state: dict | None, members: list):
        """On a resume, each model's best so far as the checkpoint has it, its folder kept only where it holds that
        step (a folder written after the checkpoint is chosen again by the evaluations to come)."""
        if not state:
            return
        self.best = {}
        for m in members:
            best, facts = (state.get("best") or {}).get(m.name), self.best_folder(m) / "training.json"
            if best and facts.is_file() and json.loads(facts.read_text()).get("final", {}).get("step") == best["step"]:
                self.best[m.name] = best


def own_options(p):
    """The translators' own options (the trainer's are options.parser's)."""
    g = p.add_argument_group("translation")
    g.add_argument("--models", required=True, help=f"comma list of <recipe>-<source>-<target> names trained in "
                                                   f"lockstep (the data's languages); recipes {sorted(RECIPES)}")
    g.add_argument("--data", default=str(tatoeba.FOLDER), help="a folder of sentence pairs that python -m "
                                                               "macaron.train.tatoeba prepared")
    g.add_argument("--max-tokens", type=int, default=4096, help="padded tokens a batch (source or target, the "
                                                                 "longer side), as fairseq's --max-tokens")
    g.add_argument("--label-smoothing", type=float, default=0.1)
    g.add_argument("--dev-bleu", type=int, default=250, help="at each evaluation, greedy BLEU on this many dev "
                                                             "sentences, for the curve (0: none)")


def named_models(args, p):
    args.names = [n.strip() for n in args.models.split(",") if n.strip()]


def parse_args(argv=None):
    p = options.parser("python -m macaron.train.translate", DESCRIPTION, own_options, schedule="inverse-sqrt",
                       lr=1.5e-3, warmup=400, dropout=0.1, weight_decay=0.0, eps=1e-8, clip=0.0, eval_every=250)
    return options.parse_args(argv, p, named_models)


def rescore(argv: list[str]) -> int:
    """python -m macaron.train.translate rescore FOLDER... [--data DIR]: each translator scored again as stored."""
    import argparse

    from ..formats.folder import CheckpointError

    p = argparse.ArgumentParser(prog="python -m macaron.train.translate rescore", description=rescore.__doc__)
    p.add_argument("folders", nargs="+", type=Path)
    p.add_argument("--data", type=Path, default=tatoeba.FOLDER)
    a = p.parse_args(argv)
    try:
        corpus, _, _ = open_corpus(a.data)
        for folder in a.folders:  # every folder checked before any is scored and written
            config = translator_card.translator_facts(folder)["config"]
            pair = (config.get("source_lang"), config.get("target_lang"))
            if pair != corpus.languages:
                raise DataError(f"{folder} translates {'→'.join(map(str, pair))}, the data {a.data} is "
                                f"{'→'.join(corpus.languages)}: give --data the folder it was trained on")
        for folder in a.folders:
            s = score_folder(folder, a.data)
            print(f"{folder}: test BLEU {s['bleu']:.2f}, chrF {s['chrf']:.2f}, dev loss {s['loss']:.4f}")
    except (DataError, CheckpointError, KeyError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["rescore"]:
        return rescore(argv[1:])
    return trainer.main(parse_args(argv), TranslationTask)


if __name__ == "__main__":
    sys.exit(main())
